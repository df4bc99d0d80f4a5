// CUDA native_dropout / native_dropout_backward.
//
// The keep-mask is drawn exactly as on the CPU (Dropout.cpp): bernoulli_(1 - p) into a
// bool tensor through bernoulli_scalar_, i.e. the Philox stream of the device's default
// generator in bernoulli's layout (one draw per element from philox(seed, offset + block),
// see Generator.h). Where the CUDA bernoulli kernel follows the CPU layout, a CUDA mask
// equals the CPU mask drawn from the same generator state. The scaling is one
// elementwise kernel (masked_scale_stub; native_dropout itself is Dropout.cpp's, for
// every device): out = x * mask * scale, computed in opmath_t.
#include <ember/aten/Dispatch.h>

#include "../Dropout.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

template <typename T>
__global__ void masked_scale_kernel(T* __restrict__ out, const T* __restrict__ x, const bool* __restrict__ mask,
                                    opmath_t<T> scale, int64_t n) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(static_cast<A>(x[i]) * (mask[i] ? scale : A(0)));
}

void masked_scale_cuda(const Tensor& out, const Tensor& x, const Tensor& mask, double scale) {
  const int64_t n = x.numel();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(x.dtype(), "masked_scale", [&] {
    masked_scale_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        out.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), mask.data_ptr<bool>(), static_cast<opmath_t<scalar_t>>(scale),
        n);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(masked_scale_stub, &masked_scale_cuda);

}  // namespace ember::at::native
