#pragma once
// Allocation helpers shared by the factory, copy and transformation kernels.
#include <optional>

#include <ember/aten/Tensor.h>

namespace ember::at::native {

// PyTorch's preserve_format: the strides of `like` when it is non-overlapping and
// dense; otherwise dense strides in the same order as like's (a transposed slice
// gives a transposed result); contiguous for ties.
Tensor empty_like_preserve(const Tensor& like, ScalarType dtype, Device device);

// empty_like with an explicit memory format (Preserve, Contiguous, ChannelsLast[3d]).
Tensor empty_like_format(const Tensor& like, ScalarType dtype, Device device, MemoryFormat fmt);
// The strides empty_like_format gives a tensor like `like` in format `fmt`.
DimVector like_strides(const Tensor& like, MemoryFormat fmt);

// ---- pin_memory= of the factories ----
// False unless pin_memory is true; then PyTorch's RuntimeErrors: "Only dense CPU tensors
// can be pinned" for a result on another device, "pin_memory=True requires a CUDA or other
// accelerator backend; ..." without a CUDA device (or a build without CUDA); else true.
bool pinned_requested(std::optional<bool> pin_memory, Device device);
// A new CPU tensor in page-locked memory from c10py's pinned allocator (its storage grows
// from that allocator too); call after pinned_requested() returned true.
Tensor empty_strided_pinned(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype);
// at::empty / at::empty_strided / empty_like_format, in pinned memory when pin_memory says so.
Tensor factory_empty(IntArrayRef sizes, ScalarType dtype, Device device, std::optional<bool> pin_memory);
Tensor factory_empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device,
                             std::optional<bool> pin_memory);
Tensor factory_empty_like(const Tensor& like, ScalarType dtype, Device device, MemoryFormat fmt,
                          std::optional<bool> pin_memory);

}  // namespace ember::at::native
