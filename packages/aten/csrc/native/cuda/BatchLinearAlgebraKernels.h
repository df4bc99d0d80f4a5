#pragma once
// The small CUDA kernels around cuSOLVER's factorizations (BatchLinearAlgebraCUDA.cpp):
// the determinant from an LU factorization, triangle extraction, identity matrices and
// a non-finite check. Every matrix argument is a batch of matrices in "Fortran order"
// (each matrix column-major with leading dimension max(rows, 1), matrix after matrix
// max(rows, 1) * max(cols, 1) elements apart), as BatchLinearAlgebraCUDA.cpp allocates
// them. float32 / float64. All run on the current stream of the tensors' device and
// launch nothing for empty tensors.
//
// Plain C++ (no cuda_runtime.h).

#include <ember/aten/Tensor.h>

namespace ember::at::native::cuda_linalg {

// From the LU factors `lu` (..., n, n) and the 1-based pivots `pivots` (int32, batch x n)
// of getrf: det (keep_log false) or sign and log|det| (keep_log true) of each matrix,
// written to the contiguous `out0` (and `out1`) of batch elements. n > 0.
void det_from_lu(const Tensor& lu, const Tensor& pivots, const Tensor& out0, const Tensor& out1, bool keep_log);

// Which entries of a matrix masked_copy keeps.
enum class Keep { kAll, kLower, kUpper };  // every entry; i >= j; i <= j

// dst[b][i, j] = src[b][i, j] where (i, j) is inside src and kept, else 0. src may be
// dst itself (in place); both Fortran order with the same batch count.
void masked_copy(const Tensor& src, const Tensor& dst, Keep keep);

// Every matrix of dst the identity (ones on the diagonal, zeros elsewhere).
void fill_identity(const Tensor& dst);

// flags (int32, zeroed, one per matrix) set to 1 for each matrix of `a` that holds a NaN
// or an infinity. `a` may also be C-contiguous (matrix b is elements [b, b + 1) * rows * cols).
void flag_nonfinite(const Tensor& a, const Tensor& flags);

}  // namespace ember::at::native::cuda_linalg
