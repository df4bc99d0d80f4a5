#pragma once
// The per-position code of linalg_cross's CUDA kernel (Cross.cu), __host__ __device__: the
// test-only module ember_aten_testing (packages/aten/testing) runs it on the host with the
// same 32-bit split and offset calculator, in the CPU slot of cross_stub.
#include <cstdint>

#include <ember/aten/Dispatch.h>

#include "Loops.cuh"

namespace ember::at::native::cuda_cross {

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

// The offset calculator of one 32-bit piece of the iteration [out, self, other].
inline cuda_detail::OffsetCalculator<3> cross_offsets(const TensorIterator& iter) {
  return cuda_detail::OffsetCalculator<3>(iter.shape(), [&](int k) { return iter.strides(k); });
}

// f(piece) for each piece of `iter` small enough for 32-bit offsets.
template <typename F>
void for_each_32bit_piece(TensorIterator& iter, const F& f) {
  if (iter.numel() == 0) return;
  if (iter.can_use_32bit_indexing()) {
    f(static_cast<const TensorIterator&>(iter));
  } else {
    for (const TensorIterator& sub : iter.with_32bit_indexing()) f(sub);
  }
}

}  // namespace ember::at::native::cuda_cross
