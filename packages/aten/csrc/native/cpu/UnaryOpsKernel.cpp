// CPU kernels of the elementwise unary operators.
//
// Floating-point functions are small structs `Op` with `apply(T)` for the scalar
// math (float / double; half and bfloat16 compute in float) and, where the float32
// path is hot, `vec(Vectorized<float>)`. One template, floating_kernel<Op>, turns
// each into a kernel, so an op is a few lines and its dtype list lives in one place.
#include <cmath>
#include <cstring>
#include <limits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../ScalarMath.h"
#include "../UnaryOps.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;

template <typename T>
constexpr bool kVectorizable =
    std::is_same_v<T, float> || std::is_same_v<T, double> || (std::is_integral_v<T> && !std::is_same_v<T, bool>);

// digamma and erfinv are computed in double by the formulas of ScalarMath.h (shared with
// the CUDA kernel).
using scalar_math::digamma_double;
using scalar_math::erfinv_double;

// ---- floating-point functions ------------------------------------------------------------

// Ops with a vectorised float path set kVecFloat and define vec().
#define EMBER_FLOAT_OP(Name, op_name, expr)      \
  struct Name {                                  \
    static constexpr const char* name = op_name; \
    static constexpr bool kVecFloat = false;     \
    template <typename T>                        \
    static T apply(T x) {                        \
      return expr;                               \
    }                                            \
  }

EMBER_FLOAT_OP(Exp2Op, "exp2", std::exp2(x));
EMBER_FLOAT_OP(Expm1Op, "expm1", std::expm1(x));
EMBER_FLOAT_OP(Log2Op, "log2", std::log2(x));
EMBER_FLOAT_OP(Log10Op, "log10", std::log10(x));
EMBER_FLOAT_OP(Log1pOp, "log1p", std::log1p(x));
EMBER_FLOAT_OP(SinOp, "sin", std::sin(x));
EMBER_FLOAT_OP(CosOp, "cos", std::cos(x));
EMBER_FLOAT_OP(TanOp, "tan", std::tan(x));
EMBER_FLOAT_OP(AsinOp, "asin", std::asin(x));
EMBER_FLOAT_OP(AcosOp, "acos", std::acos(x));
EMBER_FLOAT_OP(AtanOp, "atan", std::atan(x));
EMBER_FLOAT_OP(SinhOp, "sinh", std::sinh(x));
EMBER_FLOAT_OP(CoshOp, "cosh", std::cosh(x));
EMBER_FLOAT_OP(AsinhOp, "asinh", std::asinh(x));
EMBER_FLOAT_OP(AcoshOp, "acosh", std::acosh(x));
EMBER_FLOAT_OP(AtanhOp, "atanh", std::atanh(x));
EMBER_FLOAT_OP(ErfOp, "erf", std::erf(x));
EMBER_FLOAT_OP(ErfcOp, "erfc", std::erfc(x));
EMBER_FLOAT_OP(LgammaOp, "lgamma", std::lgamma(x));
EMBER_FLOAT_OP(ErfinvOp, "erfinv", static_cast<T>(erfinv_double(static_cast<double>(x))));
EMBER_FLOAT_OP(DigammaOp, "digamma", static_cast<T>(digamma_double(static_cast<double>(x))));
#undef EMBER_FLOAT_OP

struct ExpOp {
  static constexpr const char* name = "exp";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return std::exp(x);
  }
  static Vectorized<float> vec(Vectorized<float> x) { return vec::exp(x); }
};
struct LogOp {
  static constexpr const char* name = "log";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return std::log(x);
  }
  static Vectorized<float> vec(Vectorized<float> x) { return vec::log(x); }
};
struct TanhOp {
  static constexpr const char* name = "tanh";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return std::tanh(x);
  }
  static Vectorized<float> vec(Vectorized<float> x) { return vec::tanh(x); }
};
struct SigmoidOp {
  static constexpr const char* name = "sigmoid";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return T(1) / (T(1) + std::exp(-x));
  }
  static Vectorized<float> vec(Vectorized<float> x) { return vec::sigmoid(x); }
};
struct SqrtOp {
  static constexpr const char* name = "sqrt";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return std::sqrt(x);
  }
  static Vectorized<float> vec(Vectorized<float> x) { return vec::sqrt(x); }
};
struct RsqrtOp {
  static constexpr const char* name = "rsqrt";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return T(1) / std::sqrt(x);
  }
  static Vectorized<float> vec(Vectorized<float> x) { return Vectorized<float>(1.0f) / vec::sqrt(x); }
};
struct ReciprocalOp {
  static constexpr const char* name = "reciprocal";
  static constexpr bool kVecFloat = true;
  template <typename T>
  static T apply(T x) {
    return T(1) / x;
  }
  static Vectorized<float> vec(Vectorized<float> x) { return Vectorized<float>(1.0f) / x; }
};

template <typename scalar_t, typename Op>
void floating_impl(TensorIterator& iter) {
  if constexpr (std::is_same_v<scalar_t, float> && Op::kVecFloat) {
    cpu_kernel_vec(iter, [](float a) -> float { return Op::apply(a); }, [](Vectorized<float> a) { return Op::vec(a); });
  } else {
    using opmath = opmath_t<scalar_t>;
    cpu_kernel(iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(Op::apply(static_cast<opmath>(a))); });
  }
}

template <typename Op>
void floating_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), Op::name, [&] { floating_impl<scalar_t, Op>(iter); });
}

// logit(x) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0.
template <typename scalar_t>
void logit_impl(TensorIterator& iter, double eps) {
  using opmath = opmath_t<scalar_t>;
  const opmath lo = static_cast<opmath>(eps), hi = static_cast<opmath>(1 - eps);
  if (eps < 0) {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t {
      const opmath x = static_cast<opmath>(a);
      return static_cast<scalar_t>(std::log(x / (opmath(1) - x)));
    });
  } else {
    cpu_kernel(iter, [lo, hi](scalar_t a) -> scalar_t {
      opmath x = static_cast<opmath>(a);
      x = x < lo ? lo : (x > hi ? hi : x);  // NaN passes through
      return static_cast<scalar_t>(std::log(x / (opmath(1) - x)));
    });
  }
}

void logit_kernel(TensorIterator& iter, double eps) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "logit", [&] { logit_impl<scalar_t>(iter, eps); });
}

// ---- same dtype in and out --------------------------------------------------------------

template <typename scalar_t>
void neg_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(-a); },
        [](Vectorized<scalar_t> a) { return -a; });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(-static_cast<float>(a)); });
  }
}

void neg_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "neg", [&] { neg_impl<scalar_t>(iter); });
}

template <typename scalar_t>
void abs_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter,
        [](scalar_t a) -> scalar_t {
          if constexpr (std::is_floating_point_v<scalar_t>)
            return std::fabs(a);
          else if constexpr (std::is_signed_v<scalar_t>)
            return static_cast<scalar_t>(a < 0 ? -a : a);
          else
            return a;
        },
        [](Vectorized<scalar_t> a) { return vec::abs(a); });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(std::fabs(static_cast<float>(a))); });
  }
}

void abs_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "abs", [&] { abs_impl<scalar_t>(iter); });
}

// sign: -1, 0 or 1 (NaN gives 0, -0.0 gives 0, as PyTorch's (0 < x) - (x < 0)).
template <typename scalar_t>
void sign_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    using V = typename Vectorized<scalar_t>::V;
    cpu_kernel_vec(
        iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>((scalar_t(0) < a) - (a < scalar_t(0))); },
        [](Vectorized<scalar_t> a) {
          const V zero = V{};
          const V one = zero + scalar_t(1);
          V r = (a.v > zero) ? one : zero;
          r = (a.v < zero) ? zero - one : r;
          return Vectorized<scalar_t>::make(r);
        });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t {
      const float x = static_cast<float>(a);
      return static_cast<scalar_t>(static_cast<float>((0.0f < x) - (x < 0.0f)));
    });
  }
}

void sign_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {
    cpu_kernel(iter, [](bool a) -> bool { return a; });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "sign", [&] { sign_impl<scalar_t>(iter); });
}

template <typename scalar_t>
void square_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(a * a); },
        [](Vectorized<scalar_t> a) { return a * a; });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t {
      const float x = static_cast<float>(a);
      return static_cast<scalar_t>(x * x);
    });
  }
}

void square_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "square", [&] { square_impl<scalar_t>(iter); });
}

// floor / ceil / trunc / round (half to even) / frac: floating types only (the out
// kernels copy integer tensors).
enum class Rounding { Floor, Ceil, Trunc, Round, Frac };

template <Rounding R, typename T>
inline T round_op(T x) {
  if constexpr (R == Rounding::Floor)
    return std::floor(x);
  else if constexpr (R == Rounding::Ceil)
    return std::ceil(x);
  else if constexpr (R == Rounding::Trunc)
    return std::trunc(x);
  else if constexpr (R == Rounding::Round)
    return std::nearbyint(x);
  else
    return x - std::trunc(x);
}

template <Rounding R, typename scalar_t>
void rounding_impl(TensorIterator& iter) {
  if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
    cpu_kernel_vec(
        iter, [](scalar_t a) -> scalar_t { return round_op<R>(a); },
        [](Vectorized<scalar_t> a) {
          Vectorized<scalar_t> r;
          for (int i = 0; i < Vectorized<scalar_t>::size(); ++i) r.v[i] = round_op<R>(a.v[i]);
          return r;
        });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(round_op<R>(static_cast<float>(a))); });
  }
}

template <Rounding R>
void rounding_kernel(TensorIterator& iter) {
  static constexpr const char* names[] = {"floor", "ceil", "trunc", "round", "frac"};
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), names[static_cast<int>(R)],
                                         [&] { rounding_impl<R, scalar_t>(iter); });
}

// round(x, decimals): scale by 10^|decimals|, round half to even, scale back
// (dividing first for negative decimals, so large scales stay finite).
template <typename scalar_t>
void round_decimals_impl(TensorIterator& iter, int64_t decimals) {
  using opmath = opmath_t<scalar_t>;
  const bool neg = decimals < 0;
  const opmath ten_pow = static_cast<opmath>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
  cpu_kernel(iter, [ten_pow, neg](scalar_t a) -> scalar_t {
    const opmath x = static_cast<opmath>(a);
    return static_cast<scalar_t>(neg ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow);
  });
}

void round_decimals_kernel(TensorIterator& iter, int64_t decimals) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "round",
                                         [&] { round_decimals_impl<scalar_t>(iter, decimals); });
}

template <typename scalar_t>
void bitwise_not_impl(TensorIterator& iter) {
  cpu_kernel_vec(
      iter, [](scalar_t a) -> scalar_t { return static_cast<scalar_t>(~a); },
      [](Vectorized<scalar_t> a) { return Vectorized<scalar_t>::make(~a.v); });
}

void bitwise_not_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {  // a bool is its byte != 0 (see CopyKernel.cpp)
    cpu_kernel(iter, [](uint8_t a) -> bool { return a == 0; });
    return;
  }
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "bitwise_not", [&] { bitwise_not_impl<scalar_t>(iter); });
}

// nan_to_num: NaN -> nan (default 0), +inf -> posinf (default: the dtype's max),
// -inf -> neginf (default: the dtype's lowest).
template <typename scalar_t>
void nan_to_num_impl(TensorIterator& iter, std::optional<double> nan, std::optional<double> posinf,
                     std::optional<double> neginf) {
  using lim = std::numeric_limits<scalar_t>;
  const scalar_t nan_v = static_cast<scalar_t>(nan.value_or(0.0));
  const scalar_t pos_v = posinf ? static_cast<scalar_t>(*posinf) : lim::max();
  const scalar_t neg_v = neginf ? static_cast<scalar_t>(*neginf) : lim::lowest();
  cpu_kernel(iter, [nan_v, pos_v, neg_v](scalar_t a) -> scalar_t {
    const opmath_t<scalar_t> x = static_cast<opmath_t<scalar_t>>(a);
    if (x != x) return nan_v;
    if (std::isinf(x)) return x > 0 ? pos_v : neg_v;
    return a;
  });
}

void nan_to_num_kernel(TensorIterator& iter, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "nan_to_num",
                                         [&] { nan_to_num_impl<scalar_t>(iter, nan, posinf, neginf); });
}

// ---- bool results (the input keeps its dtype; the output is bool) ----------------------

template <typename scalar_t>
void logical_not_impl(TensorIterator& iter) {
  cpu_kernel(iter, [](scalar_t a) -> bool { return static_cast<opmath_t<scalar_t>>(a) == opmath_t<scalar_t>(0); });
}

void logical_not_kernel(TensorIterator& iter) {
  if (iter.input_dtype() == ScalarType::Bool) {  // a bool is its byte != 0 (see CopyKernel.cpp)
    logical_not_impl<uint8_t>(iter);
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.input_dtype(), "logical_not",
                                             [&] { logical_not_impl<scalar_t>(iter); });
}

// The sign bit read from the bits (GCC 12 crashes vectorising std::signbit loops).
inline bool sign_bit(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return (u >> 31) != 0;
}
inline bool sign_bit(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof(u));
  return (u >> 63) != 0;
}

// signbit: the sign bit of floats (-0.0 and -NaN count), x < 0 for integers.
template <typename scalar_t>
void signbit_impl(TensorIterator& iter) {
  cpu_kernel(iter, [](scalar_t a) -> bool {
    if constexpr (std::is_same_v<scalar_t, bool>)
      return false;
    else if constexpr (std::is_integral_v<scalar_t>)
      return a < 0;
    else
      return sign_bit(static_cast<opmath_t<scalar_t>>(a));
  });
}

void signbit_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.input_dtype(), "signbit", [&] { signbit_impl<scalar_t>(iter); });
}

// isnan / isinf / isposinf / isneginf / isfinite of floating inputs (UnaryOps.cpp
// fills the constant answer for integer and bool inputs).
template <typename scalar_t>
void float_class_impl(TensorIterator& iter, FloatClass which) {
  using opmath = opmath_t<scalar_t>;
  constexpr opmath inf = std::numeric_limits<opmath>::infinity();
  switch (which) {
    case FloatClass::IsNan:
      cpu_kernel(iter, [](scalar_t a) -> bool { return static_cast<opmath>(a) != static_cast<opmath>(a); });
      break;
    case FloatClass::IsInf:
      cpu_kernel(iter, [](scalar_t a) -> bool { return std::fabs(static_cast<opmath>(a)) == inf; });
      break;
    case FloatClass::IsPosInf:
      cpu_kernel(iter, [](scalar_t a) -> bool { return static_cast<opmath>(a) == inf; });
      break;
    case FloatClass::IsNegInf:
      cpu_kernel(iter, [](scalar_t a) -> bool { return static_cast<opmath>(a) == -inf; });
      break;
    case FloatClass::IsFinite:
      cpu_kernel(iter, [](scalar_t a) -> bool { return std::isfinite(static_cast<opmath>(a)); });
      break;
  }
}

void float_class_kernel(TensorIterator& iter, FloatClass which) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.input_dtype(), "isnan", [&] { float_class_impl<scalar_t>(iter, which); });
}

void exp_kernel(TensorIterator& iter) { floating_kernel<ExpOp>(iter); }
void exp2_kernel(TensorIterator& iter) { floating_kernel<Exp2Op>(iter); }
void expm1_kernel(TensorIterator& iter) { floating_kernel<Expm1Op>(iter); }
void log_kernel(TensorIterator& iter) { floating_kernel<LogOp>(iter); }
void log2_kernel(TensorIterator& iter) { floating_kernel<Log2Op>(iter); }
void log10_kernel(TensorIterator& iter) { floating_kernel<Log10Op>(iter); }
void log1p_kernel(TensorIterator& iter) { floating_kernel<Log1pOp>(iter); }
void sqrt_kernel(TensorIterator& iter) { floating_kernel<SqrtOp>(iter); }
void rsqrt_kernel(TensorIterator& iter) { floating_kernel<RsqrtOp>(iter); }
void reciprocal_kernel(TensorIterator& iter) { floating_kernel<ReciprocalOp>(iter); }
void sin_kernel(TensorIterator& iter) { floating_kernel<SinOp>(iter); }
void cos_kernel(TensorIterator& iter) { floating_kernel<CosOp>(iter); }
void tan_kernel(TensorIterator& iter) { floating_kernel<TanOp>(iter); }
void asin_kernel(TensorIterator& iter) { floating_kernel<AsinOp>(iter); }
void acos_kernel(TensorIterator& iter) { floating_kernel<AcosOp>(iter); }
void atan_kernel(TensorIterator& iter) { floating_kernel<AtanOp>(iter); }
void sinh_kernel(TensorIterator& iter) { floating_kernel<SinhOp>(iter); }
void cosh_kernel(TensorIterator& iter) { floating_kernel<CoshOp>(iter); }
void tanh_kernel(TensorIterator& iter) { floating_kernel<TanhOp>(iter); }
void asinh_kernel(TensorIterator& iter) { floating_kernel<AsinhOp>(iter); }
void acosh_kernel(TensorIterator& iter) { floating_kernel<AcoshOp>(iter); }
void atanh_kernel(TensorIterator& iter) { floating_kernel<AtanhOp>(iter); }
void sigmoid_kernel(TensorIterator& iter) { floating_kernel<SigmoidOp>(iter); }
void erf_kernel(TensorIterator& iter) { floating_kernel<ErfOp>(iter); }
void erfc_kernel(TensorIterator& iter) { floating_kernel<ErfcOp>(iter); }
void erfinv_kernel(TensorIterator& iter) { floating_kernel<ErfinvOp>(iter); }
void lgamma_kernel(TensorIterator& iter) { floating_kernel<LgammaOp>(iter); }
void digamma_kernel(TensorIterator& iter) { floating_kernel<DigammaOp>(iter); }
void floor_kernel(TensorIterator& iter) { rounding_kernel<Rounding::Floor>(iter); }
void ceil_kernel(TensorIterator& iter) { rounding_kernel<Rounding::Ceil>(iter); }
void trunc_kernel(TensorIterator& iter) { rounding_kernel<Rounding::Trunc>(iter); }
void round_kernel(TensorIterator& iter) { rounding_kernel<Rounding::Round>(iter); }
void frac_kernel(TensorIterator& iter) { rounding_kernel<Rounding::Frac>(iter); }

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(neg_stub, &neg_kernel);
REGISTER_DISPATCH(exp_stub, &exp_kernel);
REGISTER_DISPATCH(abs_stub, &abs_kernel);
REGISTER_DISPATCH(sign_stub, &sign_kernel);
REGISTER_DISPATCH(square_stub, &square_kernel);
REGISTER_DISPATCH(floor_stub, &floor_kernel);
REGISTER_DISPATCH(ceil_stub, &ceil_kernel);
REGISTER_DISPATCH(round_stub, &round_kernel);
REGISTER_DISPATCH(round_decimals_stub, &round_decimals_kernel);
REGISTER_DISPATCH(trunc_stub, &trunc_kernel);
REGISTER_DISPATCH(frac_stub, &frac_kernel);
REGISTER_DISPATCH(bitwise_not_stub, &bitwise_not_kernel);
REGISTER_DISPATCH(logical_not_stub, &logical_not_kernel);
REGISTER_DISPATCH(signbit_stub, &signbit_kernel);
REGISTER_DISPATCH(float_class_stub, &float_class_kernel);
REGISTER_DISPATCH(nan_to_num_stub, &nan_to_num_kernel);
REGISTER_DISPATCH(exp2_stub, &exp2_kernel);
REGISTER_DISPATCH(expm1_stub, &expm1_kernel);
REGISTER_DISPATCH(log_stub, &log_kernel);
REGISTER_DISPATCH(log2_stub, &log2_kernel);
REGISTER_DISPATCH(log10_stub, &log10_kernel);
REGISTER_DISPATCH(log1p_stub, &log1p_kernel);
REGISTER_DISPATCH(sqrt_stub, &sqrt_kernel);
REGISTER_DISPATCH(rsqrt_stub, &rsqrt_kernel);
REGISTER_DISPATCH(reciprocal_stub, &reciprocal_kernel);
REGISTER_DISPATCH(sin_stub, &sin_kernel);
REGISTER_DISPATCH(cos_stub, &cos_kernel);
REGISTER_DISPATCH(tan_stub, &tan_kernel);
REGISTER_DISPATCH(asin_stub, &asin_kernel);
REGISTER_DISPATCH(acos_stub, &acos_kernel);
REGISTER_DISPATCH(atan_stub, &atan_kernel);
REGISTER_DISPATCH(sinh_stub, &sinh_kernel);
REGISTER_DISPATCH(cosh_stub, &cosh_kernel);
REGISTER_DISPATCH(tanh_stub, &tanh_kernel);
REGISTER_DISPATCH(asinh_stub, &asinh_kernel);
REGISTER_DISPATCH(acosh_stub, &acosh_kernel);
REGISTER_DISPATCH(atanh_stub, &atanh_kernel);
REGISTER_DISPATCH(sigmoid_stub, &sigmoid_kernel);
REGISTER_DISPATCH(logit_stub, &logit_kernel);
REGISTER_DISPATCH(erf_stub, &erf_kernel);
REGISTER_DISPATCH(erfc_stub, &erfc_kernel);
REGISTER_DISPATCH(erfinv_stub, &erfinv_kernel);
REGISTER_DISPATCH(lgamma_stub, &lgamma_kernel);
REGISTER_DISPATCH(digamma_stub, &digamma_kernel);

}  // namespace ember::at::native
