// linalg_cross on CUDA (cross_stub, Cross.h). linalg_cross_out (LinearAlgebra.cpp) has
// checked and broadcast the operands and built an iterator over every position but the
// crossed dim; one thread per position finds its three base pointers with the iterator's
// 32-bit offset calculator (Loops.cuh; iterations too large for it are split with
// with_32bit_indexing) and reaches components 1 and 2 through the crossed dim's byte strides
// (int64). Computed in opmath_t (float for Half/BFloat16), as the CPU kernel.
#include <ember/aten/Dispatch.h>

#include "../Cross.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

template <typename T>
__global__ void cross_kernel(int64_t n, cuda_detail::OffsetCalculator<3> calc, char* out, const char* self,
                             const char* other, int64_t so, int64_t sa, int64_t sb) {
  using acc_t = opmath_t<T>;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const auto off = calc.get(static_cast<uint32_t>(i));
    char* o = out + off.v[0];
    const char* a = self + off.v[1];
    const char* b = other + off.v[2];
    const acc_t a0 = static_cast<acc_t>(*reinterpret_cast<const T*>(a));
    const acc_t a1 = static_cast<acc_t>(*reinterpret_cast<const T*>(a + sa));
    const acc_t a2 = static_cast<acc_t>(*reinterpret_cast<const T*>(a + 2 * sa));
    const acc_t b0 = static_cast<acc_t>(*reinterpret_cast<const T*>(b));
    const acc_t b1 = static_cast<acc_t>(*reinterpret_cast<const T*>(b + sb));
    const acc_t b2 = static_cast<acc_t>(*reinterpret_cast<const T*>(b + 2 * sb));
    *reinterpret_cast<T*>(o) = static_cast<T>(a1 * b2 - a2 * b1);
    *reinterpret_cast<T*>(o + so) = static_cast<T>(a2 * b0 - a0 * b2);
    *reinterpret_cast<T*>(o + 2 * so) = static_cast<T>(a0 * b1 - a1 * b0);
  }
}

void cross_launch(const TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  cuda_detail::OffsetCalculator<3> calc(iter.shape(), [&](int k) { return iter.strides(k); });
  const unsigned blocks = cuda::grid_size(n);
  cudaStream_t stream = cuda::current_stream();
  char* out = static_cast<char*>(iter.data_ptr(0));
  const char* self = static_cast<const char*>(iter.data_ptr(1));
  const char* other = static_cast<const char*>(iter.data_ptr(2));
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "cross_cuda", [&] {
    cross_kernel<scalar_t><<<blocks, cuda::kNumThreads, 0, stream>>>(n, calc, out, self, other, so, sa, sb);
  });
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void cross_cuda(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  if (iter.numel() == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  if (iter.can_use_32bit_indexing()) {
    cross_launch(iter, so, sa, sb);
  } else {
    for (const TensorIterator& sub : iter.with_32bit_indexing()) cross_launch(sub, so, sa, sb);
  }
}

}  // namespace

REGISTER_CUDA_DISPATCH(cross_stub, &cross_cuda);

}  // namespace ember::at::native
