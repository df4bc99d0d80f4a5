// grid_sampler_2d and its backward on CUDA (grid_sampler_2d_stub and
// grid_sampler_2d_backward_stub, GridSampler.h). GridSampler.cpp has checked the arguments
// and hands over contiguous float or double operands on one device (Half/BFloat16 are
// computed in float there), never an empty output.
//
// One thread per output location (n, h, w), in a grid-stride loop with int64 indices, running
// the per-location code the CPU kernel runs too (GridSamplerPoint.h: the source-coordinate
// rules, bilinear / nearest / bicubic, looping over the channels). The backward thread adds
// its share of grad_output into grad_input with atomicAdd (so the order of those additions is
// not fixed) and writes its own grad_grid point.
//
// The test-only module ember_aten_testing (packages/aten/testing) runs the same per-location
// code in a serial host loop, in the CPU slots of the two stubs
// (tests/aten/cuda/test_grid_cross_emulation.py).
#include "../GridSampler.h"
#include "../GridSamplerPoint.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

#define EMBER_GRID_SAMPLER_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <typename T>
__global__ void grid_sampler_2d_kernel(GridSampleGeometry g, const T* __restrict__ input, const T* __restrict__ grid,
                                       T* __restrict__ out) {
  EMBER_GRID_SAMPLER_LOOP(i, g.N * g.Ho * g.Wo) grid_point::forward(g, input, grid, out, i);
}

template <typename T>
__global__ void grid_sampler_2d_backward_kernel(GridSampleGeometry g, const T* __restrict__ gout,
                                                const T* __restrict__ input, const T* __restrict__ grid, T* gin,
                                                T* __restrict__ ggrid) {
  EMBER_GRID_SAMPLER_LOOP(i, g.N * g.Ho * g.Wo) grid_point::backward(g, gout, input, grid, gin, ggrid, i);
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

}  // namespace

REGISTER_CUDA_DISPATCH(grid_sampler_2d_stub, &grid_sampler_2d_cuda);
REGISTER_CUDA_DISPATCH(grid_sampler_2d_backward_stub, &grid_sampler_2d_backward_cuda);

}  // namespace ember::at::native