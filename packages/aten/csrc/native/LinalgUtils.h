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
