// grid_sampler_2d and grid_sampler_2d_backward: PyTorch's checks (for every device), then
// the device's kernel through grid_sampler_2d_stub / grid_sampler_2d_backward_stub
// (GridSampler.h; CUDA: cuda/GridSampler.cu, the same rules per output location).
// The CPU kernels here: PyTorch's source-index rules (unnormalise, then border clipping or
// reflection), bilinear and nearest modes. The loops are scalar (gathers at data-dependent
// positions), in parallel over the batch: a backward task only writes its own batch
// element's grad_input, so nothing races.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include <ember/aten/Parallel.h>

#include "GridSampler.h"
#include "Im2Col.h"  // nn_compute_type

namespace ember::at::native {

namespace {

using Interp = GridSampleInterp;
using Padding = GridSamplePadding;
using Geometry = GridSampleGeometry;

// The source coordinate of a grid value in [-1, 1] along a dim of `size`, and (in *g) its
// derivative with respect to the grid value.
template <typename T>
T unnormalize(T coord, int64_t size, bool align_corners, T* g) {
  if (align_corners) {
    *g = static_cast<T>(size - 1) / 2;
    return (coord + 1) / 2 * static_cast<T>(size - 1);
  }
  *g = static_cast<T>(size) / 2;
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

template <typename T>
T clip(T in, int64_t size, T* g) {
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
T reflect(T in, int64_t twice_low, int64_t twice_high, T* g) {
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
  const T extra = std::fmod(in, span);
  const int64_t flips = static_cast<int64_t>(std::floor(in / span));
  if (flips % 2 == 0) {
    *g = sign;
    return extra + lo;
  }
  *g = -sign;
  return span - extra + lo;
}

// NaN, infinite or huge coordinates read nothing (PyTorch's safe_downgrade_to_int_range):
// they become -100, outside every input, so no float -> int64 conversion overflows.
template <typename T>
T safe_index(T x) {
  return std::isfinite(x) && x < T(2147483646) && x > T(-2147483648.0) ? x : T(-100);
}

template <typename T>
T source_index(T coord, int64_t size, Padding pad, bool align_corners, T* g) {
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

inline bool inside(int64_t y, int64_t x, int64_t H, int64_t W) { return y >= 0 && y < H && x >= 0 && x < W; }

// input (N, C, H, W), grid (N, Ho, Wo, 2), out (N, C, Ho, Wo), all contiguous.
template <typename T>
void forward_impl(const Geometry& g, const T* input, const T* grid, T* out) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  parallel_for(
      0, g.N, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(g.C * oplane, 1)), [&](int64_t nb, int64_t ne) {
        for (int64_t n = nb; n < ne; ++n) {
          const T* in_n = input + n * g.C * plane;
          T* out_n = out + n * g.C * oplane;
          for (int64_t p = 0; p < oplane; ++p) {
            T dummy;
            const T* gp = grid + (n * oplane + p) * 2;
            const T ix = source_index(gp[0], g.W, g.pad, g.align_corners, &dummy);
            const T iy = source_index(gp[1], g.H, g.pad, g.align_corners, &dummy);
            if (g.interp == Interp::Nearest) {
              const int64_t x = static_cast<int64_t>(std::nearbyint(ix)), y = static_cast<int64_t>(std::nearbyint(iy));
              const bool ok = inside(y, x, g.H, g.W);
              for (int64_t c = 0; c < g.C; ++c) out_n[c * oplane + p] = ok ? in_n[c * plane + y * g.W + x] : T(0);
              continue;
            }
            const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
            const T fx = ix - static_cast<T>(x0), fy = iy - static_cast<T>(y0);
            const T w[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};  // nw, ne, sw, se
            const int64_t ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
            bool ok[4];
            for (int k = 0; k < 4; ++k) ok[k] = inside(ys[k], xs[k], g.H, g.W);
            for (int64_t c = 0; c < g.C; ++c) {
              const T* ic = in_n + c * plane;
              T acc = 0;
              for (int k = 0; k < 4; ++k) {
                if (ok[k]) acc += ic[ys[k] * g.W + xs[k]] * w[k];
              }
              out_n[c * oplane + p] = acc;
            }
          }
        }
      });
}

// grad_input (zero-filled) and grad_grid (N, Ho, Wo, 2); either may be null (not requested).
template <typename T>
void backward_impl(const Geometry& g, const T* gout, const T* input, const T* grid, T* gin, T* ggrid) {
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
  parallel_for(
      0, g.N, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(g.C * oplane, 1)), [&](int64_t nb, int64_t ne) {
        for (int64_t n = nb; n < ne; ++n) {
          const T* in_n = input + n * g.C * plane;
          const T* go_n = gout + n * g.C * oplane;
          T* gi_n = gin ? gin + n * g.C * plane : nullptr;
          for (int64_t p = 0; p < oplane; ++p) {
            const T* gp = grid + (n * oplane + p) * 2;
            T mx, my;
            const T ix = source_index(gp[0], g.W, g.pad, g.align_corners, &mx);
            const T iy = source_index(gp[1], g.H, g.pad, g.align_corners, &my);
            T* gg = ggrid ? ggrid + (n * oplane + p) * 2 : nullptr;
            if (g.interp == Interp::Nearest) {
              const int64_t x = static_cast<int64_t>(std::nearbyint(ix)), y = static_cast<int64_t>(std::nearbyint(iy));
              if (gi_n && inside(y, x, g.H, g.W)) {
                for (int64_t c = 0; c < g.C; ++c) gi_n[c * plane + y * g.W + x] += go_n[c * oplane + p];
              }
              if (gg) gg[0] = gg[1] = 0;
              continue;
            }
            const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
            const T fx = ix - static_cast<T>(x0), fy = iy - static_cast<T>(y0);
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
                if (gi_n) gi_n[c * plane + off] += w[k] * go;
                const T v = in_n[c * plane + off] * go;
                gx += v * dwx[k];
                gy += v * dwy[k];
              }
            }
            if (gg) {
              gg[0] = gx * mx;
              gg[1] = gy * my;
            }
          }
        }
      });
}

void grid_sampler_2d_cpu(const Geometry& g, const Tensor& x, const Tensor& gr, const Tensor& out) {
  if (out.dtype() == ScalarType::Double) {
    forward_impl(g, x.data_ptr<double>(), gr.data_ptr<double>(), out.data_ptr<double>());
  } else {
    forward_impl(g, x.data_ptr<float>(), gr.data_ptr<float>(), out.data_ptr<float>());
  }
}

void grid_sampler_2d_backward_cpu(const Geometry& g, const Tensor& go, const Tensor& x, const Tensor& gr,
                                  const Tensor& gi, const Tensor& gg) {
  if (x.dtype() == ScalarType::Double) {
    backward_impl(g, go.data_ptr<double>(), x.data_ptr<double>(), gr.data_ptr<double>(),
                  gi.defined() ? gi.data_ptr<double>() : nullptr, gg.defined() ? gg.data_ptr<double>() : nullptr);
  } else {
    backward_impl(g, go.data_ptr<float>(), x.data_ptr<float>(), gr.data_ptr<float>(),
                  gi.defined() ? gi.data_ptr<float>() : nullptr, gg.defined() ? gg.data_ptr<float>() : nullptr);
  }
}

Geometry check(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
               bool align_corners) {
  EMBER_CHECK(input.device() == grid.device(),
              "grid_sampler(): expected input and grid to be on same device, but input is on ", input.device(),
              " and grid is on ", grid.device());
  EMBER_CHECK(input.dtype() == grid.dtype(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              c10::toPythonName(input.dtype()), " and grid has ", c10::toPythonName(grid.dtype()));
  EMBER_CHECK(input.dim() == 4 && grid.dim() == 4 && input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input with sizes ",
              shape_str(input.sizes()), " and grid with sizes ", shape_str(grid.sizes()));
  EMBER_CHECK(grid.size(3) == 2,
              "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes ",
              shape_str(grid.sizes()));
  for (int64_t d = 2; d < 4; ++d) {
    EMBER_CHECK(input.size(d) > 0,
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                "sizes ",
                shape_str(input.sizes()), " with dimension ", d, " being empty");
  }
  EMBER_CHECK(c10::isFloatingType(input.dtype()), "\"",
              input.is_cpu() ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler_2d_cuda", "\" not implemented for '",
              c10::toString(input.dtype()), "'");
  EMBER_CHECK(interpolation_mode >= 0 && interpolation_mode <= 2, "grid_sampler(): invalid interpolation_mode ",
              interpolation_mode);
  EMBER_CHECK(padding_mode >= 0 && padding_mode <= 2, "grid_sampler(): invalid padding_mode ", padding_mode);
  EMBER_CHECK(interpolation_mode != 2, "grid_sampler_2d: bicubic interpolation is not implemented in ember");
  return Geometry{input.size(0),
                  input.size(1),
                  input.size(2),
                  input.size(3),
                  grid.size(1),
                  grid.size(2),
                  static_cast<Interp>(interpolation_mode),
                  static_cast<Padding>(padding_mode),
                  align_corners};
}

}  // namespace

REGISTER_BASELINE_DISPATCH(grid_sampler_2d_stub, &grid_sampler_2d_cpu);
REGISTER_BASELINE_DISPATCH(grid_sampler_2d_backward_stub, &grid_sampler_2d_backward_cpu);
DEFINE_DISPATCH(grid_sampler_2d_stub);
DEFINE_DISPATCH(grid_sampler_2d_backward_stub);

Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners) {
  const Geometry g = check(input, grid, interpolation_mode, padding_mode, align_corners);
  const ScalarType ct = nn_compute_type(input.dtype());
  const Tensor x = input.to(ct).contiguous(), gr = grid.to(ct).contiguous();
  Tensor out = empty({g.N, g.C, g.Ho, g.Wo}, ct, input.device());
  if (out.numel() > 0) grid_sampler_2d_stub(out.device().type, g, x, gr, out);
  return out.to(input.dtype());
}

std::tuple<Tensor, Tensor> grid_sampler_2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& grid,
                                                    int64_t interpolation_mode, int64_t padding_mode,
                                                    bool align_corners, const std::vector<bool>& output_mask) {
  const Geometry g = check(input, grid, interpolation_mode, padding_mode, align_corners);
  EMBER_CHECK(output_mask.size() == 2, "grid_sampler_2d_backward: output_mask must have 2 elements");
  EMBER_CHECK(grad_output.sizes() == IntArrayRef({g.N, g.C, g.Ho, g.Wo}),
              "grid_sampler_2d_backward: expected grad_output of size ", shape_str({g.N, g.C, g.Ho, g.Wo}),
              ", but got ", shape_str(grad_output.sizes()));
  check_same_device("grid_sampler_2d_backward", grad_output, input);
  const ScalarType ct = nn_compute_type(input.dtype());
  const Tensor x = input.to(ct).contiguous(), gr = grid.to(ct).contiguous(), go = grad_output.to(ct).contiguous();
  Tensor gi = output_mask[0] ? zeros(input.sizes(), ct, input.device()) : Tensor();
  Tensor gg = output_mask[1] ? zeros(grid.sizes(), ct, grid.device()) : Tensor();
  if (grad_output.numel() > 0 && (gi.defined() || gg.defined())) {
    grid_sampler_2d_backward_stub(input.device().type, g, go, x, gr, gi, gg);
  }
  return {gi.defined() ? gi.to(input.dtype()) : gi, gg.defined() ? gg.to(grid.dtype()) : gg};
}

}  // namespace ember::at::native
