// cuBLAS, loaded on first use. ember_aten is compiled against cublas_v2.h (from the
// CUDA toolkit or the `nvidia-cublas` wheel) but not linked with libcublas: each cuBLAS
// function ember calls is defined here as a forwarder that resolves the real one with
// dlsym the first time it runs. So importing ember.aten -- and everything on the CPU --
// works where libcublas.so.13 is absent; the first CUDA matmul then raises a clear error.
//
// Where the library is looked for, in order: $EMBER_CUBLAS_LIBRARY; the `nvidia-cublas`
// wheel beside ember in site-packages (nvidia/cu13/lib/); the system's loader path.
//
// A kernel file that calls a cuBLAS function not listed below fails to import
// (undefined symbol): add one EMBER_CUBLAS_FORWARD line for it.
#ifdef EMBER_WITH_CUBLAS

#include <cublas_v2.h>
#include "LazyLibrary.h"

namespace ember::at::cuda {

void* cublas_symbol(const char* symbol) {
  static void* handle = open_nvidia_library("cuBLAS", "EMBER_CUBLAS_LIBRARY", "libcublas.so.13", "nvidia-cublas");
  return library_symbol(handle, "cuBLAS", symbol);
}

}  // namespace ember::at::cuda

#define EMBER_CUBLAS_FORWARD(ret, name, params, args) \
  EMBER_LAZY_FORWARD(::ember::at::cuda::cublas_symbol, ret, name, params, args)

EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasCreate_v2, (cublasHandle_t * handle), (handle))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasDestroy_v2, (cublasHandle_t handle), (handle))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasGetVersion_v2, (cublasHandle_t handle, int* version), (handle, version))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSetWorkspace_v2, (cublasHandle_t handle, void* workspace, size_t bytes),
                     (handle, workspace, bytes))
EMBER_CUBLAS_FORWARD(const char*, cublasGetStatusString, (cublasStatus_t status), (status))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasGetMathMode, (cublasHandle_t handle, cublasMath_t* mode), (handle, mode))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSetPointerMode_v2, (cublasHandle_t handle, cublasPointerMode_t mode),
                     (handle, mode))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasGemmEx,
                     (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                      const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype,
                      int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                      cublasGemmAlgo_t algo),
                     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                      computeType, algo))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasGemmStridedBatchedEx,
                     (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                      const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
                      const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
                      cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
                      cublasComputeType_t computeType, cublasGemmAlgo_t algo),
                     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                      Ctype, ldc, strideC, batchCount, computeType, algo))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSgemm_v2,
                     (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                      const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C,
                      int ldc),
                     (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasDgemm_v2,
                     (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                      const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                      double* C, int ldc),
                     (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSgemv_v2,
                     (cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float* alpha, const float* A,
                      int lda, const float* x, int incx, const float* beta, float* y, int incy),
                     (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasDgemv_v2,
                     (cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double* alpha,
                      const double* A, int lda, const double* x, int incx, const double* beta, double* y, int incy),
                     (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasSdot_v2,
                     (cublasHandle_t handle, int n, const float* x, int incx, const float* y, int incy, float* result),
                     (handle, n, x, incx, y, incy, result))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasDdot_v2,
                     (cublasHandle_t handle, int n, const double* x, int incx, const double* y, int incy,
                      double* result),
                     (handle, n, x, incx, y, incy, result))
EMBER_CUBLAS_FORWARD(cublasStatus_t, cublasDotEx,
                     (cublasHandle_t handle, int n, const void* x, cudaDataType xType, int incx, const void* y,
                      cudaDataType yType, int incy, void* result, cudaDataType resultType, cudaDataType executionType),
                     (handle, n, x, xType, incx, y, yType, incy, result, resultType, executionType))

#endif  // EMBER_WITH_CUBLAS
