#pragma once
// searchsorted and bucketize: the argument checks and preparation both backends share
// (Bucketization.cpp, whose operators serve both devices), the binary search each
// element runs, and the stub of the search loop (the CPU loop in Bucketization.cpp, the
// CUDA kernel in cuda/Bucketization.cu).
//
// Every row of `boundaries` is sorted (or put in order by `sorter`); the search for value v
// returns the first position whose boundary is >= v (left) or > v (right). The comparisons
// are written as PyTorch's `!(b >= v)` / `!(b > v)`, so a NaN boundary or value gives the
// positions PyTorch gives.
#include <cstdint>
#include <optional>
#include <string>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

#include "HostDevice.h"

namespace ember::at::native {

template <typename scalar_t, typename acc_t>
EMBER_HOST_DEVICE inline int64_t bucketize_search(const scalar_t* row, const int64_t* sorter, int64_t n, acc_t v,
                                                  bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const acc_t b = static_cast<acc_t>(row[sorter ? sorter[mid] : mid]);
    const bool go_right = right ? !(b > v) : !(b >= v);
    if (go_right) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The position of the i-th value v of the flattened input: the search of its row of
// boundaries (inner values per row; inner 0: every value searches the only row).
template <typename scalar_t, typename acc_t>
EMBER_HOST_DEVICE inline int64_t bucketize_position(const scalar_t* boundaries, const int64_t* sorter, int64_t row_size,
                                                    int64_t inner, int64_t i, acc_t v, bool right) {
  const int64_t off = (inner ? i / inner : 0) * row_size;
  return bucketize_search<scalar_t, acc_t>(boundaries + off, sorter ? sorter + off : nullptr, row_size, v, right);
}

// The checked, contiguous operands of one call, in their common dtype.
struct BucketizePlan {
  Tensor boundaries;  // contiguous, dtype `dtype`
  Tensor input;       // contiguous, dtype `dtype`
  Tensor sorter;      // contiguous int64, or undefined
  Tensor result;      // what the op returns (the caller's out=, resized, or a new tensor)
  Tensor buffer;      // what the kernel writes: `result` or a contiguous tensor copied over by finish()
  ScalarType dtype;
  int64_t row_size;  // boundaries' last dimension
  int64_t inner;     // values per boundaries row (0: every value searches the only row)
  bool right;
  void finish() const {
    if (!buffer.is_same(result)) result.copy_(buffer);
  }
};

// `scalar_input`: the value came as a Scalar (only a 1-d boundaries tensor takes one).
BucketizePlan searchsorted_plan(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                                const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                                const Tensor& out, bool scalar_input);

// Writes the position of every value of p.input into p.buffer (p.input is not empty).
using bucketize_fn = void (*)(const BucketizePlan& p);
DECLARE_DISPATCH(bucketize_fn, bucketize_stub);

}  // namespace ember::at::native
