#pragma once
// The block code of the softmax kernels (SoftMax.cu): __host__ __device__ functions of one
// thread block (Ctx). SoftMax.cu's __global__ kernels call them with the launch's indices;
// the test-only module ember_aten_testing (packages/aten/testing) calls each once as a single
// block of one thread, which walks every row / column of its grid-stride loops.
#include <cmath>
#include <cstdint>

#include "NNReduce.cuh"

namespace ember::at::native::cuda_softmax {

using namespace cuda_nn;

template <typename T>
__host__ __device__ inline T neg_inf() {
  return -static_cast<T>(INFINITY);
}

struct Ctx {
  int64_t bx, nb;   // blockIdx.x, gridDim.x
  int64_t tid, nt;  // threadIdx.x, blockDim.x
};

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

}  // namespace ember::at::native::cuda_softmax
