#pragma once
// Shared by Dropout.cpp and cuda/Dropout.cu.
#include <optional>

#include <ember/aten/Generator.h>
#include <ember/aten/Tensor.h>

namespace ember::at::native {

// csrc/native/Distributions.cpp
Tensor bernoulli_scalar_(const Tensor& self, double p, const std::optional<Generator>& generator);

// PyTorch's checks of native_dropout (p in [0, 1], a floating input) and its backward.
void check_dropout_input(const Tensor& input, double p);
void check_dropout_backward(const Tensor& grad_output, const Tensor& mask);

}  // namespace ember::at::native
