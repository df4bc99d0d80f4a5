// Matrix products: mm, bmm, addmm, addbmm, baddbmm, mv, addmv, dot, vdot (all through
// gemm_batched / dot_blas in Blas.cpp), addr and linalg.cross (elementwise loops over a
// TensorIterator). Each has one out kernel; the functional and in-place variants
// delegate to it (native_functions.yaml, section "linear algebra"). matmul, einsum,
// tensordot, kron, outer and the matrix norms are Python composites over these
// (ember/aten/native/linalg.py).
//
// Checks and messages follow PyTorch's, op by op (they differ between ops there too).
#include <ember/aten/Dispatch.h>
#include <ember/aten/TensorIterator.h>

#include "Blas.h"
#include "Cross.h"

namespace ember::at::native {

namespace {

std::string mat_str(const Tensor& t) { return c10::str(t.size(0), "x", t.size(1)); }

// out= checks shared by the GEMM family: the dtype must be the result's (no casting),
// then out is resized (PyTorch's resize_output rules).
Tensor gemm_out(const Tensor& out, IntArrayRef shape, ScalarType dtype, Device device) {
  if (!out.defined()) return empty(shape, dtype, device);
  EMBER_CHECK(out.dtype() == dtype, "Expected out tensor to have dtype ", blas_cpp_type_name(dtype), ", but got ",
              blas_cpp_type_name(out.dtype()), " instead");
  EMBER_CHECK(out.device() == device, "Expected out tensor to be on device ", device, ", but got ", out.device());
  resize_output(out, shape);
  return out;
}

void check_inplace_shape(const Tensor& self, IntArrayRef shape) {
  EMBER_CHECK(self.sizes() == IntArrayRef(shape), "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", shape, " should match");
}

bool is_zero(const Scalar& s) { return s.toDouble() == 0.0; }

// result (B, m, n) = beta * self + alpha * (a @ b), with self already broadcast to
// result's shape (or undefined: no self term). Computes into a temporary when result
// shares memory with an operand of the product.
void addmm_into(const Tensor& result, const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                const Scalar& alpha) {
  if (result.numel() == 0) return;
  const bool overlap = result.is_alias_of(a) || result.is_alias_of(b);
  Tensor c = overlap ? empty(result.sizes(), result.dtype(), result.device()) : result;
  Scalar eff_beta = beta;
  if (self.defined() && !is_zero(beta)) {
    // in place (self is result, maybe as another view): already there
    const bool same = self.data_ptr() == c.data_ptr() && self.sizes() == c.sizes() && self.strides() == c.strides();
    if (!same) c.copy_(self);
  } else {
    eff_beta = Scalar(0.0);
  }
  gemm_batched(c, a, b, eff_beta, alpha);
  if (overlap) result.copy_(c);
}

Tensor as_batch(const Tensor& t) { return t.unsqueeze(0); }

void check_mm_operands(const Tensor& m1, const Tensor& m2, const char* name1, const char* name2) {
  EMBER_CHECK(m1.dim() == 2, name1, " must be a matrix, got ", m1.dim(), "-D tensor");
  EMBER_CHECK(m2.dim() == 2, name2, " must be a matrix, got ", m2.dim(), "-D tensor");
  EMBER_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat_str(m1), " and ",
              mat_str(m2), ")");
}

void check_bmm_operands(const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t bs = b1.size(0), k = b1.size(2);
  EMBER_CHECK(b2.size(0) == bs && b2.size(1) == k, "Expected size for first two dimensions of batch2 tensor to be: [",
              bs, ", ", k, "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  EMBER_CHECK(b1.dtype() == b2.dtype(), "expected scalar type ", c10::toString(b1.dtype()), " but found ",
              c10::toString(b2.dtype()));
}

}  // namespace

// ---- mm / addmm -----------------------------------------------------------------------------

Tensor mm_out(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  EMBER_CHECK(self.dim() == 2, "self must be a matrix");
  EMBER_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  EMBER_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat_str(self), " and ",
              mat_str(mat2), ")");
  EMBER_CHECK(self.dtype() == mat2.dtype(),
              "expected m1 and m2 to have the same dtype, but got: ", blas_cpp_type_name(self.dtype()),
              " != ", blas_cpp_type_name(mat2.dtype()));
  check_same_device("mm", self, mat2);
  Tensor result = gemm_out(out, {self.size(0), mat2.size(1)}, self.dtype(), self.device());
  addmm_into(as_batch(result), Tensor(), as_batch(self), as_batch(mat2), Scalar(0.0), Scalar(int64_t{1}));
  return result;
}

Tensor addmm_out(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                 const Tensor& out) {
  EMBER_CHECK(self.dtype() == mat2.dtype(), "self and mat2 must have the same dtype, but got ",
              c10::toString(self.dtype()), " and ", c10::toString(mat2.dtype()));
  EMBER_CHECK(mat1.dtype() == mat2.dtype(), "mat1 and mat2 must have the same dtype, but got ",
              c10::toString(mat1.dtype()), " and ", c10::toString(mat2.dtype()));
  check_mm_operands(mat1, mat2, "mat1", "mat2");
  check_same_device("addmm", mat1, mat2);
  check_same_device("addmm", self, mat1);
  const DimVector shape{mat1.size(0), mat2.size(1)};
  if (out.defined() && out.is_same(self)) check_inplace_shape(self, shape);
  const Tensor self_b = self.expand(shape);
  Tensor result = gemm_out(out, shape, mat1.dtype(), mat1.device());
  addmm_into(as_batch(result), as_batch(self_b), as_batch(mat1), as_batch(mat2), beta, alpha);
  return result;
}

// ---- bmm / baddbmm / addbmm ------------------------------------------------------------------

Tensor bmm_out(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  check_bmm_operands(self, mat2);
  check_same_device("bmm", self, mat2);
  Tensor result = gemm_out(out, {self.size(0), self.size(1), mat2.size(2)}, self.dtype(), self.device());
  addmm_into(result, Tensor(), self, mat2, Scalar(0.0), Scalar(int64_t{1}));
  return result;
}

Tensor baddbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                   const Scalar& alpha, const Tensor& out) {
  EMBER_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  const DimVector shape{batch1.size(0), batch1.size(1), batch2.size(2)};
  if (out.defined() && out.is_same(self)) check_inplace_shape(self, shape);
  const Tensor self_b = self.expand(shape);
  EMBER_CHECK(self.dtype() == batch1.dtype() && self.dtype() == batch2.dtype(),
              "Input dtypes must be the same, got: input ", blas_cpp_type_name(self.dtype()),
              ", batch1: ", blas_cpp_type_name(batch1.dtype()), ", batch2: ", blas_cpp_type_name(batch2.dtype()));
  check_bmm_operands(batch1, batch2);
  check_same_device("baddbmm", self, batch1);
  check_same_device("baddbmm", batch1, batch2);
  Tensor result = gemm_out(out, shape, batch1.dtype(), batch1.device());
  addmm_into(result, self_b, batch1, batch2, beta, alpha);
  return result;
}

// sum_i batch1[i] @ batch2[i] is one GEMM: [b1_0 b1_1 ...] (m x B*k) @ [b2_0; b2_1; ...] (B*k x n).
Tensor addbmm_out(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                  const Scalar& alpha, const Tensor& out) {
  EMBER_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  EMBER_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
              batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  EMBER_CHECK(self.dtype() == batch2.dtype(), "self and mat2 must have the same dtype, but got ",
              c10::toString(self.dtype()), " and ", c10::toString(batch2.dtype()));
  EMBER_CHECK(batch1.dtype() == batch2.dtype(), "mat1 and mat2 must have the same dtype, but got ",
              c10::toString(batch1.dtype()), " and ", c10::toString(batch2.dtype()));
  check_same_device("addbmm", self, batch1);
  check_same_device("addbmm", batch1, batch2);
  const int64_t nb = batch1.size(0), m = batch1.size(1), k = batch1.size(2), n = batch2.size(2);
  const DimVector shape{m, n};
  if (out.defined() && out.is_same(self)) check_inplace_shape(self, shape);
  const Tensor self_b = self.expand(shape);
  Tensor result = gemm_out(out, shape, batch1.dtype(), batch1.device());
  const Tensor a = batch1.permute({1, 0, 2}).reshape({m, nb * k});
  const Tensor b = batch2.reshape({nb * k, n});
  addmm_into(as_batch(result), as_batch(self_b), as_batch(a), as_batch(b), beta, alpha);
  return result;
}

// ---- mv / addmv ---------------------------------------------------------------------------

namespace {

void check_addmv(const Tensor& self, const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", mat.dim(), ", ", vec.dim());
  EMBER_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.dim() == 0 ? 1 : self.size(0), "), mat (", mat_str(mat), "), vec (",
              vec.size(0), ")");
  EMBER_CHECK(mat.dtype() == vec.dtype() && mat.dtype() == self.dtype(),
              "addmv input tensors must have the same dtype, but got ", c10::toString(self.dtype()), ", ",
              c10::toString(mat.dtype()), ", and ", c10::toString(vec.dtype()));
  check_same_device("addmv", mat, vec);
  check_same_device("addmv", self, mat);
}

// (m,) result as the (1, m, 1) product of mat (1, m, k) and vec (1, k, 1)
void addmv_into(const Tensor& result, const Tensor& self_b, const Tensor& mat, const Tensor& vec, const Scalar& beta,
                const Scalar& alpha) {
  auto col = [](const Tensor& v) { return v.unsqueeze(1).unsqueeze(0); };
  addmm_into(col(result), self_b.defined() ? col(self_b) : Tensor(), as_batch(mat), col(vec), beta, alpha);
}

}  // namespace

Tensor mv_out(const Tensor& self, const Tensor& vec, const Tensor& out) {
  // PyTorch reports mv's checks as addmv's, with an empty result of vec's dtype as input
  const Tensor input = empty({self.dim() == 2 ? self.size(0) : 0}, vec.dtype(), vec.device());
  EMBER_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ", self.dim(), ", ",
              vec.dim());
  check_addmv(input, self, vec);
  Tensor result = gemm_out(out, {self.size(0)}, self.dtype(), self.device());
  addmv_into(result, Tensor(), self, vec, Scalar(0.0), Scalar(int64_t{1}));
  return result;
}

Tensor addmv_out(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
                 const Tensor& out) {
  check_addmv(self, mat, vec);
  const DimVector shape{mat.size(0)};
  if (out.defined() && out.is_same(self)) check_inplace_shape(self, shape);
  const Tensor self_b = self.expand(shape);
  Tensor result = gemm_out(out, shape, mat.dtype(), mat.device());
  addmv_into(result, self_b, mat, vec, beta, alpha);
  return result;
}

// ---- dot / vdot (real dtypes: the same product) -----------------------------------------------

namespace {

Tensor dot_common(const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  EMBER_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  EMBER_CHECK(self.dtype() == other.dtype(), name, " : expected both vectors to have same dtype, but found ",
              c10::toString(self.dtype()), " and ", c10::toString(other.dtype()));
  EMBER_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
              other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
              " elements respectively");
  check_same_device(name, self, other);
  Tensor r = dot_blas(self, other);
  if (!out.defined()) return r;
  EMBER_CHECK(out.dtype() == r.dtype(), "result dtype ", c10::toString(out.dtype()), " does not match input dtype ",
              c10::toString(r.dtype()));
  resize_output(out, {});
  out.copy_(r);
  return out;
}

}  // namespace

Tensor dot_out(const Tensor& self, const Tensor& tensor, const Tensor& out) {
  return dot_common(self, tensor, out, "dot");
}

Tensor vdot_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return dot_common(self, other, out, "dot");
}

// ---- addr: beta * self + alpha * outer(vec1, vec2), with type promotion (bool too) ------------

namespace {

template <typename T>
void addr_loop(TensorIterator& iter, const Scalar& beta, const Scalar& alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    // bool: beta * self -> beta && self, + -> ||, * -> &&
    const bool b = beta.toBool(), a = alpha.toBool();
    iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
      const int nt = iter.ntensors();
      for (int64_t j = 0; j < n1; ++j) {
        char* o = data[0] + j * strides[nt];
        const char* s = data[1] + j * strides[nt + 1];
        const char* x = data[2] + j * strides[nt + 2];
        const char* y = data[3] + j * strides[nt + 3];
        for (int64_t i = 0; i < n0; ++i) {
          const bool sv = b && *reinterpret_cast<const bool*>(s + i * strides[1]);
          const bool pv = a && *reinterpret_cast<const bool*>(x + i * strides[2]) &&
                          *reinterpret_cast<const bool*>(y + i * strides[3]);
          *reinterpret_cast<bool*>(o + i * strides[0]) = sv || pv;
        }
      }
    });
  } else {
    using acc_t = opmath_t<T>;
    const acc_t b = beta.to<acc_t>(), a = alpha.to<acc_t>();
    const bool use_self = !(b == acc_t(0));  // beta == 0: self is ignored (NaN too)
    iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
      const int nt = iter.ntensors();
      for (int64_t j = 0; j < n1; ++j) {
        char* o = data[0] + j * strides[nt];
        const char* s = data[1] + j * strides[nt + 1];
        const char* x = data[2] + j * strides[nt + 2];
        const char* y = data[3] + j * strides[nt + 3];
        for (int64_t i = 0; i < n0; ++i) {
          const acc_t xv = static_cast<acc_t>(*reinterpret_cast<const T*>(x + i * strides[2]));
          const acc_t yv = static_cast<acc_t>(*reinterpret_cast<const T*>(y + i * strides[3]));
          acc_t r = a * xv * yv;
          if (use_self) r = b * static_cast<acc_t>(*reinterpret_cast<const T*>(s + i * strides[1])) + r;
          *reinterpret_cast<T*>(o + i * strides[0]) = static_cast<T>(r);
        }
      }
    });
  }
}

}  // namespace

// addr's checks (PyTorch's), output and type-promoting iterator over (out, self, vec1 column,
// vec2 row): shared with the CUDA kernel (cuda/LinearAlgebra.cu).
TensorIterator addr_iterator(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                             const Scalar& alpha, const Tensor& out) {
  EMBER_CHECK(vec1.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const DimVector shape{vec1.size(0), vec2.size(0)};
  if (out.defined() && out.is_same(self)) {
    EMBER_CHECK(self.dim() == 2, "2D tensor expected, got ", self.dim(), "D tensor for input");
    check_inplace_shape(self, shape);
  }
  const Tensor self_b = self.expand(shape);
  auto iter = TensorIteratorConfig()
                  .name("addr")
                  .add_output(out)
                  .add_input(self_b)
                  .add_input(vec1.unsqueeze(1))
                  .add_input(vec2.unsqueeze(0))
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .enforce_safe_casting_to_output(true)
                  .build();
  const ScalarType t = iter.common_dtype();
  if (t != ScalarType::Bool) {
    EMBER_CHECK(!beta.isBoolean(), "Boolean beta only supported for Boolean results.");
    EMBER_CHECK(!alpha.isBoolean(), "Boolean alpha only supported for Boolean results.");
  }
  if (c10::isIntegralType(t, /*includeBool=*/true)) {
    EMBER_CHECK(!beta.isFloatingPoint(),
                "For integral input tensors, argument beta must not be a floating point number.");
    EMBER_CHECK(!alpha.isFloatingPoint(),
                "For integral input tensors, argument alpha must not be a floating point number.");
  }
  return iter;
}

Tensor addr_out(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha,
                const Tensor& out) {
  TensorIterator iter = addr_iterator(self, vec1, vec2, beta, alpha, out);
  const ScalarType t = iter.common_dtype();
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(t, "addr", [&] { addr_loop<scalar_t>(iter, beta, alpha); });
  return iter.output();
}

// ---- linalg.cross: the cross product of 3-vectors along `dim` ---------------------------------

namespace {

template <typename T>
void cross_loop(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  // so / sa / sb: byte strides along the crossed dim of out, self, other
  iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    const int nt = iter.ntensors();
    for (int64_t j = 0; j < n1; ++j) {
      for (int64_t i = 0; i < n0; ++i) {
        char* o = data[0] + j * strides[nt] + i * strides[0];
        const char* a = data[1] + j * strides[nt + 1] + i * strides[1];
        const char* b = data[2] + j * strides[nt + 2] + i * strides[2];
        auto A = [&](int c) { return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(a + c * sa)); };
        auto B = [&](int c) { return static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(b + c * sb)); };
        const auto x = A(1) * B(2) - A(2) * B(1);
        const auto y = A(2) * B(0) - A(0) * B(2);
        const auto z = A(0) * B(1) - A(1) * B(0);
        *reinterpret_cast<T*>(o) = static_cast<T>(x);
        *reinterpret_cast<T*>(o + so) = static_cast<T>(y);
        *reinterpret_cast<T*>(o + 2 * so) = static_cast<T>(z);
      }
    }
  });
}

void cross_cpu(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "cross", [&] { cross_loop<scalar_t>(iter, so, sa, sb); });
}

}  // namespace

REGISTER_BASELINE_DISPATCH(cross_stub, &cross_cpu);
DEFINE_DISPATCH(cross_stub);

Tensor linalg_cross_out(const Tensor& self, const Tensor& other, int64_t dim, const Tensor& out) {
  EMBER_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  EMBER_CHECK(self.dtype() == other.dtype(), "expected scalar type ", c10::toString(self.dtype()), " but found ",
              c10::toString(other.dtype()));
  check_same_device("linalg.cross", self, other);
  const DimVector shape = infer_size(self.sizes(), other.sizes(), "linalg.cross");
  Tensor result;
  if (!out.defined()) {
    result = empty(shape, self.dtype(), self.device());
  } else {
    check_same_device("linalg.cross", self, out);
    EMBER_CHECK(out.dtype() == self.dtype(), "linalg.cross: expected out tensor to have dtype ",
                c10::toString(self.dtype()), ", but got ", c10::toString(out.dtype()), " instead");
    resize_output(out, shape);
    result = out;
  }
  if (result.numel() == 0) return result;
  const Tensor a = self.expand(shape), b = other.expand(shape);
  const bool overlap = result.is_alias_of(a) || result.is_alias_of(b);
  Tensor o = overlap ? empty(shape, result.dtype(), result.device()) : result;
  // iterate over every position but the crossed dim (index 0 of it); the loop reaches the
  // other two components through the dim's stride
  auto iter = TensorIteratorConfig()
                  .name("linalg.cross")
                  .add_output(o.select(d, 0))
                  .add_input(a.select(d, 0))
                  .add_input(b.select(d, 0))
                  .resize_outputs(false)
                  .check_mem_overlap(false)
                  .build();
  const int64_t item = static_cast<int64_t>(o.itemsize());
  cross_stub(iter.device_type(0), iter, o.stride(d) * item, a.stride(d) * item, b.stride(d) * item);
  if (overlap) result.copy_(o);
  return result;
}

}  // namespace ember::at::native
