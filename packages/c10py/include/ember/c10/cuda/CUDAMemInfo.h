#pragma once
// How much memory a CUDA device has free (PyTorch's torch.cuda.mem_get_info).
// A header of its own, next to CUDAFunctions.h, so that the many translation units
// including that one do not depend on it. Like CUDAFunctions.h: no cuda_runtime.h,
// and in a build without CUDA the call raises saying ember was built without CUDA.

#include <cstddef>
#include <utility>

#include <ember/c10/Macros.h>

namespace ember::c10::cuda {

// {free, total} bytes of `device`'s global memory as the driver reports them now
// (cudaMemGetInfo; -1: the current device). Free memory counts other processes'
// memory and the caching allocator's cached blocks as used.
EMBER_C10_API std::pair<size_t, size_t> mem_get_info(int device = -1);

}  // namespace ember::c10::cuda
