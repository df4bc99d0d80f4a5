// CUDA kernels of the random distributions (the stubs of ../Distributions.h).
//
// They follow the Philox stream layout written out in ../cpu/DistributionsKernel.cpp
// to the word: value i of a draw comes from block philox4x32_10(seed, offset + i / V),
// lane i % V, through the same dist:: arithmetic (Distributions.h: IEEE +, -, *, /,
// sqrt and bit operations, no libm). This file is compiled with --fmad=false
// (CMakeLists.txt), so no a*b+c is fused into an FMA, and nvcc's default
// -prec-div=true / -prec-sqrt=true / -ftz=false keep / and sqrt correctly rounded
// with subnormals: the result is the CPU kernel's, bit for bit, for every
// distribution and dtype (float16 / bfloat16 round through the same c10 conversions).
//
// One generic kernel: thread t of the grid-stride loop computes Philox block b and the
// V values of lanes 0..V-1 (a functor turns the block's four words into them).
//
//
// The block body, the functors and the stub functions over a launcher are
// DistributionsKernels.cuh's (the test-only module ember_aten_testing runs the same blocks on
// the host); this file launches them.
#include <cstdint>

#include <ember/aten/Dispatch.h>

#include "../Distributions.h"
#include "CUDAUtils.cuh"
#include "DistributionsKernels.cuh"

namespace ember::at::native {
namespace {

using cuda::ceil_div;
using cuda::current_stream;
using cuda::grid_size;
using cuda::kNumThreads;
using namespace cuda_distributions;

template <int V, typename T, typename Gen>
__global__ void draw_kernel(T* out, int64_t n, PhiloxDraw d, Gen gen) {
  const int64_t blocks = (n + V - 1) / V;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    draw_block<V>(out, n, d, gen, b);
  }
}

// Launches draw_kernel over the contiguous tensor `self` (value i = its i-th element), V
// values per block.
struct DeviceLaunch {
  template <int V, typename T, typename Gen>
  static void draw(const Tensor& self, PhiloxDraw d, const Gen& gen) {
    const int64_t n = self.numel();
    if (n == 0) return;
    c10::DeviceGuard guard(self.device());
    const int64_t blocks = ceil_div<int64_t>(n, V);
    draw_kernel<V, T, Gen><<<grid_size(blocks), kNumThreads, 0, current_stream()>>>(self.data_ptr<T>(), n, d, gen);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

void uniform_kernel_cuda(const Tensor& self, double from, double to, PhiloxDraw d) {
  uniform_kernel<DeviceLaunch>(self, from, to, d);
}

void normal_kernel_cuda(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                        PhiloxDraw d) {
  normal_kernel<DeviceLaunch>(self, mean_t, mean, std_t, std_, d);
}

void log_normal_kernel_cuda(const Tensor& self, double mean, double std_, PhiloxDraw d) {
  log_normal_kernel<DeviceLaunch>(self, mean, std_, d);
}

void exponential_kernel_cuda(const Tensor& self, double lambd, PhiloxDraw d) {
  exponential_kernel<DeviceLaunch>(self, lambd, d);
}

void cauchy_kernel_cuda(const Tensor& self, double median, double sigma, PhiloxDraw d) {
  cauchy_kernel<DeviceLaunch>(self, median, sigma, d);
}

void random_from_to_kernel_cuda(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw d) {
  random_from_to_kernel<DeviceLaunch>(self, range, base, d);
}

void bernoulli_kernel_cuda(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw d) {
  bernoulli_kernel<DeviceLaunch>(self, p_t, p, d);
}

void geometric_kernel_cuda(const Tensor& self, double log1m_p, PhiloxDraw d) {
  geometric_kernel<DeviceLaunch>(self, log1m_p, d);
}

}  // namespace

REGISTER_CUDA_DISPATCH(uniform_stub, &uniform_kernel_cuda);
REGISTER_CUDA_DISPATCH(normal_stub, &normal_kernel_cuda);
REGISTER_CUDA_DISPATCH(random_from_to_stub, &random_from_to_kernel_cuda);
REGISTER_CUDA_DISPATCH(exponential_stub, &exponential_kernel_cuda);
REGISTER_CUDA_DISPATCH(cauchy_stub, &cauchy_kernel_cuda);
REGISTER_CUDA_DISPATCH(log_normal_stub, &log_normal_kernel_cuda);
REGISTER_CUDA_DISPATCH(geometric_stub, &geometric_kernel_cuda);
REGISTER_CUDA_DISPATCH(bernoulli_stub, &bernoulli_kernel_cuda);

}  // namespace ember::at::native
