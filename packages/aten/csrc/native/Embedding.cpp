// Embedding lookups: embedding (rows of `weight` gathered by `indices`) and its dense
// backward, _embedding_bag (sum / mean / max over bags of indices, with offsets,
// per_sample_weights and padding_idx) and its backward.
//
// The backward kernels scatter-add rows into grad_weight. To stay parallel without
// atomics and deterministic, the positions are first grouped by destination row (a
// counting sort); each destination row then sums its contributions in index order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/ScalarType.h>

#include "Embedding.h"

namespace ember::at::native {

void check_indices_dtype(const Tensor& indices, const char* arg, const char* op) {
  EMBER_CHECK(indices.dtype() == ScalarType::Long || indices.dtype() == ScalarType::Int,
              "Expected tensor for argument #1 '", arg,
              "' to have one of the following scalar types: Long, Int; but got ", c10::toString(indices.dtype()),
              " instead (while checking arguments for ", op, ")");
}

namespace embedding {

std::vector<int64_t> index_values(const Tensor& indices) {
  Tensor l = (indices.dtype() == ScalarType::Long ? indices : indices.to(ScalarType::Long)).contiguous();
  if (!l.is_cpu()) l = l.to(Device(DeviceType::CPU));  // read on the host (CUDA: a device-to-host copy)
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

void check_index_range(const std::vector<int64_t>& idx, int64_t num_weights) {
  for (int64_t v : idx) EMBER_CHECK_INDEX(v >= 0 && v < num_weights, "index out of range in self");
}

void check_embedding_args(const Tensor& weight, const Tensor& indices) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_indices_dtype(indices, "indices", "embedding");
  check_same_device("embedding", weight, indices);
}

int64_t dense_backward_dim(const Tensor& grad_output, const Tensor& indices, int64_t num_weights) {
  check_indices_dtype(indices, "indices", "embedding_backward");
  EMBER_CHECK(c10::isFloatingType(grad_output.dtype()), "embedding_dense_backward: grad_output must be floating, got ",
              c10::toString(grad_output.dtype()));
  EMBER_CHECK(num_weights >= 0, "embedding_dense_backward: num_weights must be non-negative, got ", num_weights);
  check_same_device("embedding_dense_backward", grad_output, indices);
  const int64_t n = indices.numel();
  const int64_t D = grad_output.dim() == indices.dim() + 1 ? grad_output.size(-1) : (n ? grad_output.numel() / n : 0);
  EMBER_CHECK(grad_output.numel() == n * D, "embedding_dense_backward: grad_output of shape ",
              shape_str(grad_output.sizes()), " does not match indices of shape ", shape_str(indices.sizes()));
  return D;
}

std::vector<int64_t> rows_without_padding(const std::vector<int64_t>& idx, int64_t padding_idx) {
  std::vector<int64_t> dest(idx);
  for (int64_t& d : dest)
    if (d == padding_idx) d = -1;
  return dest;
}

std::vector<int64_t> bag_backward_rows(const BagBackwardPlan& plan, int64_t D, int64_t mode, int64_t padding_idx) {
  if (mode != 2) return rows_without_padding(plan.idx, padding_idx);
  const int64_t B = static_cast<int64_t>(plan.bag_size.size());
  std::vector<int64_t> dest(B * D);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < D; ++j) dest[b * D + j] = plan.bag_size[b] > 0 ? plan.max_idx[b * D + j] : -1;
  return dest;
}

Groups group_by_row(const std::vector<int64_t>& dest, int64_t num_rows) {
  Groups g;
  g.start.assign(num_rows + 1, 0);
  for (int64_t d : dest)
    if (d >= 0) ++g.start[d + 1];
  for (int64_t r = 0; r < num_rows; ++r) g.start[r + 1] += g.start[r];
  g.pos.resize(g.start[num_rows]);
  std::vector<int64_t> fill(g.start.begin(), g.start.end() - 1);
  for (int64_t i = 0; i < static_cast<int64_t>(dest.size()); ++i)
    if (dest[i] >= 0) g.pos[fill[dest[i]]++] = i;
  return g;
}

}  // namespace embedding

namespace {

using namespace embedding;

bool is_reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

}  // namespace

// ============================================================ embedding

Tensor embedding_cpu(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                     bool sparse) {
  check_embedding_args(weight, indices);
  const int64_t V = weight.size(0), D = weight.size(1);
  const std::vector<int64_t> idx = index_values(indices);
  check_index_range(idx, V);
  DimVector shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(D);
  Tensor out = at::empty(shape, weight.dtype(), weight.device());
  const Tensor w = weight.contiguous();
  const char* src = static_cast<const char*>(w.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const size_t row = static_cast<size_t>(D) * w.itemsize();
  parallel_for(0, static_cast<int64_t>(idx.size()), std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row, src + idx[i] * row, row);
               });
  return out;
}

namespace {

template <typename T>
void embedding_backward_impl(const Tensor& grad_weight, const Tensor& grad, const std::vector<int64_t>& idx,
                             int64_t padding_idx, bool scale_grad_by_freq) {
  using A = opmath_t<T>;
  const int64_t V = grad_weight.size(0), D = grad_weight.size(1);
  const T* g = grad.data_ptr<T>();
  T* gw = grad_weight.data_ptr<T>();
  const Groups groups = group_by_row(rows_without_padding(idx, padding_idx), V);
  parallel_for(0, V, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
    std::vector<A> acc(D);
    for (int64_t r = b; r < e; ++r) {
      const int64_t s0 = groups.start[r], s1 = groups.start[r + 1];
      if (s0 == s1) continue;
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t k = s0; k < s1; ++k) {
        const T* gr = g + groups.pos[k] * D;
        for (int64_t j = 0; j < D; ++j) acc[j] += static_cast<A>(gr[j]);
      }
      const A scale = freq_scale<A>(scale_grad_by_freq, s1 - s0);
      for (int64_t j = 0; j < D; ++j) gw[r * D + j] = static_cast<T>(acc[j] * scale);
    }
  });
}

}  // namespace

// grad_weight[r] = sum of grad_output over the positions whose index is r (not padding_idx),
// divided by that count when scale_grad_by_freq.
Tensor embedding_dense_backward_cpu(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  const int64_t D = dense_backward_dim(grad_output, indices, num_weights);
  const std::vector<int64_t> idx = index_values(indices);
  check_index_range(idx, num_weights);
  Tensor gw = at::zeros({num_weights, D}, grad_output.dtype(), grad_output.device());
  const Tensor g = grad_output.contiguous();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype(), "embedding_dense_backward", [&] {
    embedding_backward_impl<scalar_t>(gw, g, idx, padding_idx, scale_grad_by_freq);
  });
  return gw;
}

// ============================================================ embedding_bag
// mode 0 sum, 1 mean, 2 max; padding_idx < 0: none (nn.functional.embedding_bag turns a
// negative padding_idx into a row number before it gets here). Returns (output [B, D], offset2bag [n], bag_size [B],
// max_indices): offset2bag[i] is the bag of index i; bag_size counts the indices of a bag
// that are not padding_idx; max_indices is [B, D] (the weight row of each max) in max
// mode and bag_size otherwise. An empty bag gives a zero row.

Bags embedding::make_bags(const std::vector<int64_t>& off, int64_t n, bool include_last_offset) {
  EMBER_CHECK(!off.empty() || !include_last_offset,
              "embedding_bag: offsets must not be empty with include_last_offset");
  Bags b;
  b.B = static_cast<int64_t>(off.size()) - (include_last_offset ? 1 : 0);
  if (b.B < 0) b.B = 0;
  if (!off.empty()) {
    EMBER_CHECK(off[0] == 0,
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                "However, got ",
                off[0]);
    EMBER_CHECK(off.back() <= n, "offsets[-1] can not be greater than input's length ", n, " but got offsets[-1] of ",
                off.back());
  }
  for (size_t i = 1; i < off.size(); ++i)
    EMBER_CHECK(off[i] >= off[i - 1], "embedding_bag: offsets must be non-decreasing, but offsets[", i, "] = ", off[i],
                " < offsets[", i - 1, "] = ", off[i - 1]);
  b.begin.resize(b.B);
  b.end.resize(b.B);
  for (int64_t i = 0; i < b.B; ++i) {
    b.begin[i] = off[i];
    b.end[i] = i + 1 < static_cast<int64_t>(off.size()) ? off[i + 1] : n;
  }
  return b;
}

namespace {

template <typename T>
void embedding_bag_impl(const Tensor& out, const Tensor& max_idx, const Tensor& w, const std::vector<int64_t>& idx,
                        const Bags& bags, int64_t mode, const Tensor& psw, int64_t padding_idx,
                        std::vector<int64_t>& bag_size) {
  using A = opmath_t<T>;
  const int64_t D = w.size(1);
  const T* wp = w.data_ptr<T>();
  T* o = out.data_ptr<T>();
  const T* ps = psw.defined() ? psw.data_ptr<T>() : nullptr;
  int64_t* mi = mode == 2 ? max_idx.data_ptr<int64_t>() : nullptr;
  parallel_for(0, bags.B, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D * 4, 1)), [&](int64_t b0, int64_t b1) {
    std::vector<A> acc(D);
    std::vector<int64_t> arg(D);
    for (int64_t bag = b0; bag < b1; ++bag) {
      int64_t count = 0;
      if (mode == 2) {
        std::fill(arg.begin(), arg.end(), int64_t{-1});
      } else {
        std::fill(acc.begin(), acc.end(), A(0));
      }
      for (int64_t i = bags.begin[bag]; i < bags.end[bag]; ++i) {
        const int64_t r = idx[i];
        if (r == padding_idx) continue;
        ++count;
        const T* row = wp + r * D;
        if (mode == 2) {
          for (int64_t j = 0; j < D; ++j) {
            const A v = static_cast<A>(row[j]);
            if (bag_max_replaces(v, acc[j], arg[j])) {
              acc[j] = v;
              arg[j] = r;
            }
          }
        } else {
          const A s = ps ? static_cast<A>(ps[i]) : A(1);
          for (int64_t j = 0; j < D; ++j) acc[j] += s * static_cast<A>(row[j]);
        }
      }
      bag_size[bag] = count;
      T* orow = o + bag * D;
      if (mode == 2) {
        for (int64_t j = 0; j < D; ++j) {
          orow[j] = arg[j] < 0 ? T(0) : static_cast<T>(acc[j]);
          mi[bag * D + j] = arg[j] < 0 ? 0 : arg[j];
        }
      } else {
        const A scale = bag_scale<A>(mode, count);
        for (int64_t j = 0; j < D; ++j) orow[j] = static_cast<T>(acc[j] * scale);
      }
    }
  });
}

}  // namespace

Tensor embedding::int64_tensor(const std::vector<int64_t>& v, Device device) {
  Tensor t = at::empty({static_cast<int64_t>(v.size())}, ScalarType::Long, Device(DeviceType::CPU));
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(int64_t));
  return device.is_cpu() ? t : t.to(device);
}

void embedding::check_bag_mode(int64_t mode) {
  EMBER_CHECK(mode >= 0 && mode <= 2, "`mode` must be sum, mean, or max.");
}

std::vector<int64_t> embedding::flat_indices(const Tensor& indices) {
  EMBER_CHECK(indices.dim() == 1 || indices.dim() == 2, "input has to be 1D or 2D Tensor, but got Tensor of dimension ",
              indices.dim());
  return index_values(indices);
}

embedding::BagPlan embedding::plan_embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                                                 int64_t mode, const std::optional<Tensor>& per_sample_weights,
                                                 bool include_last_offset, const char* kernel) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  EMBER_CHECK(c10::isFloatingType(weight.dtype()), "\"", kernel, "\" not implemented for '",
              c10::toString(weight.dtype()), "'");
  check_indices_dtype(indices, "indices", "embedding_bag");
  EMBER_CHECK(
      offsets.dtype() == ScalarType::Long || offsets.dtype() == ScalarType::Int,
      "Expected tensor for argument #2 'offsets' to have one of the following scalar types: Long, Int; but got ",
      c10::toString(offsets.dtype()), " instead (while checking arguments for embedding_bag)");
  EMBER_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  check_bag_mode(mode);
  check_same_device("embedding_bag", weight, indices);
  check_same_device("embedding_bag", weight, offsets);
  BagPlan plan;
  plan.idx = flat_indices(indices);
  check_index_range(plan.idx, weight.size(0));
  const int64_t n = static_cast<int64_t>(plan.idx.size());
  plan.bags = make_bags(index_values(offsets), n, include_last_offset);
  if (per_sample_weights.has_value() && per_sample_weights->defined()) {
    EMBER_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    EMBER_CHECK(per_sample_weights->dtype() == weight.dtype(), "embedding_bag: expected per_sample_weights of dtype ",
                c10::toString(weight.dtype()), " (the weight's), but got ", c10::toString(per_sample_weights->dtype()));
    EMBER_CHECK(per_sample_weights->numel() == n, "embedding_bag: per_sample_weights (", per_sample_weights->numel(),
                " elements) must have one weight per index (", n, ")");
    check_same_device("embedding_bag", weight, *per_sample_weights);
    plan.psw = per_sample_weights->contiguous();
  }
  plan.offset2bag.assign(n, 0);
  for (int64_t b = 0; b < plan.bags.B; ++b)
    for (int64_t i = plan.bags.begin[b]; i < plan.bags.end[b]; ++i) plan.offset2bag[i] = b;
  return plan;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_cpu(const Tensor& weight, const Tensor& indices,
                                                             const Tensor& offsets, bool scale_grad_by_freq,
                                                             int64_t mode, bool sparse,
                                                             const std::optional<Tensor>& per_sample_weights,
                                                             bool include_last_offset, int64_t padding_idx) {
  const BagPlan plan =
      plan_embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, "embedding_bag_cpu");
  const int64_t D = weight.size(1);
  const std::vector<int64_t>& idx = plan.idx;
  const Bags& bags = plan.bags;
  const Tensor& psw = plan.psw;
  const std::vector<int64_t>& offset2bag = plan.offset2bag;
  std::vector<int64_t> bag_size(bags.B, 0);
  Tensor out = at::empty({bags.B, D}, weight.dtype(), weight.device());
  Tensor max_idx = mode == 2 ? at::empty({bags.B, D}, ScalarType::Long, weight.device()) : Tensor();
  const Tensor w = weight.contiguous();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(w.dtype(), "embedding_bag_cpu", [&] {
    embedding_bag_impl<scalar_t>(out, max_idx, w, idx, bags, mode, psw, padding_idx, bag_size);
  });
  Tensor bs = int64_tensor(bag_size, weight.device());
  return {out, int64_tensor(offset2bag, weight.device()), bs, mode == 2 ? max_idx : bs.clone()};
}

namespace {

template <typename T>
void embedding_bag_backward_impl(const Tensor& gw_t, const Tensor& grad_t, const BagBackwardPlan& plan, int64_t mode,
                                 int64_t padding_idx, bool scale_grad_by_freq) {
  using A = opmath_t<T>;
  const int64_t V = gw_t.size(0), D = gw_t.size(1);
  const T* g = grad_t.data_ptr<T>();
  T* gw = gw_t.data_ptr<T>();
  const Groups groups = group_by_row(bag_backward_rows(plan, D, mode, padding_idx), V);
  if (mode == 2) {
    // each (bag, j) sends its gradient to the row that held the max; columns do not
    // interact, so each row adds its (bag, column) pairs
    parallel_for(0, V, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t k = groups.start[r]; k < groups.start[r + 1]; ++k) {
          const int64_t p = groups.pos[k], j = p % D;
          gw[r * D + j] = static_cast<T>(static_cast<A>(gw[r * D + j]) + static_cast<A>(g[p]));
        }
    });
    return;
  }
  const std::vector<int64_t>&o2b = plan.o2b, &bag_size = plan.bag_size;
  const T* ps = plan.psw.defined() ? plan.psw.data_ptr<T>() : nullptr;
  parallel_for(0, V, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<A> acc(D);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t s0 = groups.start[r], s1 = groups.start[r + 1];
      if (s0 == s1) continue;
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t k = s0; k < s1; ++k) {
        const int64_t i = groups.pos[k], bag = o2b[i];
        A s = ps ? static_cast<A>(ps[i]) : A(1);
        if (mode == 1) s /= static_cast<A>(std::max<int64_t>(bag_size[bag], 1));
        const T* gr = g + bag * D;
        for (int64_t j = 0; j < D; ++j) acc[j] += s * static_cast<A>(gr[j]);
      }
      const A scale = freq_scale<A>(scale_grad_by_freq, s1 - s0);
      for (int64_t j = 0; j < D; ++j) gw[r * D + j] = static_cast<T>(acc[j] * scale);
    }
  });
}

}  // namespace

embedding::BagBackwardPlan embedding::plan_embedding_bag_backward(const Tensor& grad, const Tensor& indices,
                                                                  const Tensor& offset2bag, const Tensor& bag_size,
                                                                  const Tensor& maximum_indices, int64_t num_weights,
                                                                  int64_t mode,
                                                                  const std::optional<Tensor>& per_sample_weights) {
  check_bag_mode(mode);
  check_indices_dtype(indices, "indices", "embedding_bag_backward");
  EMBER_CHECK(grad.dim() == 2, "embedding_bag_backward: grad must be 2-D, got shape ", shape_str(grad.sizes()));
  EMBER_CHECK(c10::isFloatingType(grad.dtype()), "embedding_bag_backward: grad must be floating, got ",
              c10::toString(grad.dtype()));
  check_same_device("embedding_bag_backward", grad, indices);
  const int64_t D = grad.size(1), B = grad.size(0);
  BagBackwardPlan plan;
  plan.idx = flat_indices(indices);
  check_index_range(plan.idx, num_weights);
  plan.o2b = index_values(offset2bag);
  plan.bag_size = index_values(bag_size);
  EMBER_CHECK(static_cast<int64_t>(plan.o2b.size()) == static_cast<int64_t>(plan.idx.size()) &&
                  static_cast<int64_t>(plan.bag_size.size()) == B,
              "embedding_bag_backward: offset2bag / bag_size do not match indices / grad");
  for (int64_t b : plan.o2b)
    EMBER_CHECK_INDEX(b >= 0 && b < std::max<int64_t>(B, 1), "embedding_bag_backward: bad offset2bag");
  if (mode == 2) {
    EMBER_CHECK(maximum_indices.numel() == B * D, "embedding_bag_backward: maximum_indices must have shape [", B, ", ",
                D, "]");
    plan.max_idx = index_values(maximum_indices);
    for (int64_t k = 0; k < B * D; ++k)
      if (plan.bag_size[k / std::max<int64_t>(D, 1)] > 0)
        EMBER_CHECK_INDEX(plan.max_idx[k] >= 0 && plan.max_idx[k] < num_weights, "index out of range in self");
  }
  if (per_sample_weights.has_value() && per_sample_weights->defined()) {
    EMBER_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    EMBER_CHECK(per_sample_weights->numel() == static_cast<int64_t>(plan.idx.size()),
                "embedding_bag_backward: per_sample_weights must have one weight per index");
    check_same_device("embedding_bag_backward", grad, *per_sample_weights);
    plan.psw =
        (per_sample_weights->dtype() == grad.dtype() ? *per_sample_weights : per_sample_weights->to(grad.dtype()))
            .contiguous();
  }
  return plan;
}

Tensor embedding_bag_dense_backward_cpu(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                                        const Tensor& bag_size, const Tensor& maximum_indices, int64_t num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<Tensor>& per_sample_weights, int64_t padding_idx) {
  const BagBackwardPlan plan = plan_embedding_bag_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                                           num_weights, mode, per_sample_weights);
  Tensor gw = at::zeros({num_weights, grad.size(1)}, grad.dtype(), grad.device());
  const Tensor g = grad.contiguous();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype(), "embedding_bag_backward", [&] {
    embedding_bag_backward_impl<scalar_t>(gw, g, plan, mode, padding_idx, scale_grad_by_freq);
  });
  return gw;
}

embedding::BagBackwardPlan embedding::plan_per_sample_weights_backward(const Tensor& grad, const Tensor& weight,
                                                                       const Tensor& indices, const Tensor& offset2bag,
                                                                       int64_t mode) {
  EMBER_CHECK(mode == 0, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  EMBER_CHECK(grad.dim() == 2 && weight.dim() == 2 && grad.size(1) == weight.size(1),
              "embedding_bag_per_sample_weights_backward: grad of shape ", shape_str(grad.sizes()),
              " does not match weight of shape ", shape_str(weight.sizes()));
  check_same_device("embedding_bag_per_sample_weights_backward", weight, grad);
  check_same_device("embedding_bag_per_sample_weights_backward", weight, indices);
  const int64_t V = weight.size(0), B = grad.size(0);
  BagBackwardPlan plan;
  plan.idx = flat_indices(indices);
  plan.o2b = index_values(offset2bag);
  check_index_range(plan.idx, V);
  const int64_t n = static_cast<int64_t>(plan.idx.size());
  EMBER_CHECK(static_cast<int64_t>(plan.o2b.size()) == n,
              "embedding_bag_per_sample_weights_backward: offset2bag must have ", n, " elements");
  for (int64_t b : plan.o2b)
    EMBER_CHECK_INDEX(b >= 0 && b < std::max<int64_t>(B, 1), "embedding_bag_backward: bad offset2bag");
  return plan;
}

// d(output[bag(i)]) / d(per_sample_weights[i]) = weight[indices[i]]: the gradient is the dot
// product of the bag's gradient with that row (0 for padding_idx).
Tensor embedding_bag_per_sample_weights_backward_cpu(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                                     const Tensor& offsets, const Tensor& offset2bag, int64_t mode,
                                                     int64_t padding_idx) {
  const BagBackwardPlan plan = plan_per_sample_weights_backward(grad, weight, indices, offset2bag, mode);
  const int64_t D = weight.size(1);
  const std::vector<int64_t>&idx = plan.idx, &o2b = plan.o2b;
  const int64_t n = static_cast<int64_t>(idx.size());
  const Tensor g = (grad.dtype() == weight.dtype() ? grad : grad.to(weight.dtype())).contiguous();
  const Tensor w = weight.contiguous();
  Tensor out = at::empty({n}, weight.dtype(), weight.device());
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(w.dtype(), "embedding_bag_per_sample_weights_backward", [&] {
    using A = opmath_t<scalar_t>;
    const scalar_t* gp = g.data_ptr<scalar_t>();
    const scalar_t* wp = w.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    parallel_for(0, n, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        o[i] = static_cast<scalar_t>(idx[i] != padding_idx ? row_dot(gp + o2b[i] * D, wp + idx[i] * D, D) : A(0));
      }
    });
  });
  (void)offsets;
  return out;
}

}  // namespace ember::at::native
