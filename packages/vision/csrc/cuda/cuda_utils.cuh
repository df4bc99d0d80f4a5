#pragma once
// Shared by ember-vision's CUDA kernels: the current stream, launch sizes, launch checks.
#include <cuda_runtime.h>

#include <ember/c10/DeviceGuard.h>
#include <ember/c10/cuda/CUDAFunctions.h>

#include <algorithm>

#include "../vision.h"

namespace ember::vision::cuda {

constexpr int kThreads = 256;

inline int blocks_for(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(1) << 20));
}

// The stream ember runs its own kernels on for this device (streams set by the user apply).
inline cudaStream_t stream_of(const at::Tensor& t) {
  return static_cast<cudaStream_t>(ember::c10::cuda::current_stream(t.device().index).handle);
}

inline void check_launch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  EMBER_CHECK(err == cudaSuccess, op, ": CUDA kernel launch failed: ", cudaGetErrorString(err));
}

inline void check_cuda(const char* op, const at::Tensor& t) {
  EMBER_CHECK_VALUE(t.is_cuda(), op, ": expected a CUDA tensor, got ", t.toString());
}

// A grid-stride loop over [0, n).
#define EMBER_VISION_KERNEL_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

}  // namespace ember::vision::cuda
