#pragma once
// The part of cuSOLVER dense (cusolverDn) that ember calls, declared by hand so that the
// build needs no cuSOLVER headers (the CUDA toolkit here ships none, and CI would
// otherwise download the 200 MB nvidia-cusolver wheel just to compile). The library
// itself is loaded on the first call (LazyCuSOLVER.cpp). C ABI of cuSOLVER 12.0.4
// (CUDA 13.0, nvidia-cusolver 12.0.4.66); every declaration below is a copy of the
// real one's types, the enumerators keep their values.
//
// Checking this file against the real header: a translation unit that includes the
// wheel's cusolverDn.h and then this file compiles only if every function here has the
// real signature (a differing extern "C" redeclaration is an error) and every
// enumerator its real value (the static_asserts at the end). To repeat it:
//   pip download --no-deps nvidia-cusolver==12.0.4.66 && unzip -q nvidia_cusolver-*.whl -d /tmp/cus
//   printf '#include <cusolverDn.h>\n#include "LazyCuSOLVER.h"\n' > /tmp/check.cpp
//   g++ -std=c++17 -fsyntax-only -I/tmp/cus/nvidia/cu13/include -I<nvidia-cublas>/nvidia/cu13/include \
//       -I/usr/local/cuda/include -Ipackages/aten/csrc/native/cuda /tmp/check.cpp
//
// Plain C++ (cudaStream_t and cudaDataType from the toolkit's runtime headers): only
// files under csrc/native/cuda/ include it.

#include <cuda_runtime_api.h>

// cublasFillMode_t / cublasOperation_t: cuBLAS's own when its headers are here (the
// CUDA build normally has them, from the nvidia-cublas wheel), else the same enums.
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#elif !defined(CUBLAS_API_H_)
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 } cublasFillMode_t;
typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,
  CUBLAS_OP_CONJG = 3
} cublasOperation_t;
#endif

// The enumerators ember uses, with their values in cuSOLVER 12.
#define EMBER_CUSOLVER_STATUS_LIST(X)             \
  X(CUSOLVER_STATUS_SUCCESS, 0)                   \
  X(CUSOLVER_STATUS_NOT_INITIALIZED, 1)           \
  X(CUSOLVER_STATUS_ALLOC_FAILED, 2)              \
  X(CUSOLVER_STATUS_INVALID_VALUE, 3)             \
  X(CUSOLVER_STATUS_ARCH_MISMATCH, 4)             \
  X(CUSOLVER_STATUS_MAPPING_ERROR, 5)             \
  X(CUSOLVER_STATUS_EXECUTION_FAILED, 6)          \
  X(CUSOLVER_STATUS_INTERNAL_ERROR, 7)            \
  X(CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED, 8) \
  X(CUSOLVER_STATUS_NOT_SUPPORTED, 9)             \
  X(CUSOLVER_STATUS_ZERO_PIVOT, 10)               \
  X(CUSOLVER_STATUS_INVALID_LICENSE, 11)
#define EMBER_CUSOLVER_EIG_MODE_LIST(X) \
  X(CUSOLVER_EIG_MODE_NOVECTOR, 0)      \
  X(CUSOLVER_EIG_MODE_VECTOR, 1)

#ifndef CUSOLVERDN_H_  // the real cusolverDn.h was not included: declare the types
#define EMBER_CUSOLVER_ENUMERATOR(name, value) name = value,
typedef enum { EMBER_CUSOLVER_STATUS_LIST(EMBER_CUSOLVER_ENUMERATOR) } cusolverStatus_t;
typedef enum { EMBER_CUSOLVER_EIG_MODE_LIST(EMBER_CUSOLVER_ENUMERATOR) } cusolverEigMode_t;
#undef EMBER_CUSOLVER_ENUMERATOR
struct cusolverDnContext;
typedef struct cusolverDnContext* cusolverDnHandle_t;
struct gesvdjInfo;
typedef struct gesvdjInfo* gesvdjInfo_t;
#else  // compiled together with the real header: the values must agree
#define EMBER_CUSOLVER_SAME_VALUE(name, value) static_assert(static_cast<int>(name) == (value), #name);
EMBER_CUSOLVER_STATUS_LIST(EMBER_CUSOLVER_SAME_VALUE)
EMBER_CUSOLVER_EIG_MODE_LIST(EMBER_CUSOLVER_SAME_VALUE)
static_assert(static_cast<int>(CUBLAS_FILL_MODE_LOWER) == 0 && static_cast<int>(CUBLAS_OP_N) == 0, "cuBLAS enums");
#undef EMBER_CUSOLVER_SAME_VALUE
#endif

extern "C" {

cusolverStatus_t cusolverGetVersion(int* version);
cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle);
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId);

// LU with partial pivoting, and the solve with it
cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t handle, int m, int n, float* A, int lda, int* Lwork);
cusolverStatus_t cusolverDnDgetrf_bufferSize(cusolverDnHandle_t handle, int m, int n, double* A, int lda, int* Lwork);
cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t handle, int m, int n, float* A, int lda, float* Workspace,
                                  int* devIpiv, int* devInfo);
cusolverStatus_t cusolverDnDgetrf(cusolverDnHandle_t handle, int m, int n, double* A, int lda, double* Workspace,
                                  int* devIpiv, int* devInfo);
cusolverStatus_t cusolverDnSgetrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const float* A,
                                  int lda, const int* devIpiv, float* B, int ldb, int* devInfo);
cusolverStatus_t cusolverDnDgetrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const double* A,
                                  int lda, const int* devIpiv, double* B, int ldb, int* devInfo);

// Cholesky
cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float* A, int lda,
                                             int* Lwork);
cusolverStatus_t cusolverDnDpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A,
                                             int lda, int* Lwork);
cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float* A, int lda,
                                  float* Workspace, int Lwork, int* devInfo);
cusolverStatus_t cusolverDnDpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A, int lda,
                                  double* Workspace, int Lwork, int* devInfo);

// QR: Householder factorisation, and Q formed from its reflectors
cusolverStatus_t cusolverDnSgeqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, float* A, int lda, int* lwork);
cusolverStatus_t cusolverDnDgeqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, double* A, int lda, int* lwork);
cusolverStatus_t cusolverDnSgeqrf(cusolverDnHandle_t handle, int m, int n, float* A, int lda, float* TAU,
                                  float* Workspace, int Lwork, int* devInfo);
cusolverStatus_t cusolverDnDgeqrf(cusolverDnHandle_t handle, int m, int n, double* A, int lda, double* TAU,
                                  double* Workspace, int Lwork, int* devInfo);
cusolverStatus_t cusolverDnSorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const float* A, int lda,
                                             const float* tau, int* lwork);
cusolverStatus_t cusolverDnDorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const double* A, int lda,
                                             const double* tau, int* lwork);
cusolverStatus_t cusolverDnSorgqr(cusolverDnHandle_t handle, int m, int n, int k, float* A, int lda, const float* tau,
                                  float* work, int lwork, int* info);
cusolverStatus_t cusolverDnDorgqr(cusolverDnHandle_t handle, int m, int n, int k, double* A, int lda, const double* tau,
                                  double* work, int lwork, int* info);

// SVD: Jacobi (gesvdj, any shape) and QR iteration (gesvd, m >= n only)
cusolverStatus_t cusolverDnCreateGesvdjInfo(gesvdjInfo_t* info);
cusolverStatus_t cusolverDnDestroyGesvdjInfo(gesvdjInfo_t info);
cusolverStatus_t cusolverDnSgesvdj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const float* A, int lda, const float* S, const float* U, int ldu,
                                              const float* V, int ldv, int* lwork, gesvdjInfo_t params);
cusolverStatus_t cusolverDnDgesvdj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n,
                                              const double* A, int lda, const double* S, const double* U, int ldu,
                                              const double* V, int ldv, int* lwork, gesvdjInfo_t params);
cusolverStatus_t cusolverDnSgesvdj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, float* A,
                                   int lda, float* S, float* U, int ldu, float* V, int ldv, float* work, int lwork,
                                   int* info, gesvdjInfo_t params);
cusolverStatus_t cusolverDnDgesvdj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, double* A,
                                   int lda, double* S, double* U, int ldu, double* V, int ldv, double* work, int lwork,
                                   int* info, gesvdjInfo_t params);
cusolverStatus_t cusolverDnSgesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int* lwork);
cusolverStatus_t cusolverDnDgesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int* lwork);
cusolverStatus_t cusolverDnSgesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n,
                                  float* A, int lda, float* S, float* U, int ldu, float* VT, int ldvt, float* work,
                                  int lwork, float* rwork, int* info);
cusolverStatus_t cusolverDnDgesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n,
                                  double* A, int lda, double* S, double* U, int ldu, double* VT, int ldvt, double* work,
                                  int lwork, double* rwork, int* info);

}  // extern "C"
