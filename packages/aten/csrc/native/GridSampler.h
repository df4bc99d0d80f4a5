#pragma once
// grid_sampler_2d's kernels behind DispatchStubs: GridSampler.cpp checks the arguments,
// converts to the compute dtype (float for Half/BFloat16) and makes the operands
// contiguous, then calls the stub of the tensors' device (CPU: GridSampler.cpp,
// CUDA: cuda/GridSampler.cu). Stubs are never called on empty outputs.
#include <cstdint>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

enum class GridSampleInterp : int64_t { Bilinear = 0, Nearest = 1, Bicubic = 2 };
enum class GridSamplePadding : int64_t { Zeros = 0, Border = 1, Reflection = 2 };

struct GridSampleGeometry {
  int64_t N, C, H, W, Ho, Wo;
  GridSampleInterp interp;
  GridSamplePadding pad;
  bool align_corners;
};

// input (N, C, H, W), grid (N, Ho, Wo, 2), out (N, C, Ho, Wo): contiguous, one dtype
// (float32 or float64), one device.
using grid_sampler_2d_fn = void (*)(const GridSampleGeometry& g, const Tensor& input, const Tensor& grid,
                                    const Tensor& out);
// grad_output (N, C, Ho, Wo), input, grid as above; grad_input (N, C, H, W) zero-filled and
// grad_grid (N, Ho, Wo, 2): either may be undefined (not requested), not both.
using grid_sampler_2d_backward_fn = void (*)(const GridSampleGeometry& g, const Tensor& grad_output,
                                             const Tensor& input, const Tensor& grid, const Tensor& grad_input,
                                             const Tensor& grad_grid);

DECLARE_DISPATCH(grid_sampler_2d_fn, grid_sampler_2d_stub);
DECLARE_DISPATCH(grid_sampler_2d_backward_fn, grid_sampler_2d_backward_stub);

}  // namespace ember::at::native
