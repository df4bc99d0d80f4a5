#pragma once
// The CUDA caching allocator's size rules, PyTorch's, as a pure function (for tests; no
// device needed). Kept out of CUDAFunctions.h, which every CUDA kernel file includes.

#include <cstddef>

#include <ember/c10/Macros.h>

namespace ember::c10::cuda {

// A request of `nbytes` takes a block of `block` bytes (rounded up to 512), from the
// small pool (requests up to 1 MiB) or the large one; a cache miss cudaMallocs a segment
// of `segment` bytes and keeps `remainder` bytes of it as a free block of its own (0 when
// the rest is too small to be worth splitting off and stays in the block).
struct AllocationSizes {
  size_t block = 0;
  size_t segment = 0;
  bool small_pool = false;
  size_t remainder = 0;
};
EMBER_C10_API AllocationSizes allocation_sizes(size_t nbytes);

}  // namespace ember::c10::cuda
