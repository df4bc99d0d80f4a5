#pragma once
// Shape arithmetic shared by the view ops and kernels, written once.

#include <optional>

#include <ember/aten/Tensor.h>

namespace ember::at {

// Replaces one -1 in `shape` so the product is numel; RuntimeError "shape '[2, -1, 5]'
// is invalid for input of size 7" otherwise.
DimVector infer_size_view(IntArrayRef shape, int64_t numel);

// Strides that make a tensor of old sizes/strides viewable as new sizes without a
// copy, or nullopt when impossible (PyTorch's computeStride).
std::optional<DimVector> compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef new_sizes);

// Wraps each dim of `dims` (which may be negative) and checks for repeats.
DimVector wrap_dims(IntArrayRef dims, int64_t ndim, const char* op);

// Broadcast shape of several shapes.
DimVector broadcast_shapes(const std::vector<DimVector>& shapes, const char* op);

}  // namespace ember::at
