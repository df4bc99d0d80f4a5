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

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose(dim0, dim1); }

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

}  // namespace ember::at::native
