#pragma once
// Shared by Dropout.cpp and cuda/Dropout.cu.
#include <optional>

#include <ember/aten/Generator.h>
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// csrc/native/Distributions.cpp
Tensor bernoulli_scalar_(const Tensor& self, double p, const std::optional<Generator>& generator);

// PyTorch's checks of native_dropout (p in [0, 1], a floating input) and its backward.
void check_dropout_input(const Tensor& input, double p);
void check_dropout_backward(const Tensor& grad_output, const Tensor& mask);

// out = x * mask * scale, elementwise in opmath_t (all three contiguous, x's dtype floating;
// CPU kernel in Dropout.cpp, CUDA kernel in cuda/Dropout.cu).
using masked_scale_fn = void (*)(const Tensor& out, const Tensor& x, const Tensor& mask, double scale);
DECLARE_DISPATCH(masked_scale_fn, masked_scale_stub);

}  // namespace ember::at::native
