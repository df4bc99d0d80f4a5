// linalg_cross on CUDA (cross_stub, Cross.h). linalg_cross_out (LinearAlgebra.cpp) has
// checked and broadcast the operands and built an iterator over every position but the
// crossed dim; one thread per position finds its three base pointers with the iterator's
// 32-bit offset calculator (Loops.cuh; iterations too large for it are split with
// with_32bit_indexing) and reaches components 1 and 2 through the crossed dim's byte strides
// (int64). Computed in opmath_t (float for Half/BFloat16), as the CPU kernel.
//
// The per-position code is CrossKernel.cuh's, __host__ __device__: the test-only module
// ember_aten_testing runs it on the host in the CPU slot of cross_stub, so tests compare it
// with the CPU kernel without a GPU (tests/aten/cuda/test_grid_cross_emulation.py).
#include <ember/aten/Dispatch.h>

#include "../Cross.h"
#include "CrossKernel.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_cross;

template <typename T>
__global__ void cross_kernel(int64_t n, cuda_detail::OffsetCalculator<3> calc, char* out, const char* self,
                             const char* other, int64_t so, int64_t sa, int64_t sb) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    cross_point<T>(calc, out, self, other, so, sa, sb, i);
  }
}

// One 32-bit piece: the kernel launch.
void cross_launch(const TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  const cuda_detail::OffsetCalculator<3> calc = cross_offsets(iter);
  char* out = static_cast<char*>(iter.data_ptr(0));
  const char* self = static_cast<const char*>(iter.data_ptr(1));
  const char* other = static_cast<const char*>(iter.data_ptr(2));
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "cross_cuda", [&] {
    cross_kernel<scalar_t>
        <<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(n, calc, out, self, other, so, sa, sb);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void cross_cuda(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  if (iter.numel() == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  for_each_32bit_piece(iter, [&](const TensorIterator& piece) { cross_launch(piece, so, sa, sb); });
}

}  // namespace

REGISTER_CUDA_DISPATCH(cross_stub, &cross_cuda);

}  // namespace ember::at::native
