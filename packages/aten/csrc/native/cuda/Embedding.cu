// CUDA kernels of embedding (a row gather), embedding_dense_backward and embedding_bag
// (+ its backward; see the section at the end).
//
// Indices are checked on the device: an index outside [0, num_weights) is recorded
// with report_index_error and raised with the CPU kernel's message ("index out of range
// in self", IndexError) by the next check_device_errors; its output row is zeros.
//
// The backward is deterministic, as the CPU kernel: positions are sorted by destination
// row (a stable CUB radix sort of (row, position) pairs, padding_idx and bad indices
// sorted past the last row), each row finds its run by binary search, and one thread
// per (row, column) sums its run in position order (in opmath_t), scaled by 1 / count
// with scale_grad_by_freq.
#include <cub/device/device_radix_sort.cuh>

#include <ember/aten/Dispatch.h>

#include "../Embedding.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

int embedding_error_op() {
  static const int op = cuda::register_error_format("index out of range in self");
  return op;
}

// E: an unsigned integer of the weight's element size (the gather moves bits).
template <typename E, typename I>
__global__ void embedding_gather_kernel(E* __restrict__ out, const E* __restrict__ w, const I* __restrict__ idx,
                                        int64_t n, int64_t D, int64_t V, cuda::DeviceError* err, int op) {
  const int64_t total = n * D;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / D, j = e % D;
    const int64_t r = static_cast<int64_t>(idx[i]);
    if (r < 0 || r >= V) {
      if (j == 0) cuda::report_index_error(err, op, 0, r, V);
      out[e] = E(0);
      continue;
    }
    out[e] = w[r * D + j];
  }
}

// keys[i] = the destination row of position i (V for padding_idx and bad indices, which
// sort last); vals[i] = i
template <typename I>
__global__ void embedding_backward_keys_kernel(int64_t* __restrict__ keys, int64_t* __restrict__ vals,
                                               const I* __restrict__ idx, int64_t n, int64_t V, int64_t padding_idx,
                                               cuda::DeviceError* err, int op) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = static_cast<int64_t>(idx[i]);
    const bool bad = r < 0 || r >= V;
    if (bad) cuda::report_index_error(err, op, 0, r, V);
    keys[i] = bad || r == padding_idx ? V : r;
    vals[i] = i;
  }
}

// starts[r] = first position of sorted_keys >= r, for r in [0, V]
__global__ void segment_starts_kernel(int64_t* __restrict__ starts, const int64_t* __restrict__ sorted_keys, int64_t n,
                                      int64_t V) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r <= V;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (sorted_keys[mid] < r) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    starts[r] = lo;
  }
}

template <typename T>
__global__ void embedding_backward_sum_kernel(T* __restrict__ gw, const T* __restrict__ g,
                                              const int64_t* __restrict__ sorted_pos,
                                              const int64_t* __restrict__ starts, int64_t V, int64_t D,
                                              bool scale_grad_by_freq) {
  using A = opmath_t<T>;
  const int64_t total = V * D;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / D, j = e % D;
    const int64_t s0 = starts[r], s1 = starts[r + 1];
    if (s0 == s1) continue;  // grad_weight starts as zeros
    A acc = A(0);
    for (int64_t k = s0; k < s1; ++k) acc += static_cast<A>(g[sorted_pos[k] * D + j]);
    gw[e] = static_cast<T>(acc * embedding::freq_scale<A>(scale_grad_by_freq, s1 - s0));
  }
}

template <typename I>
void launch_gather(const Tensor& out, const Tensor& w, const Tensor& ix, int64_t n, int64_t D, int64_t V,
                   cuda::DeviceError* err) {
  const cudaStream_t stream = cuda::current_stream();
  const unsigned int grid = cuda::grid_size(n * D);
  const I* ip = ix.data_ptr<I>();
  switch (w.itemsize()) {
    case 1:
      embedding_gather_kernel<uint8_t, I><<<grid, cuda::kNumThreads, 0, stream>>>(
          static_cast<uint8_t*>(out.data_ptr()), static_cast<const uint8_t*>(w.data_ptr()), ip, n, D, V, err,
          embedding_error_op());
      break;
    case 2:
      embedding_gather_kernel<uint16_t, I><<<grid, cuda::kNumThreads, 0, stream>>>(
          static_cast<uint16_t*>(out.data_ptr()), static_cast<const uint16_t*>(w.data_ptr()), ip, n, D, V, err,
          embedding_error_op());
      break;
    case 4:
      embedding_gather_kernel<uint32_t, I><<<grid, cuda::kNumThreads, 0, stream>>>(
          static_cast<uint32_t*>(out.data_ptr()), static_cast<const uint32_t*>(w.data_ptr()), ip, n, D, V, err,
          embedding_error_op());
      break;
    case 8:
      embedding_gather_kernel<uint64_t, I><<<grid, cuda::kNumThreads, 0, stream>>>(
          static_cast<uint64_t*>(out.data_ptr()), static_cast<const uint64_t*>(w.data_ptr()), ip, n, D, V, err,
          embedding_error_op());
      break;
    default:
      EMBER_CHECK(false, "embedding: unsupported element size ", w.itemsize());
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

Tensor embedding_cuda(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                      bool sparse) {
  embedding::check_embedding_args(weight, indices);
  c10::DeviceGuard guard(weight.device());
  const int64_t V = weight.size(0), D = weight.size(1), n = indices.numel();
  DimVector shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(D);
  Tensor out = at::empty(shape, weight.dtype(), weight.device());
  if (n == 0) return out;
  const int dev = weight.device().index;
  cuda::check_device_errors(dev);
  cuda::DeviceError* err = cuda::device_error_slot(dev);
  const Tensor w = weight.contiguous(), ix = indices.contiguous();
  if (D == 0) return out;
  if (ix.dtype() == ScalarType::Long) {
    launch_gather<int64_t>(out, w, ix, n, D, V, err);
  } else {
    launch_gather<int32_t>(out, w, ix, n, D, V, err);
  }
  return out;
}

// grad_weight[r] = sum of grad_output over the positions whose index is r (not padding_idx),
// divided by that count when scale_grad_by_freq.
Tensor embedding_dense_backward_cuda(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t padding_idx, bool scale_grad_by_freq) {
  const int64_t D = embedding::dense_backward_dim(grad_output, indices, num_weights);
  const int64_t n = indices.numel();
  c10::DeviceGuard guard(grad_output.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device device = grad_output.device();
  const int64_t V = num_weights;
  Tensor gw = at::zeros({V, D}, grad_output.dtype(), device);
  if (n == 0) return gw;
  const int dev = device.index;
  cuda::check_device_errors(dev);
  cuda::DeviceError* err = cuda::device_error_slot(dev);
  const Tensor ix = indices.contiguous(), g = grad_output.contiguous();

  Tensor keys = at::empty({n}, ScalarType::Long, device), vals = at::empty({n}, ScalarType::Long, device);
  if (ix.dtype() == ScalarType::Long) {
    embedding_backward_keys_kernel<int64_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
        keys.data_ptr<int64_t>(), vals.data_ptr<int64_t>(), ix.data_ptr<int64_t>(), n, V, padding_idx, err,
        embedding_error_op());
  } else {
    embedding_backward_keys_kernel<int32_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
        keys.data_ptr<int64_t>(), vals.data_ptr<int64_t>(), ix.data_ptr<int32_t>(), n, V, padding_idx, err,
        embedding_error_op());
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  if (V == 0 || D == 0) return gw;

  // stable sort of (row, position) by row: positions stay in increasing order within a row
  int end_bit = 1;
  while (end_bit < 63 && (int64_t{1} << end_bit) <= V) ++end_bit;
  Tensor skeys = at::empty({n}, ScalarType::Long, device), svals = at::empty({n}, ScalarType::Long, device);
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data_ptr<int64_t>(),
                                                   skeys.data_ptr<int64_t>(), vals.data_ptr<int64_t>(),
                                                   svals.data_ptr<int64_t>(), n, 0, end_bit, stream));
  Tensor temp = at::empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, ScalarType::Byte, device);
  EMBER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, keys.data_ptr<int64_t>(),
                                                   skeys.data_ptr<int64_t>(), vals.data_ptr<int64_t>(),
                                                   svals.data_ptr<int64_t>(), n, 0, end_bit, stream));
  Tensor starts = at::empty({V + 1}, ScalarType::Long, device);
  segment_starts_kernel<<<cuda::grid_size(V + 1), cuda::kNumThreads, 0, stream>>>(starts.data_ptr<int64_t>(),
                                                                                  skeys.data_ptr<int64_t>(), n, V);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype(), "embedding_dense_backward_cuda", [&] {
    embedding_backward_sum_kernel<scalar_t><<<cuda::grid_size(V * D), cuda::kNumThreads, 0, stream>>>(
        gw.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(), svals.data_ptr<int64_t>(), starts.data_ptr<int64_t>(), V, D,
        scale_grad_by_freq);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return gw;
}

// ============================================================ embedding_bag
// The checks and the bag layout are computed on the host exactly as the CPU kernel does
// (embedding::plan_*: indices, offsets, offset2bag and bag_size are read on the host, a
// device-to-host copy that synchronises); the per-element work runs on the device, one
// thread per (bag, column) forward and per (row, column) backward, summing in index
// order (deterministic, as the CPU kernel).

namespace {

using namespace embedding;

template <typename T>
__global__ void embedding_bag_kernel(T* __restrict__ out, int64_t* __restrict__ max_idx, const T* __restrict__ w,
                                     const int64_t* __restrict__ idx, const int64_t* __restrict__ begin,
                                     const int64_t* __restrict__ end, const T* __restrict__ psw, int64_t B, int64_t D,
                                     int64_t mode, int64_t padding_idx) {
  using A = opmath_t<T>;
  const int64_t total = B * D;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = e / D, j = e % D;
    A acc = A(0);
    int64_t arg = -1, count = 0;
    for (int64_t i = begin[b]; i < end[b]; ++i) {
      const int64_t r = idx[i];
      if (r == padding_idx) continue;
      ++count;
      const A v = static_cast<A>(w[r * D + j]);
      if (mode == 2) {
        if (bag_max_replaces(v, acc, arg)) {
          acc = v;
          arg = r;
        }
      } else {
        acc += (psw ? static_cast<A>(psw[i]) : A(1)) * v;
      }
    }
    if (mode == 2) {
      out[e] = arg < 0 ? T(0) : static_cast<T>(acc);
      max_idx[e] = arg < 0 ? 0 : arg;
    } else {
      out[e] = static_cast<T>(acc * bag_scale<A>(mode, count));
    }
  }
}

// sum / mean: grad_weight[r, j] = sum over the positions i of row r (in order) of
// s_i grad[bag(i), j], s_i = per_sample_weight (or 1) / bag_size for mean
template <typename T>
__global__ void embedding_bag_backward_kernel(T* __restrict__ gw, const T* __restrict__ g,
                                              const int64_t* __restrict__ start, const int64_t* __restrict__ pos,
                                              const int64_t* __restrict__ o2b, const int64_t* __restrict__ bag_size,
                                              const T* __restrict__ psw, int64_t V, int64_t D, int64_t mode,
                                              bool scale_grad_by_freq) {
  using A = opmath_t<T>;
  const int64_t total = V * D;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / D, j = e % D;
    const int64_t s0 = start[r], s1 = start[r + 1];
    if (s0 == s1) continue;  // grad_weight starts as zeros
    A acc = A(0);
    for (int64_t k = s0; k < s1; ++k) {
      const int64_t i = pos[k], bag = o2b[i];
      A s = psw ? static_cast<A>(psw[i]) : A(1);
      if (mode == 1) s /= static_cast<A>(bag_size[bag] > 1 ? bag_size[bag] : 1);
      acc += s * static_cast<A>(g[bag * D + j]);
    }
    gw[e] = static_cast<T>(acc * embedding::freq_scale<A>(scale_grad_by_freq, s1 - s0));
  }
}

// max: one thread per row adds the gradients of the (bag, column) pairs whose max it held
template <typename T>
__global__ void embedding_bag_max_backward_kernel(T* __restrict__ gw, const T* __restrict__ g,
                                                  const int64_t* __restrict__ start, const int64_t* __restrict__ pos,
                                                  int64_t V, int64_t D) {
  using A = opmath_t<T>;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < V;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    for (int64_t k = start[r]; k < start[r + 1]; ++k) {
      const int64_t p = pos[k], j = p % D;
      gw[r * D + j] = static_cast<T>(static_cast<A>(gw[r * D + j]) + static_cast<A>(g[p]));
    }
  }
}

template <typename T>
__global__ void per_sample_weights_backward_kernel(T* __restrict__ out, const T* __restrict__ g,
                                                   const T* __restrict__ w, const int64_t* __restrict__ idx,
                                                   const int64_t* __restrict__ o2b, int64_t n, int64_t D,
                                                   int64_t padding_idx) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<T>(idx[i] != padding_idx ? row_dot(g + o2b[i] * D, w + idx[i] * D, D) : A(0));
  }
}

template <typename T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_cuda(const Tensor& weight, const Tensor& indices,
                                                              const Tensor& offsets, bool scale_grad_by_freq,
                                                              int64_t mode, bool sparse,
                                                              const std::optional<Tensor>& per_sample_weights,
                                                              bool include_last_offset, int64_t padding_idx) {
  const BagPlan plan =
      plan_embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, "embedding_bag_cuda");
  c10::DeviceGuard guard(weight.device());
  const Device dev = weight.device();
  const int64_t D = weight.size(1), B = plan.bags.B;
  std::vector<int64_t> bag_size(B, 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = plan.bags.begin[b]; i < plan.bags.end[b]; ++i) bag_size[b] += plan.idx[i] != padding_idx;
  Tensor out = at::empty({B, D}, weight.dtype(), dev);
  Tensor max_idx = mode == 2 ? at::empty({B, D}, ScalarType::Long, dev) : Tensor();
  if (B * D > 0) {
    const Tensor w = weight.contiguous();
    const Tensor idx = int64_tensor(plan.idx, dev), begin = int64_tensor(plan.bags.begin, dev),
                 end = int64_tensor(plan.bags.end, dev);
    EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(w.dtype(), "embedding_bag_cuda", [&] {
      embedding_bag_kernel<scalar_t><<<cuda::grid_size(B * D), cuda::kNumThreads, 0, cuda::current_stream()>>>(
          out.data_ptr<scalar_t>(), mode == 2 ? max_idx.data_ptr<int64_t>() : nullptr, w.data_ptr<scalar_t>(),
          idx.data_ptr<int64_t>(), begin.data_ptr<int64_t>(), end.data_ptr<int64_t>(), data_or_null<scalar_t>(plan.psw),
          B, D, mode, padding_idx);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
  Tensor bs = int64_tensor(bag_size, dev);
  return {out, int64_tensor(plan.offset2bag, dev), bs, mode == 2 ? max_idx : bs.clone()};
}

Tensor embedding_bag_dense_backward_cuda(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                                         const Tensor& bag_size, const Tensor& maximum_indices, int64_t num_weights,
                                         bool scale_grad_by_freq, int64_t mode,
                                         const std::optional<Tensor>& per_sample_weights, int64_t padding_idx) {
  const BagBackwardPlan plan = plan_embedding_bag_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                                           num_weights, mode, per_sample_weights);
  c10::DeviceGuard guard(grad.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device dev = grad.device();
  const int64_t V = num_weights, D = grad.size(1);
  Tensor gw = at::zeros({V, D}, grad.dtype(), dev);
  if (V * D == 0) return gw;
  const Tensor g = grad.contiguous();
  const Groups groups = group_by_row(bag_backward_rows(plan, D, mode, padding_idx), V);
  const Tensor start = int64_tensor(groups.start, dev), pos = int64_tensor(groups.pos, dev);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype(), "embedding_bag_backward_cuda", [&] {
    if (mode == 2) {
      embedding_bag_max_backward_kernel<scalar_t><<<cuda::grid_size(V), cuda::kNumThreads, 0, stream>>>(
          gw.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(), start.data_ptr<int64_t>(), pos.data_ptr<int64_t>(), V, D);
    } else {
      const Tensor o2b = int64_tensor(plan.o2b, dev), bs = int64_tensor(plan.bag_size, dev);
      embedding_bag_backward_kernel<scalar_t><<<cuda::grid_size(V * D), cuda::kNumThreads, 0, stream>>>(
          gw.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(), start.data_ptr<int64_t>(), pos.data_ptr<int64_t>(),
          o2b.data_ptr<int64_t>(), bs.data_ptr<int64_t>(), data_or_null<scalar_t>(plan.psw), V, D, mode,
          scale_grad_by_freq);
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return gw;
}

Tensor embedding_bag_per_sample_weights_backward_cuda(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                                      const Tensor& offsets, const Tensor& offset2bag, int64_t mode,
                                                      int64_t padding_idx) {
  const BagBackwardPlan plan = plan_per_sample_weights_backward(grad, weight, indices, offset2bag, mode);
  c10::DeviceGuard guard(weight.device());
  const Device dev = weight.device();
  const int64_t D = weight.size(1), n = static_cast<int64_t>(plan.idx.size());
  const Tensor g = (grad.dtype() == weight.dtype() ? grad : grad.to(weight.dtype())).contiguous();
  const Tensor w = weight.contiguous();
  Tensor out = at::empty({n}, weight.dtype(), dev);
  if (n == 0) return out;
  const Tensor idx = int64_tensor(plan.idx, dev), o2b = int64_tensor(plan.o2b, dev);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(w.dtype(), "embedding_bag_per_sample_weights_backward_cuda", [&] {
    per_sample_weights_backward_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        out.data_ptr<scalar_t>(), g.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), idx.data_ptr<int64_t>(),
        o2b.data_ptr<int64_t>(), n, D, padding_idx);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  (void)offsets;
  return out;
}

}  // namespace ember::at::native
