#pragma once
// Allocation helpers shared by the factory, copy and transformation kernels.
#include <ember/aten/Tensor.h>

namespace ember::at::native {

// PyTorch's preserve_format: the strides of `like` when it is non-overlapping and
// dense; otherwise dense strides in the same order as like's (a transposed slice
// gives a transposed result); contiguous for ties.
Tensor empty_like_preserve(const Tensor& like, ScalarType dtype, Device device);

// empty_like with an explicit memory format (Preserve, Contiguous, ChannelsLast[3d]).
Tensor empty_like_format(const Tensor& like, ScalarType dtype, Device device, MemoryFormat fmt);

}  // namespace ember::at::native
