// convolution / convolution_backward on CUDA: ConvolutionCUDA.h's plan with cuBLAS products.
#include "ConvolutionCUDA.h"

namespace ember::at::native {

Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  return cuda_conv::convolution_run<cuda::blas::CuBLAS>(input, weight, bias, stride, padding, dilation, transposed,
                                                        output_padding, groups);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cuda(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask) {
  return cuda_conv::convolution_backward_run<cuda::blas::CuBLAS>(grad_output, input, weight, bias_sizes, stride,
                                                                 padding, dilation, transposed, output_padding, groups,
                                                                 output_mask);
}

}  // namespace ember::at::native
