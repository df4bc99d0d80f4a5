#pragma once
// What the convolution kernels of every device share (Convolution.cpp defines them): the
// argument checks and shapes, and the result's dtype / memory format. The CUDA kernels
// are in cuda/ConvolutionCUDA.cpp.
#include <ember/aten/Tensor.h>

#include "Im2Col.h"

namespace ember::at::native {

struct ConvShape {
  int64_t dim = 0;  // spatial dims
  DimVector stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  DimVector output_sizes;  // of the operator's result
  ConvGeometry geometry;   // big / small spatial sizes (see Convolution.cpp)
  int64_t Ms = 0, Cb = 0;  // rows of one group's weight matrix, big-side channels per group
};

// PyTorch's checks, in its order, and the output shape (bias: nullptr when absent).
ConvShape check_convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                            int64_t groups);

// A result in the dtype and memory format the caller expects.
Tensor conv_result(Tensor t, ScalarType dtype, MemoryFormat fmt);
// The memory format of a convolution's output: the input's, else the weight's.
MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight);

}  // namespace ember::at::native
