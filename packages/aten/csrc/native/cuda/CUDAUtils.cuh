#pragma once
// What every kernel file in csrc/native/cuda/ leans on: the current stream, the
// launch check, launch geometry, and device-side index errors.
//
// Index errors. A kernel cannot raise, and a device assert would leave the CUDA
// context unusable. Instead a kernel that finds a bad index records it with
// report_index_error() in a small slot of mapped pinned host memory (one per
// device); the host reads that slot without synchronising. check_device_errors()
// raises the recorded error as Python IndexError ("index_select(): index 7 is out of
// bounds for dimension 0 with size 5") and clears it. It is called before every
// launch of a kernel that can report (so an error surfaces at the latest with the
// next such op), after every device-to-host copy and by ember.aten.cuda.synchronize().

#include <cuda_runtime.h>

#include <cstdint>

#include <ember/aten/Tensor.h>
#include <ember/c10/DeviceGuard.h>
#include <ember/c10/cuda/CUDAFunctions.h>

namespace ember::at::cuda {

// The current stream of `device` (-1: the current device).
inline cudaStream_t current_stream(int device = -1) {
  return static_cast<cudaStream_t>(c10::cuda::current_stream(device).handle);
}

// Put after every <<<...>>> launch: a bad launch becomes a RuntimeError naming it.
#define EMBER_CUDA_KERNEL_LAUNCH_CHECK() EMBER_CUDA_CHECK(cudaGetLastError())

constexpr int kNumThreads = 256;

template <typename T>
EMBER_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Blocks for a grid-stride loop over n items with `threads` threads per block:
// enough to fill every SM several times over, never more than n needs (at least 1).
unsigned int grid_size(int64_t n, int threads = kNumThreads);

// Makes a tensor's device current for a scope (c10's DeviceGuard, CUDA impl).
using CUDAGuard = c10::DeviceGuard;

// ---- device-side index errors ----
struct DeviceError {
  int flag;  // 0: none; set once by the first reporting thread
  int op;    // id from register_error_op
  int dim;
  long long index;
  long long size;
};

// Host: an id for an op name ("index_select()"), to pass to the kernel.
int register_error_op(const char* name);
// Host: an id whose error message is `format` itself with {index}, {dim} and {size}
// replaced ("Target {index} is out of bounds."); raised as IndexError, or as
// RuntimeError when index_error is false (a bad value rather than a bad index).
int register_error_format(const char* format, bool index_error = true);
// Host: the slot of `device` (-1: current), a device pointer into mapped pinned memory.
DeviceError* device_error_slot(int device = -1);
// Host: raises IndexError if a kernel on `device` (-1: every device used so far)
// reported an index error, clearing it.
void check_device_errors(int device = -1);

__device__ inline void report_index_error(DeviceError* slot, int op, int dim, int64_t index, int64_t size) {
  if (atomicCAS(&slot->flag, 0, 1) == 0) {
    slot->op = op;
    slot->dim = dim;
    slot->index = index;
    slot->size = size;
    __threadfence_system();
    atomicExch(&slot->flag, 2);  // complete: the host may read the fields
  }
}

}  // namespace ember::at::cuda
