#pragma once
// The scalar formulas of the elementwise binary operators, written once for the CPU
// kernels (cpu/BinaryOpsKernel.cpp) and the CUDA kernels (cuda/BinaryOps.cu). Half and
// BFloat16 compute in float (opmath_t). An integer division, remainder or fmod here
// expects b != 0: each kernel deals with a zero divisor first (the CPU raises
// ZeroDivisionError, CUDA reports it through the device-error slot).
#include <cstdint>
#include <type_traits>

#include <ember/aten/Dispatch.h>

#include "HostDevice.h"
#include "ScalarMath.h"

namespace ember::at::native::binary_math {
EMBER_FORMULAS_BEGIN

// -a with two's-complement wrap-around (INT_MIN / -1 would trap in hardware).
template <typename T>
EMBER_HOST_DEVICE inline T wrapping_neg(T a) {
  return static_cast<T>(static_cast<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
}

template <typename T>
EMBER_HOST_DEVICE inline bool is_nan(T x) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return static_cast<opmath_t<T>>(x) != static_cast<opmath_t<T>>(x);
  }
}

template <typename T>
EMBER_HOST_DEVICE inline bool is_negative(T a) {
  if constexpr (std::is_signed_v<T>) {
    return a < 0;
  } else {
    return false;
  }
}

// ---- divisions ----

// a / b rounded toward zero.
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t div_trunc(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    if constexpr (std::is_signed_v<scalar_t>) {
      if (b == -1) return wrapping_neg(a);
    }
    return static_cast<scalar_t>(a / b);
  } else {
    using opmath = opmath_t<scalar_t>;
    return static_cast<scalar_t>(scalar_math::trunc(static_cast<opmath>(a) / static_cast<opmath>(b)));
  }
}

// Python's floor division: the quotient rounded toward -inf (as PyTorch's div_floor).
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t div_floor(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    if constexpr (std::is_signed_v<scalar_t>) {
      if (b == -1) return wrapping_neg(a);
      const scalar_t q = static_cast<scalar_t>(a / b);
      return static_cast<scalar_t>(((a % b != 0) && ((a < 0) != (b < 0))) ? q - 1 : q);
    } else {
      return static_cast<scalar_t>(a / b);
    }
  } else {
    using opmath = opmath_t<scalar_t>;
    const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
    if (y == 0) return static_cast<scalar_t>(x / y);
    const opmath mod = scalar_math::fmod(x, y);
    opmath div = (x - mod) / y;
    if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
    opmath floordiv;
    if (div != 0) {
      floordiv = scalar_math::floor(div);
      if (div - floordiv > opmath(0.5)) floordiv += 1;
    } else {
      floordiv = scalar_math::copysign(opmath(0), x / y);
    }
    return static_cast<scalar_t>(floordiv);
  }
}

// Python's %: the result has the sign of the divisor.
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t remainder(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    if constexpr (std::is_signed_v<scalar_t>) {
      if (b == -1) return 0;
      scalar_t r = static_cast<scalar_t>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<scalar_t>(r + b);
      return r;
    } else {
      return static_cast<scalar_t>(a % b);
    }
  } else {
    using opmath = opmath_t<scalar_t>;
    const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
    opmath mod = scalar_math::fmod(x, y);
    if (mod != 0 && ((y < 0) != (mod < 0))) mod += y;
    return static_cast<scalar_t>(mod);
  }
}

// C's fmod: the result has the sign of the dividend.
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t fmod(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    if constexpr (std::is_signed_v<scalar_t>) {
      if (b == -1) return 0;
    }
    return static_cast<scalar_t>(a % b);
  } else {
    using opmath = opmath_t<scalar_t>;
    return static_cast<scalar_t>(scalar_math::fmod(static_cast<opmath>(a), static_cast<opmath>(b)));
  }
}

// ---- pow ----

// Integer power by squaring, wrapping on overflow. A negative exponent gives
// 1 / a**|b| truncated: 1 for a == 1, +-1 for a == -1, else 0 (as PyTorch's powi).
template <typename T>
EMBER_HOST_DEVICE inline T powi(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, base = static_cast<U>(a);
  uint64_t e = static_cast<uint64_t>(b);
  while (e) {
    if (e & 1) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// ---- maximum / minimum: NaN-propagating (integers have no NaN) ----

template <bool kMax, typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t max_min(scalar_t a, scalar_t b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  using opmath = opmath_t<scalar_t>;
  const bool a_wins =
      kMax ? static_cast<opmath>(a) > static_cast<opmath>(b) : static_cast<opmath>(a) < static_cast<opmath>(b);
  return a_wins ? a : b;
}

// ---- bitwise shifts, gcd / lcm (integers) ----

// Shifts by a negative amount or by the bit width or more give 0 (left) or the sign
// fill (right), as PyTorch -- never C's undefined behaviour.
template <typename T>
EMBER_HOST_DEVICE inline T lshift(T a, T b) {
  constexpr int kBits = sizeof(T) * 8;
  if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= kBits) return 0;
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
}

template <typename T>
EMBER_HOST_DEVICE inline T rshift(T a, T b) {
  constexpr int kMaxShift = sizeof(T) * 8 - (std::is_signed_v<T> ? 1 : 0);
  if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= kMaxShift) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(a >> kMaxShift);
    } else {
      return 0;
    }
  }
  return static_cast<T>(a >> b);
}

template <typename T>
EMBER_HOST_DEVICE inline T gcd(T a, T b) {
  using U = std::make_unsigned_t<T>;  // |INT_MIN| fits the unsigned type
  U x = is_negative(a) ? static_cast<U>(U(0) - static_cast<U>(a)) : static_cast<U>(a);
  U y = is_negative(b) ? static_cast<U>(U(0) - static_cast<U>(b)) : static_cast<U>(b);
  while (x != 0) {
    const U c = x;
    x = static_cast<U>(y % x);
    y = c;
  }
  return static_cast<T>(y);
}

template <typename T>
EMBER_HOST_DEVICE inline T lcm(T a, T b) {
  using U = std::make_unsigned_t<T>;
  const T g = gcd(a, b);  // >= 0 (or INT_MIN), never -1: a / g cannot trap
  if (g == 0) return 0;
  const T r = static_cast<T>(static_cast<U>(a / g) * static_cast<U>(b));  // wraps
  if constexpr (std::is_signed_v<T>) return r < 0 ? wrapping_neg(r) : r;
  return r;
}

// ---- xlogy, logaddexp, heaviside, nextafter ----

template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t xlogy(scalar_t a, scalar_t b) {
  using opmath = opmath_t<scalar_t>;
  const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
  if (y != y) return static_cast<scalar_t>(y);
  if (x == 0) return static_cast<scalar_t>(0);
  return static_cast<scalar_t>(x * scalar_math::log(y));
}

// log(exp(a) + exp(b)) (kBase2: log2(2^a + 2^b)) without overflow; equal infinities
// stay themselves.
template <bool kBase2, typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t logaddexp(scalar_t a_, scalar_t b_) {
  using opmath = opmath_t<scalar_t>;
  const opmath a = static_cast<opmath>(a_), b = static_cast<opmath>(b_);
  if (scalar_math::isinf(a) && a == b) return a_;
  const opmath m = a > b ? a : b;  // NaN in either gives NaN below
  const opmath d = -scalar_math::fabs(a - b);
  if constexpr (kBase2) {
    return static_cast<scalar_t>(m + scalar_math::log1p(scalar_math::exp2(d)) /
                                         opmath(0.693147180559945309417232121458176568));
  } else {
    return static_cast<scalar_t>(m + scalar_math::log1p(scalar_math::exp(d)));
  }
}

template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t heaviside(scalar_t a, scalar_t b) {
  const auto x = static_cast<opmath_t<scalar_t>>(a);
  return x == 0 ? b : static_cast<scalar_t>(x > 0);
}

// The next representable value after a in the direction of b.
template <typename T>
EMBER_HOST_DEVICE inline T nextafter(T a, T b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return scalar_math::nextafter(a, b);
  } else {  // Half / BFloat16: step the 16-bit pattern
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (fa != fa || fb != fb) {  // the type's quiet NaN
      return T(static_cast<uint16_t>(std::is_same_v<T, c10::Half> ? 0x7e00u : 0x7fc0u), T::from_bits());
    }
    if (fa == fb) return b;
    if (fa == 0) return T(static_cast<uint16_t>((b.x & 0x8000u) | 1u), T::from_bits());
    const uint16_t bits = ((fa < fb) == (fa > 0)) ? static_cast<uint16_t>(a.x + 1) : static_cast<uint16_t>(a.x - 1);
    return T(bits, T::from_bits());
  }
}

EMBER_FORMULAS_END
}  // namespace ember::at::native::binary_math
