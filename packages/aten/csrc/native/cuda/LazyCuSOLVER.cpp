// cuSOLVER, loaded on first use, as cuBLAS is (LazyCuBLAS.cpp). ember_aten is compiled
// against LazyCuSOLVER.h (hand-written declarations: no cuSOLVER headers needed) but not
// linked with libcusolver: each cuSOLVER function ember calls is defined here as a
// forwarder that resolves the real one with dlsym the first time it runs. So importing
// ember.aten -- and everything on the CPU -- works where libcusolver.so.12 is absent; the
// first CUDA linalg call then raises a clear error.
//
// Where the library is looked for, in order: $EMBER_CUSOLVER_LIBRARY; the
// `nvidia-cusolver` wheel beside ember in site-packages (nvidia/cu13/lib/, where its
// dependencies libcublas, libcusparse and libnvJitLink from their wheels are found
// through the library's $ORIGIN run path); the system's loader path.
//
// Every function declared in LazyCuSOLVER.h needs one EMBER_CUSOLVER_FORWARD line here
// (a missing one fails at import with an undefined symbol).
#include "LazyCuSOLVER.h"

#include "LazyLibrary.h"

namespace ember::at::cuda {

void* cusolver_symbol(const char* symbol) {
  static void* handle =
      open_nvidia_library("cuSOLVER", "EMBER_CUSOLVER_LIBRARY", "libcusolver.so.12", "nvidia-cusolver");
  return library_symbol(handle, "cuSOLVER", symbol);
}

}  // namespace ember::at::cuda

#define EMBER_CUSOLVER_FORWARD(ret, name, params, args) \
  EMBER_LAZY_FORWARD(::ember::at::cuda::cusolver_symbol, ret, name, params, args)

EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverGetVersion, (int* version), (version))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnCreate, (cusolverDnHandle_t * handle), (handle))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDestroy, (cusolverDnHandle_t handle), (handle))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSetStream, (cusolverDnHandle_t handle, cudaStream_t stream),
                       (handle, stream))

EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgetrf_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, float* A, int lda, int* lwork), (h, m, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgetrf_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, double* A, int lda, int* lwork), (h, m, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgetrf,
                       (cusolverDnHandle_t h, int m, int n, float* A, int lda, float* work, int* ipiv, int* info),
                       (h, m, n, A, lda, work, ipiv, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgetrf,
                       (cusolverDnHandle_t h, int m, int n, double* A, int lda, double* work, int* ipiv, int* info),
                       (h, m, n, A, lda, work, ipiv, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgetrs,
                       (cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const float* A, int lda,
                        const int* ipiv, float* B, int ldb, int* info),
                       (h, trans, n, nrhs, A, lda, ipiv, B, ldb, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgetrs,
                       (cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const double* A, int lda,
                        const int* ipiv, double* B, int ldb, int* info),
                       (h, trans, n, nrhs, A, lda, ipiv, B, ldb, info))

EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSpotrf_bufferSize,
                       (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A, int lda, int* lwork),
                       (h, uplo, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDpotrf_bufferSize,
                       (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A, int lda, int* lwork),
                       (h, uplo, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSpotrf,
                       (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, float* A, int lda, float* work, int lwork,
                        int* info),
                       (h, uplo, n, A, lda, work, lwork, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDpotrf,
                       (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* A, int lda, double* work, int lwork,
                        int* info),
                       (h, uplo, n, A, lda, work, lwork, info))

EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgeqrf_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, float* A, int lda, int* lwork), (h, m, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgeqrf_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, double* A, int lda, int* lwork), (h, m, n, A, lda, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgeqrf,
                       (cusolverDnHandle_t h, int m, int n, float* A, int lda, float* tau, float* work, int lwork,
                        int* info),
                       (h, m, n, A, lda, tau, work, lwork, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgeqrf,
                       (cusolverDnHandle_t h, int m, int n, double* A, int lda, double* tau, double* work, int lwork,
                        int* info),
                       (h, m, n, A, lda, tau, work, lwork, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSorgqr_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, int k, const float* A, int lda, const float* tau,
                        int* lwork),
                       (h, m, n, k, A, lda, tau, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDorgqr_bufferSize,
                       (cusolverDnHandle_t h, int m, int n, int k, const double* A, int lda, const double* tau,
                        int* lwork),
                       (h, m, n, k, A, lda, tau, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSorgqr,
                       (cusolverDnHandle_t h, int m, int n, int k, float* A, int lda, const float* tau, float* work,
                        int lwork, int* info),
                       (h, m, n, k, A, lda, tau, work, lwork, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDorgqr,
                       (cusolverDnHandle_t h, int m, int n, int k, double* A, int lda, const double* tau, double* work,
                        int lwork, int* info),
                       (h, m, n, k, A, lda, tau, work, lwork, info))

EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnCreateGesvdjInfo, (gesvdjInfo_t * info), (info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDestroyGesvdjInfo, (gesvdjInfo_t info), (info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgesvdj_bufferSize,
                       (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const float* A, int lda,
                        const float* S, const float* U, int ldu, const float* V, int ldv, int* lwork,
                        gesvdjInfo_t params),
                       (h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, lwork, params))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgesvdj_bufferSize,
                       (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const double* A, int lda,
                        const double* S, const double* U, int ldu, const double* V, int ldv, int* lwork,
                        gesvdjInfo_t params),
                       (h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, lwork, params))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgesvdj,
                       (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, float* A, int lda,
                        float* S, float* U, int ldu, float* V, int ldv, float* work, int lwork, int* info,
                        gesvdjInfo_t params),
                       (h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgesvdj,
                       (cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, double* A, int lda,
                        double* S, double* U, int ldu, double* V, int ldv, double* work, int lwork, int* info,
                        gesvdjInfo_t params),
                       (h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgesvd_bufferSize, (cusolverDnHandle_t h, int m, int n, int* lwork),
                       (h, m, n, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgesvd_bufferSize, (cusolverDnHandle_t h, int m, int n, int* lwork),
                       (h, m, n, lwork))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnSgesvd,
                       (cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, float* A, int lda,
                        float* S, float* U, int ldu, float* VT, int ldvt, float* work, int lwork, float* rwork,
                        int* info),
                       (h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info))
EMBER_CUSOLVER_FORWARD(cusolverStatus_t, cusolverDnDgesvd,
                       (cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, double* A, int lda,
                        double* S, double* U, int ldu, double* VT, int ldvt, double* work, int lwork, double* rwork,
                        int* info),
                       (h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info))
