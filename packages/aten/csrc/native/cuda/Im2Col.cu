// im2col / col2im on CUDA (im2col_stub / col2im_stub; layouts in Im2Col.h): one thread
// per element written, grid-stride loops, int64 indexing. im2col writes each column
// element from its image element (0 in the padding); col2im gathers, for each image
// element, the column elements of every window covering it -- no atomics, so its sums are
// deterministic and it overwrites the image, as the CPU kernel does. Pointers are device
// pointers. Besides float32 / float64 these take float16 / bfloat16 (the CUDA convolution
// runs in the input's dtype), col2im summing in opmath_t.
#include <ember/aten/Dispatch.h>

#include "../Im2Col.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

using cuda::grid_size;
using cuda::kNumThreads;

// ConvGeometry by value (a kernel argument).
struct Geom {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int64_t in_numel, out_numel, k_numel;
};

Geom to_geom(const ConvGeometry& g) {
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
  r.k_numel = g.kernel_numel();
  return r;
}

// i over (n, c, kd, kh, kw, od, oh, ow):
//   columns[n * image_offset + (c * k_numel + kidx) * row_stride + pos] = image[n][c][id, ih, iw]
template <typename T>
__global__ void im2col_kernel(const T* image, int64_t image_stride, T* columns, ColumnsLayout layout, int64_t channels,
                              int64_t total, Geom g) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t pos = i % g.out_numel;
    int64_t r = i / g.out_numel;
    const int64_t kidx = r % g.k_numel;
    r /= g.k_numel;
    const int64_t c = r % channels, n = r / channels;
    const int64_t ow = pos % g.out[2], oh = (pos / g.out[2]) % g.out[1], od = pos / (g.out[2] * g.out[1]);
    const int64_t kw = kidx % g.k[2], kh = (kidx / g.k[2]) % g.k[1], kd = kidx / (g.k[2] * g.k[1]);
    const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
    const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
    const int64_t iw = ow * g.s[2] - g.p[2] + kw * g.d[2];
    T v = static_cast<T>(0.0f);
    if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2]) {
      v = image[n * image_stride + c * g.in_numel + (id * g.in[1] + ih) * g.in[2] + iw];
    }
    columns[n * layout.image_offset + (c * g.k_numel + kidx) * layout.row_stride + pos] = v;
  }
}

// The windows positions o along one dim whose kernel tap k reads image index x:
// o * s - p + k * d == x, 0 <= o < out. Returns -1 when there is none.
__device__ __forceinline__ int64_t window_of(int64_t x, int64_t k, int64_t s, int64_t p, int64_t d, int64_t out) {
  const int64_t t = x + p - k * d;
  if (t < 0 || t % s != 0) return -1;
  const int64_t o = t / s;
  return o < out ? o : -1;
}

// i over (n, c, id, ih, iw): image element = sum of the column elements it was copied to.
template <typename T>
__global__ void col2im_kernel(const T* columns, ColumnsLayout layout, T* image, int64_t image_stride, int64_t channels,
                              int64_t total, Geom g) {
  using acc_t = opmath_t<T>;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t idx = i % g.in_numel;
    const int64_t r = i / g.in_numel;
    const int64_t c = r % channels, n = r / channels;
    const int64_t iw = idx % g.in[2], ih = (idx / g.in[2]) % g.in[1], id = idx / (g.in[2] * g.in[1]);
    const T* col = columns + n * layout.image_offset + c * g.k_numel * layout.row_stride;
    acc_t sum = acc_t(0);
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      const int64_t od = window_of(id, kd, g.s[0], g.p[0], g.d[0], g.out[0]);
      if (od < 0) continue;
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t oh = window_of(ih, kh, g.s[1], g.p[1], g.d[1], g.out[1]);
        if (oh < 0) continue;
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t ow = window_of(iw, kw, g.s[2], g.p[2], g.d[2], g.out[2]);
          if (ow < 0) continue;
          const int64_t row = (kd * g.k[1] + kh) * g.k[2] + kw;
          sum += static_cast<acc_t>(col[row * layout.row_stride + (od * g.out[1] + oh) * g.out[2] + ow]);
        }
      }
    }
    image[n * image_stride + c * g.in_numel + idx] = static_cast<T>(sum);
  }
}

void im2col_cuda(ScalarType dtype, const void* image, int64_t image_stride, void* columns, ColumnsLayout layout,
                 int64_t batch, int64_t channels, const ConvGeometry& g) {
  const Geom geom = to_geom(g);
  const int64_t total = batch * channels * geom.k_numel * geom.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "im2col_cuda", [&] {
    im2col_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const scalar_t*>(image),
                                                                          image_stride, static_cast<scalar_t*>(columns),
                                                                          layout, channels, total, geom);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void col2im_cuda(ScalarType dtype, const void* columns, ColumnsLayout layout, void* image, int64_t image_stride,
                 int64_t batch, int64_t channels, const ConvGeometry& g) {
  const Geom geom = to_geom(g);
  const int64_t total = batch * channels * geom.in_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "col2im_cuda", [&] {
    col2im_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const scalar_t*>(columns), layout,
                                                                          static_cast<scalar_t*>(image), image_stride,
                                                                          channels, total, geom);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(im2col_stub, &im2col_cuda);
REGISTER_CUDA_DISPATCH(col2im_stub, &col2im_cuda);

}  // namespace ember::at::native
