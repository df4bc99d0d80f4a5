// Joins: cat and stack (hstack, vstack, dstack, column_stack, concat are Python
// composites over these in ember/aten/native/shape.py).
//
// cat copies each input into its slice of the output. When the output and an input
// are contiguous CPU tensors of one dtype, that is a memcpy of one chunk per outer
// index (the dims before `dim`), and the chunks of all inputs are copied in one
// parallel loop; any other input goes through copy_ (TensorIterator: casts,
// strides, any device).
#include <cstring>

#include <ember/aten/Parallel.h>
#include <ember/aten/TensorIterator.h>

#include "Joins.h"

namespace ember::at::native {

namespace {

// PyTorch's legacy rule: 1-d empty tensors are skipped whatever their shape.
bool cat_should_skip(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || !a.is_alias_of(b)) return false;
  auto range = [](const Tensor& t) {
    const auto start = reinterpret_cast<uintptr_t>(t.data_ptr());
    int64_t extent = 1;
    for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
    return std::make_pair(start, start + static_cast<uintptr_t>(extent) * t.itemsize());
  };
  const auto [a0, a1] = range(a);
  const auto [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

struct CatChunk {
  const char* src;
  int64_t offset;  // bytes into each output row
  int64_t nbytes;  // bytes per output row
};

void cat_copy(const Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  const bool out_fast = out.is_cpu() && out.is_contiguous();
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.size(d);
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.size(d);
  const int64_t row_bytes = out.size(dim) * inner * isz;
  std::vector<CatChunk> chunks;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (cat_should_skip(t)) continue;
    const int64_t n = t.size(dim);
    if (n > 0) {
      if (out_fast && t.is_cpu() && t.dtype() == out.dtype() && t.is_contiguous()) {
        chunks.push_back({static_cast<const char*>(t.data_ptr()), offset * inner * isz, n * inner * isz});
      } else {
        out.narrow(dim, offset, n).copy_(t);
      }
    }
    offset += n;
  }
  if (chunks.empty()) return;
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t nchunks = static_cast<int64_t>(chunks.size());
  int64_t total_bytes = 0;
  for (const auto& c : chunks) total_bytes += c.nbytes;
  const int64_t avg = std::max<int64_t>(total_bytes / nchunks, 1);
  // A copy is bound by memory bandwidth, so a second thread gains little, while a
  // parallel region costs a wake-up of every thread -- on a loaded machine a wait for
  // a descheduled one (a DataLoader's collate of 64 images, 768 KiB, took 48 ms
  // instead of 60 us at load 12). Threads only from 1 MiB of copying each.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 20) / avg);
  parallel_for(0, outer * nchunks, grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / nchunks;
      const CatChunk& c = chunks[k % nchunks];
      std::memcpy(dst + o * row_bytes + c.offset, c.src + o * c.nbytes, static_cast<size_t>(c.nbytes));
    }
  });
}

}  // namespace

Tensor cat_out(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  EMBER_CHECK_VALUE(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  }
  // The first tensor that is not skipped fixes the shape (all skipped: the first).
  size_t ref_i = 0;
  while (ref_i < tensors.size() && cat_should_skip(tensors[ref_i])) ++ref_i;
  if (ref_i == tensors.size()) ref_i = 0;
  const Tensor& ref = tensors[ref_i];
  const int64_t d = c10::maybe_wrap_dim(dim, ref.dim());
  const ScalarType dtype = result_type(tensors);
  int64_t cat_size = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_same_device("cat", ref, t);
    if (cat_should_skip(t)) continue;
    EMBER_CHECK(t.dim() == ref.dim(), "Tensors must have same number of dimensions: got ", ref.dim(), " and ", t.dim());
    for (int64_t k = 0; k < ref.dim(); ++k) {
      if (k == d) continue;
      EMBER_CHECK(t.size(k) == ref.size(k), "Sizes of tensors must match except in dimension ", d, ". Expected size ",
                  ref.size(k), " but got size ", t.size(k), " for tensor number ", i, " in the list.");
    }
    cat_size += t.size(d);
  }
  DimVector shape(ref.sizes());
  if (!cat_should_skip(ref)) shape[d] = cat_size;
  Tensor result = out;
  if (result.defined()) {
    EMBER_CHECK(can_cast(dtype, result.dtype()), "torch.cat(): input types can't be cast to the desired output type ",
                c10::toString(result.dtype()));
    EMBER_CHECK(result.device() == ref.device(),
                "torch.cat(): all input tensors and out must be on the same device, "
                "but inputs are on ",
                ref.device(), " and out is on ", result.device());
    for (size_t i = 0; i < tensors.size(); ++i) {
      EMBER_CHECK(!overlaps(result, tensors[i]),
                  "unsupported operation: the input tensors cannot refer to any of the output memory locations. "
                  "Found overlap in input tensor ",
                  i);
    }
    resize_output(result, shape);
  } else {
    result = empty(shape, dtype, ref.device());
  }
  if (result.numel() > 0) cat_copy(result, tensors, d);
  return result;
}

Tensor stack_out(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const int64_t d = c10::maybe_wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes().equals(tensors[0].sizes()), "stack expects each tensor to be equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat_out(parts, d, out);
}

}  // namespace ember::at::native
