#pragma once
// Pooling kernels: max / average / adaptive pooling in 1-3 spatial dims, their
// backward passes, and max_unpool.
//
// Every kernel works on `planes` contiguous planes (one per batch element and channel)
// of three spatial dims (D, H, W); 1-d and 2-d pooling have leading size-1 dims with
// kernel 1, stride 1, padding 0. An index (max pooling) is the flat position of the
// chosen element within its input plane -- h * W + w in 2-d, d * H * W + h * W + w in
// 3-d -- as PyTorch's. Planes are independent, so each kernel runs in parallel over
// planes (at::parallel_for) and never needs atomics: a backward pass only scatters
// into the plane its gradient came from.
//
// max_pool: all numeric dtypes; everything else float32 / float64, plus int64 for
// avg_pool (integer division, as PyTorch). float16 / bfloat16 run in float32
// (Pooling.cpp converts).

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct PoolGeometry {
  int64_t input[3] = {1, 1, 1};
  int64_t output[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t padding[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};
  int64_t input_numel() const { return input[0] * input[1] * input[2]; }
  int64_t output_numel() const { return output[0] * output[1] * output[2]; }
};

// out / indices: planes x output_numel.
using max_pool_fn = void (*)(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                             const PoolGeometry& g);
// divisor_override 0: none.
using avg_pool_fn = void (*)(ScalarType dtype, const void* input, void* output, int64_t planes, const PoolGeometry& g,
                             bool count_include_pad, int64_t divisor_override);
using avg_pool_backward_fn = void (*)(ScalarType dtype, const void* grad_output, void* grad_input, int64_t planes,
                                      const PoolGeometry& g, bool count_include_pad, int64_t divisor_override);
// Adaptive pooling: only g.input and g.output are used; the window of output o along a
// dim of size I -> O is [floor(o * I / O), ceil((o + 1) * I / O)).
using adaptive_avg_pool_fn = void (*)(ScalarType dtype, const void* input, void* output, int64_t planes,
                                      const PoolGeometry& g);
using adaptive_avg_pool_backward_fn = void (*)(ScalarType dtype, const void* grad_output, void* grad_input,
                                               int64_t planes, const PoolGeometry& g);
using adaptive_max_pool_fn = void (*)(ScalarType dtype, const void* input, void* output, int64_t* indices,
                                      int64_t planes, const PoolGeometry& g);
// dst plane p (dst_numel elements, zeroed first) gets src[p, i] at indices[p, i]: added
// (max pooling's backward passes) or stored (max_unpool). Returns false, with the first
// offending value in *bad_index, when an index is outside [0, dst_numel).
using pool_scatter_fn = bool (*)(ScalarType dtype, const void* src, const int64_t* indices, void* dst, int64_t planes,
                                 int64_t src_numel, int64_t dst_numel, bool accumulate, int64_t* bad_index);

DECLARE_DISPATCH(max_pool_fn, max_pool_stub);
DECLARE_DISPATCH(avg_pool_fn, avg_pool_stub);
DECLARE_DISPATCH(avg_pool_backward_fn, avg_pool_backward_stub);
DECLARE_DISPATCH(adaptive_avg_pool_fn, adaptive_avg_pool_stub);
DECLARE_DISPATCH(adaptive_avg_pool_backward_fn, adaptive_avg_pool_backward_stub);
DECLARE_DISPATCH(adaptive_max_pool_fn, adaptive_max_pool_stub);
DECLARE_DISPATCH(pool_scatter_fn, pool_scatter_stub);

}  // namespace ember::at::native
