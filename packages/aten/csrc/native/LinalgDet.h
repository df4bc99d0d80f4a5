#pragma once
// The determinant of one matrix from its LU factorization (getrf's factors and 1-based
// pivots, each matrix column-major n x n): one formula for the CPU kernel
// (BatchLinearAlgebra.cpp, LAPACK) and the CUDA kernel (cuda/BatchLinearAlgebraKernels.cu,
// cuSOLVER).
#include <cstdint>

#include "HostDevice.h"
#include "ScalarMath.h"

namespace ember::at::native::linalg {

// det (keep_log false: into *out0) or its sign and log|det| (into *out0 and *out1): the
// product of U's diagonal, its sign flipped by every row exchange. A zero pivot (a
// singular matrix) is no error: det 0, sign 0 and log|det| -inf.
template <typename T>
EMBER_HOST_DEVICE inline void det_from_lu(const T* a, const int* piv, int64_t n, bool keep_log, T* out0, T* out1) {
  if (keep_log) {
    T sign = 1, la = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T d = a[i * n + i];
      if (piv[i] != i + 1) sign = -sign;
      if (d < 0) sign = -sign;
      if (d == 0) sign = 0;
      la += scalar_math::log(scalar_math::fabs(d));
    }
    *out0 = sign;
    *out1 = la;
  } else {
    T det = 1;
    for (int64_t i = 0; i < n; ++i) {
      det *= a[i * n + i];
      if (piv[i] != i + 1) det = -det;
    }
    *out0 = det;
  }
}

}  // namespace ember::at::native::linalg
