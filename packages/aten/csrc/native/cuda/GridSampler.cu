// grid_sampler_2d and its backward on CUDA (grid_sampler_2d_stub and
// grid_sampler_2d_backward_stub, GridSampler.h). GridSampler.cpp has checked the arguments
// and hands over contiguous float or double operands on one device (Half/BFloat16 are
// computed in float there), never an empty output.
//
// One thread per output location (n, h, w), in a grid-stride loop with int64 indices: it
// computes the source coordinate once (the CPU kernel's rules: unnormalise, then border
// clipping or reflection, NaN/inf/huge coordinates read nothing) and loops over the channels.
// The backward thread adds its share of grad_output into grad_input with atomicAdd (so the
// order of those additions is not fixed) and writes its own grad_grid point.
//
// The per-location code is __host__ __device__: _C._cuda_grid_sampler_emulation(True) puts a
// host loop over it in the CPU slots of the two stubs, so tests compare it with the CPU kernel
// without a GPU (tests/aten/cuda/test_grid_cross_emulation.py).
#include <cmath>

#include "../GridSampler.h"
#include "CUDAUtils.cuh"
#include "StubEmulation.cuh"

namespace ember::at::native {
namespace {

using Interp = GridSampleInterp;
using Padding = GridSamplePadding;

// libm on the host, CUDA's math functions on the device
template <typename T>
__host__ __device__ __forceinline__ T fmod_(T a, T b) {
#ifdef __CUDA_ARCH__
  return ::fmod(a, b);
#else
  return std::fmod(a, b);
#endif
}
template <typename T>
__host__ __device__ __forceinline__ T floor_(T a) {
#ifdef __CUDA_ARCH__
  return ::floor(a);
#else
  return std::floor(a);
#endif
}
template <typename T>
__host__ __device__ __forceinline__ T nearbyint_(T a) {
#ifdef __CUDA_ARCH__
  return ::nearbyint(a);
#else
  return std::nearbyint(a);
#endif
}
template <typename T>
__host__ __device__ __forceinline__ bool isfinite_(T a) {
#ifdef __CUDA_ARCH__
  return ::isfinite(a);
#else
  return std::isfinite(a);
#endif
}
// grad_input accumulation: atomic on the device (threads share input pixels), serial on the host
template <typename T>
__host__ __device__ __forceinline__ void add_(T* p, T v) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

// The source coordinate of a grid value in [-1, 1] along a dim of `size`, and (in *g) its
// derivative with respect to the grid value.
template <typename T>
__host__ __device__ __forceinline__ T unnormalize(T coord, int64_t size, bool align_corners, T* g) {
  if (align_corners) {
    *g = static_cast<T>(size - 1) / 2;
    return (coord + 1) / 2 * static_cast<T>(size - 1);
  }
  *g = static_cast<T>(size) / 2;
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

template <typename T>
__host__ __device__ __forceinline__ T clip(T in, int64_t size, T* g) {
  if (in <= T(0)) {
    *g = 0;
    return 0;
  }
  const T hi = static_cast<T>(size - 1);
  if (in >= hi) {
    *g = 0;
    return hi;
  }
  *g = 1;
  return in;
}

// Reflects `in` into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates).
template <typename T>
__host__ __device__ __forceinline__ T reflect(T in, int64_t twice_low, int64_t twice_high, T* g) {
  if (twice_low == twice_high) {
    *g = 0;
    return 0;
  }
  const T lo = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  T sign = 1;
  in -= lo;
  if (in < 0) {
    sign = -1;
    in = -in;
  }
  const T extra = fmod_(in, span);
  const int64_t flips = static_cast<int64_t>(floor_(in / span));
  if (flips % 2 == 0) {
    *g = sign;
    return extra + lo;
  }
  *g = -sign;
  return span - extra + lo;
}

// NaN, infinite or huge coordinates become -100, outside every input (no float -> int64
// conversion overflows).
template <typename T>
__host__ __device__ __forceinline__ T safe_index(T x) {
  return isfinite_(x) && x < T(2147483646) && x > T(-2147483648.0) ? x : T(-100);
}

template <typename T>
__host__ __device__ T source_index(T coord, int64_t size, Padding pad, bool align_corners, T* g) {
  T gu, gc, gr;
  coord = unnormalize(coord, size, align_corners, &gu);
  if (pad == Padding::Border) {
    coord = clip(coord, size, &gc);
    *g = gu * gc;
  } else if (pad == Padding::Reflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1), &gr) : reflect(coord, -1, 2 * size - 1, &gr);
    coord = clip(coord, size, &gc);
    *g = gu * gr * gc;
  } else {
    *g = gu;
  }
  return safe_index(coord);
}

__host__ __device__ __forceinline__ bool inside(int64_t y, int64_t x, int64_t H, int64_t W) {
  return y >= 0 && y < H && x >= 0 && x < W;
}

#define EMBER_GRID_SAMPLER_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// Output location i = (n * Ho + h) * Wo + w: input (N, C, H, W), grid (N, Ho, Wo, 2),
// out (N, C, Ho, Wo), all contiguous.
template <typename T>
__host__ __device__ void grid_sample_point(const GridSampleGeometry& g, const T* __restrict__ input,
                                           const T* __restrict__ grid, T* __restrict__ out, int64_t i) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  const int64_t n = i / oplane, p = i % oplane;
  const T* in_n = input + n * g.C * plane;
  T* out_n = out + n * g.C * oplane;
  T dummy;
  const T ix = source_index(grid[2 * i], g.W, g.pad, g.align_corners, &dummy);
  const T iy = source_index(grid[2 * i + 1], g.H, g.pad, g.align_corners, &dummy);
  if (g.interp == Interp::Nearest) {
    const int64_t x = static_cast<int64_t>(nearbyint_(ix)), y = static_cast<int64_t>(nearbyint_(iy));
    const bool ok = inside(y, x, g.H, g.W);
    for (int64_t c = 0; c < g.C; ++c) out_n[c * oplane + p] = ok ? in_n[c * plane + y * g.W + x] : T(0);
    return;
  }
  const int64_t x0 = static_cast<int64_t>(floor_(ix)), y0 = static_cast<int64_t>(floor_(iy));
  const T fx = ix - static_cast<T>(x0), fy = iy - static_cast<T>(y0);
  const T w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};  // nw, ne, sw, se
  const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  bool ok[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) ok[k] = inside(ys[k], xs[k], g.H, g.W);
  for (int64_t c = 0; c < g.C; ++c) {
    const T* ic = in_n + c * plane;
    T acc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (ok[k]) acc += ic[ys[k] * g.W + xs[k]] * w[k];
    }
    out_n[c * oplane + p] = acc;
  }
}

// The backward of output location i: grad_input (zero-filled, atomicAdd) and grad_grid
// (N, Ho, Wo, 2); either may be null.
template <typename T>
__host__ __device__ void grid_sample_backward_point(const GridSampleGeometry& g, const T* __restrict__ gout,
                                                    const T* __restrict__ input, const T* __restrict__ grid, T* gin,
                                                    T* __restrict__ ggrid, int64_t i) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  const int64_t n = i / oplane, p = i % oplane;
  const T* in_n = input + n * g.C * plane;
  const T* go_n = gout + n * g.C * oplane;
  T* gi_n = gin ? gin + n * g.C * plane : nullptr;
  T mx, my;
  const T ix = source_index(grid[2 * i], g.W, g.pad, g.align_corners, &mx);
  const T iy = source_index(grid[2 * i + 1], g.H, g.pad, g.align_corners, &my);
  if (g.interp == Interp::Nearest) {
    const int64_t x = static_cast<int64_t>(nearbyint_(ix)), y = static_cast<int64_t>(nearbyint_(iy));
    if (gi_n && inside(y, x, g.H, g.W)) {
      for (int64_t c = 0; c < g.C; ++c) add_(gi_n + c * plane + y * g.W + x, go_n[c * oplane + p]);
    }
    if (ggrid) ggrid[2 * i] = ggrid[2 * i + 1] = T(0);
    return;
  }
  const int64_t x0 = static_cast<int64_t>(floor_(ix)), y0 = static_cast<int64_t>(floor_(iy));
  const T fx = ix - static_cast<T>(x0), fy = iy - static_cast<T>(y0);
  const T w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
  // d w / d ix and d w / d iy of nw, ne, sw, se
  const T dwx[4] = {-(1 - fy), 1 - fy, -fy, fy}, dwy[4] = {-(1 - fx), -fx, 1 - fx, fx};
  const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  T gx = 0, gy = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (!inside(ys[k], xs[k], g.H, g.W)) continue;
    const int64_t off = ys[k] * g.W + xs[k];
    for (int64_t c = 0; c < g.C; ++c) {
      const T go = go_n[c * oplane + p];
      if (gi_n) add_(gi_n + c * plane + off, w[k] * go);
      const T v = in_n[c * plane + off] * go;
      gx += v * dwx[k];
      gy += v * dwy[k];
    }
  }
  if (ggrid) {
    ggrid[2 * i] = gx * mx;
    ggrid[2 * i + 1] = gy * my;
  }
}

template <typename T>
__global__ void grid_sampler_2d_kernel(GridSampleGeometry g, const T* __restrict__ input, const T* __restrict__ grid,
                                       T* __restrict__ out) {
  EMBER_GRID_SAMPLER_LOOP(i, g.N * g.Ho * g.Wo) grid_sample_point(g, input, grid, out, i);
}

template <typename T>
__global__ void grid_sampler_2d_backward_kernel(GridSampleGeometry g, const T* __restrict__ gout,
                                                const T* __restrict__ input, const T* __restrict__ grid, T* gin,
                                                T* __restrict__ ggrid) {
  EMBER_GRID_SAMPLER_LOOP(i, g.N * g.Ho * g.Wo) grid_sample_backward_point(g, gout, input, grid, gin, ggrid, i);
}

template <typename T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

void grid_sampler_2d_cuda(const GridSampleGeometry& g, const Tensor& input, const Tensor& grid, const Tensor& out) {
  c10::DeviceGuard guard(out.device());
  const int64_t n = g.N * g.Ho * g.Wo;
  if (n == 0 || out.numel() == 0) return;
  const unsigned blocks = cuda::grid_size(n);
  cudaStream_t stream = cuda::current_stream();
  if (out.dtype() == ScalarType::Double) {
    grid_sampler_2d_kernel<double><<<blocks, cuda::kNumThreads, 0, stream>>>(
        g, input.data_ptr<double>(), grid.data_ptr<double>(), out.data_ptr<double>());
  } else {
    grid_sampler_2d_kernel<float><<<blocks, cuda::kNumThreads, 0, stream>>>(
        g, input.data_ptr<float>(), grid.data_ptr<float>(), out.data_ptr<float>());
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void grid_sampler_2d_backward_cuda(const GridSampleGeometry& g, const Tensor& grad_output, const Tensor& input,
                                   const Tensor& grid, const Tensor& grad_input, const Tensor& grad_grid) {
  c10::DeviceGuard guard(input.device());
  const int64_t n = g.N * g.Ho * g.Wo;
  if (n == 0 || grad_output.numel() == 0 || (!grad_input.defined() && !grad_grid.defined())) return;
  const unsigned blocks = cuda::grid_size(n);
  cudaStream_t stream = cuda::current_stream();
  if (input.dtype() == ScalarType::Double) {
    grid_sampler_2d_backward_kernel<double><<<blocks, cuda::kNumThreads, 0, stream>>>(
        g, grad_output.data_ptr<double>(), input.data_ptr<double>(), grid.data_ptr<double>(),
        ptr_or_null<double>(grad_input), ptr_or_null<double>(grad_grid));
  } else {
    grid_sampler_2d_backward_kernel<float><<<blocks, cuda::kNumThreads, 0, stream>>>(
        g, grad_output.data_ptr<float>(), input.data_ptr<float>(), grid.data_ptr<float>(),
        ptr_or_null<float>(grad_input), ptr_or_null<float>(grad_grid));
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- host emulation (tests without a GPU) ----

// The CUDA kernels' per-location code run serially on CPU tensors, in the CPU slots of the stubs.
void grid_sampler_2d_emulated(const GridSampleGeometry& g, const Tensor& input, const Tensor& grid, const Tensor& out) {
  const int64_t n = g.N * g.Ho * g.Wo;
  for (int64_t i = 0; i < n; ++i) {
    if (out.dtype() == ScalarType::Double) {
      grid_sample_point(g, input.data_ptr<double>(), grid.data_ptr<double>(), out.data_ptr<double>(), i);
    } else {
      grid_sample_point(g, input.data_ptr<float>(), grid.data_ptr<float>(), out.data_ptr<float>(), i);
    }
  }
}

void grid_sampler_2d_backward_emulated(const GridSampleGeometry& g, const Tensor& grad_output, const Tensor& input,
                                       const Tensor& grid, const Tensor& grad_input, const Tensor& grad_grid) {
  const int64_t n = g.N * g.Ho * g.Wo;
  for (int64_t i = 0; i < n; ++i) {
    if (input.dtype() == ScalarType::Double) {
      grid_sample_backward_point(g, grad_output.data_ptr<double>(), input.data_ptr<double>(), grid.data_ptr<double>(),
                                 ptr_or_null<double>(grad_input), ptr_or_null<double>(grad_grid), i);
    } else {
      grid_sample_backward_point(g, grad_output.data_ptr<float>(), input.data_ptr<float>(), grid.data_ptr<float>(),
                                 ptr_or_null<float>(grad_input), ptr_or_null<float>(grad_grid), i);
    }
  }
}

}  // namespace

// true: the CPU slots of grid_sampler_2d_stub / grid_sampler_2d_backward_stub run the host
// emulation of the CUDA kernels above; returns the previous state.
bool cuda_grid_sampler_emulation(bool on) {
  static bool active = false;
  static cuda_emulation::SlotSwap<grid_sampler_2d_stub_DECLARE_DISPATCH_type> s_fwd;
  static cuda_emulation::SlotSwap<grid_sampler_2d_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(grid_sampler_2d_stub, &grid_sampler_2d_emulated, on);
  s_bwd.swap(grid_sampler_2d_backward_stub, &grid_sampler_2d_backward_emulated, on);
  active = on;
  return was;
}

REGISTER_CUDA_DISPATCH(grid_sampler_2d_stub, &grid_sampler_2d_cuda);
REGISTER_CUDA_DISPATCH(grid_sampler_2d_backward_stub, &grid_sampler_2d_backward_cuda);

}  // namespace ember::at::native
