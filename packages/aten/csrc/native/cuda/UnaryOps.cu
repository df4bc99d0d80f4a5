// CUDA kernels of the elementwise unary operators (the stubs of UnaryOps.h), with
// the dtypes and formulas of cpu/UnaryOpsKernel.cpp.
//
// To keep compile time down, ops that share a dtype list share one kernel per dtype:
// the op is a run-time code switched on inside the element function (the branch is
// uniform across the grid, so it costs next to nothing next to the memory traffic).
#include <cstring>
#include <optional>

#include <ember/aten/Dispatch.h>

#include "../ScalarMath.h"
#include "../UnaryOps.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

namespace m = scalar_math;

// ---- floating-point functions (float, double; half types in float) ----
enum class FloatFn : int {
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Sigmoid,
  Erf,
  Erfc,
  Floor,
  Ceil,
  Trunc,
  Round,
  Frac,
};

template <typename T>
EMBER_HOST_DEVICE T apply_float_fn(FloatFn f, T x) {
  switch (f) {
    case FloatFn::Exp:
      return m::exp(x);
    case FloatFn::Exp2:
      return m::exp2(x);
    case FloatFn::Expm1:
      return m::expm1(x);
    case FloatFn::Log:
      return m::log(x);
    case FloatFn::Log2:
      return m::log2(x);
    case FloatFn::Log10:
      return m::log10(x);
    case FloatFn::Log1p:
      return m::log1p(x);
    case FloatFn::Sqrt:
      return m::sqrt(x);
    case FloatFn::Rsqrt:
      return T(1) / m::sqrt(x);
    case FloatFn::Reciprocal:
      return T(1) / x;
    case FloatFn::Sin:
      return m::sin(x);
    case FloatFn::Cos:
      return m::cos(x);
    case FloatFn::Tan:
      return m::tan(x);
    case FloatFn::Asin:
      return m::asin(x);
    case FloatFn::Acos:
      return m::acos(x);
    case FloatFn::Atan:
      return m::atan(x);
    case FloatFn::Sinh:
      return m::sinh(x);
    case FloatFn::Cosh:
      return m::cosh(x);
    case FloatFn::Tanh:
      return m::tanh(x);
    case FloatFn::Asinh:
      return m::asinh(x);
    case FloatFn::Acosh:
      return m::acosh(x);
    case FloatFn::Atanh:
      return m::atanh(x);
    case FloatFn::Sigmoid:
      return T(1) / (T(1) + m::exp(-x));
    case FloatFn::Erf:
      return m::erf(x);
    case FloatFn::Erfc:
      return m::erfc(x);
    case FloatFn::Floor:
      return m::floor(x);
    case FloatFn::Ceil:
      return m::ceil(x);
    case FloatFn::Trunc:
      return m::trunc(x);
    case FloatFn::Round:
      return m::nearbyint(x);
    case FloatFn::Frac:
      return x - m::trunc(x);
  }
  return x;
}

template <typename scalar_t>
void float_fn_impl(TensorIterator& iter, FloatFn f) {
  using opmath = opmath_t<scalar_t>;
  gpu_kernel(iter, [f] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    return static_cast<scalar_t>(apply_float_fn<opmath>(f, static_cast<opmath>(a)));
  });
}

void float_fn_kernel(TensorIterator& iter, FloatFn f, const char* name) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), name, [&] { float_fn_impl<scalar_t>(iter, f); });
}

// The heavier special functions, computed in double (erfinv and digamma as on the
// CPU; lgamma too, where CUDA's lgammaf is several ulps from the CPU's), in a kernel
// of their own so that their register use does not slow the common ones down.
enum class SpecialFn : int { Erfinv, Lgamma, Digamma };

template <typename scalar_t>
void special_fn_impl(TensorIterator& iter, SpecialFn f) {
  using opmath = opmath_t<scalar_t>;
  gpu_kernel(iter, [f] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    const opmath x = static_cast<opmath>(a);
    switch (f) {
      case SpecialFn::Erfinv:
        return static_cast<scalar_t>(m::erfinv_double(static_cast<double>(x)));
      case SpecialFn::Lgamma:
        return static_cast<scalar_t>(m::lgamma(static_cast<double>(x)));
      default:
        return static_cast<scalar_t>(m::digamma_double(static_cast<double>(x)));
    }
  });
}

void special_fn_kernel(TensorIterator& iter, SpecialFn f, const char* name) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), name, [&] { special_fn_impl<scalar_t>(iter, f); });
}

// logit(x) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0.
template <typename scalar_t>
void logit_impl(TensorIterator& iter, double eps) {
  using opmath = opmath_t<scalar_t>;
  const opmath lo = static_cast<opmath>(eps), hi = static_cast<opmath>(1 - eps);
  const bool clamp = eps >= 0;
  gpu_kernel(iter, [lo, hi, clamp] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    opmath x = static_cast<opmath>(a);
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);  // NaN passes through
    return static_cast<scalar_t>(m::log(x / (opmath(1) - x)));
  });
}

void logit_kernel_cuda(TensorIterator& iter, double eps) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "logit", [&] { logit_impl<scalar_t>(iter, eps); });
}

// ---- same dtype in and out, every numeric dtype: neg, abs, sign, square ----
enum class SameFn : int { Neg, Abs, Sign, Square };

template <typename scalar_t>
EMBER_HOST_DEVICE scalar_t apply_same_fn(SameFn f, scalar_t a) {
  if constexpr (std::is_integral_v<scalar_t>) {
    switch (f) {
      case SameFn::Neg:
        return static_cast<scalar_t>(-a);
      case SameFn::Abs:
        if constexpr (std::is_signed_v<scalar_t>) {
          return static_cast<scalar_t>(a < 0 ? -a : a);
        } else {
          return a;
        }
      case SameFn::Sign:
        if constexpr (std::is_signed_v<scalar_t>) {
          return static_cast<scalar_t>((scalar_t(0) < a) - (a < scalar_t(0)));
        } else {
          return static_cast<scalar_t>(a != 0);
        }
      default:
        return static_cast<scalar_t>(a * a);
    }
  } else {
    using opmath = opmath_t<scalar_t>;
    const opmath x = static_cast<opmath>(a);
    switch (f) {
      case SameFn::Neg:
        return static_cast<scalar_t>(-x);
      case SameFn::Abs:
        return static_cast<scalar_t>(m::fabs(x));
      case SameFn::Sign:
        return static_cast<scalar_t>(static_cast<opmath>((opmath(0) < x) - (x < opmath(0))));
      default:
        return static_cast<scalar_t>(x * x);
    }
  }
}

template <typename scalar_t>
void same_fn_impl(TensorIterator& iter, SameFn f) {
  gpu_kernel(iter, [f] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t { return apply_same_fn<scalar_t>(f, a); });
}

void same_fn_kernel(TensorIterator& iter, SameFn f, const char* name) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), name, [&] { same_fn_impl<scalar_t>(iter, f); });
}

void neg_kernel_cuda(TensorIterator& iter) { same_fn_kernel(iter, SameFn::Neg, "neg"); }
void abs_kernel_cuda(TensorIterator& iter) { same_fn_kernel(iter, SameFn::Abs, "abs"); }
void square_kernel_cuda(TensorIterator& iter) { same_fn_kernel(iter, SameFn::Square, "square"); }

// sign: -1, 0 or 1 (NaN and -0.0 give 0); bool stays itself.
void sign_kernel_cuda(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(bool a) -> bool { return a; });
    return;
  }
  same_fn_kernel(iter, SameFn::Sign, "sign");
}

// round(x, decimals): scale by 10^|decimals|, round half to even, scale back.
template <typename scalar_t>
void round_decimals_impl(TensorIterator& iter, int64_t decimals) {
  using opmath = opmath_t<scalar_t>;
  const bool neg = decimals < 0;
  const opmath ten_pow = static_cast<opmath>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
  gpu_kernel(iter, [ten_pow, neg] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    const opmath x = static_cast<opmath>(a);
    return static_cast<scalar_t>(neg ? m::nearbyint(x / ten_pow) * ten_pow : m::nearbyint(x * ten_pow) / ten_pow);
  });
}

void round_decimals_kernel_cuda(TensorIterator& iter, int64_t decimals) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "round",
                                         [&] { round_decimals_impl<scalar_t>(iter, decimals); });
}

void bitwise_not_kernel_cuda(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(bool a) -> bool { return !a; });
    return;
  }
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "bitwise_not", [&] {
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t { return static_cast<scalar_t>(~a); });
  });
}

// nan_to_num: NaN -> nan (default 0), +inf -> posinf (default: the dtype's max),
// -inf -> neginf (default: the dtype's lowest).
template <typename scalar_t>
void nan_to_num_impl(TensorIterator& iter, std::optional<double> nan, std::optional<double> posinf,
                     std::optional<double> neginf) {
  using lim = std::numeric_limits<scalar_t>;
  using opmath = opmath_t<scalar_t>;
  const scalar_t nan_v = static_cast<scalar_t>(nan.value_or(0.0));
  const scalar_t pos_v = posinf ? static_cast<scalar_t>(*posinf) : lim::max();
  const scalar_t neg_v = neginf ? static_cast<scalar_t>(*neginf) : lim::lowest();
  gpu_kernel(iter, [nan_v, pos_v, neg_v] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    const opmath x = static_cast<opmath>(a);
    if (x != x) return nan_v;
    if (m::isinf(x)) return x > 0 ? pos_v : neg_v;
    return a;
  });
}

void nan_to_num_kernel_cuda(TensorIterator& iter, std::optional<double> nan, std::optional<double> posinf,
                            std::optional<double> neginf) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "nan_to_num",
                                         [&] { nan_to_num_impl<scalar_t>(iter, nan, posinf, neginf); });
}

// ---- bool results: logical_not, signbit (every dtype), the float classes ----
EMBER_HOST_DEVICE inline bool sign_bit(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof(u));
  return (u >> 31) != 0;
}
EMBER_HOST_DEVICE inline bool sign_bit(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof(u));
  return (u >> 63) != 0;
}

template <typename scalar_t>
void bool_fn_impl(TensorIterator& iter, bool is_signbit) {
  gpu_kernel(iter, [is_signbit] EMBER_GPU_LAMBDA(scalar_t a) -> bool {
    if (!is_signbit) return static_cast<opmath_t<scalar_t>>(a) == opmath_t<scalar_t>(0);
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return false;
    } else if constexpr (std::is_unsigned_v<scalar_t>) {
      return false;
    } else if constexpr (std::is_integral_v<scalar_t>) {
      return a < 0;
    } else {
      return sign_bit(static_cast<opmath_t<scalar_t>>(a));
    }
  });
}

void logical_not_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.input_dtype(), "logical_not",
                                             [&] { bool_fn_impl<scalar_t>(iter, false); });
}

void signbit_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.input_dtype(), "signbit",
                                             [&] { bool_fn_impl<scalar_t>(iter, true); });
}

template <typename scalar_t>
void float_class_impl(TensorIterator& iter, FloatClass which) {
  using opmath = opmath_t<scalar_t>;
  gpu_kernel(iter, [which] EMBER_GPU_LAMBDA(scalar_t a) -> bool {
    const opmath x = static_cast<opmath>(a);
    const opmath inf = std::numeric_limits<opmath>::infinity();
    switch (which) {
      case FloatClass::IsNan:
        return x != x;
      case FloatClass::IsInf:
        return m::fabs(x) == inf;
      case FloatClass::IsPosInf:
        return x == inf;
      case FloatClass::IsNegInf:
        return x == -inf;
      default:
        return m::isfinite(x);
    }
  });
}

void float_class_kernel_cuda(TensorIterator& iter, FloatClass which) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.input_dtype(), "isnan", [&] { float_class_impl<scalar_t>(iter, which); });
}

#define EMBER_FLOAT_FN_KERNEL_(name, Fn) \
  void name##_kernel_cuda(TensorIterator& iter) { float_fn_kernel(iter, FloatFn::Fn, #name); }
EMBER_FLOAT_FN_KERNEL_(exp, Exp)
EMBER_FLOAT_FN_KERNEL_(exp2, Exp2)
EMBER_FLOAT_FN_KERNEL_(expm1, Expm1)
EMBER_FLOAT_FN_KERNEL_(log, Log)
EMBER_FLOAT_FN_KERNEL_(log2, Log2)
EMBER_FLOAT_FN_KERNEL_(log10, Log10)
EMBER_FLOAT_FN_KERNEL_(log1p, Log1p)
EMBER_FLOAT_FN_KERNEL_(sqrt, Sqrt)
EMBER_FLOAT_FN_KERNEL_(rsqrt, Rsqrt)
EMBER_FLOAT_FN_KERNEL_(reciprocal, Reciprocal)
EMBER_FLOAT_FN_KERNEL_(sin, Sin)
EMBER_FLOAT_FN_KERNEL_(cos, Cos)
EMBER_FLOAT_FN_KERNEL_(tan, Tan)
EMBER_FLOAT_FN_KERNEL_(asin, Asin)
EMBER_FLOAT_FN_KERNEL_(acos, Acos)
EMBER_FLOAT_FN_KERNEL_(atan, Atan)
EMBER_FLOAT_FN_KERNEL_(sinh, Sinh)
EMBER_FLOAT_FN_KERNEL_(cosh, Cosh)
EMBER_FLOAT_FN_KERNEL_(tanh, Tanh)
EMBER_FLOAT_FN_KERNEL_(asinh, Asinh)
EMBER_FLOAT_FN_KERNEL_(acosh, Acosh)
EMBER_FLOAT_FN_KERNEL_(atanh, Atanh)
EMBER_FLOAT_FN_KERNEL_(sigmoid, Sigmoid)
EMBER_FLOAT_FN_KERNEL_(erf, Erf)
EMBER_FLOAT_FN_KERNEL_(erfc, Erfc)
EMBER_FLOAT_FN_KERNEL_(floor, Floor)
EMBER_FLOAT_FN_KERNEL_(ceil, Ceil)
EMBER_FLOAT_FN_KERNEL_(trunc, Trunc)
EMBER_FLOAT_FN_KERNEL_(round, Round)
EMBER_FLOAT_FN_KERNEL_(frac, Frac)
#undef EMBER_FLOAT_FN_KERNEL_

void erfinv_kernel_cuda(TensorIterator& iter) { special_fn_kernel(iter, SpecialFn::Erfinv, "erfinv"); }
void lgamma_kernel_cuda(TensorIterator& iter) { special_fn_kernel(iter, SpecialFn::Lgamma, "lgamma"); }
void digamma_kernel_cuda(TensorIterator& iter) { special_fn_kernel(iter, SpecialFn::Digamma, "digamma"); }

}  // namespace

REGISTER_CUDA_DISPATCH(neg_stub, &neg_kernel_cuda);
REGISTER_CUDA_DISPATCH(exp_stub, &exp_kernel_cuda);
REGISTER_CUDA_DISPATCH(abs_stub, &abs_kernel_cuda);
REGISTER_CUDA_DISPATCH(sign_stub, &sign_kernel_cuda);
REGISTER_CUDA_DISPATCH(square_stub, &square_kernel_cuda);
REGISTER_CUDA_DISPATCH(floor_stub, &floor_kernel_cuda);
REGISTER_CUDA_DISPATCH(ceil_stub, &ceil_kernel_cuda);
REGISTER_CUDA_DISPATCH(round_stub, &round_kernel_cuda);
REGISTER_CUDA_DISPATCH(round_decimals_stub, &round_decimals_kernel_cuda);
REGISTER_CUDA_DISPATCH(trunc_stub, &trunc_kernel_cuda);
REGISTER_CUDA_DISPATCH(frac_stub, &frac_kernel_cuda);
REGISTER_CUDA_DISPATCH(bitwise_not_stub, &bitwise_not_kernel_cuda);
REGISTER_CUDA_DISPATCH(logical_not_stub, &logical_not_kernel_cuda);
REGISTER_CUDA_DISPATCH(signbit_stub, &signbit_kernel_cuda);
REGISTER_CUDA_DISPATCH(float_class_stub, &float_class_kernel_cuda);
REGISTER_CUDA_DISPATCH(nan_to_num_stub, &nan_to_num_kernel_cuda);
REGISTER_CUDA_DISPATCH(exp2_stub, &exp2_kernel_cuda);
REGISTER_CUDA_DISPATCH(expm1_stub, &expm1_kernel_cuda);
REGISTER_CUDA_DISPATCH(log_stub, &log_kernel_cuda);
REGISTER_CUDA_DISPATCH(log2_stub, &log2_kernel_cuda);
REGISTER_CUDA_DISPATCH(log10_stub, &log10_kernel_cuda);
REGISTER_CUDA_DISPATCH(log1p_stub, &log1p_kernel_cuda);
REGISTER_CUDA_DISPATCH(sqrt_stub, &sqrt_kernel_cuda);
REGISTER_CUDA_DISPATCH(rsqrt_stub, &rsqrt_kernel_cuda);
REGISTER_CUDA_DISPATCH(reciprocal_stub, &reciprocal_kernel_cuda);
REGISTER_CUDA_DISPATCH(sin_stub, &sin_kernel_cuda);
REGISTER_CUDA_DISPATCH(cos_stub, &cos_kernel_cuda);
REGISTER_CUDA_DISPATCH(tan_stub, &tan_kernel_cuda);
REGISTER_CUDA_DISPATCH(asin_stub, &asin_kernel_cuda);
REGISTER_CUDA_DISPATCH(acos_stub, &acos_kernel_cuda);
REGISTER_CUDA_DISPATCH(atan_stub, &atan_kernel_cuda);
REGISTER_CUDA_DISPATCH(sinh_stub, &sinh_kernel_cuda);
REGISTER_CUDA_DISPATCH(cosh_stub, &cosh_kernel_cuda);
REGISTER_CUDA_DISPATCH(tanh_stub, &tanh_kernel_cuda);
REGISTER_CUDA_DISPATCH(asinh_stub, &asinh_kernel_cuda);
REGISTER_CUDA_DISPATCH(acosh_stub, &acosh_kernel_cuda);
REGISTER_CUDA_DISPATCH(atanh_stub, &atanh_kernel_cuda);
REGISTER_CUDA_DISPATCH(sigmoid_stub, &sigmoid_kernel_cuda);
REGISTER_CUDA_DISPATCH(logit_stub, &logit_kernel_cuda);
REGISTER_CUDA_DISPATCH(erf_stub, &erf_kernel_cuda);
REGISTER_CUDA_DISPATCH(erfc_stub, &erfc_kernel_cuda);
REGISTER_CUDA_DISPATCH(erfinv_stub, &erfinv_kernel_cuda);
REGISTER_CUDA_DISPATCH(lgamma_stub, &lgamma_kernel_cuda);
REGISTER_CUDA_DISPATCH(digamma_stub, &digamma_kernel_cuda);

}  // namespace ember::at::native
