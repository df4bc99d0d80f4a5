// Elementwise unary operators: one out kernel each. Functional and in-place
// variants reach it through `structured_delegate` (an undefined `out` is allocated
// by TensorIterator, an in-place call passes `self`). Aliases (absolute, arcsin,
// fix, ...) name the same kernel in native_functions.yaml.
//
// Dtype rules (PyTorch's):
//   unary_float_op  -- bool/integer inputs compute in the default float dtype
//                      (sin, log, sqrt, sigmoid, erf, lgamma, ...);
//   unary_op        -- the result keeps the input dtype (abs, sign, floor, ...);
//   bool results    -- isnan & co., signbit, logical_not.
#include "UnaryOps.h"

#include <ember/c10/ScalarType.h>

namespace ember::at::native {

DEFINE_DISPATCH(neg_stub);
DEFINE_DISPATCH(exp_stub);
DEFINE_DISPATCH(abs_stub);
DEFINE_DISPATCH(sign_stub);
DEFINE_DISPATCH(square_stub);
DEFINE_DISPATCH(floor_stub);
DEFINE_DISPATCH(ceil_stub);
DEFINE_DISPATCH(round_stub);
DEFINE_DISPATCH(round_decimals_stub);
DEFINE_DISPATCH(trunc_stub);
DEFINE_DISPATCH(frac_stub);
DEFINE_DISPATCH(bitwise_not_stub);
DEFINE_DISPATCH(logical_not_stub);
DEFINE_DISPATCH(signbit_stub);
DEFINE_DISPATCH(float_class_stub);
DEFINE_DISPATCH(nan_to_num_stub);
DEFINE_DISPATCH(exp2_stub);
DEFINE_DISPATCH(expm1_stub);
DEFINE_DISPATCH(log_stub);
DEFINE_DISPATCH(log2_stub);
DEFINE_DISPATCH(log10_stub);
DEFINE_DISPATCH(log1p_stub);
DEFINE_DISPATCH(sqrt_stub);
DEFINE_DISPATCH(rsqrt_stub);
DEFINE_DISPATCH(reciprocal_stub);
DEFINE_DISPATCH(sin_stub);
DEFINE_DISPATCH(cos_stub);
DEFINE_DISPATCH(tan_stub);
DEFINE_DISPATCH(asin_stub);
DEFINE_DISPATCH(acos_stub);
DEFINE_DISPATCH(atan_stub);
DEFINE_DISPATCH(sinh_stub);
DEFINE_DISPATCH(cosh_stub);
DEFINE_DISPATCH(tanh_stub);
DEFINE_DISPATCH(asinh_stub);
DEFINE_DISPATCH(acosh_stub);
DEFINE_DISPATCH(atanh_stub);
DEFINE_DISPATCH(sigmoid_stub);
DEFINE_DISPATCH(logit_stub);
DEFINE_DISPATCH(erf_stub);
DEFINE_DISPATCH(erfc_stub);
DEFINE_DISPATCH(erfinv_stub);
DEFINE_DISPATCH(lgamma_stub);
DEFINE_DISPATCH(digamma_stub);

namespace {

template <typename Stub>
Tensor unary_float(Stub& stub, const Tensor& self, const Tensor& out, const char* name) {
  auto iter = TensorIterator::unary_float_op(out, self, name);
  stub(iter.device_type(), iter);
  return iter.output();
}

template <typename Stub>
Tensor unary_same(Stub& stub, const Tensor& self, const Tensor& out, const char* name) {
  auto iter = TensorIterator::unary_op(out, self, name);
  stub(iter.device_type(), iter);
  return iter.output();
}

// floor/ceil/round/trunc of an integer tensor is the tensor itself (a copy); bool is
// rejected by the kernel's dtype dispatch, as in PyTorch.
template <typename Stub>
Tensor unary_integer_no_op(Stub& stub, const Tensor& self, const Tensor& out, const char* name) {
  auto iter = TensorIterator::unary_op(out, self, name);
  if (c10::isIntegralType(self.dtype(), /*includeBool=*/false)) {
    iter.output().copy_(self);
  } else {
    stub(iter.device_type(), iter);
  }
  return iter.output();
}

// A kernel that writes bool whatever the input dtype (isposinf, signbit, ...).
TensorIterator bool_result_op(const Tensor& out, const Tensor& self, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(self)
      .check_all_same_dtype(false)
      .declare_static_dtype(ScalarType::Bool)
      .build();
}

// Integer and bool tensors hold no NaN or infinity: the answer is a constant.
Tensor float_class(const Tensor& self, FloatClass which, const Tensor& out, const char* name) {
  auto iter = bool_result_op(out, self, name);
  if (c10::isIntegralType(self.dtype(), /*includeBool=*/true)) {
    iter.output().fill_(which == FloatClass::IsFinite);
  } else {
    float_class_stub(iter.device_type(), iter, which);
  }
  return iter.output();
}

void check_bool_out(const Tensor& out, const char* name) {
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Bool, name, " does not support non-boolean outputs.");
}

}  // namespace

// ---- same dtype in and out ------------------------------------------------------

Tensor abs_out(const Tensor& self, const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "abs: not implemented for dtype bool");
  return unary_same(abs_stub, self, out, "abs");
}

Tensor sign_out(const Tensor& self, const Tensor& out) { return unary_same(sign_stub, self, out, "sign"); }

Tensor sgn_out(const Tensor& self, const Tensor& out) { return unary_same(sign_stub, self, out, "sgn"); }

// square(x) is pow(x, 2): a bool tensor gives int64, as 2 is a Python int.
Tensor square_out(const Tensor& self, const Tensor& out) {
  const Tensor in = self.dtype() == ScalarType::Bool ? self.to(ScalarType::Long) : self;
  return unary_same(square_stub, in, out, "square");
}

Tensor floor_out(const Tensor& self, const Tensor& out) { return unary_integer_no_op(floor_stub, self, out, "floor"); }

Tensor ceil_out(const Tensor& self, const Tensor& out) { return unary_integer_no_op(ceil_stub, self, out, "ceil"); }

Tensor trunc_out(const Tensor& self, const Tensor& out) { return unary_integer_no_op(trunc_stub, self, out, "trunc"); }

Tensor round_out(const Tensor& self, const Tensor& out) { return unary_integer_no_op(round_stub, self, out, "round"); }

// round(x, decimals=d): only floating tensors (PyTorch's round.decimals has no
// integer shortcut, even for d == 0).
Tensor round_decimals_out(const Tensor& self, int64_t decimals, const Tensor& out) {
  auto iter = TensorIterator::unary_op(out, self, "round");
  if (decimals != 0) {
    round_decimals_stub(iter.device_type(), iter, decimals);
  } else {
    EMBER_CHECK(c10::isFloatingType(self.dtype()), "round: not implemented for dtype ", c10::toPythonName(self.dtype()),
                " (decimals= needs a floating-point tensor)");
    round_stub(iter.device_type(), iter);
  }
  return iter.output();
}

Tensor frac_out(const Tensor& self, const Tensor& out) { return unary_same(frac_stub, self, out, "frac"); }

Tensor bitwise_not_out(const Tensor& self, const Tensor& out) {
  // PyTorch's message (the dtype dispatch of its CPU kernel).
  EMBER_CHECK(!c10::isFloatingType(self.dtype()), "\"bitwise_not_cpu\" not implemented for '",
              c10::toString(self.dtype()), "'");
  return unary_same(bitwise_not_stub, self, out, "bitwise_not");
}

// nan_to_num(x, nan=0, posinf=dtype max, neginf=dtype lowest); integer and bool
// tensors have nothing to replace and are copied.
Tensor nan_to_num_out(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf, const Tensor& out) {
  EMBER_CHECK(!out.defined() || out.dtype() == self.dtype(), "nan_to_num: dtype of out: ", c10::toString(out.dtype()),
              " should be same as input: ", c10::toString(self.dtype()));
  auto iter = TensorIterator::unary_op(out, self, "nan_to_num");
  if (c10::isIntegralType(self.dtype(), /*includeBool=*/true)) {
    iter.output().copy_(self);
  } else {
    nan_to_num_stub(iter.device_type(), iter, nan, posinf, neginf);
  }
  return iter.output();
}

// ---- bool results -----------------------------------------------------------------

// logical_not writes !x in the output's dtype (bool unless out= says otherwise).
Tensor logical_not_out(const Tensor& self, const Tensor& out) {
  auto iter = bool_result_op(out, self, "logical_not");
  logical_not_stub(iter.device_type(), iter);
  return iter.output();
}

Tensor signbit_out(const Tensor& self, const Tensor& out) {
  check_bool_out(out, "signbit");
  auto iter = bool_result_op(out, self, "signbit");
  signbit_stub(iter.device_type(), iter);
  return iter.output();
}

Tensor isnan_op(const Tensor& self) { return float_class(self, FloatClass::IsNan, Tensor(), "isnan"); }

Tensor isinf_op(const Tensor& self) { return float_class(self, FloatClass::IsInf, Tensor(), "isinf"); }

Tensor isfinite_op(const Tensor& self) { return float_class(self, FloatClass::IsFinite, Tensor(), "isfinite"); }

Tensor isposinf_out(const Tensor& self, const Tensor& out) {
  check_bool_out(out, "isposinf");
  return float_class(self, FloatClass::IsPosInf, out, "isposinf");
}

Tensor isneginf_out(const Tensor& self, const Tensor& out) {
  check_bool_out(out, "isneginf");
  return float_class(self, FloatClass::IsNegInf, out, "isneginf");
}

// ---- floating-point functions -------------------------------------------------------

Tensor exp_out(const Tensor& self, const Tensor& out) { return unary_float(exp_stub, self, out, "exp"); }

Tensor exp2_out(const Tensor& self, const Tensor& out) { return unary_float(exp2_stub, self, out, "exp2"); }

Tensor expm1_out(const Tensor& self, const Tensor& out) { return unary_float(expm1_stub, self, out, "expm1"); }

Tensor log_out(const Tensor& self, const Tensor& out) { return unary_float(log_stub, self, out, "log"); }

Tensor log2_out(const Tensor& self, const Tensor& out) { return unary_float(log2_stub, self, out, "log2"); }

Tensor log10_out(const Tensor& self, const Tensor& out) { return unary_float(log10_stub, self, out, "log10"); }

Tensor log1p_out(const Tensor& self, const Tensor& out) { return unary_float(log1p_stub, self, out, "log1p"); }

Tensor sqrt_out(const Tensor& self, const Tensor& out) { return unary_float(sqrt_stub, self, out, "sqrt"); }

Tensor rsqrt_out(const Tensor& self, const Tensor& out) { return unary_float(rsqrt_stub, self, out, "rsqrt"); }

Tensor reciprocal_out(const Tensor& self, const Tensor& out) {
  return unary_float(reciprocal_stub, self, out, "reciprocal");
}

Tensor sin_out(const Tensor& self, const Tensor& out) { return unary_float(sin_stub, self, out, "sin"); }

Tensor cos_out(const Tensor& self, const Tensor& out) { return unary_float(cos_stub, self, out, "cos"); }

Tensor tan_out(const Tensor& self, const Tensor& out) { return unary_float(tan_stub, self, out, "tan"); }

Tensor asin_out(const Tensor& self, const Tensor& out) { return unary_float(asin_stub, self, out, "asin"); }

Tensor acos_out(const Tensor& self, const Tensor& out) { return unary_float(acos_stub, self, out, "acos"); }

Tensor atan_out(const Tensor& self, const Tensor& out) { return unary_float(atan_stub, self, out, "atan"); }

Tensor sinh_out(const Tensor& self, const Tensor& out) { return unary_float(sinh_stub, self, out, "sinh"); }

Tensor cosh_out(const Tensor& self, const Tensor& out) { return unary_float(cosh_stub, self, out, "cosh"); }

Tensor tanh_out(const Tensor& self, const Tensor& out) { return unary_float(tanh_stub, self, out, "tanh"); }

Tensor asinh_out(const Tensor& self, const Tensor& out) { return unary_float(asinh_stub, self, out, "asinh"); }

Tensor acosh_out(const Tensor& self, const Tensor& out) { return unary_float(acosh_stub, self, out, "acosh"); }

Tensor atanh_out(const Tensor& self, const Tensor& out) { return unary_float(atanh_stub, self, out, "atanh"); }

Tensor sigmoid_out(const Tensor& self, const Tensor& out) { return unary_float(sigmoid_stub, self, out, "sigmoid"); }

// logit(x, eps) = log(z / (1 - z)) with z = clamp(x, eps, 1 - eps) when eps is given.
Tensor logit_out(const Tensor& self, std::optional<double> eps, const Tensor& out) {
  auto iter = TensorIterator::unary_float_op(out, self, "logit");
  logit_stub(iter.device_type(), iter, eps ? *eps : -1.0);
  return iter.output();
}

Tensor erf_out(const Tensor& self, const Tensor& out) { return unary_float(erf_stub, self, out, "erf"); }

Tensor erfc_out(const Tensor& self, const Tensor& out) { return unary_float(erfc_stub, self, out, "erfc"); }

Tensor erfinv_out(const Tensor& self, const Tensor& out) { return unary_float(erfinv_stub, self, out, "erfinv"); }

Tensor lgamma_out(const Tensor& self, const Tensor& out) { return unary_float(lgamma_stub, self, out, "lgamma"); }

Tensor digamma_out(const Tensor& self, const Tensor& out) { return unary_float(digamma_stub, self, out, "digamma"); }

// ---- existing: neg ----------------------------------------------------------------------

Tensor neg_out(const Tensor& self, const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  auto iter = TensorIterator::unary_op(out, self, "neg");
  neg_stub(iter.device_type(), iter);
  return iter.output();
}

}  // namespace ember::at::native
