#pragma once
// Stubs of the activation functions (kernels in cpu/ActivationKernel.cpp).
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using activation_fn = void (*)(TensorIterator&);
using activation_fn_scalar = void (*)(TensorIterator&, const Scalar&);
using activation_fn_2scalars = void (*)(TensorIterator&, const Scalar&, const Scalar&);
using elu_fn = void (*)(TensorIterator&, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale);
using gelu_fn = void (*)(TensorIterator&, bool tanh_approximation);

DECLARE_DISPATCH(activation_fn, relu_stub);
DECLARE_DISPATCH(activation_fn_2scalars, threshold_stub);  // (threshold, value)
// binary (self, grad_output): self <= threshold ? 0 : grad_output
DECLARE_DISPATCH(activation_fn_scalar, threshold_backward_stub);  // (threshold)
DECLARE_DISPATCH(activation_fn_2scalars, hardtanh_stub);          // (min_val, max_val)
DECLARE_DISPATCH(elu_fn, elu_stub);
DECLARE_DISPATCH(gelu_fn, gelu_stub);
DECLARE_DISPATCH(gelu_fn, gelu_backward_stub);  // iterator (grad_input; grad_output, self)
DECLARE_DISPATCH(activation_fn, silu_stub);
DECLARE_DISPATCH(activation_fn, mish_stub);
DECLARE_DISPATCH(activation_fn_2scalars, softplus_stub);  // (beta, threshold)
DECLARE_DISPATCH(activation_fn_scalar, leaky_relu_stub);  // (negative_slope)
DECLARE_DISPATCH(activation_fn, hardsigmoid_stub);
DECLARE_DISPATCH(activation_fn, hardswish_stub);
}  // namespace ember::at::native
