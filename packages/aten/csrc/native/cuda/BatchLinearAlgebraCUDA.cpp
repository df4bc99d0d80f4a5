// Linear algebra on CUDA through cuSOLVER dense: linalg.solve, linalg.inv, linalg.det,
// linalg.slogdet (getrf + getrs), linalg.cholesky (potrf), linalg.qr (geqrf + orgqr) and
// the SVD (_linalg_svd: gesvdj, or gesvd). The CUDA twins of BatchLinearAlgebra.cpp's
// CPU kernels: the same checks, modes, result layouts (each matrix column-major, as
// LAPACK's and cuSOLVER's) and error messages. float32 / float64.
//
// A batch is a loop of cuSOLVER calls on the current stream, one per matrix, sharing one
// workspace from the caching allocator. Where a result depends on cuSOLVER's devInfo
// (a singular matrix, a matrix that is not positive-definite, an SVD that did not
// converge), the infos are copied to the host on the current stream (which waits for
// them, as PyTorch does) and the first failing matrix raises the CPU kernel's message.
// Empty inputs launch nothing. libcusolver is loaded on the first call (LazyCuSOLVER.cpp).
// Host code only (compiled by the C++ compiler).
#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/DeviceGuard.h>
#include <ember/c10/cuda/CUDAFunctions.h>

#include "../Blas.h"
#include "../LinalgUtils.h"
#include "BatchLinearAlgebraKernels.h"
#include "LazyCuSOLVER.h"

namespace ember::at::native {

using namespace linalg;  // the Fortran-order batch helpers of LinalgUtils.h
namespace {

namespace k = cuda_linalg;

// ---- cuSOLVER handle and status ------------------------------------------------------------

const char* status_name(cusolverStatus_t status) {
  switch (static_cast<int>(status)) {
#define EMBER_CUSOLVER_STATUS_CASE(name, value) \
  case value:                                   \
    return #name;
    EMBER_CUSOLVER_STATUS_LIST(EMBER_CUSOLVER_STATUS_CASE)
#undef EMBER_CUSOLVER_STATUS_CASE
    default:
      return "CUSOLVER_STATUS_UNKNOWN";
  }
}

// RuntimeError "cusolver error: CUSOLVER_STATUS_..., when calling `cusolverDnSgetrf`" (PyTorch's form)
void check_status(cusolverStatus_t status, const char* call) {
  EMBER_CHECK(status == CUSOLVER_STATUS_SUCCESS, "cusolver error: ", status_name(status), ", when calling `", call,
              "`");
}

// The calling thread's handle for the current device, bound to its current stream; one per
// (thread, device), created on first use and kept until the process ends (as cuBLAS's).
cusolverDnHandle_t current_handle() {
  thread_local std::vector<cusolverDnHandle_t> handles;
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  if (static_cast<size_t>(device) >= handles.size()) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) check_status(cusolverDnCreate(&handles[device]), "cusolverDnCreate");
  cusolverDnHandle_t h = handles[device];
  check_status(cusolverDnSetStream(h, static_cast<cudaStream_t>(c10::cuda::current_stream(device).handle)),
               "cusolverDnSetStream");
  return h;
}

// ---- typed cuSOLVER entry points (float / double overloads) -----------------------------

#define EMBER_CUSOLVER_CALL(fn, ...) check_status(fn(__VA_ARGS__), #fn)

int getrf_buffer(cusolverDnHandle_t h, int n, float* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSgetrf_bufferSize, h, n, n, a, n, &lwork);
  return lwork;
}
int getrf_buffer(cusolverDnHandle_t h, int n, double* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDgetrf_bufferSize, h, n, n, a, n, &lwork);
  return lwork;
}
void getrf(cusolverDnHandle_t h, int n, float* a, float* work, int* piv, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSgetrf, h, n, n, a, n, work, piv, info);
}
void getrf(cusolverDnHandle_t h, int n, double* a, double* work, int* piv, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDgetrf, h, n, n, a, n, work, piv, info);
}
void getrs(cusolverDnHandle_t h, int n, int nrhs, const float* a, const int* piv, float* b, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSgetrs, h, CUBLAS_OP_N, n, nrhs, a, n, piv, b, n, info);
}
void getrs(cusolverDnHandle_t h, int n, int nrhs, const double* a, const int* piv, double* b, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDgetrs, h, CUBLAS_OP_N, n, nrhs, a, n, piv, b, n, info);
}
int potrf_buffer(cusolverDnHandle_t h, int n, float* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSpotrf_bufferSize, h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lwork);
  return lwork;
}
int potrf_buffer(cusolverDnHandle_t h, int n, double* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDpotrf_bufferSize, h, CUBLAS_FILL_MODE_LOWER, n, a, n, &lwork);
  return lwork;
}
void potrf(cusolverDnHandle_t h, int n, float* a, float* work, int lwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSpotrf, h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}
void potrf(cusolverDnHandle_t h, int n, double* a, double* work, int lwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDpotrf, h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}

int geqrf_buffer(cusolverDnHandle_t h, int m, int n, float* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSgeqrf_bufferSize, h, m, n, a, m, &lwork);
  return lwork;
}
int geqrf_buffer(cusolverDnHandle_t h, int m, int n, double* a) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDgeqrf_bufferSize, h, m, n, a, m, &lwork);
  return lwork;
}
void geqrf(cusolverDnHandle_t h, int m, int n, float* a, float* tau, float* work, int lwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSgeqrf, h, m, n, a, m, tau, work, lwork, info);
}
void geqrf(cusolverDnHandle_t h, int m, int n, double* a, double* tau, double* work, int lwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDgeqrf, h, m, n, a, m, tau, work, lwork, info);
}
int orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k, const float* q, const float* tau) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSorgqr_bufferSize, h, m, n, k, q, m, tau, &lwork);
  return lwork;
}
int orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k, const double* q, const double* tau) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDorgqr_bufferSize, h, m, n, k, q, m, tau, &lwork);
  return lwork;
}
void orgqr(cusolverDnHandle_t h, int m, int n, int k, float* q, const float* tau, float* work, int lwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSorgqr, h, m, n, k, q, m, tau, work, lwork, info);
}
void orgqr(cusolverDnHandle_t h, int m, int n, int k, double* q, const double* tau, double* work, int lwork,
           int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDorgqr, h, m, n, k, q, m, tau, work, lwork, info);
}
// gesvdj: U (m x ucols, ld m) and V (n x vcols, ld n); u / v null when jobz is NOVECTOR
int gesvdj_buffer(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const float* a, const float* s,
                  const float* u, const float* v, gesvdjInfo_t params) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSgesvdj_bufferSize, h, jobz, econ, m, n, a, m, s, u, m, v, n, &lwork, params);
  return lwork;
}
int gesvdj_buffer(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, const double* a,
                  const double* s, const double* u, const double* v, gesvdjInfo_t params) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDgesvdj_bufferSize, h, jobz, econ, m, n, a, m, s, u, m, v, n, &lwork, params);
  return lwork;
}
void gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, float* a, float* s, float* u,
            float* v, float* work, int lwork, int* info, gesvdjInfo_t params) {
  EMBER_CUSOLVER_CALL(cusolverDnSgesvdj, h, jobz, econ, m, n, a, m, s, u, m, v, n, work, lwork, info, params);
}
void gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, double* a, double* s, double* u,
            double* v, double* work, int lwork, int* info, gesvdjInfo_t params) {
  EMBER_CUSOLVER_CALL(cusolverDnDgesvdj, h, jobz, econ, m, n, a, m, s, u, m, v, n, work, lwork, info, params);
}
// gesvd (m >= n): U (m x ucols, ld m), VT (n x n, ld n)
int gesvd_buffer(cusolverDnHandle_t h, int m, int n, float*) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnSgesvd_bufferSize, h, m, n, &lwork);
  return lwork;
}
int gesvd_buffer(cusolverDnHandle_t h, int m, int n, double*) {
  int lwork = 0;
  EMBER_CUSOLVER_CALL(cusolverDnDgesvd_bufferSize, h, m, n, &lwork);
  return lwork;
}
void gesvd(cusolverDnHandle_t h, signed char job, int m, int n, float* a, float* s, float* u, float* vt, float* work,
           int lwork, float* rwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnSgesvd, h, job, job, m, n, a, m, s, u, m, vt, n, work, lwork, rwork, info);
}
void gesvd(cusolverDnHandle_t h, signed char job, int m, int n, double* a, double* s, double* u, double* vt,
           double* work, int lwork, double* rwork, int* info) {
  EMBER_CUSOLVER_CALL(cusolverDnDgesvd, h, job, job, m, n, a, m, s, u, m, vt, n, work, lwork, rwork, info);
}

// ---- batches of matrices in Fortran order (as BatchLinearAlgebra.cpp) ---------------------

int solver_int(int64_t v, const char* name) { return linalg::solver_int(v, name, "cuSOLVER"); }

Tensor int_buffer(IntArrayRef sizes, Device device) { return empty(sizes, ScalarType::Int, device); }

// The device's int32 infos, on the host (waits for the current stream).
std::vector<int> to_host(const Tensor& infos) {
  const Tensor h = infos.to(Device(DeviceType::CPU)).contiguous();
  const int* p = static_cast<const int*>(h.data_ptr());
  return std::vector<int>(p, p + h.numel());
}

// ---- LU: det, slogdet, inv, solve ----------------------------------------------------------

// LU-factors every matrix of the Fortran-order `lu` (batch > 0, n > 0) in place; 1-based
// pivots into `piv` (batch x n) and getrf's info of each matrix into `infos` (batch).
template <typename T>
void lu_factor(const Tensor& lu, const Tensor& piv, const Tensor& infos) {
  const int64_t batch = batch_count(lu);
  const int n = static_cast<int>(lu.size(-1));
  cusolverDnHandle_t h = current_handle();
  const int lwork = getrf_buffer(h, n, matrix_ptr<T>(lu, 0));
  const Tensor work = empty({std::max(lwork, 1)}, lu.dtype(), lu.device());
  int* p = static_cast<int*>(piv.data_ptr());
  int* info = static_cast<int*>(infos.data_ptr());
  for (int64_t b = 0; b < batch; ++b) {
    getrf(h, n, matrix_ptr<T>(lu, b), static_cast<T*>(work.data_ptr()), p + b * n, info + b);
  }
}

// Solves lu_b X_b = x_b in place for every matrix (x: Fortran, batch x n x k).
template <typename T>
void lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& x, const Tensor& infos) {
  const int64_t batch = batch_count(lu);
  const int n = static_cast<int>(lu.size(-1)), k = static_cast<int>(x.size(-1));
  cusolverDnHandle_t h = current_handle();
  const int* p = static_cast<const int*>(piv.data_ptr());
  int* info = static_cast<int*>(infos.data_ptr());
  for (int64_t b = 0; b < batch; ++b) getrs(h, n, k, matrix_ptr<T>(lu, b), p + b * n, matrix_ptr<T>(x, b), info + b);
}

// det (logabs == nullptr) or sign and log|det| of every matrix of A, into contiguous outputs.
void det_cuda(const Tensor& A, const Tensor& out0, const Tensor* logabs) {
  const int64_t batch = batch_count(A), n = A.size(-1);
  if (batch == 0) return;
  if (n == 0) {  // the empty product
    out0.fill_(Scalar(1.0));
    if (logabs) logabs->zero_();
    return;
  }
  const Tensor lu = fortran_copy(A);
  const Tensor piv = int_buffer({batch, n}, A.device());
  const Tensor infos = int_buffer({batch}, A.device());
  EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.det", [&] { lu_factor<scalar_t>(lu, piv, infos); });
  // a singular matrix is no error here: its zero pivot makes det 0 (sign 0, log|det| -inf)
  k::det_from_lu(lu, piv, out0, logabs ? *logabs : Tensor(), logabs != nullptr);
}

}  // namespace

Tensor linalg_det_out_cuda(const Tensor& A, const Tensor& out) {
  check_square_floating(A, "linalg.det");
  solver_int(A.size(-1), "linalg.det");
  c10::DeviceGuard guard(A.device());
  Tensor det = empty(batch_shape(A), A.dtype(), A.device());
  det_cuda(A, det, nullptr);
  return set_output(out, det);
}

std::tuple<Tensor, Tensor> linalg_slogdet_out_cuda(const Tensor& A, const Tensor& sign, const Tensor& logabsdet) {
  check_square_floating(A, "linalg.slogdet");
  solver_int(A.size(-1), "linalg.slogdet");
  c10::DeviceGuard guard(A.device());
  Tensor s = empty(batch_shape(A), A.dtype(), A.device());
  Tensor l = empty(batch_shape(A), A.dtype(), A.device());
  det_cuda(A, s, &l);
  return {set_output(sign, s), set_output(logabsdet, l)};
}

Tensor linalg_inv_out_cuda(const Tensor& A, const Tensor& out) {
  check_square_floating(A, "linalg.inv");
  solver_int(A.size(-1), "linalg.inv");
  c10::DeviceGuard guard(A.device());
  const int64_t batch = batch_count(A), n = A.size(-1);
  Tensor x = empty_fortran(A.sizes(), A.dtype(), A.device());
  if (batch > 0 && n > 0) {  // A X = I
    const Tensor lu = fortran_copy(A);
    const Tensor piv = int_buffer({batch, n}, A.device());
    const Tensor infos = int_buffer({batch}, A.device());
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.inv", [&] { lu_factor<scalar_t>(lu, piv, infos); });
    const std::vector<int> info = to_host(infos);
    for (int64_t b = 0; b < batch; ++b) check_inv_info(info[b], A.dim() > 2, b);
    k::fill_identity(x);
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.inv", [&] { lu_solve<scalar_t>(lu, piv, x, infos); });
  }
  return set_output(out, x);
}

// AX = B (left) or XA = B (solve_operands: the CPU kernel's checks and left solve).
Tensor linalg_solve_out_cuda(const Tensor& A, const Tensor& B, bool left, const Tensor& out) {
  const SolveOperands op = solve_operands(A, B, left);
  c10::DeviceGuard guard(A.device());
  solver_int(op.n, "linalg.solve");
  solver_int(op.k, "linalg.solve");
  Tensor lu = fortran_copy(op.A.expand(with_matrix(op.batch, op.n, op.n)));
  Tensor x = fortran_copy(op.B.expand(with_matrix(op.batch, op.n, op.k)));
  const int64_t count = batch_count(lu);
  if (count > 0 && op.n > 0) {
    const Tensor piv = int_buffer({count, op.n}, A.device());
    const Tensor infos = int_buffer({count}, A.device());
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.solve", [&] { lu_factor<scalar_t>(lu, piv, infos); });
    const std::vector<int> info = to_host(infos);
    for (int64_t b = 0; b < count; ++b) check_solve_info(info[b], !op.batch.empty(), b);
    if (op.k > 0) {
      EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.solve", [&] { lu_solve<scalar_t>(lu, piv, x, infos); });
    }
  }
  return set_output(out, op.result(x));
}

// ---- Cholesky ------------------------------------------------------------------------------

namespace {

template <typename T>
void cholesky_factor(const Tensor& L, const Tensor& infos) {
  const int64_t batch = batch_count(L);
  const int n = static_cast<int>(L.size(-1));
  cusolverDnHandle_t h = current_handle();
  const int lwork = potrf_buffer(h, n, matrix_ptr<T>(L, 0));
  const Tensor work = empty({std::max(lwork, 1)}, L.dtype(), L.device());
  int* info = static_cast<int*>(infos.data_ptr());
  for (int64_t b = 0; b < batch; ++b) {
    potrf(h, n, matrix_ptr<T>(L, b), static_cast<T*>(work.data_ptr()), lwork, info + b);
  }
}

}  // namespace

Tensor linalg_cholesky_out_cuda(const Tensor& self, bool upper, const Tensor& out) {
  check_square_floating(self, "linalg.cholesky");
  solver_int(self.size(-1), "linalg.cholesky");
  c10::DeviceGuard guard(self.device());
  Tensor L = fortran_copy(self);
  const int64_t batch = batch_count(self), n = self.size(-1);
  if (batch > 0 && n > 0) {
    const Tensor infos = int_buffer({batch}, self.device());
    EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "linalg.cholesky", [&] { cholesky_factor<scalar_t>(L, infos); });
    const std::vector<int> info = to_host(infos);
    for (int64_t b = 0; b < batch; ++b) check_cholesky_info(info[b], self.dim() > 2, b);
    k::masked_copy(L, L, k::Keep::kLower);  // potrf leaves the strict upper triangle as it was
  }
  return set_output(out, upper ? L.transpose(-2, -1) : L);
}

// ---- QR -----------------------------------------------------------------------------------

namespace {

// A (Fortran copy, m x n, m > 0, n > 0) overwritten by geqrf; reflector scales into tau (batch x k).
template <typename T>
void qr_factor(const Tensor& A, const Tensor& tau, const Tensor& infos) {
  const int64_t batch = batch_count(A);
  const int m = static_cast<int>(A.size(-2)), n = static_cast<int>(A.size(-1)), kk = std::min(m, n);
  cusolverDnHandle_t h = current_handle();
  const int lwork = geqrf_buffer(h, m, n, matrix_ptr<T>(A, 0));
  const Tensor work = empty({std::max(lwork, 1)}, A.dtype(), A.device());
  T* t = static_cast<T*>(tau.data_ptr());
  for (int64_t b = 0; b < batch; ++b) {
    geqrf(h, m, n, matrix_ptr<T>(A, b), t + b * kk, static_cast<T*>(work.data_ptr()), lwork,
          static_cast<int*>(infos.data_ptr()));
  }
}

// Q (Fortran, m x qc, holding the reflectors in its first k columns) formed in place.
template <typename T>
void qr_form_q(const Tensor& Q, const Tensor& tau, int kk, const Tensor& infos) {
  const int64_t batch = batch_count(Q);
  const int m = static_cast<int>(Q.size(-2)), qc = static_cast<int>(Q.size(-1));
  cusolverDnHandle_t h = current_handle();
  const T* t = static_cast<const T*>(tau.data_ptr());
  const int lwork = orgqr_buffer(h, m, qc, kk, matrix_ptr<T>(Q, 0), t);
  const Tensor work = empty({std::max(lwork, 1)}, Q.dtype(), Q.device());
  for (int64_t b = 0; b < batch; ++b) {
    orgqr(h, m, qc, kk, matrix_ptr<T>(Q, b), t + b * kk, static_cast<T*>(work.data_ptr()), lwork,
          static_cast<int*>(infos.data_ptr()));
  }
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_qr_out_cuda(const Tensor& A, const std::string& mode, const Tensor& Q,
                                              const Tensor& R) {
  const QrShape qs = qr_shape(mode, A);
  const int64_t m = qs.m, n = qs.n, kk = qs.k, qc = qs.qc, rr = qs.rr;
  const bool compute_q = qs.compute_q;
  solver_int(m, "linalg.qr");
  solver_int(n, "linalg.qr");
  c10::DeviceGuard guard(A.device());
  const DimVector batch = batch_shape(A);
  Tensor q =
      compute_q ? empty_fortran(with_matrix(batch, m, qc), A.dtype(), A.device()) : empty({0}, A.dtype(), A.device());
  Tensor r = empty_fortran(with_matrix(batch, rr, n), A.dtype(), A.device());
  const int64_t count = batch_count(A);
  if (count > 0) {
    if (kk > 0) {
      const Tensor work = fortran_copy(A);
      const Tensor tau = empty({count, kk}, A.dtype(), A.device());
      const Tensor infos = int_buffer({1}, A.device());  // geqrf / orgqr report only bad arguments
      EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.qr", [&] { qr_factor<scalar_t>(work, tau, infos); });
      k::masked_copy(work, r, k::Keep::kUpper);  // R: the upper triangle, zeros below
      if (compute_q) {
        k::masked_copy(work, q, k::Keep::kAll);  // the reflectors; columns past n zeros
        EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.qr",
                                      [&] { qr_form_q<scalar_t>(q, tau, static_cast<int>(kk), infos); });
      }
    } else {
      // no reflectors: R is empty or zeros, Q the identity (complete mode of an m x 0 input)
      if (r.numel() > 0) r.zero_();
      if (compute_q) k::fill_identity(q);
    }
  }
  return {set_output(Q, q), set_output(R, r)};
}

// ---- SVD ----------------------------------------------------------------------------------

namespace {

struct SvdResult {
  Tensor u, vh;            // undefined when compute_uv is false
  std::vector<int> infos;  // per matrix: 0 when it converged
};

// Jacobi SVD of every matrix of A (m x n, any shape, m, n > 0) into s (batch x k).
template <typename T>
SvdResult svd_gesvdj(const Tensor& A, const Tensor& s, bool full, bool compute_uv) {
  const Tensor a = fortran_copy(A);
  const DimVector batch = batch_shape(A);
  const int64_t count = batch_count(A);
  const int m = static_cast<int>(A.size(-2)), n = static_cast<int>(A.size(-1)), kk = std::min(m, n);
  const cusolverEigMode_t jobz = compute_uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int econ = full ? 0 : 1;
  Tensor u, v;
  if (compute_uv) {
    u = empty_fortran(with_matrix(batch, m, full ? m : kk), A.dtype(), A.device());
    v = empty_fortran(with_matrix(batch, n, full ? n : kk), A.dtype(), A.device());
  }
  // jobz NOVECTOR references neither U nor V (the leading dimensions stay valid)
  auto u_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(u, b) : static_cast<T*>(nullptr); };
  auto v_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(v, b) : static_cast<T*>(nullptr); };
  T* sp = static_cast<T*>(s.data_ptr());
  const Tensor infos = int_buffer({count}, A.device());
  int* info = static_cast<int*>(infos.data_ptr());

  gesvdjInfo_t params = nullptr;
  check_status(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
  struct Destroy {
    gesvdjInfo_t p;
    ~Destroy() { cusolverDnDestroyGesvdjInfo(p); }
  } destroy{params};
  cusolverDnHandle_t h = current_handle();
  const int lwork = gesvdj_buffer(h, jobz, econ, m, n, matrix_ptr<T>(a, 0), sp, u_ptr(0), v_ptr(0), params);
  const Tensor work = empty({std::max(lwork, 1)}, A.dtype(), A.device());
  for (int64_t b = 0; b < count; ++b) {
    gesvdj(h, jobz, econ, m, n, matrix_ptr<T>(a, b), sp + b * kk, u_ptr(b), v_ptr(b), static_cast<T*>(work.data_ptr()),
           lwork, info + b, params);
  }
  SvdResult r{u, compute_uv ? v.transpose(-2, -1) : Tensor(), to_host(infos)};
  return r;
}

// QR-iteration SVD (gesvd, which wants m >= n: a wide A is decomposed as its transpose,
// A^T = U' S V'^T, so that U = V' and Vh = U'^T).
template <typename T>
SvdResult svd_gesvd(const Tensor& A, const Tensor& s, bool full, bool compute_uv) {
  const bool wide = A.size(-2) < A.size(-1);
  const Tensor a = fortran_copy(wide ? A.transpose(-2, -1) : A);
  const DimVector batch = batch_shape(A);
  const int64_t count = batch_count(A);
  const int m = static_cast<int>(a.size(-2)), n = static_cast<int>(a.size(-1));  // m >= n = k
  const signed char job = compute_uv ? (full ? 'A' : 'S') : 'N';
  Tensor u, vt;
  if (compute_uv) {
    u = empty_fortran(with_matrix(batch, m, full ? m : n), A.dtype(), A.device());
    vt = empty_fortran(with_matrix(batch, n, n), A.dtype(), A.device());
  }
  // job 'N' references neither U nor VT (the leading dimensions stay valid)
  auto u_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(u, b) : static_cast<T*>(nullptr); };
  auto vt_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(vt, b) : static_cast<T*>(nullptr); };
  T* sp = static_cast<T*>(s.data_ptr());
  const Tensor infos = int_buffer({count}, A.device());
  int* info = static_cast<int*>(infos.data_ptr());
  cusolverDnHandle_t h = current_handle();
  const int lwork = gesvd_buffer(h, m, n, static_cast<T*>(nullptr));
  const Tensor work = empty({std::max(lwork, 1)}, A.dtype(), A.device());
  const Tensor rwork = empty({std::max(n, 1)}, A.dtype(), A.device());
  for (int64_t b = 0; b < count; ++b) {
    gesvd(h, job, m, n, matrix_ptr<T>(a, b), sp + b * n, u_ptr(b), vt_ptr(b), static_cast<T*>(work.data_ptr()), lwork,
          static_cast<T*>(rwork.data_ptr()), info + b);
  }
  SvdResult r;
  if (compute_uv) {
    r.u = wide ? vt.transpose(-2, -1) : u;
    r.vh = wide ? u.transpose(-2, -1) : vt;
  }
  r.infos = to_host(infos);
  return r;
}

bool any_failed(const std::vector<int>& infos) {
  return std::any_of(infos.begin(), infos.end(), [](int i) { return i != 0; });
}

}  // namespace

// driver: None (gesvdj, and gesvd for a batch in which some matrix did not converge, as
// PyTorch), "gesvdj", "gesvd", or "gesvda" (PyTorch's approximate driver for tall
// matrices: gesvd here, exact).
std::tuple<Tensor, Tensor, Tensor> _linalg_svd_out_cuda(const Tensor& A, bool full_matrices, bool compute_uv,
                                                        const std::optional<std::string>& driver, const Tensor& U,
                                                        const Tensor& S, const Tensor& Vh) {
  check_matrix(A, "linalg.svd");
  check_floating(A, "linalg.svd");
  EMBER_CHECK(!driver.has_value() || *driver == "gesvd" || *driver == "gesvdj" || *driver == "gesvda",
              "torch.linalg.svd: unknown driver '", driver.value_or(""),
              "'. Expected one of 'gesvd', 'gesvdj', 'gesvda' or None");
  const int64_t kk = std::min(A.size(-2), A.size(-1));
  solver_int(A.size(-2), "linalg.svd");
  solver_int(A.size(-1), "linalg.svd");
  c10::DeviceGuard guard(A.device());
  const DimVector batch = batch_shape(A);
  SvdOutputs o = svd_outputs(A, full_matrices, compute_uv);
  Tensor &u = o.u, &s = o.s, &vh = o.vh;
  const int64_t count = batch_count(A);
  if (count > 0) {
    if (kk == 0) {
      if (compute_uv) {  // the singular vectors of an empty matrix: identity bases
        k::fill_identity(u);
        k::fill_identity(vh);
      }
    } else {
      const bool batched = !batch.empty();
      {  // the CPU kernel's check (LAPACK would not return on NaN)
        const Tensor flags = zeros({count}, ScalarType::Int, A.device());
        k::flag_nonfinite(A.contiguous(), flags);  // only which matrix an entry is in matters
        const std::vector<int> bad = to_host(flags);
        for (int64_t b = 0; b < count; ++b) check_svd_finite(bad[b] == 0, batched, b);
      }
      SvdResult r;
      EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.svd", [&] {
        const bool jacobi = !driver.has_value() || *driver == "gesvdj";
        if (jacobi) r = svd_gesvdj<scalar_t>(A, s, full_matrices, compute_uv);
        if (!jacobi || (!driver.has_value() && any_failed(r.infos))) {
          r = svd_gesvd<scalar_t>(A, s, full_matrices, compute_uv);
        }
      });
      for (int64_t b = 0; b < count; ++b) check_svd_info(r.infos[b], batched, b);
      if (compute_uv) {
        u = r.u;
        vh = r.vh;
      }
    }
  }
  return {set_output(U, u), set_output(S, s), set_output(Vh, vh)};
}

}  // namespace ember::at::native
