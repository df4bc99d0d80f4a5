// LAPACK-backed decompositions beside BatchLinearAlgebra.cpp's: the symmetric eigensolver
// (_linalg_eigh: syevd), the LU factorisation with its pivots and infos
// (linalg_lu_factor_ex: getrf) and its unpacking (lu_unpack), triangular solves
// (linalg_solve_triangular: trsm), Cholesky with infos (linalg_cholesky_ex: potrf) and the
// raw Householder QR (geqrf). Batched over the leading dims; float32 / float64 (as
// PyTorch on CPU). The rest of torch.linalg (eigvalsh, lu, lu_solve, solve_ex, inv_ex,
// lstsq, pinv, matrix_rank, householder_product, ...) is written over these in Python
// (ember/aten/native/linalg_ext.py), so its gradients come from these kernels' formulas.
//
// Inputs are copied into Fortran-order tensors (LinalgUtils.h) that LAPACK overwrites;
// results keep that layout, as PyTorch's do. No CUDA kernels yet: on a CUDA tensor the
// dispatcher raises that these operators have no CUDA kernel (tests/aten/cuda_pending.txt).
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <cblas.h>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Tensor.h>

#include "Blas.h"
#include "LinalgUtils.h"

extern "C" {
void scipy_ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
                   const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void scipy_dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
                   const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void scipy_sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void scipy_dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void scipy_spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void scipy_dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void scipy_sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
                   int* info);
void scipy_dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
                   int* info);
}

namespace ember::at::native {

using namespace linalg;  // the Fortran-order batch helpers of LinalgUtils.h

namespace {

int lapack_int(int64_t v, const char* name) { return solver_int(v, name, "LAPACK"); }

// ---- typed LAPACK / BLAS entry points -------------------------------------------------------

inline void syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                  int liwork, int* info) {
  scipy_ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                  int liwork, int* info) {
  scipy_dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { scipy_sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) {
  scipy_dgetrf_(&m, &n, a, &lda, ipiv, info);
}
inline void potrf(char uplo, int n, float* a, int lda, int* info) { scipy_spotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, double* a, int lda, int* info) { scipy_dpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  scipy_sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  scipy_dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const float* a, int lda, float* b,
                 int ldb) {
  scipy_cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const double* a, int lda, double* b,
                 int ldb) {
  scipy_cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0, a, lda, b, ldb);
}

Tensor int_info(IntArrayRef batch, Device device) { return zeros(batch, ScalarType::Int, device); }

// ---- eigh ------------------------------------------------------------------------------------

template <typename T>
void eigh_impl(const Tensor& A, const Tensor& W, char uplo, bool compute_v, bool batched) {
  const int64_t batch = batch_count(A);
  const int n = static_cast<int>(A.size(-1));
  const char jobz = compute_v ? 'V' : 'N';
  const int lda = std::max(1, n);
  T* w = static_cast<T*>(W.data_ptr());
  T wq = 0;
  int iwq = 0, info = 0;
  syevd(jobz, uplo, n, matrix_ptr<T>(A, 0), lda, w, &wq, -1, &iwq, -1, &info);
  const int lwork = std::max(1, static_cast<int>(wq)), liwork = std::max(1, iwq);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  for (int64_t b = 0; b < batch; ++b) {
    T* a = matrix_ptr<T>(A, b);
    for (int64_t j = 0; j < n; ++j)  // only the triangle UPLO names is read (as LAPACK)
      for (int64_t i = 0; i < n; ++i) {
        const bool in_triangle = uplo == 'L' ? i >= j : i <= j;
        EMBER_CHECK_LINALG(!in_triangle || std::isfinite(a[j * n + i]), "linalg.eigh: ", batch_prefix(batched, b),
                           "The algorithm failed to converge because the input matrix contained non-finite values.");
      }
    syevd(jobz, uplo, n, a, lda, w + b * n, work.data(), lwork, iwork.data(), liwork, &info);
    EMBER_CHECK_LINALG(info == 0, "linalg.eigh: ", batch_prefix(batched, b),
                       "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                       "repeated eigenvalues (error code: ",
                       info, ").");
  }
}

// ---- LU ----------------------------------------------------------------------------------------

template <typename T>
void lu_factor_impl(const Tensor& LU, const Tensor& pivots, const Tensor& infos) {
  const int64_t batch = batch_count(LU);
  const int m = static_cast<int>(LU.size(-2)), n = static_cast<int>(LU.size(-1));
  const int k = std::min(m, n);
  int* piv = static_cast<int*>(pivots.data_ptr());
  int* info = static_cast<int*>(infos.data_ptr());
  for (int64_t b = 0; b < batch; ++b) getrf(m, n, matrix_ptr<T>(LU, b), std::max(1, m), piv + b * k, info + b);
}

// L (m x k, unit diagonal) and U (k x n) of a row-major contiguous LU (m x n), row-major.
template <typename T>
void lu_unpack_data(const Tensor& LU, const Tensor& L, const Tensor& U) {
  const int64_t batch = batch_count(LU), m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  const T* lu = static_cast<const T*>(LU.data_ptr());
  T* l = static_cast<T*>(L.data_ptr());
  T* u = static_cast<T*>(U.data_ptr());
  for (int64_t b = 0; b < batch; ++b) {
    const T* a = lu + b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j) l[(b * m + i) * k + j] = i > j ? a[i * n + j] : (i == j ? T(1) : T(0));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) u[(b * k + i) * n + j] = i <= j ? a[i * n + j] : T(0);
  }
}

// P (m x m) with A = P L U: LAPACK swaps row i with row pivots[i] - 1, in order.
template <typename T>
void lu_unpack_pivots(const Tensor& pivots, const Tensor& P, int64_t m, bool batched) {
  const int64_t batch = P.numel() / std::max<int64_t>(m * m, 1), k = pivots.size(-1);
  const int* piv = static_cast<const int*>(pivots.data_ptr());
  T* p = static_cast<T*>(P.data_ptr());
  std::vector<int64_t> perm(static_cast<size_t>(m));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t to = piv[b * k + i] - 1;
      EMBER_CHECK(to >= i && to < m, "lu_unpack: ", batch_prefix(batched, b), "the pivot ", to + 1, " at position ", i,
                  " is out of range: pivots must lie in [", i + 1, ", ", m,
                  "] (as torch.linalg.lu_factor returns them)");
      std::swap(perm[i], perm[to]);
    }
    T* pb = p + b * m * m;
    std::fill(pb, pb + m * m, T(0));
    for (int64_t i = 0; i < m; ++i) pb[perm[i] * m + i] = T(1);
  }
}

// ---- triangular solve --------------------------------------------------------------------

template <typename T>
void solve_triangular_impl(const Tensor& A, const Tensor& X, bool upper, bool left, bool unit) {
  const int64_t batch = batch_count(X);
  const int m = static_cast<int>(X.size(-2)), k = static_cast<int>(X.size(-1));
  const int na = static_cast<int>(A.size(-1));
  if (m == 0 || k == 0) return;
  for (int64_t b = 0; b < batch; ++b) {
    trsm(left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, unit ? CblasUnit : CblasNonUnit, m, k,
         matrix_ptr<T>(A, b), std::max(1, na), matrix_ptr<T>(X, b), std::max(1, m));
  }
}

// ---- Cholesky with infos -----------------------------------------------------------------

template <typename T>
void cholesky_ex_impl(const Tensor& L, const Tensor& infos) {
  const int64_t batch = batch_count(L);
  const int n = static_cast<int>(L.size(-1));
  int* info = static_cast<int*>(infos.data_ptr());
  for (int64_t b = 0; b < batch; ++b) {
    T* a = matrix_ptr<T>(L, b);
    potrf('L', n, a, std::max(1, n), info + b);
    for (int64_t j = 1; j < n; ++j)  // LAPACK leaves the strict upper triangle as it was
      for (int64_t i = 0; i < j; ++i) a[j * n + i] = T(0);
  }
}

// ---- geqrf -------------------------------------------------------------------------------

template <typename T>
void geqrf_impl(const Tensor& A, const Tensor& tau) {
  const int64_t batch = batch_count(A);
  const int m = static_cast<int>(A.size(-2)), n = static_cast<int>(A.size(-1)), k = std::min(m, n);
  if (m == 0 || n == 0) return;
  T query = 0;
  int info = 0;
  geqrf(m, n, matrix_ptr<T>(A, 0), m, static_cast<T*>(tau.data_ptr()), &query, -1, &info);
  const int lwork = std::max(1, static_cast<int>(query));
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < batch; ++b) {
    geqrf(m, n, matrix_ptr<T>(A, b), m, static_cast<T*>(tau.data_ptr()) + b * k, work.data(), lwork, &info);
  }
}

DimVector with_last(IntArrayRef batch, int64_t n) {
  DimVector s(batch.begin(), batch.end());
  s.push_back(n);
  return s;
}

}  // namespace

// ---- entry points --------------------------------------------------------------------------

std::tuple<Tensor, Tensor> _linalg_eigh_out(const Tensor& A, const std::string& UPLO, bool compute_v,
                                            const Tensor& eigenvalues, const Tensor& eigenvectors) {
  check_matrix(A, "linalg.eigh");
  check_floating(A, "linalg.eigh");
  check_square(A, "linalg.eigh");
  EMBER_CHECK(UPLO == "L" || UPLO == "U" || UPLO == "l" || UPLO == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  const char uplo = static_cast<char>(std::toupper(static_cast<unsigned char>(UPLO[0])));
  const int64_t n = lapack_int(A.size(-1), "linalg.eigh");
  const DimVector batch = batch_shape(A);
  Tensor w = empty(with_last(batch, n), A.dtype(), A.device());
  Tensor v = fortran_copy(A);
  if (batch_count(A) > 0 && n > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.eigh",
                                  [&] { eigh_impl<scalar_t>(v, w, uplo, compute_v, !batch.empty()); });
  }
  if (!compute_v) v = empty({0}, A.dtype(), A.device());
  return {set_output(eigenvalues, w), set_output(eigenvectors, v)};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex_out(const Tensor& A, bool pivot, bool check_errors,
                                                           const Tensor& LU, const Tensor& pivots, const Tensor& info) {
  check_matrix(A, "linalg.lu_factor");
  check_floating(A, "linalg.lu_factor");
  EMBER_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  const int64_t m = lapack_int(A.size(-2), "linalg.lu_factor"), n = lapack_int(A.size(-1), "linalg.lu_factor");
  const DimVector batch = batch_shape(A);
  Tensor lu = fortran_copy(A);
  Tensor piv = zeros(with_last(batch, std::min(m, n)), ScalarType::Int, A.device());
  Tensor inf = int_info(batch, A.device());
  if (batch_count(A) > 0 && m > 0 && n > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.lu_factor", [&] { lu_factor_impl<scalar_t>(lu, piv, inf); });
  }
  if (check_errors) {
    const int* ip = static_cast<const int*>(inf.data_ptr());
    for (int64_t b = 0; b < inf.numel(); ++b) {
      EMBER_CHECK_LINALG(ip[b] <= 0, "torch.linalg.lu_factor_ex: ", batch_prefix(!batch.empty(), b), "U[", ip[b], ",",
                         ip[b],
                         "] is zero and using it on lu_solve would result in a division by zero. If you still want "
                         "to perform the factorization, consider calling linalg.lu(A, pivot) or "
                         "linalg.lu_factor_ex(A, pivot)");
    }
  }
  return {set_output(LU, lu), set_output(pivots, piv), set_output(info, inf)};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack_out(const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data,
                                                 bool unpack_pivots, const Tensor& P, const Tensor& L,
                                                 const Tensor& U) {
  EMBER_CHECK(LU_data.dim() >= 2,
              "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU_data.sizes(), " instead");
  check_floating(LU_data, "torch.lu_unpack");
  EMBER_CHECK(LU_pivots.dtype() == ScalarType::Int,
              "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: this "
              "function is intended to be used with the output produced by torch.linalg.lu_factor, got ",
              c10::toString(LU_pivots.dtype()));
  check_same_device("torch.lu_unpack", LU_data, LU_pivots);
  const int64_t m = LU_data.size(-2), n = LU_data.size(-1), k = std::min(m, n);
  const DimVector batch = batch_shape(LU_data);
  Tensor l, u, p;
  if (unpack_data) {
    const Tensor lu = LU_data.contiguous();
    l = empty(with_matrix(batch, m, k), LU_data.dtype(), LU_data.device());
    u = empty(with_matrix(batch, k, n), LU_data.dtype(), LU_data.device());
    if (lu.numel() > 0) {
      EMBER_DISPATCH_FLOATING_TYPES(LU_data.dtype(), "lu_unpack", [&] { lu_unpack_data<scalar_t>(lu, l, u); });
    }
  } else {
    l = empty({0}, LU_data.dtype(), LU_data.device());
    u = empty({0}, LU_data.dtype(), LU_data.device());
  }
  if (unpack_pivots) {
    const DimVector piv_shape = with_last(batch, k);
    EMBER_CHECK(IntArrayRef(LU_pivots.sizes()) == IntArrayRef(piv_shape),
                "torch.lu_unpack: Expected LU_pivots of shape ", IntArrayRef(piv_shape),
                " (LU_data's batch and min(m, n)), but got ", LU_pivots.sizes());
    const Tensor piv = LU_pivots.contiguous();
    p = empty(with_matrix(batch, m, m), LU_data.dtype(), LU_data.device());
    if (p.numel() > 0) {
      EMBER_DISPATCH_FLOATING_TYPES(LU_data.dtype(), "lu_unpack",
                                    [&] { lu_unpack_pivots<scalar_t>(piv, p, m, !batch.empty()); });
    }
  } else {
    p = empty({0}, LU_data.dtype(), LU_data.device());
  }
  return {set_output(P, p), set_output(L, l), set_output(U, u)};
}

// AX = B (left) or XA = B with A triangular; B must be a matrix (or a batch of them).
Tensor linalg_solve_triangular_out(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular,
                                   const Tensor& out) {
  EMBER_CHECK(A.dim() >= 2, "linalg.solve_triangular: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(B.dim() >= 2, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
  check_floating(A, "linalg.solve_triangular");
  EMBER_CHECK(A.dtype() == B.dtype(),
              "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type ",
              c10::toString(A.dtype()), " and B of type ", c10::toString(B.dtype()), " instead");
  check_same_device("linalg.solve_triangular", A, B);
  check_square(A, "linalg.solve_triangular");
  const int64_t n = A.size(-1);
  EMBER_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
              "linalg.solve_triangular: Incompatible shapes of A and B for the ",
              left ? "equation AX = B (" : "equation XA = B (", A.size(-2), "x", A.size(-1), " and ", B.size(-2), "x",
              B.size(-1), ")");
  const DimVector batch = broadcast_batch(batch_shape(B), batch_shape(A));
  lapack_int(n, "linalg.solve_triangular");
  lapack_int(B.size(-2), "linalg.solve_triangular");
  lapack_int(B.size(-1), "linalg.solve_triangular");
  Tensor a = fortran_copy(A.expand(with_matrix(batch, n, n)));
  Tensor x = fortran_copy(B.expand(with_matrix(batch, B.size(-2), B.size(-1))));
  if (x.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(A.dtype(), "linalg.solve_triangular",
                                  [&] { solve_triangular_impl<scalar_t>(a, x, upper, left, unitriangular); });
  }
  return set_output(out, x);
}

std::tuple<Tensor, Tensor> linalg_cholesky_ex_out(const Tensor& self, bool upper, bool check_errors, const Tensor& L,
                                                  const Tensor& info) {
  check_matrix(self, "linalg.cholesky_ex");
  check_floating(self, "linalg.cholesky_ex");
  check_square(self, "linalg.cholesky_ex");
  lapack_int(self.size(-1), "linalg.cholesky_ex");
  const DimVector batch = batch_shape(self);
  Tensor l = fortran_copy(self);
  Tensor inf = int_info(batch, self.device());
  if (l.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "linalg.cholesky_ex", [&] { cholesky_ex_impl<scalar_t>(l, inf); });
  }
  if (check_errors) {
    const int* ip = static_cast<const int*>(inf.data_ptr());
    for (int64_t b = 0; b < inf.numel(); ++b) {
      EMBER_CHECK_LINALG(ip[b] <= 0, "linalg.cholesky_ex: ", batch_prefix(!batch.empty(), b),
                         "The factorization could not be completed because the input is not positive-definite (the "
                         "leading minor of order ",
                         ip[b], " is not positive-definite).");
    }
  }
  return {set_output(L, upper ? l.transpose(-2, -1) : l), set_output(info, inf)};
}

std::tuple<Tensor, Tensor> geqrf_out(const Tensor& self, const Tensor& a, const Tensor& tau) {
  EMBER_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  check_floating(self, "torch.geqrf");
  const int64_t m = lapack_int(self.size(-2), "torch.geqrf"), n = lapack_int(self.size(-1), "torch.geqrf");
  Tensor r = fortran_copy(self);
  Tensor t = empty(with_last(batch_shape(self), std::min(m, n)), self.dtype(), self.device());
  if (r.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "torch.geqrf", [&] { geqrf_impl<scalar_t>(r, t); });
  }
  return {set_output(a, r), set_output(tau, t)};
}

}  // namespace ember::at::native
