#pragma once
// cuBLAS for ember's CUDA kernels: one raw, row-major, strided-batched GEMM on the
// current stream (what the matmul family and the convolutions call), plus the handle.
//
// Row-major and cuBLAS. cuBLAS is column-major; a row-major matrix is the column-major
// view of its transpose. So C = op(A) op(B) (row-major, m x n) is computed as the
// column-major C^T = op(B)^T op(A)^T: the operands swap places, m and n swap, and each
// operand keeps its own transpose flag. No data moves.
//
// Handles: one per (thread, device), created on first use and bound to the caller's
// current stream on every call (cublasSetStream), so work lands on the stream the user
// selected; kept until the process ends (destroying them at thread exit can race with
// the driver's own shutdown).
//
// Plain C++ (no cuda_runtime.h): host files outside nvcc can include it.

#include <cstdint>

#include <ember/aten/Tensor.h>

namespace ember::at::cuda::blas {

// For i in [0, batch): C_i = alpha * op(A_i) op(B_i) + beta * C_i, row-major, with
// op(A_i) m x k at a + i * stride_a (leading dimension lda; trans_a: A_i is stored k x m),
// op(B_i) k x n, C_i m x n; strides in elements, stride 0 repeats an operand. dtype:
// float32 / float64 / float16 / bfloat16 (the last two accumulate in float32). tf32:
// float32 products may use TF32 tensor cores. beta == 0: C is only written. Sizes and
// leading dimensions must fit an int (the caller splits or copies otherwise).
// Runs on the current device's current stream. c_dtype: C's dtype when it differs from
// dtype -- only Float for float16 / bfloat16 operands (the sum stays in float32, e.g. a
// gradient accumulated over many products).
void gemm_strided_batched(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                          const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                          double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch, bool tf32,
                          ScalarType c_dtype = ScalarType::Undefined);

// The column-major cuBLAS call (cublasGemmEx / cublasGemmStridedBatchedEx arguments) that
// computes gemm_strided_batched's row-major product: cuBLAS's A is the row-major b, its B
// the row-major a, m and n swapped, leading dimensions raised to cuBLAS's minimum.
struct ColumnMajorGemm {
  bool trans_a, trans_b;  // cuBLAS's transa / transb
  int64_t m, n, k;
  const void* a;
  int64_t lda, stride_a;
  const void* b;
  int64_t ldb, stride_b;
  void* c;
  int64_t ldc, stride_c;
  int64_t batch;
};
ColumnMajorGemm column_major_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                                  int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, void* c,
                                  int64_t ldc, int64_t stride_c, int64_t batch);

// gemm_strided_batched's argument checks (c_dtype already resolved: dtype when Undefined was
// passed); false when there is nothing to compute (m, n or batch 0).
bool check_gemm_strided_batched(ScalarType dtype, ScalarType c_dtype, int64_t m, int64_t n, int64_t k, int64_t lda,
                                int64_t ldb, int64_t ldc, int64_t batch);

// The BLAS that the GEMM callers written as templates over one (GemmBatchedCUDA.h,
// ConvolutionCUDA.h) take in the product: cuBLAS. The test-only module ember_aten_testing
// instantiates the same callers with a host emulation of cuBLAS of this signature.
struct CuBLAS {
  static void gemm_strided_batched(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                                   double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                                   int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c,
                                   int64_t batch, bool tf32, ScalarType c_dtype = ScalarType::Undefined) {
    blas::gemm_strided_batched(dtype, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                               ldc, stride_c, batch, tf32, c_dtype);
  }
};

}  // namespace ember::at::cuda::blas
