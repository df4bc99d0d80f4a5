#pragma once
// Stubs of the ternary pointwise operators -- lerp, addcmul, addcdiv, clamp, where
// (kernels in cpu/PointwiseOpsKernel.cpp).
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using pointwise_fn = void (*)(TensorIterator&);
using pointwise_fn_scalar = void (*)(TensorIterator&, const Scalar& s);
using clamp_scalar_fn = void (*)(TensorIterator&, const Scalar& min, const Scalar& max);

DECLARE_DISPATCH(pointwise_fn_scalar, lerp_scalar_stub);  // (self, end), weight
DECLARE_DISPATCH(pointwise_fn, lerp_tensor_stub);         // (self, end, weight)
DECLARE_DISPATCH(pointwise_fn_scalar, addcmul_stub);      // (self, tensor1, tensor2), value
DECLARE_DISPATCH(pointwise_fn_scalar, addcdiv_stub);      // (self, tensor1, tensor2), value
DECLARE_DISPATCH(clamp_scalar_fn, clamp_scalar_stub);     // (self), min, max
DECLARE_DISPATCH(pointwise_fn_scalar, clamp_min_scalar_stub);
DECLARE_DISPATCH(pointwise_fn_scalar, clamp_max_scalar_stub);
DECLARE_DISPATCH(pointwise_fn, clamp_tensor_stub);  // (self, min, max)
DECLARE_DISPATCH(pointwise_fn, where_stub);         // (condition, self, other)
}  // namespace ember::at::native
