#pragma once
// Matrix products for every numeric dtype, on CPU, as one batched GEMM entry point:
//
//   float32 / float64   OpenBLAS (scipy-openblas32: scipy_cblas_sgemm / dgemm), reading
//                       strided operands in place -- a matrix whose rows or columns are
//                       contiguous is a BLAS 'N' or 'T' with its leading dimension; only
//                       other strides are copied first.
//   float16             converted to float32, sgemm, rounded back once.
//   bfloat16            ember's own blocked GEMM (BFloat16Gemm.h): float32 sums, vdpbf16ps
//                       on CPUs with avx512_bf16, rounded once.
//   integers            a blocked kernel accumulating in 64 bits (the low bits are what
//                       the dtype's wrap-around arithmetic gives, as PyTorch's).
//
// A batch of small matrices runs in parallel over the batch (OpenMP), each matrix with a
// single-threaded GEMM: OpenBLAS is set to one thread for that region, since this
// pthreads build must not be entered from OpenMP threads while it runs its own pool.
//
// CUDA tensors go to cuBLAS (cuda/CUDABlas.cpp): float32 / float64 / float16 / bfloat16,
// half types accumulating in float32; TF32 for float32 only when
// ember.aten.backends.cuda.matmul.allow_tf32 is set (off by default, as PyTorch).

#include <ember/aten/Tensor.h>

namespace ember::at::native {

// out[i] = beta * out[i] + alpha * (a[i] @ b[i]) for a (B, m, k), b (B, k, n), out (B, m, n),
// all of one dtype, any strides (a stride-0 batch dim included). beta == 0: out is only
// written, so NaN in it does not propagate (BLAS's rule, and PyTorch's). out must not
// share memory with a or b (callers compute into a temporary then). Not from inside a
// parallel region (RuntimeError): it parallelises itself.
void gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha);

// One row-major product on raw float32 / float64 pointers, C = alpha op(A) op(B) + beta C
// (k == 0: C scaled by beta; beta == 0: C only written), with gemm_batched's thread
// policy: products of at most kBlasSerialWork multiply-adds run on the calling thread,
// larger ones are cut into one panel of C per OpenMP thread (OpenBLAS itself is kept on
// one thread: see set_blas_num_threads). Inside a parallel region it runs on the calling
// thread.
constexpr int64_t kBlasSerialWork = int64_t{1} << 22;  // ~4M multiply-adds, e.g. 64 x 256 x 256
void gemm_cpu(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_cpu(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
              const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// sum_i x[i] * y[i] of two 1-d tensors of one dtype (any strides), as a 0-dim tensor.
Tensor dot_blas(const Tensor& x, const Tensor& y);

// A (rows x cols) matrix as BLAS reads it: row-major with leading dimension ld, or the
// transpose of a row-major (cols x rows) one (trans). Strides of size-1 dims do not
// matter. ok == false: neither (the matrix must be copied first).
struct BlasOperand {
  bool ok = false;
  bool trans = false;
  int64_t ld = 1;
};
BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

// ---- matmul precision flags (ember.aten.backends; process-wide, as PyTorch's) ----
// cuda.matmul.allow_tf32 (default False): float32 cuBLAS products may use TF32.
bool cublas_allow_tf32();
void set_cublas_allow_tf32(bool v);
// cudnn.allow_tf32 (default True, as PyTorch): float32 convolutions may use TF32. ember
// has no cuDNN; its CUDA convolutions are cuBLAS products and follow this flag.
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool v);
// cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction (default True): cuBLAS may
// use reduced-precision reductions inside float16 / bfloat16 products.
bool cublas_allow_fp16_reduced_precision_reduction();
void set_cublas_allow_fp16_reduced_precision_reduction(bool v);
bool cublas_allow_bf16_reduced_precision_reduction();
void set_cublas_allow_bf16_reduced_precision_reduction(bool v);

#ifdef EMBER_WITH_CUDA
// gemm_batched / dot_blas for CUDA tensors (cuda/CUDABlas.cpp).
void gemm_batched_cuda(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha);
Tensor dot_cuda(const Tensor& x, const Tensor& y);
#endif

// OpenBLAS's own thread count: always 1 (n is ignored). ember.aten.set_num_threads sets the
// OpenMP threads, and the products above kBlasSerialWork split themselves over those.
void set_blas_num_threads(int n);

// The C++ type name PyTorch's messages use for a dtype ("float", "long int", ...).
const char* blas_cpp_type_name(ScalarType t);

}  // namespace ember::at::native
