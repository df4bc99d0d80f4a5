#pragma once
// Block-wide reductions for the nn kernels (SoftMax.cu, Normalization.cu, Loss.cu):
// warp shuffles within each warp, then one value per warp through shared memory. Every
// thread of the block must call them (they synchronise) and every thread gets the result.
// Compiled for the host too: ember_aten_testing (packages/aten/testing) runs a kernel's
// block code on the host as one thread per block, whose value is then the block's.
#include <cuda_runtime.h>

#include <cmath>

namespace ember::at::native::cuda_nn {

constexpr int kWarpSize = 32;
constexpr int kMaxWarps = 32;  // blocks of at most 1024 threads

struct SumOp {
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// NaN-propagating max (a NaN anywhere makes the result NaN, as the CPU kernels).
struct MaxOp {
  template <typename T>
  __host__ __device__ T operator()(T a, T b) const {
    return (a != a || a > b) ? a : b;
  }
};

template <typename T, typename Op>
__device__ inline T warp_reduce(T v, Op op) {
#pragma unroll
  for (int o = kWarpSize / 2; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// `identity` fills the lanes of warps the block does not have. blockDim.x must be a
// multiple of 32.
template <typename T, typename Op>
__host__ __device__ inline T block_reduce(T v, Op op, T identity) {
#ifndef __CUDA_ARCH__
  (void)op;
  (void)identity;
  return v;  // on the host: one thread per block (ember_aten_testing)
#else
  __shared__ T partial[kMaxWarps];
  __shared__ T result;
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int nwarps = blockDim.x / kWarpSize;
  v = warp_reduce(v, op);
  __syncthreads();  // partial / result may still be read from a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = lane < nwarps ? partial[lane] : identity;
    w = warp_reduce(w, op);
    if (lane == 0) result = w;
  }
  __syncthreads();
  return result;
#endif
}

// Threads for a block that walks rows of n elements: a multiple of 32 in [32, 512].
inline int row_block_threads(int64_t n) {
  int t = 32;
  while (t < 512 && t < n) t *= 2;
  return t;
}

__host__ __device__ inline float dev_exp(float x) { return expf(x); }
__host__ __device__ inline double dev_exp(double x) { return exp(x); }
__host__ __device__ inline float dev_log(float x) { return logf(x); }
__host__ __device__ inline double dev_log(double x) { return log(x); }
__host__ __device__ inline float dev_log1p(float x) { return log1pf(x); }
__host__ __device__ inline double dev_log1p(double x) { return log1p(x); }
__host__ __device__ inline float dev_sqrt(float x) { return sqrtf(x); }
__host__ __device__ inline double dev_sqrt(double x) { return sqrt(x); }
__host__ __device__ inline float dev_abs(float x) { return fabsf(x); }
__host__ __device__ inline double dev_abs(double x) { return fabs(x); }

}  // namespace ember::at::native::cuda_nn
