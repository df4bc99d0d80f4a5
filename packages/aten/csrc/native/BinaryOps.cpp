// Elementwise binary operators: one out kernel each; functional and in-place
// variants (and aliases such as arctan2 / true_divide) reach them through
// `structured_delegate` (see native_functions.yaml). A Python number arrives as a
// 0-dim wrapped-number tensor, which TensorIterator's type promotion treats as weak.
#include "BinaryOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(add_stub);
DEFINE_DISPATCH(mul_stub);
DEFINE_DISPATCH(div_true_stub);
DEFINE_DISPATCH(div_trunc_stub);
DEFINE_DISPATCH(div_floor_stub);
DEFINE_DISPATCH(remainder_stub);
DEFINE_DISPATCH(fmod_stub);
DEFINE_DISPATCH(pow_tensor_tensor_stub);
DEFINE_DISPATCH(pow_tensor_scalar_stub);
DEFINE_DISPATCH(atan2_stub);
DEFINE_DISPATCH(hypot_stub);
DEFINE_DISPATCH(copysign_stub);
DEFINE_DISPATCH(maximum_stub);
DEFINE_DISPATCH(minimum_stub);
DEFINE_DISPATCH(fmax_stub);
DEFINE_DISPATCH(fmin_stub);
DEFINE_DISPATCH(bitwise_and_stub);
DEFINE_DISPATCH(bitwise_or_stub);
DEFINE_DISPATCH(bitwise_xor_stub);
DEFINE_DISPATCH(lshift_stub);
DEFINE_DISPATCH(rshift_stub);
DEFINE_DISPATCH(xlogy_stub);
DEFINE_DISPATCH(logaddexp_stub);
DEFINE_DISPATCH(logaddexp2_stub);
DEFINE_DISPATCH(heaviside_stub);
DEFINE_DISPATCH(gcd_stub);
DEFINE_DISPATCH(lcm_stub);
DEFINE_DISPATCH(nextafter_stub);

namespace {
// PyTorch's alpha rules: no float alpha for integral results, bool alpha only for bool.
void check_alpha(const char* op, ScalarType dtype, const Scalar& alpha) {
  EMBER_CHECK(!alpha.isBoolean() || dtype == ScalarType::Bool, op,
              ": Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(c10::isFloatingType(dtype) || alpha.isIntegral(/*includeBool=*/true), op,
              ": For integral input tensors, argument alpha must not be a floating point number.");
}

template <typename Stub>
Tensor binary_out(Stub& stub, const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  auto iter = TensorIterator::binary_op(out, self, other, name);
  stub(iter.device_type(), iter);
  return iter.output();
}

// Integer inputs give the default float dtype (true division, atan2, copysign).
template <typename Stub>
Tensor binary_float_out(Stub& stub, const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  auto iter = TensorIterator::binary_float_op(out, self, other, name);
  stub(iter.device_type(), iter);
  return iter.output();
}

// pow with an exponent known on the host (a Python number): PyTorch's pow.Tensor_Scalar.
Tensor pow_scalar_exponent(const Tensor& base, const Tensor& exponent, const Tensor& out, const char* name) {
  const Scalar exp = exponent.item();
  EMBER_CHECK(!(c10::isIntegralType(base.dtype(), /*includeBool=*/true) && exp.isIntegral(/*includeBool=*/true) &&
                exp.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  const ScalarType dtype = result_type({base, exponent});
  const Tensor b = base.to(dtype);
  auto iter = TensorIterator::unary_op(out, b, name);
  if (exp.toDouble() == 0.0) {  // x ** 0 == 1, NaN included (also bool ** False)
    iter.output().fill_(Scalar(int64_t{1}));
  } else if (exp.toDouble() == 1.0) {  // also bool ** True
    if (!iter.output().is_same(b)) iter.output().copy_(b);
  } else {
    pow_tensor_scalar_stub(iter.device_type(), iter, exp);
  }
  return iter.output();
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

// rsub(self, other, alpha) = other - alpha * self (no out= variant, as in PyTorch).
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return sub_out(other, self, alpha, Tensor());
}

Tensor mul_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(mul_stub, self, other, out, "mul");
}

Tensor div_out(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode,
               const Tensor& out) {
  if (!rounding_mode) return binary_float_out(div_true_stub, self, other, out, "div");
  if (*rounding_mode == "trunc") return binary_out(div_trunc_stub, self, other, out, "div");
  if (*rounding_mode == "floor") return binary_out(div_floor_stub, self, other, out, "div");
  throw c10::ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                        *rounding_mode + "'");
}

Tensor true_divide_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_float_out(div_true_stub, self, other, out, "true_divide");
}

Tensor floor_divide_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(div_floor_stub, self, other, out, "floor_divide");
}

Tensor remainder_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(remainder_stub, self, other, out, "remainder");
}

Tensor fmod_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(fmod_stub, self, other, out, "fmod");
}

Tensor pow_out(const Tensor& self, const Tensor& exponent, const Tensor& out) {
  if (exponent.is_wrapped_number()) return pow_scalar_exponent(self, exponent, out, "pow");
  auto iter = TensorIterator::binary_op(out, self, exponent, "pow");
  if (self.is_wrapped_number() && self.item().toDouble() == 1.0) {
    iter.output().fill_(Scalar(int64_t{1}));  // 1 ** x == 1 for every x and dtype (PyTorch's pow.Scalar)
    return iter.output();
  }
  pow_tensor_tensor_stub(iter.device_type(), iter);
  return iter.output();
}

// float_power: pow computed in float64, whatever the inputs (the result is float64).
Tensor float_power_out(const Tensor& self, const Tensor& exponent, const Tensor& out) {
  constexpr ScalarType kDouble = ScalarType::Double;
  if (out.defined() && out.dtype() != kDouble) {
    EMBER_CHECK(!out.is_same(self), "the base given to float_power_ has dtype ", c10::toString(self.dtype()),
                " but the operation's result requires dtype Double");
    EMBER_CHECK(false, "the output given to float_power has dtype ", c10::toString(out.dtype()),
                " but the operation's result requires dtype Double");
  }
  const Tensor base = self.to(kDouble);
  if (exponent.is_wrapped_number()) {
    const Tensor exp = wrapped_scalar_tensor(Scalar(exponent.item().toDouble()), exponent.device());
    return pow_scalar_exponent(base, exp, out, "float_power");
  }
  return binary_out(pow_tensor_tensor_stub, base, exponent.to(kDouble), out, "float_power");
}

Tensor atan2_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_float_out(atan2_stub, self, other, out, "atan2");
}

Tensor hypot_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(hypot_stub, self, other, out, "hypot");
}

Tensor copysign_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_float_out(copysign_stub, self, other, out, "copysign");
}

Tensor maximum_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(maximum_stub, self, other, out, "maximum");
}

Tensor minimum_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(minimum_stub, self, other, out, "minimum");
}

Tensor fmax_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(fmax_stub, self, other, out, "fmax");
}

Tensor fmin_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(fmin_stub, self, other, out, "fmin");
}

Tensor bitwise_and_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(bitwise_and_stub, self, other, out, "bitwise_and");
}

Tensor bitwise_or_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(bitwise_or_stub, self, other, out, "bitwise_or");
}

Tensor bitwise_xor_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(bitwise_xor_stub, self, other, out, "bitwise_xor");
}

Tensor bitwise_left_shift_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(lshift_stub, self, other, out, "bitwise_left_shift");
}

Tensor bitwise_right_shift_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(rshift_stub, self, other, out, "bitwise_right_shift");
}

// x * log(y), 0 where x == 0 (unless y is NaN): the entropy terms of losses.
Tensor xlogy_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_float_out(xlogy_stub, self, other, out, "xlogy");
}

Tensor logaddexp_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(logaddexp_stub, self, other, out, "logaddexp");
}

Tensor logaddexp2_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(logaddexp2_stub, self, other, out, "logaddexp2");
}

// 0 below zero, 1 above, `values` at zero. Both inputs (and out=) must share a dtype.
Tensor heaviside_out(const Tensor& self, const Tensor& values, const Tensor& out) {
  EMBER_CHECK(self.dtype() == values.dtype() && (!out.defined() || out.dtype() == self.dtype()),
              "heaviside is not yet implemented for tensors with different dtypes.");
  return binary_out(heaviside_stub, self, values, out, "heaviside");
}

Tensor gcd_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(gcd_stub, self, other, out, "gcd");
}

Tensor lcm_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(lcm_stub, self, other, out, "lcm");
}

Tensor nextafter_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary_out(nextafter_stub, self, other, out, "nextafter");
}

// ldexp(self, other) = self * 2 ** other (PyTorch's definition, so integer inputs give float).
Tensor ldexp_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  const Tensor scale = pow_out(wrapped_scalar_tensor(Scalar(2.0), other.device()), other, Tensor());
  return mul_out(self, scale, out);
}

}  // namespace ember::at::native
