// Host emulation of the grid_sampler_2d kernels (GridSampler.cu), for tests without a GPU:
// the CUDA kernels' per-location code (GridSamplerPoint.h, which the CPU kernel runs too)
// run serially on CPU tensors, in the CPU slots of the stubs.
#include "../../csrc/native/GridSampler.h"
#include "../../csrc/native/GridSamplerPoint.h"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

template <typename T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// The CUDA kernels' per-location code run serially on CPU tensors, in the CPU slots of the stubs.
void grid_sampler_2d_emulated(const GridSampleGeometry& g, const Tensor& input, const Tensor& grid, const Tensor& out) {
  const int64_t n = g.N * g.Ho * g.Wo;
  for (int64_t i = 0; i < n; ++i) {
    if (out.dtype() == ScalarType::Double) {
      grid_point::forward(g, input.data_ptr<double>(), grid.data_ptr<double>(), out.data_ptr<double>(), i);
    } else {
      grid_point::forward(g, input.data_ptr<float>(), grid.data_ptr<float>(), out.data_ptr<float>(), i);
    }
  }
}

void grid_sampler_2d_backward_emulated(const GridSampleGeometry& g, const Tensor& grad_output, const Tensor& input,
                                       const Tensor& grid, const Tensor& grad_input, const Tensor& grad_grid) {
  const int64_t n = g.N * g.Ho * g.Wo;
  for (int64_t i = 0; i < n; ++i) {
    if (input.dtype() == ScalarType::Double) {
      grid_point::backward(g, grad_output.data_ptr<double>(), input.data_ptr<double>(), grid.data_ptr<double>(),
                           ptr_or_null<double>(grad_input), ptr_or_null<double>(grad_grid), i);
    } else {
      grid_point::backward(g, grad_output.data_ptr<float>(), input.data_ptr<float>(), grid.data_ptr<float>(),
                           ptr_or_null<float>(grad_input), ptr_or_null<float>(grad_grid), i);
    }
  }
}

}  // namespace

// true: the CPU slots of grid_sampler_2d_stub / grid_sampler_2d_backward_stub run the host
// emulation of the CUDA kernels of GridSampler.cu; returns the previous state.
bool cuda_grid_sampler_emulation(bool on) {
  static bool active = false;
  static SlotSwap<grid_sampler_2d_stub_DECLARE_DISPATCH_type> s_fwd;
  static SlotSwap<grid_sampler_2d_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(grid_sampler_2d_stub, &grid_sampler_2d_emulated, on);
  s_bwd.swap(grid_sampler_2d_backward_stub, &grid_sampler_2d_backward_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
