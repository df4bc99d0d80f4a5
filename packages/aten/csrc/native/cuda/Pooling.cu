// Pooling on CUDA: the stubs of Pooling.h (layout, index and dtype rules there; the
// operators in Pooling.cpp serve both devices). One thread per output element, each
// reading its window, with the CPU kernels' rules: the first element wins ties and a NaN
// wins over everything; all-padding windows give 0 (avg) or index -1 (max). The backward
// passes and max_unpool scatter with one thread per gradient element into a zeroed
// grad_input -- atomicAdd where windows overlap (the order of float additions is not
// fixed), a plain store for max_unpool. Indices outside a plane are reported on the
// device (check_device_errors raises them as IndexError).
#include <ember/aten/Dispatch.h>

#include <limits>

#include "../Pooling.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

using cuda::grid_size;
using cuda::kNumThreads;

// PoolGeometry by value (a kernel argument).
struct Geom {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int64_t in_numel, out_numel;
};

Geom to_geom(const PoolGeometry& g) {
  Geom r{};
  for (int i = 0; i < 3; ++i) {
    r.in[i] = g.input[i];
    r.out[i] = g.output[i];
    r.k[i] = g.kernel[i];
    r.s[i] = g.stride[i];
    r.p[i] = g.padding[i];
    r.d[i] = g.dilation[i];
  }
  r.in_numel = g.input_numel();
  r.out_numel = g.output_numel();
  return r;
}

#define EMBER_GRID_STRIDE_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// output position o of a plane -> (od, oh, ow)
__device__ __forceinline__ void split_out(const Geom& g, int64_t o, int64_t& od, int64_t& oh, int64_t& ow) {
  ow = o % g.out[2];
  oh = (o / g.out[2]) % g.out[1];
  od = o / (g.out[2] * g.out[1]);
}

__device__ __forceinline__ int64_t ceil_div_dev(int64_t a, int64_t b) { return (a + b - 1) / b; }
__device__ __forceinline__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// kernel offsets [lo, hi) whose element start + k * dil lies in [0, size)
__device__ __forceinline__ void window_range(int64_t start, int64_t size, int64_t kernel, int64_t dil, int64_t& lo,
                                             int64_t& hi) {
  lo = start < 0 ? ceil_div_dev(-start, dil) : 0;
  hi = start >= size ? 0 : imin(kernel, (size - 1 - start) / dil + 1);
  if (hi < lo) hi = lo;
}

// ---- max pooling ----

template <typename T>
__global__ void max_pool_kernel(const T* input, T* output, int64_t* indices, int64_t total, Geom g, T lowest) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t plane = i / g.out_numel;
    int64_t od, oh, ow;
    split_out(g, i % g.out_numel, od, oh, ow);
    const T* in = input + plane * g.in_numel;
    const int64_t d0 = od * g.s[0] - g.p[0], h0 = oh * g.s[1] - g.p[1], w0 = ow * g.s[2] - g.p[2];
    int64_t kd0, kd1, kh0, kh1, kw0, kw1;
    window_range(d0, g.in[0], g.k[0], g.d[0], kd0, kd1);
    window_range(h0, g.in[1], g.k[1], g.d[1], kh0, kh1);
    window_range(w0, g.in[2], g.k[2], g.d[2], kw0, kw1);
    T best = lowest;
    int64_t best_i = -1;
    for (int64_t kd = kd0; kd < kd1; ++kd) {
      const int64_t id = d0 + kd * g.d[0];
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const int64_t row = (id * g.in[1] + h0 + kh * g.d[1]) * g.in[2];
        for (int64_t kw = kw0; kw < kw1; ++kw) {
          const int64_t j = row + w0 + kw * g.d[2];
          const T v = in[j];
          if (best_i < 0 || v > best || v != v) {  // v != v: NaN (never for integers)
            best = v;
            best_i = j;
          }
        }
      }
    }
    output[i] = best;
    indices[i] = best_i;
  }
}

template <typename T>
T lowest_of() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

void max_pool_cuda(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                   const PoolGeometry& pg) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
#define EMBER_MAX_POOL_CUDA_CASE_                                                                                    \
  [&] {                                                                                                              \
    max_pool_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const scalar_t*>(input),     \
                                                                            static_cast<scalar_t*>(output), indices, \
                                                                            total, g, lowest_of<scalar_t>());        \
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();                                                                                \
  }
  EMBER_DISPATCH_SWITCH(dtype, "max_pool_cuda",
                        EMBER_CASES_FLOAT_DOUBLE(EMBER_MAX_POOL_CUDA_CASE_)
                            EMBER_CASES_INTEGRAL(EMBER_MAX_POOL_CUDA_CASE_));
#undef EMBER_MAX_POOL_CUDA_CASE_
}

// the adaptive window of output o along a dim I -> O: [floor(o I / O), ceil((o + 1) I / O))
__device__ __forceinline__ void adaptive_range(int64_t o, int64_t I, int64_t O, int64_t& lo, int64_t& hi) {
  lo = o * I / O;
  hi = ceil_div_dev((o + 1) * I, O);
}

template <typename T>
__global__ void adaptive_max_pool_kernel(const T* input, T* output, int64_t* indices, int64_t total, Geom g, T lowest) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t plane = i / g.out_numel;
    int64_t od, oh, ow, d0, d1, h0, h1, w0, w1;
    split_out(g, i % g.out_numel, od, oh, ow);
    adaptive_range(od, g.in[0], g.out[0], d0, d1);
    adaptive_range(oh, g.in[1], g.out[1], h0, h1);
    adaptive_range(ow, g.in[2], g.out[2], w0, w1);
    const T* in = input + plane * g.in_numel;
    T best = lowest;
    int64_t best_i = (d0 * g.in[1] + h0) * g.in[2] + w0;
    for (int64_t d = d0; d < d1; ++d) {
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) {
          const int64_t j = (d * g.in[1] + h) * g.in[2] + w;
          const T v = in[j];
          if (v > best || v != v) {
            best = v;
            best_i = j;
          }
        }
      }
    }
    output[i] = best;
    indices[i] = best_i;
  }
}

void adaptive_max_pool_cuda(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                            const PoolGeometry& pg) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_max_pool_cuda", [&] {
    adaptive_max_pool_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), indices, total, g, lowest_of<scalar_t>());
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// ---- average pooling ----

// One avg_pool window along a dim: the clamped range [lo, hi) and the length that
// count_include_pad divides by (the window clipped to the padded input).
struct AvgWindow {
  int64_t lo, hi, padded;
};
__device__ __forceinline__ AvgWindow avg_window(int64_t o, int64_t size, int64_t k, int64_t s, int64_t p) {
  const int64_t start = o * s - p;
  const int64_t end = imin(start + k, size + p);
  return {imax(start, 0), imin(end, size), end - start};
}

struct AvgBox {
  AvgWindow d, h, w;
  int64_t divisor;
  bool empty;
};
__device__ __forceinline__ AvgBox avg_box(const Geom& g, int64_t o, bool count_include_pad, int64_t divisor_override) {
  int64_t od, oh, ow;
  split_out(g, o, od, oh, ow);
  AvgBox b;
  b.d = avg_window(od, g.in[0], g.k[0], g.s[0], g.p[0]);
  b.h = avg_window(oh, g.in[1], g.k[1], g.s[1], g.p[1]);
  b.w = avg_window(ow, g.in[2], g.k[2], g.s[2], g.p[2]);
  if (divisor_override != 0) {
    b.divisor = divisor_override;
  } else if (count_include_pad) {
    b.divisor = b.d.padded * b.h.padded * b.w.padded;
  } else {
    b.divisor = (b.d.hi - b.d.lo) * (b.h.hi - b.h.lo) * (b.w.hi - b.w.lo);
  }
  b.empty = b.d.lo >= b.d.hi || b.h.lo >= b.h.hi || b.w.lo >= b.w.hi || b.divisor == 0;
  return b;
}

// float32 sums in float32 (as the CPU kernel), int64 in int64 (integer division)
template <typename T>
__global__ void avg_pool_kernel(const T* input, T* output, int64_t total, Geom g, bool count_include_pad,
                                int64_t divisor_override) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const AvgBox b = avg_box(g, i % g.out_numel, count_include_pad, divisor_override);
    const T* in = input + (i / g.out_numel) * g.in_numel;
    T sum = T(0);
    for (int64_t d = b.d.lo; d < b.d.hi; ++d) {
      for (int64_t h = b.h.lo; h < b.h.hi; ++h) {
        const T* row = in + (d * g.in[1] + h) * g.in[2];
        for (int64_t w = b.w.lo; w < b.w.hi; ++w) sum += row[w];
      }
    }
    output[i] = b.empty ? T(0) : static_cast<T>(sum / static_cast<T>(b.divisor));
  }
}

template <typename T>
__global__ void avg_pool_backward_kernel(const T* grad_output, T* grad_input, int64_t total, Geom g,
                                         bool count_include_pad, int64_t divisor_override) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const AvgBox b = avg_box(g, i % g.out_numel, count_include_pad, divisor_override);
    if (b.empty) continue;
    T* gi = grad_input + (i / g.out_numel) * g.in_numel;
    const T v = grad_output[i] / static_cast<T>(b.divisor);
    for (int64_t d = b.d.lo; d < b.d.hi; ++d) {
      for (int64_t h = b.h.lo; h < b.h.hi; ++h) {
        T* row = gi + (d * g.in[1] + h) * g.in[2];
        for (int64_t w = b.w.lo; w < b.w.hi; ++w) atomicAdd(row + w, v);
      }
    }
  }
}

void zero_async(void* p, int64_t bytes) {
  if (bytes > 0) EMBER_CUDA_CHECK(cudaMemsetAsync(p, 0, static_cast<size_t>(bytes), cuda::current_stream()));
}

void avg_pool_cuda(ScalarType dtype, const void* input, void* output, int64_t planes, const PoolGeometry& pg,
                   bool count_include_pad, int64_t divisor_override) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
#define EMBER_AVG_POOL_CUDA_CASE_                                                                                     \
  [&] {                                                                                                               \
    avg_pool_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const scalar_t*>(input),      \
                                                                            static_cast<scalar_t*>(output), total, g, \
                                                                            count_include_pad, divisor_override);     \
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();                                                                                 \
  }
  EMBER_DISPATCH_SWITCH(dtype, "avg_pool_cuda",
                        EMBER_CASES_FLOAT_DOUBLE(EMBER_AVG_POOL_CUDA_CASE_)
                            EMBER_PRIVATE_CASE_TYPE(Long, int64_t, EMBER_AVG_POOL_CUDA_CASE_));
#undef EMBER_AVG_POOL_CUDA_CASE_
}

void avg_pool_backward_cuda(ScalarType dtype, const void* grad_output, void* grad_input, int64_t planes,
                            const PoolGeometry& pg, bool count_include_pad, int64_t divisor_override) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  zero_async(grad_input, planes * g.in_numel * static_cast<int64_t>(c10::elementSize(dtype)));
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "avg_pool_backward_cuda", [&] {
    avg_pool_backward_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input), total, g, count_include_pad,
        divisor_override);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// ---- adaptive average pooling ----

template <typename T, bool Backward>
__global__ void adaptive_avg_kernel(const T* src, T* dst, int64_t total, Geom g) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t plane = i / g.out_numel;
    int64_t od, oh, ow, d0, d1, h0, h1, w0, w1;
    split_out(g, i % g.out_numel, od, oh, ow);
    adaptive_range(od, g.in[0], g.out[0], d0, d1);
    adaptive_range(oh, g.in[1], g.out[1], h0, h1);
    adaptive_range(ow, g.in[2], g.out[2], w0, w1);
    const T area = static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
    if constexpr (Backward) {  // src: grad_output, dst: grad_input (zeroed)
      T* gi = dst + plane * g.in_numel;
      const T v = src[i] / area;
      for (int64_t d = d0; d < d1; ++d) {
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) atomicAdd(gi + (d * g.in[1] + h) * g.in[2] + w, v);
        }
      }
    } else {
      const T* in = src + plane * g.in_numel;
      T sum = T(0);
      for (int64_t d = d0; d < d1; ++d) {
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += in[(d * g.in[1] + h) * g.in[2] + w];
        }
      }
      dst[i] = sum / area;
    }
  }
}

void adaptive_avg_pool_cuda(ScalarType dtype, const void* input, void* output, int64_t planes, const PoolGeometry& pg) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_avg_pool_cuda", [&] {
    adaptive_avg_kernel<scalar_t, false><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), total, g);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void adaptive_avg_pool_backward_cuda(ScalarType dtype, const void* grad_output, void* grad_input, int64_t planes,
                                     const PoolGeometry& pg) {
  const Geom g = to_geom(pg);
  const int64_t total = planes * g.out_numel;
  zero_async(grad_input, planes * g.in_numel * static_cast<int64_t>(c10::elementSize(dtype)));
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_avg_pool_backward_cuda", [&] {
    adaptive_avg_kernel<scalar_t, true><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input), total, g);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// ---- index scatter (max pooling backward, max_unpool) ----

template <typename T>
__global__ void pool_scatter_kernel(const T* src, const int64_t* indices, T* dst, int64_t total, int64_t src_n,
                                    int64_t dst_n, bool accumulate, cuda::DeviceError* err, int op) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t j = indices[i];
    if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(dst_n)) {
      if (!(accumulate && j == -1)) cuda::report_index_error(err, op, 0, j, dst_n);  // -1: an empty window
      continue;
    }
    T* d = dst + (i / src_n) * dst_n + j;
    if (accumulate) {
      atomicAdd(d, src[i]);
    } else {
      *d = src[i];
    }
  }
}

bool pool_scatter_cuda(ScalarType dtype, const void* src, const int64_t* indices, void* dst, int64_t planes,
                       int64_t src_n, int64_t dst_n, bool accumulate, int64_t* bad_index) {
  zero_async(dst, planes * dst_n * static_cast<int64_t>(c10::elementSize(dtype)));
  const int64_t total = planes * src_n;
  if (total == 0) return true;
  cuda::check_device_errors();
  // a bad index is raised by the next check_device_errors (IndexError naming the operator)
  static const int max_pool_op = cuda::register_error_op("max_pool_backward()");
  static const int unpool_op = cuda::register_error_op("max_unpool()");
  cuda::DeviceError* err = cuda::device_error_slot();
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "pool_scatter_cuda", [&] {
    pool_scatter_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(src), indices, static_cast<scalar_t*>(dst), total, src_n, dst_n, accumulate, err,
        accumulate ? max_pool_op : unpool_op);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return true;
}

}  // namespace

REGISTER_CUDA_DISPATCH(max_pool_stub, &max_pool_cuda);
REGISTER_CUDA_DISPATCH(avg_pool_stub, &avg_pool_cuda);
REGISTER_CUDA_DISPATCH(avg_pool_backward_stub, &avg_pool_backward_cuda);
REGISTER_CUDA_DISPATCH(adaptive_avg_pool_stub, &adaptive_avg_pool_cuda);
REGISTER_CUDA_DISPATCH(adaptive_avg_pool_backward_stub, &adaptive_avg_pool_backward_cuda);
REGISTER_CUDA_DISPATCH(adaptive_max_pool_stub, &adaptive_max_pool_cuda);
REGISTER_CUDA_DISPATCH(pool_scatter_stub, &pool_scatter_cuda);

}  // namespace ember::at::native
