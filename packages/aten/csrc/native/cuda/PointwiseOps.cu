// CUDA kernels of the ternary pointwise operators -- lerp, addcmul, addcdiv, clamp,
// where (the stubs of PointwiseOps.h) -- as cpu/PointwiseOpsKernel.cpp.
#include <ember/aten/Dispatch.h>

#include "../PointwiseOps.h"
#include "../PointwiseOpsMath.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

// the scalar formulas, shared with cpu/PointwiseOpsKernel.cpp
using pointwise_math::lerp;
using pointwise_math::max_nan;
using pointwise_math::min_nan;

// ---- lerp: anchored at self for |weight| < 0.5, at end otherwise ----
template <typename scalar_t>
void lerp_scalar_impl(TensorIterator& iter, const Scalar& weight) {
  using opmath = opmath_t<scalar_t>;
  const opmath w = weight.to<opmath>();
  gpu_kernel(iter, [w] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
    return static_cast<scalar_t>(lerp<opmath>(static_cast<opmath>(a), static_cast<opmath>(b), w));
  });
}

void lerp_scalar_kernel_cuda(TensorIterator& iter, const Scalar& weight) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "lerp",
                                         [&] { lerp_scalar_impl<scalar_t>(iter, weight); });
}

void lerp_tensor_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "lerp", [&] {
    using opmath = opmath_t<scalar_t>;
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b, scalar_t w) -> scalar_t {
      return static_cast<scalar_t>(
          lerp<opmath>(static_cast<opmath>(a), static_cast<opmath>(b), static_cast<opmath>(w)));
    });
  });
}

// ---- addcmul / addcdiv ----
template <typename scalar_t>
void addcmul_impl(TensorIterator& iter, const Scalar& value) {
  using opmath = opmath_t<scalar_t>;
  const opmath v = value.to<opmath>();
  gpu_kernel(iter, [v] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b, scalar_t c) -> scalar_t {
    return pointwise_math::addcmul(a, b, c, v);
  });
}

void addcmul_kernel_cuda(TensorIterator& iter, const Scalar& value) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "addcmul", [&] { addcmul_impl<scalar_t>(iter, value); });
}

template <typename scalar_t>
void addcdiv_impl(TensorIterator& iter, const Scalar& value) {
  using opmath = opmath_t<scalar_t>;
  const opmath v = value.to<opmath>();
  gpu_kernel(iter, [v] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b, scalar_t c) -> scalar_t {
    return pointwise_math::addcdiv(a, b, c, v);
  });
}

void addcdiv_kernel_cuda(TensorIterator& iter, const Scalar& value) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "addcdiv", [&] { addcdiv_impl<scalar_t>(iter, value); });
}

// ---- clamp ----
// mode: 0 both bounds, 1 min only, 2 max only (one kernel per dtype for all three).
template <typename scalar_t>
void clamp_scalar_impl(TensorIterator& iter, int mode, const Scalar& lo_s, const Scalar& hi_s) {
  using opmath = opmath_t<scalar_t>;
  const opmath lo = lo_s.to<opmath>(), hi = hi_s.to<opmath>();
  gpu_kernel(iter, [mode, lo, hi] EMBER_GPU_LAMBDA(scalar_t a_) -> scalar_t {
    const opmath a = static_cast<opmath>(a_);
    if (mode == 0) return static_cast<scalar_t>(min_nan(max_nan(a, lo), hi));
    if (mode == 1) return static_cast<scalar_t>(max_nan(a, lo));
    return static_cast<scalar_t>(min_nan(a, hi));
  });
}

void clamp_scalar_kernel_cuda(TensorIterator& iter, const Scalar& lo, const Scalar& hi) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<scalar_t>(iter, 0, lo, hi); });
}
void clamp_min_scalar_kernel_cuda(TensorIterator& iter, const Scalar& lo) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<scalar_t>(iter, 1, lo, lo); });
}
void clamp_max_scalar_kernel_cuda(TensorIterator& iter, const Scalar& hi) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<scalar_t>(iter, 2, hi, hi); });
}

void clamp_tensor_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp", [&] {
    using opmath = opmath_t<scalar_t>;
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a, scalar_t lo, scalar_t hi) -> scalar_t {
      return static_cast<scalar_t>(
          min_nan(max_nan(static_cast<opmath>(a), static_cast<opmath>(lo)), static_cast<opmath>(hi)));
    });
  });
}

// ---- where: selecting moves bytes, one kernel per element size ----
template <typename word_t>
void where_words(TensorIterator& iter) {
  // the condition is read as a byte (bool or uint8), nonzero selects self
  gpu_kernel(iter, [] EMBER_GPU_LAMBDA(uint8_t c, word_t a, word_t b) -> word_t { return c != 0 ? a : b; });
}

void where_kernel_cuda(TensorIterator& iter) {
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return where_words<uint8_t>(iter);
    case 2:
      return where_words<uint16_t>(iter);
    case 4:
      return where_words<uint32_t>(iter);
    case 8:
      return where_words<uint64_t>(iter);
    default:
      EMBER_CHECK(false, "where: unsupported dtype ", c10::toPythonName(iter.dtype(0)));
  }
}

}  // namespace

REGISTER_CUDA_DISPATCH(lerp_scalar_stub, &lerp_scalar_kernel_cuda);
REGISTER_CUDA_DISPATCH(lerp_tensor_stub, &lerp_tensor_kernel_cuda);
REGISTER_CUDA_DISPATCH(addcmul_stub, &addcmul_kernel_cuda);
REGISTER_CUDA_DISPATCH(addcdiv_stub, &addcdiv_kernel_cuda);
REGISTER_CUDA_DISPATCH(clamp_scalar_stub, &clamp_scalar_kernel_cuda);
REGISTER_CUDA_DISPATCH(clamp_min_scalar_stub, &clamp_min_scalar_kernel_cuda);
REGISTER_CUDA_DISPATCH(clamp_max_scalar_stub, &clamp_max_scalar_kernel_cuda);
REGISTER_CUDA_DISPATCH(clamp_tensor_stub, &clamp_tensor_kernel_cuda);
REGISTER_CUDA_DISPATCH(where_stub, &where_kernel_cuda);

}  // namespace ember::at::native
