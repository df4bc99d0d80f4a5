#pragma once
// Shared by Embedding.cpp and cuda/Embedding.cu: argument checks, the host-side layout
// of embedding_bag (indices and offsets are read on the host; for CUDA tensors that is a
// device-to-host copy), and the per-element formulas both kernels run.
#include <cstdint>
#include <optional>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Tensor.h>

#include "HostDevice.h"

namespace ember::at::native {

// indices must be int64 or int32 (PyTorch's message, naming argument `arg` of `op`).
void check_indices_dtype(const Tensor& indices, const char* arg, const char* op);

namespace embedding {

// embedding's checks of weight and indices.
void check_embedding_args(const Tensor& weight, const Tensor& indices);
// embedding_dense_backward's checks; returns the embedding dim D of grad_output.
int64_t dense_backward_dim(const Tensor& grad_output, const Tensor& indices, int64_t num_weights);

std::vector<int64_t> index_values(const Tensor& indices);  // as int64, on the host
// IndexError "index out of range in self" unless every index is in [0, num_weights)
void check_index_range(const std::vector<int64_t>& idx, int64_t num_weights);

// CSR grouping of positions by destination row: pos[start[r] .. start[r+1]) are the
// positions i with dest[i] == r, in increasing order. dest < 0 is skipped.
struct Groups {
  std::vector<int64_t> start, pos;
};
Groups group_by_row(const std::vector<int64_t>& dest, int64_t num_rows);

struct Bags {
  int64_t B = 0;
  std::vector<int64_t> begin, end;  // index range of each bag
};
Bags make_bags(const std::vector<int64_t>& off, int64_t n, bool include_last_offset);

Tensor int64_tensor(const std::vector<int64_t>& v, Device device);  // a 1-d int64 tensor on `device`
void check_bag_mode(int64_t mode);
std::vector<int64_t> flat_indices(const Tensor& indices);  // 1-d or 2-d indices, flattened

// _embedding_bag's checks and bags.
struct BagPlan {
  std::vector<int64_t> idx;         // the flattened indices
  Bags bags;                        // index range of each bag
  std::vector<int64_t> offset2bag;  // bag of each index
  Tensor psw;                       // per_sample_weights, contiguous (undefined: none)
};
BagPlan plan_embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                           const std::optional<Tensor>& per_sample_weights, bool include_last_offset,
                           const char* kernel);

// _embedding_bag_dense_backward's / _embedding_bag_per_sample_weights_backward's checks.
struct BagBackwardPlan {
  std::vector<int64_t> idx, o2b, bag_size;
  std::vector<int64_t> max_idx;  // [B * D], max mode only
  Tensor psw;                    // per_sample_weights in grad's dtype, contiguous (undefined: none)
};
BagBackwardPlan plan_embedding_bag_backward(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                                            const Tensor& bag_size, const Tensor& maximum_indices, int64_t num_weights,
                                            int64_t mode, const std::optional<Tensor>& per_sample_weights);
// idx and o2b only
BagBackwardPlan plan_per_sample_weights_backward(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                                 const Tensor& offset2bag, int64_t mode);

// The grad_weight row each backward contribution goes to (-1: none): an index (padding_idx
// none) for embedding and for embedding_bag's sum and mean, and in max mode, for each
// (bag, column) of grad, the row that held the max (none for an empty bag).
std::vector<int64_t> rows_without_padding(const std::vector<int64_t>& idx, int64_t padding_idx);
std::vector<int64_t> bag_backward_rows(const BagBackwardPlan& plan, int64_t D, int64_t mode, int64_t padding_idx);

EMBER_FORMULAS_BEGIN

// max mode: whether value v replaces the bag's running max acc (arg < 0: nothing taken
// yet); a NaN replaces any value and, once taken, stays.
template <typename A>
EMBER_HOST_DEVICE inline bool bag_max_replaces(A v, A acc, int64_t arg) {
  return (arg < 0 || v > acc || v != v) && (arg < 0 || acc == acc);
}

// The factor of a bag's sum: 1 / count in mean mode (mode 1) for a bag that is not empty.
template <typename A>
EMBER_HOST_DEVICE inline A bag_scale(int64_t mode, int64_t count) {
  return mode == 1 && count > 0 ? A(1) / static_cast<A>(count) : A(1);
}

// The factor of a grad_weight row that gets `count` contributions: 1 / count with
// scale_grad_by_freq.
template <typename A>
EMBER_HOST_DEVICE inline A freq_scale(bool scale_grad_by_freq, int64_t count) {
  return scale_grad_by_freq ? A(1) / static_cast<A>(count) : A(1);
}

// sum_j a[j] * b[j] over two rows of D elements, in opmath_t (per_sample_weights' gradient).
template <typename T>
EMBER_HOST_DEVICE inline opmath_t<T> row_dot(const T* a, const T* b, int64_t D) {
  using A = opmath_t<T>;
  A s = A(0);
  for (int64_t j = 0; j < D; ++j) s += static_cast<A>(a[j]) * static_cast<A>(b[j]);
  return s;
}

EMBER_FORMULAS_END

}  // namespace embedding
}  // namespace ember::at::native
