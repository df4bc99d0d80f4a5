// Batches of matrices in "Fortran order" (each matrix column-major, the matrices one after
// another), as LAPACK and cuSOLVER factor them in place, and the argument checks the
// linalg kernels share. Used by BatchLinearAlgebra.cpp (CPU, LAPACK) and
// cuda/BatchLinearAlgebraCUDA.cpp (cuSOLVER); host code only, no data is touched here.
#pragma once

#include <algorithm>
#include <climits>
#include <string>

#include <ember/aten/Tensor.h>

#include "Blas.h"

namespace ember::at::native::linalg {

// A matrix dimension as the solver library's 32-bit int (library: "LAPACK", "cuSOLVER").
inline int solver_int(int64_t v, const char* name, const char* library) {
  EMBER_CHECK(v <= INT_MAX, name, ": matrix dimension ", v, " is too large for ", library);
  return static_cast<int>(v);
}

inline DimVector fortran_strides(IntArrayRef sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  DimVector st(nd, 1);
  const int64_t rows = std::max<int64_t>(sizes[nd - 2], 1), cols = std::max<int64_t>(sizes[nd - 1], 1);
  st[nd - 2] = 1;
  st[nd - 1] = rows;
  int64_t step = rows * cols;
  for (int64_t d = nd - 3; d >= 0; --d) {
    st[d] = step;
    step *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

inline Tensor empty_fortran(IntArrayRef sizes, ScalarType dtype, Device device) {
  return empty_strided(sizes, fortran_strides(sizes), dtype, device);
}

// A copy of t (..., r, c) in Fortran order, which the solver may overwrite.
inline Tensor fortran_copy(const Tensor& t) {
  Tensor r = empty_fortran(t.sizes(), t.dtype(), t.device());
  if (t.numel() > 0) r.copy_(t);
  return r;
}

inline int64_t batch_count(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < t.dim(); ++d) n *= t.size(d);
  return n;
}

inline DimVector batch_shape(const Tensor& t) { return DimVector(t.sizes().begin(), t.sizes().end() - 2); }

inline DimVector with_matrix(IntArrayRef batch, int64_t r, int64_t c) {
  DimVector s(batch.begin(), batch.end());
  s.push_back(r);
  s.push_back(c);
  return s;
}

// The broadcast of two batch shapes, with PyTorch's message (a: B's batch, b: A's).
inline DimVector broadcast_batch(IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    EMBER_CHECK(da == db || da == 1 || db == 1, "The size of tensor a (", da, ") must match the size of tensor b (", db,
                ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// PyTorch names the failing matrix of a batch: "(Batch element 3): ".
inline std::string batch_prefix(bool batched, int64_t i) {
  return batched ? c10::str("(Batch element ", i, "): ") : std::string();
}

inline void check_floating(const Tensor& A, const char* name) {
  EMBER_CHECK(c10::isFloatingType(A.dtype()), name, ": Expected a floating point or complex tensor as input. Got ",
              c10::toString(A.dtype()));
  EMBER_CHECK_NOT_IMPLEMENTED(A.dtype() == ScalarType::Float || A.dtype() == ScalarType::Double, name,
                              ": not implemented for '", c10::toString(A.dtype()), "' (float32 and float64 only)");
}

inline void check_matrix(const Tensor& A, const char* name) {
  EMBER_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
}

inline void check_square(const Tensor& A, const char* name) {
  check_matrix(A, name);
  EMBER_CHECK(A.size(-1) == A.size(-2), name, ": A must be batches of square matrices, but they are ", A.size(-2),
              " by ", A.size(-1), " matrices");
}

// The checks of the ops on batches of square float32 / float64 matrices (det, slogdet,
// inv, cholesky).
inline void check_square_floating(const Tensor& A, const char* name) {
  check_matrix(A, name);
  check_floating(A, name);
  check_square(A, name);
}

// ---- the messages of a failed factorization (matrix b of a batch), PyTorch's ----

inline void check_inv_info(int info, bool batched, int64_t b) {
  EMBER_CHECK_LINALG(info <= 0, "linalg.inv: ", batch_prefix(batched, b), "The diagonal element ", info,
                     " is zero, the inversion could not be completed because the input matrix is singular.");
}

inline void check_solve_info(int info, bool batched, int64_t b) {
  EMBER_CHECK_LINALG(info <= 0, "torch.linalg.solve: ", batch_prefix(batched, b),
                     "The solver failed because the input matrix is singular.");
}

inline void check_cholesky_info(int info, bool batched, int64_t b) {
  EMBER_CHECK_LINALG(info <= 0, "linalg.cholesky: ", batch_prefix(batched, b),
                     "The factorization could not be completed because the input is not positive-definite (the "
                     "leading minor of order ",
                     info, " is not positive-definite).");
}

inline void check_svd_finite(bool finite, bool batched, int64_t b) {
  EMBER_CHECK_LINALG(finite, "linalg.svd: ", batch_prefix(batched, b),
                     "The algorithm failed to converge because the input matrix contained non-finite values.");
}

inline void check_svd_info(int info, bool batched, int64_t b) {
  EMBER_CHECK_LINALG(info == 0, "linalg.svd: ", batch_prefix(batched, b),
                     "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                     "many repeated singular values (error code: ",
                     info, ").");
}

// linalg.solve's operands as a left solve of a batch: AX = B (left) or XA = B, the
// latter as A^T X^T = B^T. B is a vector (or a batch of them) when it is 1-d or when its
// shape is A's without the last dim; it is then solved as a one-column matrix.
struct SolveOperands {
  Tensor A, B;      // A (..., n, n) and B (..., n, k) of the left solve, not yet broadcast
  DimVector batch;  // their broadcast batch shape
  int64_t n, k;
  bool left, vector_case;
  // X of the left solve (batch..., n, k) as linalg.solve's result
  Tensor result(const Tensor& x) const {
    Tensor r = left ? x : x.transpose(-2, -1);
    return vector_case ? r.squeeze(-1) : r;
  }
};

inline SolveOperands solve_operands(const Tensor& A, const Tensor& B, bool left) {
  check_matrix(A, "linalg.solve");
  check_floating(A, "linalg.solve");
  EMBER_CHECK(A.dtype() == B.dtype(), "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              c10::toString(A.dtype()), " and B of type ", c10::toString(B.dtype()), " instead");
  check_square(A, "linalg.solve");
  check_same_device("linalg.solve", A, B);
  const bool vector_case =
      B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == A.sizes().slice(0, static_cast<size_t>(A.dim() - 1)));
  const Tensor B2 = vector_case ? B.unsqueeze(-1) : B;
  EMBER_CHECK(B2.dim() >= 2, "linalg.solve: The input tensor B must have at least 1 dimension.");
  const int64_t n = A.size(-1);
  EMBER_CHECK(left ? B2.size(-2) == n : B2.size(-1) == n, "linalg.solve: Incompatible shapes of A and B for the ",
              left ? "equation AX = B (" : "equation XA = B (", A.size(-2), "x", A.size(-1), " and ", B2.size(-2), "x",
              B2.size(-1), ")");
  SolveOperands s;
  s.A = left ? A : A.transpose(-2, -1);
  s.B = left ? B2 : B2.transpose(-2, -1);
  s.batch = broadcast_batch(batch_shape(s.B), batch_shape(s.A));
  s.n = n;
  s.k = s.B.size(-1);
  s.left = left;
  s.vector_case = vector_case;
  return s;
}

// linalg.qr's mode and input checked (as PyTorch, the mode first); the columns of Q (qc)
// and rows of R (rr) of the m x n matrices of A.
struct QrShape {
  bool compute_q;
  int64_t m, n, k, qc, rr;
};

inline QrShape qr_shape(const std::string& mode, const Tensor& A) {
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(A, "linalg.qr");
  check_floating(A, "linalg.qr");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  return {mode != "r", m, n, k, mode == "complete" ? m : k, mode == "complete" ? m : k};
}

// _linalg_svd's results, allocated: S (batch..., k), and U, Vh in Fortran order when
// compute_uv (empty tensors otherwise).
struct SvdOutputs {
  Tensor u, s, vh;
};

inline SvdOutputs svd_outputs(const Tensor& A, bool full_matrices, bool compute_uv) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const DimVector batch = batch_shape(A);
  DimVector s_shape(batch);
  s_shape.push_back(k);
  SvdOutputs o;
  o.s = empty(s_shape, A.dtype(), A.device());
  if (compute_uv) {
    o.u = empty_fortran(with_matrix(batch, m, full_matrices ? m : k), A.dtype(), A.device());
    o.vh = empty_fortran(with_matrix(batch, full_matrices ? n : k, n), A.dtype(), A.device());
  } else {
    o.u = empty({0}, A.dtype(), A.device());
    o.vh = empty({0}, A.dtype(), A.device());
  }
  return o;
}

// Writes `result` into out= (checked dtype and device, resized) or returns it.
inline Tensor set_output(const Tensor& out, const Tensor& result) {
  if (!out.defined()) return result;
  EMBER_CHECK(out.dtype() == result.dtype(), "Expected out tensor to have dtype ", blas_cpp_type_name(result.dtype()),
              ", but got ", blas_cpp_type_name(out.dtype()), " instead");
  EMBER_CHECK(out.device() == result.device(), "Expected out tensor to be on device ", result.device(), ", but got ",
              out.device());
  resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

// The i-th matrix of a Fortran-order batch (an empty matrix counts as 1 x 1 for the step).
template <typename T>
T* matrix_ptr(const Tensor& fortran, int64_t i) {
  const int64_t step = std::max<int64_t>(fortran.size(-2), 1) * std::max<int64_t>(fortran.size(-1), 1);
  return static_cast<T*>(fortran.data_ptr()) + i * step;
}

}  // namespace ember::at::native::linalg
