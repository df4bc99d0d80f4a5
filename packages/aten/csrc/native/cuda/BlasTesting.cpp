// Host runs of the cuBLAS callers for tests on machines without a GPU (_C._cuda_emulated_*,
// CUDA builds only): gemm_batched_cuda and the CUDA convolution's forward / backward called
// on CPU tensors with cuda_blas_emulation on, so every cuBLAS call they plan (operand order,
// transposes, leading dimensions, batch strides) runs through the host emulation of cuBLAS
// (CUDABlas.cpp) and its result can be compared with the CPU kernels. The convolution's
// im2col / col2im are then the CPU stubs (same column layout), float32 / float64 only.
#include <optional>
#include <tuple>
#include <vector>

#include "../Blas.h"
#include "CUDABlas.h"

namespace ember::at::native {

Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups);
std::tuple<Tensor, Tensor, Tensor> convolution_backward_cuda(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask);

namespace {

// cuda_blas_emulation on for a scope; CPU tensors only.
class Emulation {
 public:
  explicit Emulation(std::initializer_list<const Tensor*> ts) {
    for (const Tensor* t : ts) {
      EMBER_CHECK(t == nullptr || !t->defined() || t->is_cpu(), "the cuBLAS host emulation takes CPU tensors");
    }
    previous_ = cuda_blas_emulation(true);
  }
  ~Emulation() { cuda_blas_emulation(previous_); }
  Emulation(const Emulation&) = delete;
  Emulation& operator=(const Emulation&) = delete;

 private:
  bool previous_;
};

}  // namespace

void cuda_emulated_gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta,
                                const Scalar& alpha) {
  Emulation on({&out, &a, &b});
  gemm_batched_cuda(out, a, b, beta, alpha);
}

Tensor cuda_emulated_convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                 IntArrayRef output_padding, int64_t groups) {
  Emulation on({&input, &weight, bias ? &*bias : nullptr});
  return convolution_cuda(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
}

std::tuple<Tensor, Tensor, Tensor> cuda_emulated_convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask) {
  Emulation on({&grad_output, &input, &weight});
  return convolution_backward_cuda(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                   output_padding, groups, output_mask);
}

}  // namespace ember::at::native
