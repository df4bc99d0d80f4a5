// linalg_cross on CUDA (cross_stub, Cross.h). linalg_cross_out (LinearAlgebra.cpp) has
// checked and broadcast the operands and built an iterator over every position but the
// crossed dim; one thread per position finds its three base pointers with the iterator's
// 32-bit offset calculator (Loops.cuh; iterations too large for it are split with
// with_32bit_indexing) and reaches components 1 and 2 through the crossed dim's byte strides
// (int64). Computed in opmath_t (float for Half/BFloat16), as the CPU kernel.
//
// The per-position code is __host__ __device__: _C._cuda_cross_emulation(True) runs it on the
// host (same iterator split, same offset calculator) in the CPU slot of cross_stub, so tests
// compare it with the CPU kernel without a GPU (tests/aten/cuda/test_grid_cross_emulation.py).
#include <array>

#include <ember/aten/Dispatch.h>

#include "../Cross.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

// Position i of the iteration: its three components through the crossed dim's byte strides.
template <typename T>
__host__ __device__ void cross_point(const cuda_detail::OffsetCalculator<3>& calc, char* out, const char* self,
                                     const char* other, int64_t so, int64_t sa, int64_t sb, int64_t i) {
  using acc_t = opmath_t<T>;
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

template <typename T>
__global__ void cross_kernel(int64_t n, cuda_detail::OffsetCalculator<3> calc, char* out, const char* self,
                             const char* other, int64_t so, int64_t sa, int64_t sb) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    cross_point<T>(calc, out, self, other, so, sa, sb, i);
  }
}

// One 32-bit piece: the kernel launch, or (Emulate) the same positions run on the host.
template <bool Emulate>
void cross_launch(const TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  cuda_detail::OffsetCalculator<3> calc(iter.shape(), [&](int k) { return iter.strides(k); });
  char* out = static_cast<char*>(iter.data_ptr(0));
  const char* self = static_cast<const char*>(iter.data_ptr(1));
  const char* other = static_cast<const char*>(iter.data_ptr(2));
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "cross_cuda", [&] {
    if constexpr (Emulate) {
      for (int64_t i = 0; i < n; ++i) cross_point<scalar_t>(calc, out, self, other, so, sa, sb, i);
    } else {
      cross_kernel<scalar_t>
          <<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(n, calc, out, self, other, so, sa, sb);
    }
  });
  if constexpr (!Emulate) EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

template <bool Emulate>
void cross_run(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  if (iter.numel() == 0) return;
  if (iter.can_use_32bit_indexing()) {
    cross_launch<Emulate>(iter, so, sa, sb);
  } else {
    for (const TensorIterator& sub : iter.with_32bit_indexing()) cross_launch<Emulate>(sub, so, sa, sb);
  }
}

void cross_cuda(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  if (iter.numel() == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  cross_run<false>(iter, so, sa, sb);
}

// ---- host emulation (tests without a GPU): the CPU slot of cross_stub ----
void cross_emulated(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) { cross_run<true>(iter, so, sa, sb); }

}  // namespace

// true: every CPU slot of cross_stub runs the host emulation of the CUDA kernel; returns the
// previous state.
bool cuda_cross_emulation(bool on) {
  using Base = DispatchStub<cross_stub_DECLARE_DISPATCH_type::FnPtr, cross_stub_DECLARE_DISPATCH_type>;
  static bool active = false;
  static std::array<Base::FnPtr, 3> saved{};
  const bool was = active;
  if (on == active) return was;
  if (on) {
    saved = {Base::DEFAULT, Base::AVX2, Base::AVX512};
    Base::DEFAULT = Base::AVX2 = Base::AVX512 = &cross_emulated;
  } else {
    Base::DEFAULT = saved[0];
    Base::AVX2 = saved[1];
    Base::AVX512 = saved[2];
  }
  cross_stub.reset_cpu();
  active = on;
  return was;
}

REGISTER_CUDA_DISPATCH(cross_stub, &cross_cuda);

}  // namespace ember::at::native
