#pragma once
// cat / stack kernels, callable from other kernels (an undefined `out` allocates).
#include <vector>

#include <ember/aten/Tensor.h>

namespace ember::at::native {
Tensor cat_out(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out);
Tensor stack_out(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out);
}  // namespace ember::at::native
