// Host runs of the cuBLAS callers for tests on machines without a GPU: gemm_batched_cuda's
// plan (GemmBatchedCUDA.h) and the CUDA convolution's forward / backward (ConvolutionCUDA.h)
// instantiated with HostBLAS, a host emulation of cublasGemmEx / cublasGemmStridedBatchedEx,
// and called on CPU tensors -- so every cuBLAS call they plan (operand order, transposes,
// leading dimensions, batch strides) runs through it and the result can be compared with the
// CPU kernels. The convolution's im2col / col2im are then the CPU stubs (same column
// layout), float32 / float64 only.
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "../../csrc/native/cuda/CUDABlas.h"
#include "../../csrc/native/cuda/ConvolutionCUDA.h"
#include "../../csrc/native/cuda/GemmBatchedCUDA.h"
#include "Emulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using cuda::blas::ColumnMajorGemm;

// Column-major C_p = alpha op(A_p) op(B_p) + beta C_p, summed in double (beta == 0: C is
// only written).
template <typename T, typename TC>
void host_gemm_typed(const ColumnMajorGemm& g, double alpha, double beta) {
  for (int64_t p = 0; p < g.batch; ++p) {
    const T* A = static_cast<const T*>(g.a) + p * g.stride_a;
    const T* B = static_cast<const T*>(g.b) + p * g.stride_b;
    TC* C = static_cast<TC*>(g.c) + p * g.stride_c;
    for (int64_t j = 0; j < g.n; ++j) {
      for (int64_t i = 0; i < g.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const double av = static_cast<double>(g.trans_a ? A[l + i * g.lda] : A[i + l * g.lda]);
          const double bv = static_cast<double>(g.trans_b ? B[j + l * g.ldb] : B[l + j * g.ldb]);
          acc += av * bv;
        }
        TC& c = C[i + j * g.ldc];
        c = static_cast<TC>(beta == 0.0 ? alpha * acc : alpha * acc + beta * static_cast<double>(c));
      }
    }
  }
}

// The call cuBLAS would get: its argument checks, then the column-major product.
void host_gemm(ScalarType dtype, ScalarType c_dtype, const ColumnMajorGemm& g, double alpha, double beta) {
  const char* call = g.batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx";
  const bool valid = g.m >= 0 && g.n >= 0 && g.k >= 0 && g.batch >= 0 &&
                     g.lda >= std::max<int64_t>(1, g.trans_a ? g.k : g.m) &&
                     g.ldb >= std::max<int64_t>(1, g.trans_b ? g.n : g.k) && g.ldc >= std::max<int64_t>(1, g.m);
  EMBER_CHECK(valid, "CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `", call, "` (host emulation)");
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, call, [&] {
    if (c_dtype == dtype) {
      host_gemm_typed<scalar_t, scalar_t>(g, alpha, beta);
    } else {
      host_gemm_typed<scalar_t, float>(g, alpha, beta);
    }
  });
}

// cuda::blas::gemm_strided_batched with the cuBLAS call run by host_gemm on host pointers.
struct HostBLAS {
  static void gemm_strided_batched(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                                   double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                                   int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c,
                                   int64_t batch, bool /*tf32*/, ScalarType c_dtype = ScalarType::Undefined) {
    if (c_dtype == ScalarType::Undefined) c_dtype = dtype;
    if (!cuda::blas::check_gemm_strided_batched(dtype, c_dtype, m, n, k, lda, ldb, ldc, batch)) return;
    host_gemm(dtype, c_dtype,
              cuda::blas::column_major_gemm(trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc,
                                            stride_c, batch),
              alpha, beta);
  }
};

void check_cpu(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    EMBER_CHECK(t == nullptr || !t->defined() || t->is_cpu(), "the cuBLAS host emulation takes CPU tensors");
  }
}

}  // namespace

void cuda_emulated_gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta,
                                const Scalar& alpha) {
  check_cpu({&out, &a, &b});
  cuda_gemm::gemm_batched<HostBLAS>(out, a, b, beta, alpha);
}

Tensor cuda_emulated_convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                 IntArrayRef output_padding, int64_t groups) {
  check_cpu({&input, &weight, bias ? &*bias : nullptr});
  return cuda_conv::convolution_run<HostBLAS>(input, weight, bias, stride, padding, dilation, transposed,
                                              output_padding, groups);
}

std::tuple<Tensor, Tensor, Tensor> cuda_emulated_convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask) {
  check_cpu({&grad_output, &input, &weight});
  return cuda_conv::convolution_backward_run<HostBLAS>(grad_output, input, weight, bias_sizes, stride, padding,
                                                       dilation, transposed, output_padding, groups, output_mask);
}

}  // namespace ember::at::native::cuda_emulation
