// CUDA kernels of GradScaler's fused steps (../AmpKernels.h). The unscale is one
// grid-stride launch per gradient reading inv_scale and writing found_inf on the device
// (no host synchronisation, as PyTorch's); found_inf only ever goes 0 -> 1, so the racing
// writes of several threads all store the same value. The scale update is a single
// thread: three scalars, the CPU kernel's arithmetic.
#include <ember/aten/Dispatch.h>

#include "../AmpKernels.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

template <typename T>
__global__ void unscale_kernel(T* __restrict__ data, int64_t n, float* found_inf, const float* inv_scale) {
  using A = opmath_t<T>;
  const A s = static_cast<A>(*inv_scale);
  bool bad = false;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const A v = static_cast<A>(data[i]);
    bad |= !isfinite(v);
    data[i] = static_cast<T>(v * s);
  }
  if (bad) *found_inf = 1.0f;
}

void amp_unscale_cuda(const std::vector<AmpGrad>& grads, float* found_inf, const float* inv_scale) {
  for (const AmpGrad& g : grads) {
    EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype, "_amp_foreach_non_finite_check_and_unscale_", [&] {
      unscale_kernel<scalar_t><<<cuda::grid_size(g.numel), cuda::kNumThreads, 0, cuda::current_stream()>>>(
          static_cast<scalar_t*>(g.data), g.numel, found_inf, inv_scale);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
}

__global__ void update_scale_kernel(float* current_scale, int32_t* growth_tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *current_scale = static_cast<float>(*current_scale * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int32_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*current_scale * growth_factor);
    if (isfinite(grown)) *current_scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = successful;
  }
}

void amp_update_scale_cuda(float* current_scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                           double backoff_factor, int64_t growth_interval) {
  update_scale_kernel<<<1, 1, 0, cuda::current_stream()>>>(current_scale, growth_tracker, found_inf, growth_factor,
                                                           backoff_factor, growth_interval);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

REGISTER_CUDA_DISPATCH(amp_unscale_stub, &amp_unscale_cuda);
REGISTER_CUDA_DISPATCH(amp_update_scale_stub, &amp_update_scale_cuda);

}  // namespace ember::at::native
