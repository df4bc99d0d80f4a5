#pragma once
// gemm_batched_cuda's plan (CUDABlas.cpp): the operands cuBLAS can read as they are (or
// contiguous copies), a temporary for an output it cannot write, the transposed problem for a
// column-major output -- as a template over the BLAS that runs the products
// (`Blas::gemm_strided_batched`, CUDABlas.h's signature). CUDABlas.cpp instantiates it with
// cuBLAS; the test-only module ember_aten_testing with its host emulation of cuBLAS, so tests
// check every call planned here on CPU tensors. Plain C++ (no cuda_runtime.h).
#include <climits>
#include <cstdint>

#include <ember/c10/DeviceGuard.h>

#include "../Blas.h"
#include "CUDABlas.h"

namespace ember::at::native {
// BinaryOps.cpp (device-agnostic through TensorIterator)
Tensor mul_out(const Tensor& self, const Tensor& other, const Tensor& out);
}  // namespace ember::at::native

namespace ember::at::native::cuda_gemm {

inline bool is_cublas_dtype(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}

// A 3-d operand cuBLAS can read matrix by matrix (see blas_operand), or a contiguous copy.
struct BatchOperand {
  Tensor t;
  BlasOperand op;
};

inline BatchOperand batch_operand(const Tensor& t) {
  BlasOperand op = blas_operand(t.size(1), t.size(2), t.stride(1), t.stride(2));
  if (op.ok && op.ld <= INT_MAX) return {t, op};
  Tensor c = t.contiguous();
  return {c, blas_operand(c.size(1), c.size(2), c.stride(1), c.stride(2))};
}

// gemm_batched_cuda (Blas.h) with Blas's products.
template <typename Blas>
void gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  // PyTorch's CUDA matmuls are floating-point only
  EMBER_CHECK_NOT_IMPLEMENTED(is_cublas_dtype(out.dtype()), "addmm_cuda: not implemented for dtype ",
                              c10::toPythonName(out.dtype()));
  c10::DeviceGuard guard(out.device());
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const bool beta_zero = beta.toDouble() == 0.0 && !beta.isBoolean();
  if (k == 0) {  // op(A) op(B) is zero: out = beta * out (beta == 0: zeros, NaN ignored)
    if (beta_zero) {
      out.zero_();
    } else if (beta.toDouble() != 1.0) {
      mul_out(out, wrapped_scalar_tensor(beta), out);
    }
    return;
  }
  BatchOperand A = batch_operand(a), B = batch_operand(b);
  // C must be row-major (or its transpose); other layouts, and a batch whose matrices
  // overlap, are computed in a contiguous temporary and copied back.
  BlasOperand C = blas_operand(m, n, out.stride(1), out.stride(2));
  Tensor c_tmp;
  if (!C.ok || C.ld > INT_MAX || (batch > 1 && out.stride(0) == 0)) {
    c_tmp = beta_zero ? empty(out.sizes(), out.dtype(), out.device()) : out.contiguous();
    C = blas_operand(m, n, c_tmp.stride(1), c_tmp.stride(2));
  }
  const Tensor& c_t = c_tmp.defined() ? c_tmp : out;
  const bool tf32 = cublas_allow_tf32();
  const double al = alpha.toDouble(), be = beta_zero ? 0.0 : beta.toDouble();
  const int64_t sa = batch > 1 ? A.t.stride(0) : 0, sb = batch > 1 ? B.t.stride(0) : 0;
  const int64_t sc = batch > 1 ? c_t.stride(0) : 0;
  if (!C.trans) {
    Blas::gemm_strided_batched(out.dtype(), A.op.trans, B.op.trans, m, n, k, al, A.t.data_ptr(), A.op.ld, sa,
                               B.t.data_ptr(), B.op.ld, sb, be, c_t.data_ptr(), C.ld, sc, batch, tf32);
  } else {
    // a column-major C: C^T = op(B)^T op(A)^T, the operands swapped and their transposes flipped
    Blas::gemm_strided_batched(out.dtype(), !B.op.trans, !A.op.trans, n, m, k, al, B.t.data_ptr(), B.op.ld, sb,
                               A.t.data_ptr(), A.op.ld, sa, be, c_t.data_ptr(), C.ld, sc, batch, tf32);
  }
  if (c_tmp.defined()) out.copy_(c_tmp);
}

}  // namespace ember::at::native::cuda_gemm
