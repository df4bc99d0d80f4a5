// cuBLAS: the raw strided-batched GEMM (CUDABlas.h), and the CUDA side of Blas.h's
// gemm_batched / dot_blas, which the matmul family (LinearAlgebra.cpp) calls for every
// device. Host code only (compiled by the C++ compiler). libcublas is loaded at the first
// call (LazyCuBLAS.cpp); a build that found no cublas_v2.h raises instead.
#include "CUDABlas.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <vector>

#include <ember/aten/Dispatch.h>

#include <ember/c10/DeviceGuard.h>
#include <ember/c10/cuda/CUDAFunctions.h>

#include "../Blas.h"
#include "GemmBatchedCUDA.h"

#ifdef EMBER_WITH_CUBLAS
#include <cublas_v2.h>
#endif

namespace ember::at::cuda::blas {

namespace {

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

ColumnMajorGemm column_major_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                                  int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, void* c,
                                  int64_t ldc, int64_t stride_c, int64_t batch) {
  // column-major C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m): cuBLAS's A is our b, its B our a.
  // cuBLAS wants a leading dimension of at least the stored rows even where it reads none
  // (k == 0, or a single row / column).
  const int64_t rows_b = trans_b ? k : n, rows_a = trans_a ? m : k;
  return ColumnMajorGemm{trans_b,
                         trans_a,
                         n,
                         m,
                         k,
                         b,
                         std::max<int64_t>({ldb, rows_b, 1}),
                         stride_b,
                         a,
                         std::max<int64_t>({lda, rows_a, 1}),
                         stride_a,
                         c,
                         std::max<int64_t>({ldc, n, 1}),
                         stride_c,
                         batch};
}

namespace {
void run_cublas(ScalarType dtype, ScalarType c_dtype, const ColumnMajorGemm& g, double alpha, double beta, bool tf32);
}  // namespace

bool check_gemm_strided_batched(ScalarType dtype, ScalarType c_dtype, int64_t m, int64_t n, int64_t k, int64_t lda,
                                int64_t ldb, int64_t ldc, int64_t batch) {
  EMBER_CHECK(c_dtype == dtype ||
                  (c_dtype == ScalarType::Float && (dtype == ScalarType::Half || dtype == ScalarType::BFloat16)),
              "cuBLAS: a ", c10::toPythonName(c_dtype), " result of ", c10::toPythonName(dtype),
              " operands is not supported");
  if (m == 0 || n == 0 || batch == 0) return false;
  EMBER_CHECK(
      fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc) && fits_int(batch),
      "cuBLAS: matrix sizes m=", m, ", n=", n, ", k=", k, " (batch ", batch, ") do not fit an int");
  return true;
}

void gemm_strided_batched(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                          const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                          double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch, bool tf32,
                          ScalarType c_dtype) {
  if (c_dtype == ScalarType::Undefined) c_dtype = dtype;
  if (!check_gemm_strided_batched(dtype, c_dtype, m, n, k, lda, ldb, ldc, batch)) return;
  const ColumnMajorGemm g =
      column_major_gemm(trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb, stride_b, c, ldc, stride_c, batch);
  run_cublas(dtype, c_dtype, g, alpha, beta, tf32);
}

}  // namespace ember::at::cuda::blas

namespace ember::at::native {

void gemm_batched_cuda(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  cuda_gemm::gemm_batched<cuda::blas::CuBLAS>(out, a, b, beta, alpha);
}

}  // namespace ember::at::native

#ifdef EMBER_WITH_CUBLAS

namespace ember::at::cuda::blas {
namespace {

const char* status_name(cublasStatus_t status) {
  switch (static_cast<int>(status)) {
    case 1:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case 8:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

// RuntimeError "CUDA error: CUBLAS_STATUS_... when calling `cublasGemmEx`" (PyTorch's form)
void check_status(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  EMBER_CHECK(false, "CUDA error: ", status_name(status), " when calling `", call, "` (", cublasGetStatusString(status),
              ")");
}

// The calling thread's handle for `device`, bound to that device's current stream.
cublasHandle_t handle_for(int device) {
  thread_local std::vector<cublasHandle_t> handles;
  if (static_cast<size_t>(device) >= handles.size()) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) check_status(cublasCreate(&handles[device]), "cublasCreate");
  cublasHandle_t h = handles[device];
  check_status(cublasSetStream(h, static_cast<cudaStream_t>(c10::cuda::current_stream(device).handle)),
               "cublasSetStream");
  return h;
}

cublasHandle_t current_handle() {
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  return handle_for(device);
}

cudaDataType_t cuda_data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float:
      return CUDA_R_32F;
    case ScalarType::Double:
      return CUDA_R_64F;
    case ScalarType::Half:
      return CUDA_R_16F;
    case ScalarType::BFloat16:
      return CUDA_R_16BF;
    default:
      EMBER_CHECK_NOT_IMPLEMENTED(false, "cuBLAS: not implemented for dtype ", c10::toPythonName(t));
  }
  return CUDA_R_32F;
}

// The call column_major_gemm planned, on the current stream of the current device.
void run_cublas(ScalarType dtype, ScalarType c_dtype, const ColumnMajorGemm& g, double alpha, double beta, bool tf32) {
  cublasHandle_t h = current_handle();
  const cudaDataType_t type = cuda_data_type(dtype), c_type = cuda_data_type(c_dtype);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  int math = CUBLAS_DEFAULT_MATH;
  switch (dtype) {
    case ScalarType::Double:
      compute = CUBLAS_COMPUTE_64F;
      break;
    case ScalarType::Float:
      if (tf32) {
        compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        math = CUBLAS_TF32_TENSOR_OP_MATH;
      }
      break;
    case ScalarType::Half:
      if (!native::cublas_allow_fp16_reduced_precision_reduction()) {
        math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
      }
      break;
    case ScalarType::BFloat16:
      if (!native::cublas_allow_bf16_reduced_precision_reduction()) {
        math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
      }
      break;
    default:
      break;
  }
  check_status(cublasSetMathMode(h, static_cast<cublasMath_t>(math)), "cublasSetMathMode");
  // the scale factors have the compute type's precision
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* pa = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* pb = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta) : &beta_f;
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  const int lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb), ldc = static_cast<int>(g.ldc);
  if (g.batch == 1) {
    check_status(cublasGemmEx(h, op_a, op_b, m, n, k, pa, g.a, type, lda, g.b, type, ldb, pb, g.c, c_type, ldc, compute,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  } else {
    check_status(cublasGemmStridedBatchedEx(h, op_a, op_b, m, n, k, pa, g.a, type, lda, g.stride_a, g.b, type, ldb,
                                            g.stride_b, pb, g.c, c_type, ldc, g.stride_c, static_cast<int>(g.batch),
                                            compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
  }
}

}  // namespace

}  // namespace ember::at::cuda::blas

namespace ember::at::native {

Tensor dot_cuda(const Tensor& x, const Tensor& y) {
  EMBER_CHECK_NOT_IMPLEMENTED(cuda_gemm::is_cublas_dtype(x.dtype()), "dot: not implemented for dtype ",
                              c10::toPythonName(x.dtype()), " on CUDA");
  c10::DeviceGuard guard(x.device());
  const int64_t n = x.numel();
  Tensor result = empty({}, x.dtype(), x.device());
  cublasHandle_t h = cuda::blas::current_handle();
  if (n == 0) {
    EMBER_CUDA_CHECK(cudaMemsetAsync(result.data_ptr(), 0, result.itemsize(),
                                     static_cast<cudaStream_t>(c10::cuda::current_stream().handle)));
    return result;
  }
  // a stride-0 (expanded) vector, or strides too large for an int, are read from a copy
  auto readable = [n](const Tensor& t) {
    return (t.stride(0) == 0 && n > 1) || t.stride(0) > INT_MAX ? t.contiguous() : t;
  };
  const Tensor xs = readable(x), ys = readable(y);
  EMBER_CHECK(n <= INT_MAX, "dot: ", n, " elements are too many for cuBLAS");
  const cudaDataType_t type = cuda::blas::cuda_data_type(x.dtype());
  const cudaDataType_t exec = x.dtype() == ScalarType::Double ? CUDA_R_64F : CUDA_R_32F;
  // the result is written on the device, in stream order (no synchronisation)
  cuda::blas::check_status(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), "cublasSetPointerMode");
  const cublasStatus_t st = cublasDotEx(
      h, static_cast<int>(n), xs.data_ptr(), type, static_cast<int>(std::max<int64_t>(xs.stride(0), 1)), ys.data_ptr(),
      type, static_cast<int>(std::max<int64_t>(ys.stride(0), 1)), result.data_ptr(), type, exec);
  cuda::blas::check_status(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  cuda::blas::check_status(st, "cublasDotEx");
  return result;
}

}  // namespace ember::at::native

#else  // no cublas_v2.h at build time

namespace ember::at::cuda::blas {
namespace {
void run_cublas(ScalarType, ScalarType, const ColumnMajorGemm&, double, double, bool) {
  EMBER_CHECK(false, "ember.aten was built without cuBLAS headers (pip install nvidia-cublas, then rebuild)");
}
}  // namespace
}  // namespace ember::at::cuda::blas

namespace ember::at::native {
Tensor dot_cuda(const Tensor&, const Tensor&) {
  EMBER_CHECK(false, "dot: ember.aten was built without cuBLAS headers (pip install nvidia-cublas, then rebuild)");
  return Tensor();
}
}  // namespace ember::at::native

#endif  // EMBER_WITH_CUBLAS
