#pragma once
// Indexing kernels: x[idx] / x[idx] = v (index, index_put_), index_select, gather,
// scatter*, index_add/copy/fill/reduce, masked_*, take/put_, nonzero.
//
// The "restride" idea (as PyTorch's index kernels): every gather/scatter-like op
// is phrased as one TensorIterator over
//     [dst, src, idx_0, ..., idx_{k-1}]
// where the tensor being indexed (src for reads, dst for writes) is a view of the
// *result* shape whose indexed dims have stride 0, and each idx_j is an int64
// tensor broadcast to that shape. The element to touch is then
//     base + sum_j idx_j * stride_j        (stride_j: the indexed dim's byte stride)
// so one small loop (per element size, not per dtype) serves index, index_select,
// gather, take, index_put_, index_copy, index_fill, scatter, put_.
//
// Bounds: read kernels check each index just before using it (an error raised in
// an OpenMP chunk is rethrown after the parallel region); write kernels validate
// all indices first (check_index_range), so a failing call leaves self untouched.
//
// CUDA (cuda/Indexing.cu, cuda/AdvancedIndexing.cu): the same stubs, one thread per
// element. Indices are checked on the device, where a bad one is recorded with
// report_index_error (its element is skipped) and raised as IndexError by the next
// check_device_errors (the next indexing launch, device-to-host copy or
// synchronize). check_index_range does nothing for CUDA indices, so a failing write
// may have written the elements whose indices were valid.

#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// How an index is bounds-checked and how its error is worded.
enum class IndexMode : int8_t {
  Wrap,    // -size <= i < size, negatives count from the end (x[idx], index_put_, index_fill)
  NoWrap,  // 0 <= i < size (gather, scatter, index_select, index_add, index_copy, index_reduce)
  Take,    // as Wrap, with take/put_'s message
};

// IndexError "index 5 is out of bounds for dimension 0 with size 3" (or take's wording).
[[noreturn]] void throw_index_out_of_range(int64_t index, int64_t dim, int64_t size, IndexMode mode);

// Checks every value of an int64 `index` against `size` (whole tensor, before any write).
void check_index_range(const Tensor& index, int64_t size, int64_t dim, IndexMode mode);

// Runs f, re-raising an out-of-range index as RuntimeError: PyTorch's gather and scatter* word
// it as IndexError does ("index 5 is out of bounds for dimension 0 with size 3") but raise
// RuntimeError.
template <typename F>
void index_error_as_runtime_error(const F& f) {
  try {
    f();
  } catch (const c10::IndexError& e) {
    throw c10::Error(e.msg());
  }
}

// One indexed dimension: its size, its byte stride in the indexed tensor, and the
// dim number reported in errors.
struct IndexedDim {
  int64_t size;
  int64_t stride_bytes;
  int64_t dim;
};
using IndexedDims = c10::SmallVector<IndexedDim, 4>;

// The byte offset index value v selects along d (negatives wrapped unless NoWrap);
// throws before anything is touched when v is out of range.
inline int64_t index_offset(int64_t v, const IndexedDim& d, IndexMode mode) {
  int64_t w = v;
  if (w < 0 && mode != IndexMode::NoWrap) w += d.size;
  if (EMBER_UNLIKELY(static_cast<uint64_t>(w) >= static_cast<uint64_t>(d.size))) {
    throw_index_out_of_range(v, d.dim, d.size, mode);
  }
  return w * d.stride_bytes;
}

// iter = [out, src, idx...]: out[i] = src[i + offset(idx[i])] (element copy).
// `op` names the operator in the device-side errors of the CUDA kernels ("gather()").
using index_fn = void (*)(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op);
DECLARE_DISPATCH(index_fn, index_stub);
// iter = [dst, values, idx...]: dst[i + offset(idx[i])] = values[i] (no accumulation).
DECLARE_DISPATCH(index_fn, index_put_stub);

// iter = [self, mask(bool)]: self[i] = *value where mask[i]; value points at one element of self's dtype.
using masked_fill_fn = void (*)(TensorIterator& iter, const void* value);
DECLARE_DISPATCH(masked_fill_fn, masked_fill_stub);

// Row-major (logical order) compaction: self and mask have the same sizes (mask bool,
// broadcast strides allowed). masked_select returns the selected elements in a new
// 1-d tensor; masked_scatter writes source's leading elements (contiguous, self's
// dtype) into self where mask is set (RuntimeError, before writing, if source is short).
using masked_select_fn = Tensor (*)(const Tensor& self, const Tensor& mask);
DECLARE_DISPATCH(masked_select_fn, masked_select_stub);
using masked_scatter_fn = void (*)(const Tensor& self, const Tensor& mask, const Tensor& source);
DECLARE_DISPATCH(masked_scatter_fn, masked_scatter_stub);
// nonzero: the [n, ndim] int64 coordinates of self's non-zero elements, row-major.
using nonzero_fn = Tensor (*)(const Tensor& self);
DECLARE_DISPATCH(nonzero_fn, nonzero_stub);

// ---- shared helpers (Indexing.cpp) ----

// A 0-dim tensor seen as 1-d of size 1 (scatter/gather/index_* treat scalars so).
Tensor ensure_1d(const Tensor& t);
// The C type name PyTorch prints for a dtype in some messages ("unsigned char", "float").
const char* c_type_name(ScalarType t);
// RuntimeError unless t is free of internal overlap (an expanded tensor cannot be written).
void check_no_internal_overlap(const Tensor& t, const char* op);
// The result of an out-of-place op written through its out= / in-place / functional
// variants: undefined out -> a clone of self; out is self -> self; else out is
// checked (dtype), resized to self's shape and filled with self.
Tensor prepare_out_like_self(const Tensor& self, const Tensor& out, const char* op);
// index given to index_select / index_add / ...: 0-d or 1-d, int32/int64; returns an int64 1-d tensor.
Tensor check_vector_index(const Tensor& index, const char* op, bool allow_int32);

// The accumulate loop shared by index_put_(accumulate=True), index_add_,
// scatter(reduce=...), scatter_reduce, index_reduce, put_(accumulate=True):
// iter = [dst, src, idx...] (dst restrided), dst[i + offset] = op(dst[..], src[i]).
// CPU: serial, so duplicate indices accumulate exactly and deterministically.
// CUDA: atomics (index_reduce_stub), so floating-point sums and products over
// duplicate indices are not deterministic (as in PyTorch).
enum class ReduceOp : int8_t { Assign, Add, Mul, Max, Min };
void index_reduce_serial(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op,
                         const Scalar& alpha, const char* name);
// Its per-device kernel (CPU: the serial loop in TensorAdvancedIndexing.cpp).
using index_reduce_fn = void (*)(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op,
                                 const Scalar& alpha, const char* name);
DECLARE_DISPATCH(index_reduce_fn, index_reduce_stub);
// iter = [self, count(int64)]: self[i] /= count[i] where count[i] > 0 (floor division for
// integers, bool unchanged) -- the last step of reduce='mean'.
using divide_by_count_fn = void (*)(TensorIterator& iter);
DECLARE_DISPATCH(divide_by_count_fn, divide_by_count_stub);

// Index tensors must live on self's device: RuntimeError (PyTorch's "Expected all
// tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
// otherwise. `what` names the argument in the message's tail.
void check_same_device(const Tensor& self, const Tensor& other, const char* what, const char* op);

// Builds [dst, src, idx...] with the configuration every index kernel uses.
TensorIterator make_index_iter(const Tensor& dst, const Tensor& src, const std::vector<Tensor>& indices,
                               const char* name);

}  // namespace ember::at::native
