// add, sub, mul, div: one out kernel each; functional and in-place variants reach
// them through `structured_delegate` (see native_functions.yaml).
#include "BinaryOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(add_stub);
DEFINE_DISPATCH(mul_stub);
DEFINE_DISPATCH(div_true_stub);
DEFINE_DISPATCH(div_trunc_stub);
DEFINE_DISPATCH(div_floor_stub);

namespace {
// PyTorch's alpha rules: no float alpha for integral results, bool alpha only for bool.
void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  EMBER_CHECK(!alpha.isBoolean() || dtype == ScalarType::Bool, op,
              ": Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(c10::isFloatingType(dtype) || alpha.isIntegral(/*includeBool=*/true), op,
              ": For integral input tensors, argument alpha must not be a floating point number.");
}
}  // namespace

Tensor add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  auto iter = TensorIterator::binary_op(out, self, other, "add");
  check_alpha("add", iter.common_dtype(), alpha);
  add_stub(iter.device_type(), iter, alpha);
  return iter.output();
}

Tensor sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool || other.dtype() != ScalarType::Bool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  EMBER_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
  auto iter = TensorIterator::binary_op(out, self, other, "sub");
  check_alpha("sub", iter.common_dtype(), alpha);
  add_stub(iter.device_type(), iter, -alpha);
  return iter.output();
}

Tensor mul_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  auto iter = TensorIterator::binary_op(out, self, other, "mul");
  mul_stub(iter.device_type(), iter);
  return iter.output();
}

Tensor div_out(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode,
               const Tensor& out) {
  if (!rounding_mode) {
    auto iter = TensorIterator::binary_float_op(out, self, other, "div");
    div_true_stub(iter.device_type(), iter);
    return iter.output();
  }
  auto iter = TensorIterator::binary_op(out, self, other, "div");
  if (*rounding_mode == "trunc") {
    div_trunc_stub(iter.device_type(), iter);
  } else if (*rounding_mode == "floor") {
    div_floor_stub(iter.device_type(), iter);
  } else {
    throw c10::ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                          *rounding_mode + "'");
  }
  return iter.output();
}

}  // namespace ember::at::native
