#pragma once
// isclose's formula and its compute type, written once for the CPU kernel
// (cpu/CompareOpsKernel.cpp) and the CUDA kernel (cuda/CompareOps.cu).
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Tensor.h>

#include "HostDevice.h"
#include "ScalarMath.h"

namespace ember::at::native::compare_math {
EMBER_FORMULAS_BEGIN

// |a - b| <= atol + rtol * |b| in compute type C (a NaN pair counts when equal_nan;
// exact: rtol == atol == 0, only equality counts).
template <typename scalar_t, typename C>
struct IsClose {
  C rtol, atol;
  bool exact, equal_nan;
  EMBER_HOST_DEVICE bool operator()(scalar_t a_, scalar_t b_) const {
    const C a = static_cast<C>(a_), b = static_cast<C>(b_);
    if (a == b) return true;
    if constexpr (!std::is_integral_v<scalar_t>) {
      if (equal_nan && a != a && b != b) return true;
    }
    if (exact) return false;
    const C err = scalar_math::fabs(a - b);
    return scalar_math::isfinite(err) && err <= atol + scalar_math::fabs(rtol * b);
  }
};

// Runs run(IsClose<scalar_t, C>{...}) with C the input's opmath type for floats and the
// default float dtype for integers and bool (as PyTorch casts them before computing the
// error). Host code: `run` launches the device's elementwise loop over the functor.
template <typename scalar_t, typename Run>
void with_isclose(double rtol, double atol, bool equal_nan, const Run& run) {
  const bool exact = rtol == 0 && atol == 0;
  auto make = [&](auto c) {
    using C = decltype(c);
    return IsClose<scalar_t, C>{static_cast<C>(rtol), static_cast<C>(atol), exact, equal_nan};
  };
  if constexpr (std::is_integral_v<scalar_t>) {
    if (get_default_dtype() == ScalarType::Double) {
      run(make(double{}));
    } else {
      run(make(float{}));
    }
  } else {
    run(make(opmath_t<scalar_t>{}));
  }
}

EMBER_FORMULAS_END
}  // namespace ember::at::native::compare_math
