#pragma once
// Stubs of softmax / log_softmax and their backward (kernels in cpu/SoftMaxKernel.cpp).
//
// Every tensor a stub sees is contiguous, float32 or float64 (float16 / bfloat16 are
// computed in float32 and rounded once by SoftMax.cpp), and viewed as
// [outer, dim_size, inner] with the softmax taken over the middle dim. inner == 1 is
// the row layout (vectorised along the row), inner > 1 the column layout (vectorised
// across the inner dim).
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

using softmax_fn = void (*)(const Tensor& out, const Tensor& self, int64_t outer, int64_t dim_size, int64_t inner,
                            bool log);
// softmax:     grad_input = output * (grad_output - sum(grad_output * output))
// log_softmax: grad_input = grad_output - exp(output) * sum(grad_output)
using softmax_backward_fn = void (*)(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output,
                                     int64_t outer, int64_t dim_size, int64_t inner, bool log);

DECLARE_DISPATCH(softmax_fn, softmax_stub);
DECLARE_DISPATCH(softmax_backward_fn, softmax_backward_stub);

}  // namespace ember::at::native
