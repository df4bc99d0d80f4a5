#pragma once
// The CPU convolution of integer tensors (ConvolutionInteger.cpp), called by convolution()
// after check_convolution for uint8 / int8 / int16 / int32 / int64 operands.
#include <ember/aten/Tensor.h>

#include "Convolution.h"

namespace ember::at::native {

// input, weight and bias (nullptr when absent) of one integer dtype, on the CPU.
Tensor convolution_integer(const ConvShape& s, const Tensor& input, const Tensor& weight, const Tensor* bias);

}  // namespace ember::at::native
