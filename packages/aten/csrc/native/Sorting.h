#pragma once
// Sorting along one dim (kernels in cpu/SortingKernel.cpp and cuda/Sort.cu), used by
// sort, argsort, topk, kthvalue, median, nanmedian, mode and unique.
//
// Order: ascending or descending by value, NaN counted as larger than +inf, -0.0
// equal to 0.0, equal values kept in their input order (stable) in both directions.
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct SortPlan {
  const void* in = nullptr;  // element 0 of the input
  ScalarType dtype = ScalarType::Undefined;
  int64_t n = 1;           // length of the sorted dim
  int64_t in_stride = 1;   // input element stride along it
  void* values = nullptr;  // sorted values (may be null); shares its strides with indices
  int64_t* indices = nullptr;
  int64_t out_stride = 1;                                      // output element stride along the sorted dim
  DimVector batch_sizes, batch_in_strides, batch_out_strides;  // the other dims
  int64_t rows = 1;                                            // product of batch_sizes
  bool descending = false;
  Device device;  // the input's device (CUDA kernels make it current)
};

using sort_fn = void (*)(const SortPlan&);
DECLARE_DISPATCH(sort_fn, sort_stub);

// Sorts `self` along `dim` into `values` (may be undefined) and `indices` (int64):
// tensors of self's shape whose strides the kernel follows (values and indices must
// have equal strides).
void sort_into(const Tensor& self, int64_t dim, bool descending, const Tensor& values, const Tensor& indices);

// Sorted rows: self's shape, laid out with `dim` innermost, so row r (the other dims
// in row-major order) is data[r * n, (r + 1) * n).
struct SortedRows {
  Tensor values;  // undefined unless asked for
  Tensor indices;
  int64_t rows = 0;
  int64_t n = 0;
};
SortedRows sort_rows(const Tensor& self, int64_t dim, bool descending, bool want_values);

// median, nanmedian and mode read their answer off ascending sorted rows (CPU kernel in
// Sorting.cpp, CUDA kernel in cuda/Sort.cu): for each row r, the value and index at the
// chosen position go to out_values[r] (of the input dtype) and out_indices[r] (contiguous
// tensors of s.rows elements). kthvalue gets unsorted scratch rows (values a contiguous
// copy, indices uninitialised) and selects in place (SortedPick.h's select_kth).
enum class SortedPick : int { Kth, Median, NanMedian, Mode };
using pick_sorted_fn = void (*)(SortedPick kind, const SortedRows& s, int64_t k, const Tensor& out_values,
                                const Tensor& out_indices);
DECLARE_DISPATCH(pick_sorted_fn, pick_sorted_stub);

}  // namespace ember::at::native
