// CPU kernels of the elementwise unary operators.
#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../UnaryOps.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;

template <typename scalar_t>
void neg_impl(TensorIterator& iter) {
  if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double> ||
                std::is_integral_v<scalar_t>) {
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
void exp_impl(TensorIterator& iter) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    cpu_kernel_vec(
        iter, [](float a) -> float { return std::exp(a); }, [](Vectorized<float> a) { return vec::exp(a); });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t {
      return static_cast<scalar_t>(std::exp(static_cast<opmath_t<scalar_t>>(a)));
    });
  }
}

void exp_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "exp", [&] { exp_impl<scalar_t>(iter); });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(neg_stub, &neg_kernel);
REGISTER_DISPATCH(exp_stub, &exp_kernel);

}  // namespace ember::at::native
