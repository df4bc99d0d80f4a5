#pragma once
// Shared by Embedding.cpp and cuda/Embedding.cu.
#include <ember/aten/Tensor.h>

namespace ember::at::native {

// indices must be int64 or int32 (PyTorch's message, naming argument `arg` of `op`).
void check_indices_dtype(const Tensor& indices, const char* arg, const char* op);

}  // namespace ember::at::native
