#pragma once
// Shared by Embedding.cpp and cuda/Embedding.cu: argument checks and the host-side
// layout of embedding_bag (indices and offsets are read on the host; for CUDA tensors
// that is a device-to-host copy).
#include <cstdint>
#include <optional>
#include <vector>

#include <ember/aten/Tensor.h>

namespace ember::at::native {

// indices must be int64 or int32 (PyTorch's message, naming argument `arg` of `op`).
void check_indices_dtype(const Tensor& indices, const char* arg, const char* op);

namespace embedding {

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

}  // namespace embedding
}  // namespace ember::at::native
