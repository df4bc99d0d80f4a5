#pragma once
// The CUDA reduction framework: one kernel template, parameterised by a reduction
// functor, reduces any set of dims of an any-strided input (a ReductionPlan built by
// ReduceOps.cpp: size-1 dims dropped, kept and reduced dims each sorted by input
// stride, innermost first, and coalesced; outputs contiguous).
//
//   run_reduction_cuda(plan, ops)
//
// where `ops` (a small struct passed to the kernel by value) says how to reduce:
//
//   using input_t;                       // the element type read
//   using acc_t;                         // trivially copyable accumulator
//   __device__ acc_t identity() const;
//   __device__ acc_t reduce(acc_t acc, input_t x, int64_t j) const;
//        -- folds x, the element at flat index j of the reduced range (arg-reductions
//           are planned with one reduced dim, so j is the index along it);
//   __device__ acc_t combine(acc_t a, acc_t b) const;   -- any order (see below)
//   __device__ void project(acc_t a, int64_t out_offset) const;  -- writes the output(s)
//
// Each thread folds a strided subset of one output's reduced range, so combine() is
// called on partial results in no fixed index order: it must not depend on the order
// of its arguments beyond rounding (arg-reductions break ties on the index).
//
// Geometry (one block of kThreads threads covers `O` outputs, R = kThreads / O
// threads per output):
//   inner:   the threads of one output are adjacent (coalesced when the innermost
//            reduced dim is contiguous); partials meet through warp shuffles, then
//            through shared memory when R > 32.
//   columns: the innermost kept dim is contiguous in the input and the reduced dims
//            are outer: adjacent threads take adjacent outputs (coalesced), partials
//            meet through shared memory.
//   split:   few output blocks but long reductions: the reduced range is cut into G
//            chunks (blockIdx.y); each block writes its partial to a workspace and a
//            second kernel combines the G partials of each output in chunk order.
// Results depend only on the plan (never on timing): the same input gives the same bits.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/ReductionPlan.h>

#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_reduce {

// ---- device helpers shared by the reduction kernels ----
template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;
template <typename T>
constexpr bool is_float_like_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// Half/BFloat16 -> float, others unchanged.
template <typename T>
__device__ __forceinline__ opmath_t<T> up(T v) {
  return static_cast<opmath_t<T>>(v);
}

__device__ __forceinline__ float dabs(float x) { return fabsf(x); }
__device__ __forceinline__ double dabs(double x) { return fabs(x); }
__device__ __forceinline__ float dsqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double dsqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float dexp(float x) { return expf(x); }
__device__ __forceinline__ double dexp(double x) { return exp(x); }
__device__ __forceinline__ float dlog(float x) { return logf(x); }
__device__ __forceinline__ double dlog(double x) { return log(x); }
__device__ __forceinline__ float dpow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double dpow(double x, double y) { return pow(x, y); }

// +inf / -inf for floating types, the largest / smallest value for integers.
template <typename T>
__device__ __forceinline__ T highest() {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(INFINITY);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(~(static_cast<std::make_unsigned_t<T>>(1) << (sizeof(T) * 8 - 1)));
  } else {
    return static_cast<T>(~T(0));
  }
}
template <typename T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(-INFINITY);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(1) << (sizeof(T) * 8 - 1));
  } else {
    return T(0);
  }
}

constexpr int kThreads = 256;
constexpr int kMaxDims = 16;  // dims of each group (kept, reduced) after coalescing

// Offsets of a flat index over `sizes` (innermost first) along two stride sets.
struct OffsetCalc {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t s0[kMaxDims];
  int64_t s1[kMaxDims];

  __device__ int64_t offset0(int64_t linear) const {
    int64_t off = 0;
    for (int d = 0; d < ndim; ++d) {
      if (d == ndim - 1) return off + linear * s0[d];  // the outermost dim needs no modulo
      off += (linear % sizes[d]) * s0[d];
      linear /= sizes[d];
    }
    return off;
  }
  __device__ void offsets(int64_t linear, int64_t& o0, int64_t& o1) const {
    o0 = 0;
    o1 = 0;
    for (int d = 0; d < ndim; ++d) {
      const int64_t i = d == ndim - 1 ? linear : linear % sizes[d];
      o0 += i * s0[d];
      o1 += i * s1[d];
      linear /= sizes[d];
    }
  }
};

struct Geometry {
  OffsetCalc kept;  // s0: input strides, s1: output strides
  OffsetCalc red;   // s0: input strides
  int64_t K = 0;    // outputs
  int64_t N = 0;    // reduced elements per output
  int64_t num_out_blocks = 0;
  int64_t G = 1;      // chunks of the reduced range (split)
  int64_t chunk = 0;  // reduced elements per chunk
  int O = 1;          // outputs per block
  int R = kThreads;   // threads per output
  bool columns = false;
};

// Shuffles any trivially copyable value word by word.
template <typename T>
__device__ __forceinline__ T shfl_down(const T& v, unsigned delta, int width) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned words[kWords] = {};
  memcpy(words, &v, sizeof(T));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], delta, width);
  T r;
  memcpy(&r, words, sizeof(T));
  return r;
}

// Combines the partials of the R threads of each output; the result is valid in
// the thread with red_lane == 0. Every thread of the block must call it.
template <typename Ops, typename acc_t>
__device__ acc_t block_reduce(const Ops& ops, acc_t acc, const Geometry& g, int out_lane, int red_lane, acc_t* smem) {
  if (!g.columns) {
    const int width = g.R < 32 ? g.R : 32;
    for (int off = width / 2; off > 0; off /= 2) acc = ops.combine(acc, shfl_down(acc, off, width));
    if (g.R > 32) {
      const int warps = g.R / 32;  // per output
      if (red_lane % 32 == 0) smem[out_lane * warps + red_lane / 32] = acc;
      __syncthreads();
      if (red_lane == 0) {
        for (int w = 1; w < warps; ++w) acc = ops.combine(acc, smem[out_lane * warps + w]);
      }
      __syncthreads();
    }
  } else if (g.R > 1) {
    smem[red_lane * g.O + out_lane] = acc;
    __syncthreads();
    if (red_lane == 0) {
      for (int r = 1; r < g.R; ++r) acc = ops.combine(acc, smem[r * g.O + out_lane]);
    }
    __syncthreads();
  }
  return acc;
}

template <typename Ops>
__global__ void __launch_bounds__(kThreads) reduce_kernel(Ops ops, const typename Ops::input_t* __restrict__ in,
                                                          Geometry g, typename Ops::acc_t* __restrict__ partials) {
  using acc_t = typename Ops::acc_t;
  extern __shared__ __align__(16) unsigned char reduce_smem[];
  acc_t* smem = reinterpret_cast<acc_t*>(reduce_smem);
  const int tid = static_cast<int>(threadIdx.x);
  const int out_lane = g.columns ? tid % g.O : tid / g.R;
  const int red_lane = g.columns ? tid / g.O : tid % g.R;
  const int64_t chunk_id = blockIdx.y;
  const int64_t j0 = chunk_id * g.chunk;
  const int64_t j1 = j0 + g.chunk < g.N ? j0 + g.chunk : g.N;
  for (int64_t ob = blockIdx.x; ob < g.num_out_blocks; ob += gridDim.x) {
    const int64_t k = ob * g.O + out_lane;
    int64_t in_off = 0, out_off = 0;
    acc_t acc = ops.identity();
    if (k < g.K) {
      g.kept.offsets(k, in_off, out_off);
      const typename Ops::input_t* base = in + in_off;
      for (int64_t j = j0 + red_lane; j < j1; j += g.R) acc = ops.reduce(acc, base[g.red.offset0(j)], j);
    }
    acc = block_reduce(ops, acc, g, out_lane, red_lane, smem);
    if (red_lane == 0 && k < g.K) {
      if (g.G == 1) {
        ops.project(acc, out_off);
      } else {
        partials[k * g.G + chunk_id] = acc;
      }
    }
  }
}

// Second pass of a split reduction: one thread per output, chunks in order.
template <typename Ops>
__global__ void reduce_combine_kernel(Ops ops, const typename Ops::acc_t* __restrict__ partials, Geometry g) {
  using acc_t = typename Ops::acc_t;
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < g.K;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    acc_t acc = partials[k * g.G];
    for (int64_t c = 1; c < g.G; ++c) acc = ops.combine(acc, partials[k * g.G + c]);
    int64_t in_off = 0, out_off = 0;
    g.kept.offsets(k, in_off, out_off);
    ops.project(acc, out_off);
  }
}

// Host: the launch geometry of a plan (defined in Reduce.cu).
Geometry make_geometry(const ReductionPlan& p);
// Host: a device workspace of `bytes` (kept alive by the returned tensor).
Tensor workspace(int64_t bytes);

template <typename Ops>
void run_reduction_cuda(const ReductionPlan& p, const Ops& ops) {
  using acc_t = typename Ops::acc_t;
  const Geometry g = make_geometry(p);
  if (g.K == 0) return;
  c10::DeviceGuard guard(p.device);
  const cudaStream_t stream = ember::at::cuda::current_stream();
  const auto* in = static_cast<const typename Ops::input_t*>(p.in);
  const size_t smem = static_cast<size_t>(kThreads) * sizeof(acc_t);
  const unsigned gx = static_cast<unsigned>(g.num_out_blocks < 0x7fffffff ? g.num_out_blocks : 0x7fffffff);
  const dim3 grid(gx, static_cast<unsigned>(g.G));
  if (g.G == 1) {
    reduce_kernel<Ops><<<grid, kThreads, smem, stream>>>(ops, in, g, nullptr);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const Tensor ws = workspace(g.K * g.G * static_cast<int64_t>(sizeof(acc_t)));
  auto* partials = static_cast<acc_t*>(ws.data_ptr());
  reduce_kernel<Ops><<<grid, kThreads, smem, stream>>>(ops, in, g, partials);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  reduce_combine_kernel<Ops><<<ember::at::cuda::grid_size(g.K), kThreads, 0, stream>>>(ops, partials, g);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace ember::at::native::cuda_reduce
