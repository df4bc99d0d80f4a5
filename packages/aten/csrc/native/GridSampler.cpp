// grid_sampler_2d and grid_sampler_2d_backward: PyTorch's checks (for every device), then
// the device's kernel through grid_sampler_2d_stub / grid_sampler_2d_backward_stub
// (GridSampler.h; CUDA: cuda/GridSampler.cu). The arithmetic of one output location, and
// the source-coordinate rules (non-finite grids included), are GridSamplerPoint.h's, shared
// with the CUDA kernel. Here: a parallel loop over the batch -- a backward task only writes
// its own batch element's grad_input, so nothing races.
#include <algorithm>
#include <tuple>
#include <vector>

#include <ember/aten/Parallel.h>

#include "GridSampler.h"
#include "GridSamplerPoint.h"
#include "Im2Col.h"  // nn_compute_type

namespace ember::at::native {

namespace {

using Geometry = GridSampleGeometry;

// Batch elements per task: enough output values per task to be worth a thread.
int64_t batch_grain(const Geometry& g) {
  return std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(g.C * g.Ho * g.Wo, 1));
}

template <typename T>
void forward_impl(const Geometry& g, const T* input, const T* grid, T* out) {
  const int64_t oplane = g.Ho * g.Wo;
  parallel_for(0, g.N, batch_grain(g), [&](int64_t nb, int64_t ne) {
    for (int64_t i = nb * oplane; i < ne * oplane; ++i) grid_point::forward(g, input, grid, out, i);
  });
}

template <typename T>
void backward_impl(const Geometry& g, const T* gout, const T* input, const T* grid, T* gin, T* ggrid) {
  const int64_t oplane = g.Ho * g.Wo;
  parallel_for(0, g.N, batch_grain(g), [&](int64_t nb, int64_t ne) {
    for (int64_t i = nb * oplane; i < ne * oplane; ++i) grid_point::backward(g, gout, input, grid, gin, ggrid, i);
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
  return Geometry{input.size(0),
                  input.size(1),
                  input.size(2),
                  input.size(3),
                  grid.size(1),
                  grid.size(2),
                  static_cast<GridSampleInterp>(interpolation_mode),
                  static_cast<GridSamplePadding>(padding_mode),
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
