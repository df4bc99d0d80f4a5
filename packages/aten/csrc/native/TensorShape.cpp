// View operators: they return a TensorImpl over the same storage (and version
// counter) with new sizes/strides/offset. Nothing here touches data.
#include <ember/aten/ShapeUtils.h>
#include <ember/aten/TensorIterator.h>

namespace ember::at::native {

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  for (int64_t s : stride) {
    EMBER_CHECK(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ", stride);
  }
  EMBER_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  return self.as_strided(size, stride, storage_offset);
}

Tensor view(const Tensor& self, IntArrayRef size) { return self.view(size); }

Tensor expand(const Tensor& self, IntArrayRef size, bool implicit) { return self.expand(size); }

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  // A 0-dim tensor accepts dims 0 and -1 (as a 1-d one would) and is returned as is.
  const int64_t d0 = c10::maybe_wrap_dim(dim0, self.dim());
  const int64_t d1 = c10::maybe_wrap_dim(dim1, self.dim());
  return self.transpose(d0, d1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) { return self.permute(dims); }

Tensor unsqueeze(const Tensor& self, int64_t dim) { return self.unsqueeze(dim); }

Tensor squeeze_dims(const Tensor& self, const std::optional<DimVector>& dims) {
  DimVector sizes, strides;
  if (!dims) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (self.size(d) != 1) {
        sizes.push_back(self.size(d));
        strides.push_back(self.stride(d));
      }
    }
    return self.as_strided(sizes, strides);
  }
  uint64_t mask = 0;
  for (int64_t d : *dims) {
    if (self.dim() == 0) {
      c10::maybe_wrap_dim(d, 0);
      continue;
    }
    mask |= uint64_t{1} << c10::maybe_wrap_dim(d, self.dim());
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if ((mask >> d & 1) && self.size(d) == 1) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  return self.as_strided(sizes, strides);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) { return self.select(dim, index); }

// self[start:end:step] along dim, Python's slice semantics (clamped, negatives wrap).
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  EMBER_CHECK_INDEX(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK_VALUE(step > 0, "slice step must be positive");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return self.as_strided(sizes, strides, self.storage_offset() + s * self.stride(d));
}

Tensor alias(const Tensor& self) { return self.alias(); }

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  EMBER_CHECK_INDEX(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  out.reserve(self.size(d));
  for (int64_t i = 0; i < self.size(d); ++i) out.push_back(self.select(d, i));
  return out;
}

Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? self.alias() : self.transpose(0, 1);
}

// view(dtype): the same bytes read as another dtype. Equal element sizes keep the
// geometry; otherwise the last dim (stride 1) is split or merged (PyTorch's rules).
Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self.alias();
  const int64_t old_size = static_cast<int64_t>(self.itemsize());
  const int64_t new_size = static_cast<int64_t>(c10::elementSize(dtype));
  const char* from = c10::toString(self.dtype());
  const char* to = c10::toString(dtype);
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storage_offset();
  if (old_size != new_size) {
    EMBER_CHECK(self.dim() > 0, "self.dim() cannot be 0 to view ", from, " as ", to, " (different element sizes)");
    EMBER_CHECK(self.stride(-1) == 1, "self.stride(-1) must be 1 to view ", from, " as ", to,
                " (different element sizes), but got ", self.stride(-1));
    const int64_t last = self.dim() - 1;
    if (old_size > new_size) {
      const int64_t ratio = old_size / new_size;
      for (int64_t d = 0; d < last; ++d) strides[d] *= ratio;
      sizes[last] *= ratio;
      offset *= ratio;
    } else {
      const int64_t ratio = new_size / old_size;
      EMBER_CHECK(sizes[last] % ratio == 0, "self.size(-1) must be divisible by ", ratio, " to view ", from, " as ", to,
                  " (different element sizes), but got ", sizes[last]);
      EMBER_CHECK(offset % ratio == 0, "self.storage_offset() must be divisible by ", ratio, " to view ", from, " as ",
                  to, " (different element sizes), but got ", offset);
      for (int64_t d = 0; d < last; ++d) {
        EMBER_CHECK(strides[d] % ratio == 0, "self.stride(", d, ") must be divisible by ", ratio, " to view ", from,
                    " as ", to, " (different element sizes), but got ", strides[d]);
        strides[d] /= ratio;
      }
      sizes[last] /= ratio;
      offset /= ratio;
    }
  }
  auto impl = c10::make_intrusive<TensorImpl>(self.unsafeGetTensorImpl()->storage_ptr(), dtype,
                                              self.unsafeGetTensorImpl()->key_set());
  impl->set_version_counter(self.unsafeGetTensorImpl()->version_counter());
  impl->set_sizes_and_strides(sizes, strides, offset);
  return Tensor(std::move(impl));
}

// reshape's copy: a contiguous tensor viewed with new sizes, returned as a new
// tensor (not a view for autograd), as PyTorch's _unsafe_view.
Tensor _unsafe_view(const Tensor& self, IntArrayRef size) { return self.view(size); }

// unfold(dimension, size, step): all windows of `size` elements, `step` apart,
// along `dimension`, as a new last dim. A view.
Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  const int64_t nd = self.dim();
  const int64_t d = c10::maybe_wrap_dim(dimension, nd);
  const int64_t max_size = nd == 0 ? 1 : self.size(d);
  EMBER_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  EMBER_CHECK(size <= max_size, "maximum size for tensor at dimension ", d, " is ", max_size, " but size is ", size);
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.push_back(size);
  strides.push_back(nd == 0 ? 1 : self.stride(d));
  if (nd > 0) {
    sizes[d] = (sizes[d] - size) / step + 1;
    strides[d] *= step;
  }
  return self.as_strided(sizes, strides);
}

// diagonal(offset, dim1, dim2): the (offset) diagonal of the dim1 x dim2 planes, as a
// new last dim. A view.
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim();
  const int64_t d1 = c10::maybe_wrap_dim(dim1, nd);
  const int64_t d2 = c10::maybe_wrap_dim(dim2, nd);
  EMBER_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n;
  int64_t storage_offset = self.storage_offset();
  if (offset >= 0) {
    n = std::max<int64_t>(std::min(self.size(d1), self.size(d2) - offset), 0);
  } else {
    n = std::max<int64_t>(std::min(self.size(d1) + offset, self.size(d2)), 0);
  }
  if (n > 0) storage_offset += offset >= 0 ? offset * self.stride(d2) : -offset * self.stride(d1);
  DimVector sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(n);
  strides.push_back(self.stride(d1) + self.stride(d2));
  return self.as_strided(sizes, strides, storage_offset);
}

}  // namespace ember::at::native
