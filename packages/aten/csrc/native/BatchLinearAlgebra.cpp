// LAPACK-backed linear algebra, batched over the leading dims: linalg.solve, linalg.inv,
// linalg.det, linalg.slogdet, linalg.cholesky, linalg.qr and the SVD (_linalg_svd;
// linalg.svd / linalg.svdvals are Python composites over it). float32 / float64 only,
// as PyTorch on CPU.
//
// LAPACK is column-major: every input is first copied into a "Fortran-order" tensor
// (each matrix column-major, the matrices one after another), which LAPACK factors in
// place; results are returned in that layout (as PyTorch's are). The routines come from
// the same scipy-openblas32 library as BLAS (symbols scipy_<name>_, 32-bit integers,
// gfortran's hidden string-length arguments after the others).
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Tensor.h>

#include "Blas.h"
#include "LinalgDet.h"
#include "LinalgUtils.h"

extern "C" {
void scipy_sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void scipy_dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void scipy_sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
                   float* b, const int* ldb, int* info, size_t trans_len);
void scipy_dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
                   double* b, const int* ldb, int* info, size_t trans_len);
void scipy_sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void scipy_dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void scipy_spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void scipy_dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void scipy_sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
                   int* info);
void scipy_dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
                   int* info);
void scipy_sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
                   const int* lwork, int* info);
void scipy_dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
                   const int* lwork, int* info);
void scipy_sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
                   const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
                   size_t jobz_len);
void scipy_dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
                   const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
                   size_t jobz_len);
}

namespace ember::at::native {

using namespace linalg;  // the Fortran-order batch helpers of LinalgUtils.h

namespace {

// ---- typed LAPACK entry points ----------------------------------------------------------------

inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { scipy_sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) {
  scipy_dgetrf_(&m, &n, a, &lda, ipiv, info);
}
inline void getrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) {
  scipy_sgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void getrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info) {
  scipy_dgetrs_("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork, int* info) {
  scipy_sgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork, int* info) {
  scipy_dgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
inline void potrf(int n, float* a, int lda, int* info) { scipy_spotrf_("L", &n, a, &lda, info, 1); }
inline void potrf(int n, double* a, int lda, int* info) { scipy_dpotrf_("L", &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  scipy_sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  scipy_dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  scipy_sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  scipy_dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                  float* work, int lwork, int* iwork, int* info) {
  scipy_sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
                  double* work, int lwork, int* iwork, int* info) {
  scipy_dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}

// ---- batches of matrices in Fortran order ------------------------------------------------------

int lapack_int(int64_t v, const char* name) { return linalg::solver_int(v, name, "LAPACK"); }

// ---- LU: det, slogdet, inv, solve ----------------------------------------------------------

// LU-factors every matrix of the Fortran-order `lu` in place; pivots (batch, n).
// Returns LAPACK's info of each matrix (> 0: U[info-1, info-1] is exactly zero).
template <typename T>
std::vector<int> lu_factor(const Tensor& lu, std::vector<int>& pivots) {
  const int64_t batch = batch_count(lu);
  const int n = lapack_int(lu.size(-1), "linalg.lu_factor");
  pivots.assign(static_cast<size_t>(batch * n), 0);
  std::vector<int> infos(static_cast<size_t>(batch), 0);
  if (n == 0) return infos;
  for (int64_t b = 0; b < batch; ++b) {
    getrf(n, n, matrix_ptr<T>(lu, b), n, pivots.data() + b * n, &infos[b]);
  }
  return infos;
}

template <typename T>
void det_impl(const Tensor& A, const Tensor& sign_or_det, const Tensor* logabs) {
  const Tensor lu = fortran_copy(A);
  std::vector<int> piv;
  lu_factor<T>(lu, piv);
  const int64_t batch = batch_count(lu), n = lu.size(-1);
  T* out0 = static_cast<T*>(sign_or_det.data_ptr());
  T* out1 = logabs ? static_cast<T*>(logabs->data_ptr()) : nullptr;
  for (int64_t b = 0; b < batch; ++b) {
    linalg::det_from_lu(matrix_ptr<T>(lu, b), piv.data() + b * n, n, logabs != nullptr, out0 + b,
                        out1 ? out1 + b : nullptr);
  }
}

template <typename T>
void inv_impl(const Tensor& lu, bool batched) {
  std::vector<int> piv;
  const std::vector<int> infos = lu_factor<T>(lu, piv);
  const int64_t batch = batch_count(lu);
  const int n = static_cast<int>(lu.size(-1));
  for (int64_t b = 0; b < batch; ++b) {
    check_inv_info(infos[b], batched, b);
  }
  if (n == 0) return;
  int info = 0, lwork = -1;
  T query = 0;
  getri(n, matrix_ptr<T>(lu, 0), n, piv.data(), &query, lwork, &info);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < batch; ++b) {
    getri(n, matrix_ptr<T>(lu, b), n, piv.data() + b * n, work.data(), lwork, &info);
  }
}

template <typename T>
void solve_impl(const Tensor& lu, const Tensor& x, bool batched) {
  std::vector<int> piv;
  const std::vector<int> infos = lu_factor<T>(lu, piv);
  const int64_t batch = batch_count(lu);
  for (int64_t b = 0; b < batch; ++b) check_solve_info(infos[b], batched, b);
  const int n = static_cast<int>(lu.size(-1));
  const int k = lapack_int(x.size(-1), "linalg.solve");
  if (n == 0 || k == 0) return;
  for (int64_t b = 0; b < batch; ++b) {
    int info = 0;
    getrs(n, k, matrix_ptr<T>(lu, b), n, piv.data() + b * n, matrix_ptr<T>(x, b), n, &info);
  }
}

}  // namespace

Tensor linalg_det_out(const Tensor& A, const Tensor& out) {
  check_square_floating(A, "linalg.det");
  lapack_int(A.size(-1), "linalg.det");
  Tensor det = empty(batch_shape(A), A.dtype(), A.device());
  if (det.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.det", [&] { det_impl<scalar_t>(A, det, nullptr); });
  }
  return set_output(out, det);
}

std::tuple<Tensor, Tensor> linalg_slogdet_out(const Tensor& A, const Tensor& sign, const Tensor& logabsdet) {
  check_square_floating(A, "linalg.slogdet");
  lapack_int(A.size(-1), "linalg.slogdet");
  Tensor s = empty(batch_shape(A), A.dtype(), A.device());
  Tensor l = empty(batch_shape(A), A.dtype(), A.device());
  if (s.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.slogdet", [&] { det_impl<scalar_t>(A, s, &l); });
  }
  return {set_output(sign, s), set_output(logabsdet, l)};
}

Tensor linalg_inv_out(const Tensor& A, const Tensor& out) {
  check_square_floating(A, "linalg.inv");
  lapack_int(A.size(-1), "linalg.inv");
  Tensor lu = fortran_copy(A);
  if (lu.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.inv", [&] { inv_impl<scalar_t>(lu, A.dim() > 2); });
  }
  return set_output(out, lu);
}

// AX = B (left) or XA = B (solve_operands: the checks and the left solve).
Tensor linalg_solve_out(const Tensor& A, const Tensor& B, bool left, const Tensor& out) {
  const SolveOperands op = solve_operands(A, B, left);
  lapack_int(op.n, "linalg.solve");
  Tensor lu = fortran_copy(op.A.expand(with_matrix(op.batch, op.n, op.n)));
  Tensor x = fortran_copy(op.B.expand(with_matrix(op.batch, op.n, op.k)));
  if (lu.numel() > 0) {
    const bool batched = !op.batch.empty();
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.solve", [&] { solve_impl<scalar_t>(lu, x, batched); });
  }
  return set_output(out, op.result(x));
}

// ---- Cholesky ------------------------------------------------------------------------------

namespace {

template <typename T>
void cholesky_impl(const Tensor& L, bool batched) {
  const int64_t batch = batch_count(L);
  const int n = static_cast<int>(L.size(-1));
  if (n == 0) return;
  for (int64_t b = 0; b < batch; ++b) {
    T* a = matrix_ptr<T>(L, b);
    int info = 0;
    potrf(n, a, n, &info);
    check_cholesky_info(info, batched, b);
    for (int64_t j = 1; j < n; ++j)  // LAPACK leaves the strict upper triangle as it was
      for (int64_t i = 0; i < j; ++i) a[j * n + i] = T(0);
  }
}

}  // namespace

Tensor linalg_cholesky_out(const Tensor& self, bool upper, const Tensor& out) {
  check_square_floating(self, "linalg.cholesky");
  lapack_int(self.size(-1), "linalg.cholesky");
  Tensor L = fortran_copy(self);
  if (L.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "linalg.cholesky", [&] { cholesky_impl<scalar_t>(L, self.dim() > 2); });
  }
  return set_output(out, upper ? L.transpose(-2, -1) : L);
}

// ---- QR -----------------------------------------------------------------------------------

namespace {

template <typename T>
void qr_impl(const Tensor& A, const Tensor& Q, const Tensor& R, bool compute_q) {
  // A: Fortran copy (m x n), overwritten by geqrf; Q: Fortran (m x qc); R: Fortran (rr x n)
  const int64_t batch = batch_count(A);
  const int m = static_cast<int>(A.size(-2)), n = static_cast<int>(A.size(-1));
  const int k = std::min(m, n);
  const int qc = compute_q ? static_cast<int>(Q.size(-1)) : 0;
  const int rr = static_cast<int>(R.size(-2));
  const int lda = std::max(1, m);
  std::vector<T> tau(static_cast<size_t>(std::max(1, k)));
  int info = 0;
  T query = 0;
  int lwork = 1;
  if (m > 0 && n > 0) {
    geqrf(m, n, matrix_ptr<T>(A, 0), lda, tau.data(), &query, -1, &info);
    lwork = std::max(lwork, static_cast<int>(query));
  }
  if (compute_q && m > 0 && qc > 0) {
    orgqr(m, qc, k, matrix_ptr<T>(Q, 0), lda, tau.data(), &query, -1, &info);
    lwork = std::max(lwork, static_cast<int>(query));
  }
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < batch; ++b) {
    T* a = matrix_ptr<T>(A, b);
    if (m > 0 && n > 0) geqrf(m, n, a, lda, tau.data(), work.data(), lwork, &info);
    T* r = matrix_ptr<T>(R, b);
    const int ldr = std::max(1, rr);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < rr; ++i) r[j * ldr + i] = i <= j && i < m ? a[j * lda + i] : T(0);
    if (!compute_q || m == 0 || qc == 0) continue;
    T* q = matrix_ptr<T>(Q, b);
    for (int j = 0; j < qc; ++j)
      for (int i = 0; i < m; ++i) q[j * lda + i] = j < n ? a[j * lda + i] : T(0);
    orgqr(m, qc, k, q, lda, tau.data(), work.data(), lwork, &info);
  }
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_qr_out(const Tensor& A, const std::string& mode, const Tensor& Q, const Tensor& R) {
  const QrShape qs = qr_shape(mode, A);
  const int64_t m = qs.m, n = qs.n, k = qs.k, qc = qs.qc, rr = qs.rr;
  const bool compute_q = qs.compute_q;
  lapack_int(m, "linalg.qr");
  lapack_int(n, "linalg.qr");
  const DimVector batch = batch_shape(A);
  Tensor work = fortran_copy(A);
  Tensor q =
      compute_q ? empty_fortran(with_matrix(batch, m, qc), A.dtype(), A.device()) : empty({0}, A.dtype(), A.device());
  Tensor r = empty_fortran(with_matrix(batch, rr, n), A.dtype(), A.device());
  if (batch_count(A) > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.qr", [&] { qr_impl<scalar_t>(work, q, r, compute_q); });
    if (compute_q && k == 0 && q.numel() > 0) {
      // no reflectors: Q is the identity (complete mode of an m x 0 input)
      q.zero_();
      for (int64_t i = 0; i < std::min(m, qc); ++i) q.select(-1, i).select(-1, i).fill_(Scalar(1.0));
    }
  }
  return {set_output(Q, q), set_output(R, r)};
}

// ---- SVD (divide and conquer, gesdd) ----------------------------------------------------------

namespace {

template <typename T>
void svd_impl(const Tensor& A, const Tensor& U, const Tensor& S, const Tensor& Vh, bool full, bool compute_uv,
              bool batched) {
  const int64_t batch = batch_count(A);
  const int m = static_cast<int>(A.size(-2)), n = static_cast<int>(A.size(-1));
  const int k = std::min(m, n);
  const char jobz = compute_uv ? (full ? 'A' : 'S') : 'N';
  const int lda = std::max(1, m);
  const int ldu = compute_uv ? std::max(1, m) : 1;
  const int ldvt = compute_uv ? std::max(1, full ? n : k) : 1;
  std::vector<int> iwork(static_cast<size_t>(std::max(1, 8 * k)));
  T dummy_u = 0, dummy_vt = 0, query = 0;
  int info = 0;
  auto u_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(U, b) : &dummy_u; };
  auto vt_ptr = [&](int64_t b) { return compute_uv ? matrix_ptr<T>(Vh, b) : &dummy_vt; };
  T* s = static_cast<T*>(S.data_ptr());
  gesdd(jobz, m, n, matrix_ptr<T>(A, 0), lda, s, u_ptr(0), ldu, vt_ptr(0), ldvt, &query, -1, iwork.data(), &info);
  const int lwork = std::max(1, static_cast<int>(query));
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < batch; ++b) {
    T* a = matrix_ptr<T>(A, b);
    for (int64_t i = 0; i < int64_t{m} * n; ++i) {
      check_svd_finite(std::isfinite(a[i]), batched, b);
    }
    gesdd(jobz, m, n, a, lda, s + b * k, u_ptr(b), ldu, vt_ptr(b), ldvt, work.data(), lwork, iwork.data(), &info);
    check_svd_info(info, batched, b);
  }
}

void fill_identity(const Tensor& t) {
  t.zero_();
  const int64_t d = std::min(t.size(-2), t.size(-1));
  for (int64_t i = 0; i < d; ++i) t.select(-1, i).select(-1, i).fill_(Scalar(1.0));
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> _linalg_svd_out(const Tensor& A, bool full_matrices, bool compute_uv,
                                                   const std::optional<std::string>& driver, const Tensor& U,
                                                   const Tensor& S, const Tensor& Vh) {
  check_matrix(A, "linalg.svd");
  check_floating(A, "linalg.svd");
  EMBER_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  const int64_t k = std::min(A.size(-2), A.size(-1));
  lapack_int(A.size(-2), "linalg.svd");
  lapack_int(A.size(-1), "linalg.svd");
  const DimVector batch = batch_shape(A);
  const SvdOutputs o = svd_outputs(A, full_matrices, compute_uv);
  const Tensor &u = o.u, &s = o.s, &vh = o.vh;
  if (batch_count(A) > 0) {
    if (k == 0) {
      if (compute_uv) {  // the singular vectors of an empty matrix: identity bases
        if (u.numel() > 0) fill_identity(u);
        if (vh.numel() > 0) fill_identity(vh);
      }
    } else {
      Tensor work = fortran_copy(A);
      EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.svd", [&] {
        svd_impl<scalar_t>(work, u, s, vh, full_matrices, compute_uv, !batch.empty());
      });
    }
  }
  return {set_output(U, u), set_output(S, s), set_output(Vh, vh)};
}

}  // namespace ember::at::native
