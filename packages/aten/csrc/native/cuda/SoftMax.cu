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
#include "NNReduce.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_nn;

template <typename T>
__device__ inline T neg_inf() {
  return -static_cast<T>(INFINITY);
}

template <typename T>
__global__ void softmax_rows_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t rows, int64_t n, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m = neg_inf<T>();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = MaxOp()(m, xr[i]);
    m = block_reduce(m, MaxOp(), neg_inf<T>());
    T s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += dev_exp(xr[i] - m);
    s = block_reduce(s, SumOp(), T(0));
    if (log) {
      const T ls = dev_log(s);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = (xr[i] - m) - ls;
    } else {
      const T inv = T(1) / s;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = dev_exp(xr[i] - m) * inv;
    }
  }
}

template <typename T>
__global__ void softmax_cols_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t outer, int64_t n, int64_t inner,
                                    bool log) {
  const int64_t total = outer * inner;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = idx / inner, j = idx % inner;
    const T* xc = x + o * n * inner + j;
    T* yc = y + o * n * inner + j;
    T m = neg_inf<T>();
    for (int64_t k = 0; k < n; ++k) m = MaxOp()(m, xc[k * inner]);
    T s = 0;
    for (int64_t k = 0; k < n; ++k) s += dev_exp(xc[k * inner] - m);
    if (log) {
      const T ls = dev_log(s);
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = (xc[k * inner] - m) - ls;
    } else {
      const T inv = T(1) / s;
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = dev_exp(xc[k * inner] - m) * inv;
    }
  }
}

// softmax:     gi = y * (g - sum(g * y))
// log_softmax: gi = g - exp(y) * sum(g)
template <typename T>
__global__ void softmax_backward_rows_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y,
                                             int64_t rows, int64_t n, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* gr = g + r * n;
    const T* yr = y + r * n;
    T* out = gi + r * n;
    T s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += log ? gr[i] : gr[i] * yr[i];
    s = block_reduce(s, SumOp(), T(0));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      out[i] = log ? gr[i] - dev_exp(yr[i]) * s : yr[i] * (gr[i] - s);
  }
}

template <typename T>
__global__ void softmax_backward_cols_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y,
                                             int64_t outer, int64_t n, int64_t inner, bool log) {
  const int64_t total = outer * inner;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = idx / inner, j = idx % inner;
    const int64_t base = o * n * inner + j;
    T s = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t p = base + k * inner;
      s += log ? g[p] : g[p] * y[p];
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t p = base + k * inner;
      gi[p] = log ? g[p] - dev_exp(y[p]) * s : y[p] * (g[p] - s);
    }
  }
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
