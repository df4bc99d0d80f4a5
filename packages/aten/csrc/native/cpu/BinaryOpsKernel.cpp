// CPU kernels of the elementwise binary operators: add/sub (with alpha), mul, the
// three divisions, remainder, fmod, pow, atan2, hypot, copysign, maximum/minimum,
// fmax/fmin, the bitwise operators, xlogy, logaddexp(2), heaviside, gcd/lcm, nextafter.
#include <cmath>
#include <limits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../BinaryOps.h"
#include "../BinaryOpsMath.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;
namespace bm = binary_math;  // the scalar formulas, shared with cuda/BinaryOps.cu

template <typename T>
constexpr bool kVectorizable =
    std::is_same_v<T, float> || std::is_same_v<T, double> || (std::is_integral_v<T> && !std::is_same_v<T, bool>);
template <typename T>
constexpr bool kVecFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Integer division by zero raises, as in PyTorch ("ZeroDivisionError").
template <typename T>
inline void check_int_divisor(T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) throw c10::Error("ZeroDivisionError");
  }
}

// Each kernel body is a template over scalar_t so that `if constexpr` discards the
// branches a dtype cannot compile (a dispatch lambda is not a template).
template <typename scalar_t>
void add_impl(TensorIterator& iter, const Scalar& alpha_scalar) {
  using opmath = opmath_t<scalar_t>;
  const opmath alpha = alpha_scalar.to<opmath>();
  if constexpr (kVectorizable<scalar_t>) {
    if (alpha == opmath(1)) {
      cpu_kernel_vec(
          iter, [](scalar_t a, scalar_t b) -> scalar_t { return a + b; },
          [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a + b; });
    } else {
      const Vectorized<scalar_t> valpha(alpha);
      cpu_kernel_vec(
          iter, [alpha](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(a + alpha * b); },
          [valpha](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a + valpha * b; });
    }
  } else {
    cpu_kernel(iter, [alpha](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<opmath>(a) + alpha * static_cast<opmath>(b));
    });
  }
}

void add_kernel(TensorIterator& iter, const Scalar& alpha_scalar) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    const bool alpha = alpha_scalar.toBool();
    cpu_kernel(iter, [alpha](bool a, bool b) -> bool { return a || (alpha && b); });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "add", [&] { add_impl<scalar_t>(iter, alpha_scalar); });
}

template <typename scalar_t>
void mul_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return a * b; },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a * b; });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<float>(a) * static_cast<float>(b));
    });
  }
}

void mul_kernel(TensorIterator& iter) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    cpu_kernel(iter, [](bool a, bool b) -> bool { return a && b; });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "mul", [&] { mul_impl<scalar_t>(iter); });
}

template <typename scalar_t>
void div_true_impl(TensorIterator& iter) {
  if constexpr (kVecFloat<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return a / b; },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a / b; });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<float>(a) / static_cast<float>(b));
    });
  }
}

void div_true_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "div", [&] { div_true_impl<scalar_t>(iter); });
}

// div (rounding_mode "trunc" / "floor"), remainder and fmod of every numeric dtype: an
// integer divisor of zero raises before the formula (BinaryOpsMath.h) runs.
#define EMBER_DIVISION_KERNEL_(NAME, OP_NAME)                             \
  void NAME##_kernel(TensorIterator& iter) {                              \
    EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), OP_NAME, [&] { \
      cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {           \
        check_int_divisor(b);                                             \
        return bm::NAME(a, b);                                            \
      });                                                                 \
    });                                                                   \
  }
EMBER_DIVISION_KERNEL_(div_trunc, "div")
EMBER_DIVISION_KERNEL_(div_floor, "div")
EMBER_DIVISION_KERNEL_(remainder, "remainder")
EMBER_DIVISION_KERNEL_(fmod, "fmod")
#undef EMBER_DIVISION_KERNEL_

// ---- pow -------------------------------------------------------------------------

template <typename scalar_t>
void pow_tensor_tensor_impl(TensorIterator& iter) {
  if constexpr (std::is_integral_v<scalar_t>) {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::powi(a, b); });
  } else {
    using opmath = opmath_t<scalar_t>;
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(std::pow(static_cast<opmath>(a), static_cast<opmath>(b)));
    });
  }
}

void pow_tensor_tensor_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "pow", [&] { pow_tensor_tensor_impl<scalar_t>(iter); });
}

// Float base, exponent known on the host: the common exponents are cheaper than pow.
// (The vectorized lambdas are generic so that they are never instantiated for Half.)
template <typename scalar_t>
void pow_float_scalar(TensorIterator& iter, double e) {
  using opmath = opmath_t<scalar_t>;
  const opmath ex = static_cast<opmath>(e);
  auto unary = [&iter](auto op, auto vop) {
    if constexpr (kVecFloat<scalar_t>) {
      cpu_kernel_vec(iter, [op](scalar_t a) -> scalar_t { return op(a); }, vop);
    } else {
      cpu_kernel(iter, [op](scalar_t a) -> scalar_t { return static_cast<scalar_t>(op(static_cast<opmath>(a))); });
    }
  };
  auto sqrt_v = [](auto a) { return vec::map(a, [](auto x) { return std::sqrt(x); }); };
  if (e == 2.0) {
    unary([](opmath x) { return x * x; }, [](auto a) { return a * a; });
  } else if (e == 3.0) {
    unary([](opmath x) { return x * x * x; }, [](auto a) { return a * a * a; });
  } else if (e == 0.5) {
    unary([](opmath x) { return std::sqrt(x); }, sqrt_v);
  } else if (e == -0.5) {
    unary([](opmath x) { return opmath(1) / std::sqrt(x); },
          [sqrt_v](auto a) { return decltype(a)(scalar_t(1)) / sqrt_v(a); });
  } else if (e == -1.0) {
    unary([](opmath x) { return opmath(1) / x; }, [](auto a) { return decltype(a)(scalar_t(1)) / a; });
  } else if (e == -2.0) {
    unary([](opmath x) { return opmath(1) / (x * x); }, [](auto a) { return decltype(a)(scalar_t(1)) / (a * a); });
  } else {
    cpu_kernel(iter,
               [ex](scalar_t a) -> scalar_t { return static_cast<scalar_t>(std::pow(static_cast<opmath>(a), ex)); });
  }
}

template <typename scalar_t>
void pow_tensor_scalar_impl(TensorIterator& iter, const Scalar& exp) {
  if constexpr (std::is_integral_v<scalar_t>) {
    const scalar_t e = exp.to<scalar_t>();  // >= 0: negative integer exponents were rejected
    cpu_kernel(iter, [e](scalar_t a) -> scalar_t { return bm::powi(a, e); });
  } else {
    pow_float_scalar<scalar_t>(iter, exp.toDouble());
  }
}

void pow_tensor_scalar_kernel(TensorIterator& iter, const Scalar& exp) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "pow", [&] { pow_tensor_scalar_impl<scalar_t>(iter, exp); });
}

// ---- float-only binary functions -----------------------------------------------------

#define EMBER_FLOAT_BINARY_KERNEL_(NAME, FN)                                              \
  void NAME##_kernel(TensorIterator& iter) {                                              \
    EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), #NAME, [&] {              \
      using opmath = opmath_t<scalar_t>;                                                  \
      cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {                           \
        return static_cast<scalar_t>(FN(static_cast<opmath>(a), static_cast<opmath>(b))); \
      });                                                                                 \
    });                                                                                   \
  }
EMBER_FLOAT_BINARY_KERNEL_(atan2, std::atan2)
EMBER_FLOAT_BINARY_KERNEL_(hypot, std::hypot)
EMBER_FLOAT_BINARY_KERNEL_(copysign, std::copysign)
#undef EMBER_FLOAT_BINARY_KERNEL_

// ---- maximum / minimum (NaN-propagating), fmax / fmin (NaN-ignoring) ------------------

template <bool kMax, typename scalar_t>
void max_min_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::max_min<kMax>(a, b); },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return kMax ? vec::maximum(a, b) : vec::minimum(a, b); });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::max_min<kMax>(a, b); });
  }
}

template <bool kMax>
void max_min_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {
    cpu_kernel(iter, [](bool a, bool b) -> bool { return kMax ? (a || b) : (a && b); });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), kMax ? "maximum" : "minimum",
                                    [&] { max_min_impl<kMax, scalar_t>(iter); });
}

void maximum_kernel(TensorIterator& iter) { max_min_kernel<true>(iter); }
void minimum_kernel(TensorIterator& iter) { max_min_kernel<false>(iter); }

template <bool kMax>
void fmax_fmin_kernel(TensorIterator& iter) {
  if (!c10::isFloatingType(iter.common_dtype())) {
    max_min_kernel<kMax>(iter);  // integers have no NaN: the same as maximum / minimum
    return;
  }
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), kMax ? "fmax" : "fmin", [&] {
    using opmath = opmath_t<scalar_t>;
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
      return static_cast<scalar_t>(kMax ? std::fmax(x, y) : std::fmin(x, y));
    });
  });
}

void fmax_kernel(TensorIterator& iter) { fmax_fmin_kernel<true>(iter); }
void fmin_kernel(TensorIterator& iter) { fmax_fmin_kernel<false>(iter); }

// ---- bitwise ----------------------------------------------------------------------------

void bitwise_and_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {  // a bool is its byte != 0 (see CopyKernel.cpp)
    cpu_kernel(iter, [](uint8_t a, uint8_t b) -> bool { return (a != 0) & (b != 0); });
    return;
  }
  EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.common_dtype(), "bitwise_and", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(a & b); });
  });
}

void bitwise_or_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {  // a bool is its byte != 0 (see CopyKernel.cpp)
    cpu_kernel(iter, [](uint8_t a, uint8_t b) -> bool { return (a != 0) | (b != 0); });
    return;
  }
  EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.common_dtype(), "bitwise_or", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(a | b); });
  });
}

void bitwise_xor_kernel(TensorIterator& iter) {
  if (iter.common_dtype() == ScalarType::Bool) {  // a bool is its byte != 0 (see CopyKernel.cpp)
    cpu_kernel(iter, [](uint8_t a, uint8_t b) -> bool { return (a != 0) ^ (b != 0); });
    return;
  }
  EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.common_dtype(), "bitwise_xor", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(a ^ b); });
  });
}

void lshift_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "bitwise_left_shift", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::lshift(a, b); });
  });
}

void rshift_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "bitwise_right_shift", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::rshift(a, b); });
  });
}

// ---- xlogy, logaddexp, heaviside, gcd / lcm, nextafter -------------------------------------

void xlogy_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "xlogy", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::xlogy(a, b); });
  });
}

template <bool kBase2>
void logaddexp_impl(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), kBase2 ? "logaddexp2" : "logaddexp", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::logaddexp<kBase2>(a, b); });
  });
}
void logaddexp_kernel(TensorIterator& iter) { logaddexp_impl<false>(iter); }
void logaddexp2_kernel(TensorIterator& iter) { logaddexp_impl<true>(iter); }

void heaviside_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "heaviside", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::heaviside(a, b); });
  });
}

void gcd_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "gcd", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::gcd(a, b); });
  });
}

void lcm_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "lcm", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::lcm(a, b); });
  });
}

void nextafter_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "nextafter", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return bm::nextafter(a, b); });
  });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(add_stub, &add_kernel);
REGISTER_DISPATCH(mul_stub, &mul_kernel);
REGISTER_DISPATCH(div_true_stub, &div_true_kernel);
REGISTER_DISPATCH(div_trunc_stub, &div_trunc_kernel);
REGISTER_DISPATCH(div_floor_stub, &div_floor_kernel);
REGISTER_DISPATCH(remainder_stub, &remainder_kernel);
REGISTER_DISPATCH(fmod_stub, &fmod_kernel);
REGISTER_DISPATCH(pow_tensor_tensor_stub, &pow_tensor_tensor_kernel);
REGISTER_DISPATCH(pow_tensor_scalar_stub, &pow_tensor_scalar_kernel);
REGISTER_DISPATCH(atan2_stub, &atan2_kernel);
REGISTER_DISPATCH(hypot_stub, &hypot_kernel);
REGISTER_DISPATCH(copysign_stub, &copysign_kernel);
REGISTER_DISPATCH(maximum_stub, &maximum_kernel);
REGISTER_DISPATCH(minimum_stub, &minimum_kernel);
REGISTER_DISPATCH(fmax_stub, &fmax_kernel);
REGISTER_DISPATCH(fmin_stub, &fmin_kernel);
REGISTER_DISPATCH(bitwise_and_stub, &bitwise_and_kernel);
REGISTER_DISPATCH(bitwise_or_stub, &bitwise_or_kernel);
REGISTER_DISPATCH(bitwise_xor_stub, &bitwise_xor_kernel);
REGISTER_DISPATCH(lshift_stub, &lshift_kernel);
REGISTER_DISPATCH(rshift_stub, &rshift_kernel);
REGISTER_DISPATCH(xlogy_stub, &xlogy_kernel);
REGISTER_DISPATCH(logaddexp_stub, &logaddexp_kernel);
REGISTER_DISPATCH(logaddexp2_stub, &logaddexp2_kernel);
REGISTER_DISPATCH(heaviside_stub, &heaviside_kernel);
REGISTER_DISPATCH(gcd_stub, &gcd_kernel);
REGISTER_DISPATCH(lcm_stub, &lcm_kernel);
REGISTER_DISPATCH(nextafter_stub, &nextafter_kernel);

}  // namespace ember::at::native
