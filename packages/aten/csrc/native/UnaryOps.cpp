// Elementwise unary operators: one out kernel each (functional and in-place
// variants delegate to it).
#include "UnaryOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(neg_stub);
DEFINE_DISPATCH(exp_stub);

Tensor neg_out(const Tensor& self, const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  auto iter = TensorIterator::unary_op(out, self, "neg");
  neg_stub(iter.device_type(), iter);
  return iter.output();
}

Tensor exp_out(const Tensor& self, const Tensor& out) {
  auto iter = TensorIterator::unary_float_op(out, self, "exp");
  exp_stub(iter.device_type(), iter);
  return iter.output();
}

}  // namespace ember::at::native
