// Comparisons (eq ne lt le gt ge and their aliases), logical and/or/xor, isclose,
// allclose and equal. The elementwise ones have one out kernel each; functional and
// in-place variants (x.lt_(y) writes 0/1 in x's dtype) delegate to it.
#include "CompareOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(eq_stub);
DEFINE_DISPATCH(ne_stub);
DEFINE_DISPATCH(lt_stub);
DEFINE_DISPATCH(le_stub);
DEFINE_DISPATCH(gt_stub);
DEFINE_DISPATCH(ge_stub);
DEFINE_DISPATCH(logical_and_stub);
DEFINE_DISPATCH(logical_or_stub);
DEFINE_DISPATCH(logical_xor_stub);
DEFINE_DISPATCH(isclose_stub);
DEFINE_DISPATCH(equal_stub);

namespace {
template <typename Stub>
Tensor comparison_out(Stub& stub, const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  auto iter = TensorIterator::comparison_op(out, self, other, name);
  stub(iter.device_type(), iter);
  return iter.output();
}
}  // namespace

Tensor eq_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(eq_stub, self, other, out, "eq");
}

Tensor ne_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(ne_stub, self, other, out, "ne");
}

Tensor lt_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(lt_stub, self, other, out, "lt");
}

Tensor le_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(le_stub, self, other, out, "le");
}

Tensor gt_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(gt_stub, self, other, out, "gt");
}

Tensor ge_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(ge_stub, self, other, out, "ge");
}

Tensor logical_and_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(logical_and_stub, self, other, out, "logical_and");
}

Tensor logical_or_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(logical_or_stub, self, other, out, "logical_or");
}

Tensor logical_xor_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return comparison_out(logical_xor_stub, self, other, out, "logical_xor");
}

// |self - other| <= atol + rtol * |other|, or equal (NaNs equal when equal_nan), as
// PyTorch and NumPy. Integer and bool inputs are compared in the default float dtype.
Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(self.dtype() == other.dtype(), c10::toString(self.dtype()), " did not match ",
              c10::toString(other.dtype()));
  EMBER_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  auto iter = TensorIterator::comparison_op(Tensor(), self, other, "isclose");
  isclose_stub(iter.device_type(), iter, rtol, atol, equal_nan);
  return iter.output();
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  const Tensor close = isclose(self, other, rtol, atol, equal_nan);
  // A fresh iterator output is dense (laid out in iteration order): scan its bytes.
  const Tensor c = close.is_cpu() ? close : close.to(Device(DeviceType::CPU));
  EMBER_INTERNAL_ASSERT(c.is_non_overlapping_and_dense(), "allclose: isclose result is not dense");
  const bool* p = static_cast<const bool*>(c.data_ptr());
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    if (!p[i]) return false;
  }
  return true;
}

// Same shape and the same values (after type promotion); NaN is unequal to itself.
bool equal(const Tensor& self, const Tensor& other) {
  EMBER_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ", self.device(),
              " and ", other.device());
  if (!self.sizes().equals(other.sizes())) return false;
  if (self.numel() == 0) return true;
  auto iter = TensorIteratorConfig()
                  .name("equal")
                  .add_input(self)
                  .add_input(other)
                  .allow_cpu_scalars(true)
                  .promote_inputs_to_common_dtype(true)
                  .build();
  return equal_stub(iter.device_type(), iter);
}

}  // namespace ember::at::native
