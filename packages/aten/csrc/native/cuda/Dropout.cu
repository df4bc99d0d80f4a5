// CUDA native_dropout / native_dropout_backward.
//
// The keep-mask is drawn exactly as on the CPU (Dropout.cpp): bernoulli_(1 - p) into a
// bool tensor through bernoulli_scalar_, i.e. the Philox stream of the device's default
// generator in bernoulli's layout (one draw per element from philox(seed, offset + block),
// see Generator.h). Where the CUDA bernoulli kernel follows the CPU layout, a CUDA mask
// equals the CPU mask drawn from the same generator state. The scaling is one
// elementwise kernel: out = x * mask * scale, computed in opmath_t.
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

Tensor masked_scale_cuda(const Tensor& x, const Tensor& mask, double scale, const char* name) {
  c10::DeviceGuard guard(x.device());
  const Tensor xc = x.contiguous(), mc = mask.contiguous();
  Tensor out = at::empty(xc.sizes(), xc.dtype(), xc.device());
  const int64_t n = xc.numel();
  if (n == 0) return out;
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(xc.dtype(), name, [&] {
    masked_scale_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        out.data_ptr<scalar_t>(), xc.data_ptr<scalar_t>(), mc.data_ptr<bool>(), static_cast<opmath_t<scalar_t>>(scale),
        n);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout_cuda(const Tensor& input, double p, std::optional<bool> train) {
  check_dropout_input(input, p);
  if (input.numel() == 0 || (train.has_value() && !*train)) {
    return {input.clone(), at::full(input.sizes(), Scalar(true), ScalarType::Bool, input.device())};
  }
  const double p1m = 1.0 - p;
  const double scale = p1m == 0 ? 0.0 : 1.0 / p1m;
  Tensor mask = at::empty(input.sizes(), ScalarType::Bool, input.device());
  bernoulli_scalar_(mask, p1m, std::nullopt);
  return {masked_scale_cuda(input, mask, scale, "native_dropout_cuda"), mask};
}

Tensor native_dropout_backward_cuda(const Tensor& grad_output, const Tensor& mask, double scale) {
  check_dropout_backward(grad_output, mask);
  return masked_scale_cuda(grad_output, mask, scale, "native_dropout_backward_cuda");
}

}  // namespace ember::at::native
