#pragma once
// The block code of the row-norm kernels of Normalization.cu (layer / RMS norm and group
// norm's statistics): __host__ __device__ functions of one thread block (Ctx). The
// __global__ kernels of Normalization.cu call them with the launch's indices; the test-only
// module ember_aten_testing (packages/aten/testing) as blocks of one thread, which walk every
// row / column of their grid-stride loops.
#include <cstdint>

#include <ember/aten/Tensor.h>

#include "NNReduce.cuh"

namespace ember::at::native::cuda_norm {

using namespace cuda_nn;

template <typename T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}
template <typename T>
T* mut_ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

struct Ctx {
  int64_t bx, nb, by;  // blockIdx.x, gridDim.x, blockIdx.y
  int64_t tid, nt;     // threadIdx.x, blockDim.x
};

// ---------------------------------------------------------------- rows [M, D]

template <typename T>
__host__ __device__ void row_norm_block(const Ctx& ctx, T* __restrict__ out, T* __restrict__ mean, T* __restrict__ rstd,
                                        const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                        int64_t M, int64_t D, double eps, bool rms) {
  for (int64_t r = ctx.bx; r < M; r += ctx.nb) {
    const T* xr = x + r * D;
    double m = 0;
    if (!rms) {
      double s = 0;
      for (int64_t i = ctx.tid; i < D; i += ctx.nt) s += static_cast<double>(xr[i]);
      m = block_reduce(s, SumOp(), 0.0) / static_cast<double>(D);
    }
    double q = 0;
    for (int64_t i = ctx.tid; i < D; i += ctx.nt) {
      const double d = static_cast<double>(xr[i]) - m;
      q += d * d;
    }
    const double var = block_reduce(q, SumOp(), 0.0) / static_cast<double>(D);
    const double rs = 1.0 / dev_sqrt(var + eps);
    if (ctx.tid == 0) {
      if (mean) mean[r] = static_cast<T>(m);
      rstd[r] = static_cast<T>(rs);
    }
    if (!out) continue;
    // out = (x - m) * rs * w + b = x * rs + (-m rs), then * w, + b
    const T a = static_cast<T>(rs), c = static_cast<T>(-m * rs);
    T* orow = out + r * D;
    for (int64_t i = ctx.tid; i < D; i += ctx.nt) {
      T y = xr[i] * a + c;
      if (w) y = y * w[i];
      if (b) y = y + b[i];
      orow[i] = y;
    }
  }
}

// gi = dxhat * rs + x * B + K with dxhat = g * w, s1 = sum dxhat, s2 = sum dxhat (x - m),
// B = -rs^3 s2 / D, K = (rms ? 0 : -rs s1 / D) - m B.
template <typename T>
__host__ __device__ void row_norm_backward_input_block(const Ctx& ctx, T* __restrict__ gi, const T* __restrict__ g,
                                                       const T* __restrict__ x, const T* __restrict__ mean,
                                                       const T* __restrict__ rstd, const T* __restrict__ w, int64_t M,
                                                       int64_t D, bool rms) {
  for (int64_t r = ctx.bx; r < M; r += ctx.nb) {
    const T* gr = g + r * D;
    const T* xr = x + r * D;
    const double m = mean ? static_cast<double>(mean[r]) : 0.0;
    const double rs = static_cast<double>(rstd[r]);
    double s1 = 0, s2 = 0;
    for (int64_t i = ctx.tid; i < D; i += ctx.nt) {
      const double d = w ? static_cast<double>(gr[i]) * static_cast<double>(w[i]) : static_cast<double>(gr[i]);
      s1 += d;
      s2 += d * (static_cast<double>(xr[i]) - m);
    }
    s1 = block_reduce(s1, SumOp(), 0.0);
    s2 = block_reduce(s2, SumOp(), 0.0);
    const double inv = 1.0 / static_cast<double>(D);
    const double B = -rs * rs * rs * s2 * inv;
    const double K = (rms ? 0.0 : -rs * s1 * inv) - m * B;
    const T tr = static_cast<T>(rs), tb = static_cast<T>(B), tk = static_cast<T>(K);
    T* out = gi + r * D;
    for (int64_t i = ctx.tid; i < D; i += ctx.nt) {
      const T d = w ? gr[i] * w[i] : gr[i];
      out[i] = d * tr + xr[i] * tb + tk;
    }
  }
}

// Column partial sums of g * xhat (pw) and g (pb) over the rows of chunk blockIdx.y.
template <typename T>
__host__ __device__ void row_norm_backward_params_block(const Ctx& ctx, double* __restrict__ pw,
                                                        double* __restrict__ pb, const T* __restrict__ g,
                                                        const T* __restrict__ x, const T* __restrict__ mean,
                                                        const T* __restrict__ rstd, int64_t M, int64_t D,
                                                        int64_t rows_per) {
  const int64_t ch = ctx.by;
  const int64_t r0 = ch * rows_per, r1 = r0 + rows_per < M ? r0 + rows_per : M;
  for (int64_t j = ctx.bx * ctx.nt + ctx.tid; j < D; j += ctx.nb * ctx.nt) {
    double sw = 0, sb = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const double gv = static_cast<double>(g[r * D + j]);
      if (pw) {
        const double m = mean ? static_cast<double>(mean[r]) : 0.0;
        sw += gv * (static_cast<double>(x[r * D + j]) - m) * static_cast<double>(rstd[r]);
      }
      sb += gv;
    }
    if (pw) pw[ch * D + j] = sw;
    if (pb) pb[ch * D + j] = sb;
  }
}

// out[j] = sum over chunks of partial[ch * D + j]
template <typename T>
__host__ __device__ void sum_chunks_block(const Ctx& ctx, T* __restrict__ out, const double* __restrict__ partial,
                                          int64_t nchunks, int64_t D) {
  for (int64_t j = ctx.bx * ctx.nt + ctx.tid; j < D; j += ctx.nb * ctx.nt) {
    double s = 0;
    for (int64_t ch = 0; ch < nchunks; ++ch) s += partial[ch * D + j];
    out[j] = static_cast<T>(s);
  }
}

}  // namespace ember::at::native::cuda_norm
