#pragma once
// grid_sampler_2d's arithmetic for one output location, forward and backward: one
// definition for the CPU kernel (GridSampler.cpp, a parallel loop over the batch) and the
// CUDA kernel (cuda/GridSampler.cu, one thread per location), so the two devices give the
// same values for the same grid, non-finite coordinates included.
//
// The source-coordinate rules are PyTorch's CPU kernel's (GridSamplerKernel.cpp):
// - unnormalise the grid value in [-1, 1] (align_corners picks the corner or edge centres);
// - border padding clips into [0, size - 1], NaN clips to 0; reflection reflects first (an
//   infinite coordinate reflects to NaN, so it clips to 0 as well);
// - zeros padding leaves the coordinate alone: a tap outside the input reads 0, and the
//   interpolation weights come from the coordinate itself, so a NaN or infinite coordinate
//   gives NaN in bilinear and bicubic mode (0 * NaN) and 0 in nearest mode;
// - bicubic takes its weights from the unpadded coordinate and pads each of its 16 taps
//   separately, so a non-finite coordinate gives NaN whatever the padding.
// (PyTorch's CUDA kernel reads nothing for a NaN coordinate instead; ember follows its CPU
// kernel on both devices.) Integer positions are formed from finite coordinates only
// (safe_index), so no float -> int64 conversion overflows.
#include <cmath>
#include <cstdint>

#include <ember/c10/Macros.h>

#include "CubicConvolution.h"
#include "GridSampler.h"

namespace ember::at::native::grid_point {

// libm on the host, CUDA's math functions on the device
template <typename T>
EMBER_HOST_DEVICE inline T floor_(T a) {
#ifdef __CUDA_ARCH__
  return ::floor(a);
#else
  return std::floor(a);
#endif
}
template <typename T>
EMBER_HOST_DEVICE inline T trunc_(T a) {
#ifdef __CUDA_ARCH__
  return ::trunc(a);
#else
  return std::trunc(a);
#endif
}
template <typename T>
EMBER_HOST_DEVICE inline T nearbyint_(T a) {
#ifdef __CUDA_ARCH__
  return ::nearbyint(a);
#else
  return std::nearbyint(a);
#endif
}
template <typename T>
EMBER_HOST_DEVICE inline bool isfinite_(T a) {
#ifdef __CUDA_ARCH__
  return ::isfinite(a);
#else
  return std::isfinite(a);
#endif
}

// grad_input accumulation: atomic on the device (threads share input pixels); on the host
// each batch element's grad_input belongs to one task, so a plain add.
template <typename T>
EMBER_HOST_DEVICE inline void accumulate(T* p, T v) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

// The source coordinate of a grid value in [-1, 1] along a dim of `size`, and (in *g) its
// derivative with respect to the grid value.
template <typename T>
EMBER_HOST_DEVICE inline T unnormalize(T coord, int64_t size, bool align_corners, T* g) {
  if (align_corners) {
    *g = static_cast<T>(size - 1) / 2;
    return (coord + 1) / 2 * static_cast<T>(size - 1);
  }
  *g = static_cast<T>(size) / 2;
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

// Clips into [0, size - 1]; NaN becomes 0 (the test is written so that NaN fails it).
template <typename T>
EMBER_HOST_DEVICE inline T clip(T in, int64_t size, T* g) {
  if (!(in > T(0))) {
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

// Reflects `in` into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates): the
// position within one period of the reflection (twice the span), folded back past the span.
// The period is taken as PyTorch's CPU kernel takes it -- d - trunc(d / period) * period --
// so that huge coordinates land where its do; a non-finite coordinate comes back NaN.
template <typename T>
EMBER_HOST_DEVICE inline T reflect(T in, int64_t twice_low, int64_t twice_high, T* g) {
  if (twice_low == twice_high) {
    *g = 0;
    return 0;
  }
  if (!isfinite_(in)) {
    *g = 0;
    return static_cast<T>(NAN);
  }
  const T lo = static_cast<T>(twice_low) / 2, period = static_cast<T>(twice_high - twice_low);
  T d = in - lo, sign = 1;
  if (d < 0) {
    sign = -1;
    d = -d;
  }
  const T e = d - trunc_(d / period) * period;
  if (e <= period - e) {
    *g = sign;
    return e + lo;
  }
  *g = -sign;
  return period - e + lo;
}

// The padding rule applied to an unnormalised coordinate, with its derivative in *g.
template <typename T>
EMBER_HOST_DEVICE inline T pad_coordinate(T coord, int64_t size, GridSamplePadding pad, bool align_corners, T* g) {
  T gc, gr;
  if (pad == GridSamplePadding::Border) {
    coord = clip(coord, size, &gc);
    *g = gc;
  } else if (pad == GridSamplePadding::Reflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1), &gr) : reflect(coord, -1, 2 * size - 1, &gr);
    coord = clip(coord, size, &gc);
    *g = gr * gc;
  } else {
    *g = 1;
  }
  return coord;
}

// An integer position for a coordinate that is already integral (floor / nearbyint):
// NaN, infinite and huge values become -100, outside every input.
template <typename T>
EMBER_HOST_DEVICE inline int64_t safe_index(T x) {
  return isfinite_(x) && x < T(2147483646) && x > T(-2147483648.0) ? static_cast<int64_t>(x) : -100;
}

EMBER_HOST_DEVICE inline bool inside(int64_t y, int64_t x, int64_t H, int64_t W) {
  return y >= 0 && y < H && x >= 0 && x < W;
}

// Output location i = (n * Ho + h) * Wo + w: input (N, C, H, W), grid (N, Ho, Wo, 2),
// out (N, C, Ho, Wo), all contiguous.
template <typename T>
EMBER_HOST_DEVICE void forward(const GridSampleGeometry& g, const T* __restrict__ input, const T* __restrict__ grid,
                               T* __restrict__ out, int64_t i) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  const int64_t n = i / oplane, p = i % oplane;
  const T* in_n = input + n * g.C * plane;
  T* out_n = out + n * g.C * oplane;
  T unused;
  const T ux = unnormalize(grid[2 * i], g.W, g.align_corners, &unused);
  const T uy = unnormalize(grid[2 * i + 1], g.H, g.align_corners, &unused);
  if (g.interp == GridSampleInterp::Bicubic) {
    const T x0 = floor_(ux), y0 = floor_(uy);
    T wx[4], wy[4];
    cubic_weights(ux - x0, wx);
    cubic_weights(uy - y0, wy);
    int64_t xs[4], ys[4];
    for (int k = 0; k < 4; ++k) {
      xs[k] = safe_index(floor_(pad_coordinate(x0 - 1 + k, g.W, g.pad, g.align_corners, &unused)));
      ys[k] = safe_index(floor_(pad_coordinate(y0 - 1 + k, g.H, g.pad, g.align_corners, &unused)));
    }
    for (int64_t c = 0; c < g.C; ++c) {
      const T* ic = in_n + c * plane;
      T acc = 0;
      for (int r = 0; r < 4; ++r) {
        T row = 0;
        for (int k = 0; k < 4; ++k) row += (inside(ys[r], xs[k], g.H, g.W) ? ic[ys[r] * g.W + xs[k]] : T(0)) * wx[k];
        acc += row * wy[r];
      }
      out_n[c * oplane + p] = acc;
    }
    return;
  }
  const T ix = pad_coordinate(ux, g.W, g.pad, g.align_corners, &unused);
  const T iy = pad_coordinate(uy, g.H, g.pad, g.align_corners, &unused);
  if (g.interp == GridSampleInterp::Nearest) {
    const int64_t x = safe_index(nearbyint_(ix)), y = safe_index(nearbyint_(iy));
    const bool ok = inside(y, x, g.H, g.W);
    for (int64_t c = 0; c < g.C; ++c) out_n[c * oplane + p] = ok ? in_n[c * plane + y * g.W + x] : T(0);
    return;
  }
  const T fx0 = floor_(ix), fy0 = floor_(iy);
  const T fx = ix - fx0, fy = iy - fy0;  // NaN for a non-finite coordinate
  const int64_t x0 = safe_index(fx0), y0 = safe_index(fy0);
  const T w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};  // nw, ne, sw, se
  const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  bool ok[4];
  for (int k = 0; k < 4; ++k) ok[k] = inside(ys[k], xs[k], g.H, g.W);
  for (int64_t c = 0; c < g.C; ++c) {
    const T* ic = in_n + c * plane;
    T acc = 0;
    for (int k = 0; k < 4; ++k) acc += (ok[k] ? ic[ys[k] * g.W + xs[k]] : T(0)) * w[k];
    out_n[c * oplane + p] = acc;
  }
}

// The backward of output location i: adds into grad_input (zero-filled; `accumulate`) and
// writes grad_grid (N, Ho, Wo, 2); either may be null (not requested).
template <typename T>
EMBER_HOST_DEVICE void backward(const GridSampleGeometry& g, const T* __restrict__ gout, const T* __restrict__ input,
                                const T* __restrict__ grid, T* gin, T* __restrict__ ggrid, int64_t i) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  const int64_t n = i / oplane, p = i % oplane;
  const T* in_n = input + n * g.C * plane;
  const T* go_n = gout + n * g.C * oplane;
  T* gi_n = gin ? gin + n * g.C * plane : nullptr;
  T ux_g, uy_g, unused;
  const T ux = unnormalize(grid[2 * i], g.W, g.align_corners, &ux_g);
  const T uy = unnormalize(grid[2 * i + 1], g.H, g.align_corners, &uy_g);
  if (g.interp == GridSampleInterp::Bicubic) {
    // The weights depend on the coordinate; the padded tap positions are taken as fixed
    // (PyTorch's rule: no padding derivative in bicubic mode).
    const T x0 = floor_(ux), y0 = floor_(uy);
    T wx[4], wy[4], dwx[4], dwy[4];
    cubic_weights(ux - x0, wx);
    cubic_weights(uy - y0, wy);
    cubic_weights_grad(ux - x0, dwx);
    cubic_weights_grad(uy - y0, dwy);
    int64_t xs[4], ys[4];
    for (int k = 0; k < 4; ++k) {
      xs[k] = safe_index(floor_(pad_coordinate(x0 - 1 + k, g.W, g.pad, g.align_corners, &unused)));
      ys[k] = safe_index(floor_(pad_coordinate(y0 - 1 + k, g.H, g.pad, g.align_corners, &unused)));
    }
    T gx = 0, gy = 0;
    for (int r = 0; r < 4; ++r) {
      for (int k = 0; k < 4; ++k) {
        if (!inside(ys[r], xs[k], g.H, g.W)) continue;
        const int64_t off = ys[r] * g.W + xs[k];
        for (int64_t c = 0; c < g.C; ++c) {
          const T go = go_n[c * oplane + p];
          if (gi_n) accumulate(gi_n + c * plane + off, wx[k] * wy[r] * go);
          const T v = in_n[c * plane + off] * go;
          gx += v * dwx[k] * wy[r];
          gy += v * wx[k] * dwy[r];
        }
      }
    }
    if (ggrid) {
      ggrid[2 * i] = gx * ux_g;
      ggrid[2 * i + 1] = gy * uy_g;
    }
    return;
  }
  T px_g, py_g;
  const T ix = pad_coordinate(ux, g.W, g.pad, g.align_corners, &px_g);
  const T iy = pad_coordinate(uy, g.H, g.pad, g.align_corners, &py_g);
  if (g.interp == GridSampleInterp::Nearest) {
    const int64_t x = safe_index(nearbyint_(ix)), y = safe_index(nearbyint_(iy));
    if (gi_n && inside(y, x, g.H, g.W)) {
      for (int64_t c = 0; c < g.C; ++c) accumulate(gi_n + c * plane + y * g.W + x, go_n[c * oplane + p]);
    }
    if (ggrid) ggrid[2 * i] = ggrid[2 * i + 1] = T(0);
    return;
  }
  const T fx0 = floor_(ix), fy0 = floor_(iy);
  const T fx = ix - fx0, fy = iy - fy0;
  const int64_t x0 = safe_index(fx0), y0 = safe_index(fy0);
  const T w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
  // d w / d ix and d w / d iy of nw, ne, sw, se
  const T dwx[4] = {-(1 - fy), 1 - fy, -fy, fy}, dwy[4] = {-(1 - fx), -fx, 1 - fx, fx};
  const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  T gx = 0, gy = 0;
  for (int k = 0; k < 4; ++k) {
    if (!inside(ys[k], xs[k], g.H, g.W)) continue;
    const int64_t off = ys[k] * g.W + xs[k];
    for (int64_t c = 0; c < g.C; ++c) {
      const T go = go_n[c * oplane + p];
      if (gi_n) accumulate(gi_n + c * plane + off, w[k] * go);
      const T v = in_n[c * plane + off] * go;
      gx += v * dwx[k];
      gy += v * dwy[k];
    }
  }
  if (ggrid) {
    ggrid[2 * i] = gx * ux_g * px_g;
    ggrid[2 * i + 1] = gy * uy_g * py_g;
  }
}

}  // namespace ember::at::native::grid_point
