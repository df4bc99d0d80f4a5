// CUDA kernels of softmax / log_softmax and their backward (softmax_stub,
// softmax_backward_stub; the host side is SoftMax.cpp, which hands over contiguous
// float32 / float64 tensors viewed as [outer, dim_size, inner] -- float16 / bfloat16
// are computed in float32 there).
//
// Row layout (inner == 1): one block per row, the row max and sum taken with warp
// shuffles (NNReduce.cuh). Column layout (inner > 1): one thread per (outer, inner)
// column walking the softmax dim with stride `inner` (adjacent threads read adjacent
// addresses). Same formulas as cpu/SoftMaxKernel.cpp: max first, softmax = exp(x - m) / s,
// log_softmax = (x - m) - log s (PyTorch's order: m + log s first loses log s's low bits
// when |m| is large); a NaN in a row makes the row NaN.
#include <algorithm>

#include <ember/aten/Dispatch.h>

#include "../SoftMax.h"
#include "CUDAUtils.cuh"
#include "SoftMaxKernels.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_softmax;

// The kernels' bodies are the block functions of SoftMaxKernels.cuh.
#define EMBER_CTX \
  Ctx { blockIdx.x, gridDim.x, threadIdx.x, blockDim.x }

template <typename T>
__global__ void softmax_rows_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t rows, int64_t n, bool log) {
  softmax_rows_block<T>(EMBER_CTX, y, x, rows, n, log);
}

template <typename T>
__global__ void softmax_cols_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t outer, int64_t n, int64_t inner,
                                    bool log) {
  softmax_cols_block<T>(EMBER_CTX, y, x, outer, n, inner, log);
}

template <typename T>
__global__ void softmax_backward_rows_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y,
                                             int64_t rows, int64_t n, bool log) {
  softmax_backward_rows_block<T>(EMBER_CTX, gi, g, y, rows, n, log);
}

template <typename T>
__global__ void softmax_backward_cols_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y,
                                             int64_t outer, int64_t n, int64_t inner, bool log) {
  softmax_backward_cols_block<T>(EMBER_CTX, gi, g, y, outer, n, inner, log);
}

unsigned int row_grid(int64_t rows) { return static_cast<unsigned int>(std::min<int64_t>(rows, int64_t{1} << 20)); }

void softmax_kernel_cuda(const Tensor& out, const Tensor& self, int64_t outer, int64_t dim_size, int64_t inner,
                         bool log) {
  c10::DeviceGuard guard(self.device());
  const cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), log ? "log_softmax_cuda" : "softmax_cuda", [&] {
    const scalar_t* x = self.data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_rows_kernel<scalar_t>
          <<<row_grid(outer), row_block_threads(dim_size), 0, stream>>>(y, x, outer, dim_size, log);
    } else {
      softmax_cols_kernel<scalar_t>
          <<<cuda::grid_size(outer * inner), cuda::kNumThreads, 0, stream>>>(y, x, outer, dim_size, inner, log);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void softmax_backward_kernel_cuda(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output,
                                  int64_t outer, int64_t dim_size, int64_t inner, bool log) {
  c10::DeviceGuard guard(output.device());
  const cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(output.dtype(), log ? "log_softmax_backward_cuda" : "softmax_backward_cuda", [&] {
    const scalar_t* g = grad_output.data_ptr<scalar_t>();
    const scalar_t* y = output.data_ptr<scalar_t>();
    scalar_t* gi = grad_input.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_backward_rows_kernel<scalar_t>
          <<<row_grid(outer), row_block_threads(dim_size), 0, stream>>>(gi, g, y, outer, dim_size, log);
    } else {
      softmax_backward_cols_kernel<scalar_t>
          <<<cuda::grid_size(outer * inner), cuda::kNumThreads, 0, stream>>>(gi, g, y, outer, dim_size, inner, log);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(softmax_stub, &softmax_kernel_cuda);
REGISTER_CUDA_DISPATCH(softmax_backward_stub, &softmax_backward_kernel_cuda);

}  // namespace ember::at::native