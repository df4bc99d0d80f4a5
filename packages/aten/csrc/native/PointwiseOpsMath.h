#pragma once
// The scalar formulas of lerp, addcmul / addcdiv and clamp, written once for the CPU
// kernels (cpu/PointwiseOpsKernel.cpp) and the CUDA kernels (cuda/PointwiseOps.cu).
// They compute in the type they are given (the kernels pass opmath_t values).
#include <type_traits>

#include <ember/aten/Dispatch.h>

#include "HostDevice.h"
#include "ScalarMath.h"

namespace ember::at::native::pointwise_math {
EMBER_FORMULAS_BEGIN

// lerp's two formulas, as PyTorch: the one anchored at self for |weight| < 0.5 and the
// one anchored at end otherwise, so that weight 0 gives self and weight 1 gives end
// exactly.
template <typename T>
EMBER_HOST_DEVICE inline T lerp(T self, T end, T w) {
  return scalar_math::fabs(w) < T(0.5) ? self + w * (end - self) : end - (end - self) * (T(1) - w);
}

// self + value * t1 * t2 and self + value * t1 / t2, in opmath_t.
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t addcmul(scalar_t a, scalar_t b, scalar_t c, opmath_t<scalar_t> v) {
  using opmath = opmath_t<scalar_t>;
  return static_cast<scalar_t>(static_cast<opmath>(a) + v * static_cast<opmath>(b) * static_cast<opmath>(c));
}
template <typename scalar_t>
EMBER_HOST_DEVICE inline scalar_t addcdiv(scalar_t a, scalar_t b, scalar_t c, opmath_t<scalar_t> v) {
  using opmath = opmath_t<scalar_t>;
  return static_cast<scalar_t>(static_cast<opmath>(a) + v * static_cast<opmath>(b) / static_cast<opmath>(c));
}

// clamp's bounds: a NaN input (or, with tensor bounds, a NaN bound) gives NaN, as
// maximum / minimum propagate it.
template <typename T>
EMBER_HOST_DEVICE inline T max_nan(T a, T b) {
  if constexpr (!std::is_integral_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename T>
EMBER_HOST_DEVICE inline T min_nan(T a, T b) {
  if constexpr (!std::is_integral_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

EMBER_FORMULAS_END
}  // namespace ember::at::native::pointwise_math
