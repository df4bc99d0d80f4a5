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
#include "StubEmulation.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_nn;

template <typename T>
__host__ __device__ inline T neg_inf() {
  return -static_cast<T>(INFINITY);
}

// The kernels' bodies are __host__ __device__ functions of a block (Ctx); the __global__
// kernels call them with the launch's indices. The host emulation (_C._cuda_softmax_emulation,
// for tests without a GPU) calls each once as a single block of one thread, which walks
// every row / column of its grid-stride loops.
struct Ctx {
  int64_t bx, nb;   // blockIdx.x, gridDim.x
  int64_t tid, nt;  // threadIdx.x, blockDim.x
};
#define EMBER_CTX \
  Ctx { blockIdx.x, gridDim.x, threadIdx.x, blockDim.x }

template <typename T>
__host__ __device__ void softmax_rows_block(const Ctx& ctx, T* __restrict__ y, const T* __restrict__ x, int64_t rows,
                                            int64_t n, bool log) {
  for (int64_t r = ctx.bx; r < rows; r += ctx.nb) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m = neg_inf<T>();
    for (int64_t i = ctx.tid; i < n; i += ctx.nt) m = MaxOp()(m, xr[i]);
    m = block_reduce(m, MaxOp(), neg_inf<T>());
    T s = 0;
    for (int64_t i = ctx.tid; i < n; i += ctx.nt) s += dev_exp(xr[i] - m);
    s = block_reduce(s, SumOp(), T(0));
    if (log) {
      const T ls = dev_log(s);
      for (int64_t i = ctx.tid; i < n; i += ctx.nt) yr[i] = (xr[i] - m) - ls;
    } else {
      const T inv = T(1) / s;
      for (int64_t i = ctx.tid; i < n; i += ctx.nt) yr[i] = dev_exp(xr[i] - m) * inv;
    }
  }
}

template <typename T>
__global__ void softmax_rows_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t rows, int64_t n, bool log) {
  softmax_rows_block<T>(EMBER_CTX, y, x, rows, n, log);
}

template <typename T>
__host__ __device__ void softmax_cols_block(const Ctx& ctx, T* __restrict__ y, const T* __restrict__ x, int64_t outer,
                                            int64_t n, int64_t inner, bool log) {
  const int64_t total = outer * inner;
  for (int64_t idx = ctx.bx * ctx.nt + ctx.tid; idx < total; idx += ctx.nb * ctx.nt) {
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

template <typename T>
__global__ void softmax_cols_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t outer, int64_t n, int64_t inner,
                                    bool log) {
  softmax_cols_block<T>(EMBER_CTX, y, x, outer, n, inner, log);
}

// softmax:     gi = y * (g - sum(g * y))
// log_softmax: gi = g - exp(y) * sum(g)
template <typename T>
__host__ __device__ void softmax_backward_rows_block(const Ctx& ctx, T* __restrict__ gi, const T* __restrict__ g,
                                                     const T* __restrict__ y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = ctx.bx; r < rows; r += ctx.nb) {
    const T* gr = g + r * n;
    const T* yr = y + r * n;
    T* out = gi + r * n;
    T s = 0;
    for (int64_t i = ctx.tid; i < n; i += ctx.nt) s += log ? gr[i] : gr[i] * yr[i];
    s = block_reduce(s, SumOp(), T(0));
    for (int64_t i = ctx.tid; i < n; i += ctx.nt) out[i] = log ? gr[i] - dev_exp(yr[i]) * s : yr[i] * (gr[i] - s);
  }
}

template <typename T>
__global__ void softmax_backward_rows_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y,
                                             int64_t rows, int64_t n, bool log) {
  softmax_backward_rows_block<T>(EMBER_CTX, gi, g, y, rows, n, log);
}

template <typename T>
__host__ __device__ void softmax_backward_cols_block(const Ctx& ctx, T* __restrict__ gi, const T* __restrict__ g,
                                                     const T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                                                     bool log) {
  const int64_t total = outer * inner;
  for (int64_t idx = ctx.bx * ctx.nt + ctx.tid; idx < total; idx += ctx.nb * ctx.nt) {
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

// ---- host emulation (tests without a GPU): each kernel as one block of one thread ----
constexpr Ctx kHostCtx{0, 1, 0, 1};

void softmax_kernel_emulated(const Tensor& out, const Tensor& self, int64_t outer, int64_t dim_size, int64_t inner,
                             bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "softmax_emulated", [&] {
    const scalar_t* x = self.data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_rows_block<scalar_t>(kHostCtx, y, x, outer, dim_size, log);
    } else {
      softmax_cols_block<scalar_t>(kHostCtx, y, x, outer, dim_size, inner, log);
    }
  });
}

void softmax_backward_kernel_emulated(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output,
                                      int64_t outer, int64_t dim_size, int64_t inner, bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(output.dtype(), "softmax_backward_emulated", [&] {
    const scalar_t* g = grad_output.data_ptr<scalar_t>();
    const scalar_t* y = output.data_ptr<scalar_t>();
    scalar_t* gi = grad_input.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_backward_rows_block<scalar_t>(kHostCtx, gi, g, y, outer, dim_size, log);
    } else {
      softmax_backward_cols_block<scalar_t>(kHostCtx, gi, g, y, outer, dim_size, inner, log);
    }
  });
}

}  // namespace

// true: the CPU slots of softmax_stub / softmax_backward_stub run the host emulation of the
// CUDA kernels above (their block code, one thread), so the CPU softmax tests check it;
// returns the previous state.
bool cuda_softmax_emulation(bool on) {
  static bool active = false;
  static cuda_emulation::SlotSwap<softmax_stub_DECLARE_DISPATCH_type> s_fwd;
  static cuda_emulation::SlotSwap<softmax_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(softmax_stub, &softmax_kernel_emulated, on);
  s_bwd.swap(softmax_backward_stub, &softmax_backward_kernel_emulated, on);
  active = on;
  return was;
}

REGISTER_CUDA_DISPATCH(softmax_stub, &softmax_kernel_cuda);
REGISTER_CUDA_DISPATCH(softmax_backward_stub, &softmax_backward_kernel_cuda);

}  // namespace ember::at::native
