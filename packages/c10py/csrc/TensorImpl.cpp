#include <ember/c10/TensorImpl.h>

#include <algorithm>
#include <numeric>

namespace ember::c10 {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
    EMBER_CHECK(!__builtin_mul_overflow(n, s, &n), "Storage size calculation overflowed with sizes=", sizes);
  }
  return n;
}

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool wrap_scalar) {
  if (ndim == 0 && wrap_scalar) ndim = 1;
  if (ndim == 0) {
    throw IndexError(str("Dimension specified as ", dim, " but tensor has no dimensions"));
  }
  const int64_t lo = -ndim, hi = ndim - 1;
  if (dim < lo || dim > hi) {
    throw IndexError(
        str("Dimension out of range (expected to be in range of [", lo, ", ", hi, "], but got ", dim, ")"));
  }
  return dim < 0 ? dim + ndim : dim;
}

bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  // An empty tensor is contiguous whatever its strides: look for a size-0 dim first,
  // since the stride check below may stop at an earlier (inner) dim.
  for (int64_t s : sizes) {
    if (s == 0) return true;
  }
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;  // a size-1 dim's stride never matters
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool compute_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  SmallVector<int64_t, 5> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  // Sort dims by stride (size-1 dims last: they do not matter).
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = perm[i];
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype)
    : TensorImpl(storage, dtype, keySetForDevice(storage->device().type)) {}

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, DispatchKeySet key_set)
    : storage_(std::move(storage)),
      version_counter_(make_intrusive<VersionCounter>()),
      sizes_{0},
      strides_{1},
      dtype_(dtype),
      device_(storage_->device()),
      key_set_(key_set) {
  EMBER_CHECK_VALUE(dtype != ScalarType::Undefined, "TensorImpl: dtype must be defined");
}

intrusive_ptr<TensorImpl> TensorImpl::empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  const int64_t n = checked_numel(sizes);
  int64_t nbytes = 0;
  EMBER_CHECK(!__builtin_mul_overflow(n, static_cast<int64_t>(elementSize(dtype)), &nbytes),
              "Storage size calculation overflowed with sizes=", sizes);
  auto storage = StorageImpl::make(static_cast<size_t>(nbytes), device, /*resizable=*/true);
  auto impl = make_intrusive<TensorImpl>(std::move(storage), dtype);
  impl->sizes_ = DimVector(sizes);
  impl->strides_ = contiguous_strides(sizes);
  impl->numel_ = n;
  impl->is_contiguous_ = true;
  return impl;
}

intrusive_ptr<TensorImpl> TensorImpl::empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                                    Device device) {
  EMBER_CHECK_VALUE(sizes.size() == strides.size(), "empty_strided: got ", sizes.size(), " sizes but ", strides.size(),
                    " strides");
  const int64_t n = checked_numel(sizes);
  int64_t extent = 0;  // elements needed: 1 + sum (size-1)*stride
  if (n > 0) {
    extent = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      EMBER_CHECK(strides[i] >= 0, "empty_strided: negative strides are not supported, got strides ", strides);
      int64_t span;
      EMBER_CHECK(
          !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) && !__builtin_add_overflow(extent, span, &extent),
          "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
    }
  }
  int64_t nbytes;
  EMBER_CHECK(!__builtin_mul_overflow(extent, static_cast<int64_t>(elementSize(dtype)), &nbytes),
              "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  auto storage = StorageImpl::make(static_cast<size_t>(nbytes), device, true);
  auto impl = make_intrusive<TensorImpl>(std::move(storage), dtype);
  impl->set_sizes_and_strides(sizes, strides, 0);
  return impl;
}

void TensorImpl::refresh_numel_and_contiguity() {
  numel_ = checked_numel(sizes_);
  is_contiguous_ = compute_contiguous(sizes_, strides_);
}

bool TensorImpl::is_non_overlapping_and_dense() const {
  return is_contiguous_ || compute_non_overlapping_and_dense(sizes_, strides_);
}

namespace {
// Bytes of storage that a geometry reaches: (offset + 1 + sum (size-1)*stride) * itemsize,
// 0 for an empty tensor. RuntimeError on overflow.
int64_t required_storage_bytes(IntArrayRef sizes, IntArrayRef strides, int64_t offset, int64_t itemsize) {
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  int64_t extent = offset + 1;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
    overflow |= __builtin_add_overflow(extent, span, &extent);
  }
  int64_t needed = 0;
  overflow |= __builtin_mul_overflow(extent, itemsize, &needed);
  EMBER_CHECK(!overflow, "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  return needed;
}
}  // namespace

void TensorImpl::set_sizes_contiguous(IntArrayRef sizes) {
  const int64_t n = checked_numel(sizes);
  DimVector strides = contiguous_strides(sizes);
  // Grow the storage before touching the geometry: if it cannot grow (not resizable,
  // out of memory), the tensor keeps its old sizes instead of claiming bytes it lacks.
  const int64_t needed = required_storage_bytes(sizes, strides, storage_offset_, static_cast<int64_t>(itemsize()));
  if (static_cast<size_t>(needed) > storage_->nbytes()) storage_->resize(static_cast<size_t>(needed));
  sizes_ = DimVector(sizes);
  strides_ = std::move(strides);
  numel_ = n;
  is_contiguous_ = true;
}

void TensorImpl::ensure_storage_fits() {
  const int64_t needed = required_storage_bytes(sizes_, strides_, storage_offset_, static_cast<int64_t>(itemsize()));
  if (static_cast<size_t>(needed) > storage_->nbytes()) storage_->resize(static_cast<size_t>(needed));
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) {
  EMBER_CHECK_VALUE(sizes.size() == strides.size(), "dimensionality of sizes (", sizes.size(),
                    ") must match dimensionality of strides (", strides.size(), ")");
  const int64_t n = checked_numel(sizes);
  const int64_t off = offset.value_or(storage_offset_);
  EMBER_CHECK(off >= 0, "Tensor: invalid storage offset ", off);
  for (int64_t s : strides) {
    EMBER_CHECK(s >= 0, "Negative strides are not supported at the moment, got strides: ", strides);
  }
  int64_t isz = static_cast<int64_t>(itemsize());
  int64_t nbytes_dense;
  EMBER_CHECK(!__builtin_mul_overflow(n, isz, &nbytes_dense), "Storage size calculation overflowed with sizes=", sizes);
  if (n > 0) {
    const int64_t needed = required_storage_bytes(sizes, strides, off, isz);
    EMBER_CHECK(static_cast<size_t>(needed) <= storage_->nbytes(), "setStorage: sizes ", sizes, ", strides ", strides,
                ", storage offset ", off, ", and itemsize ", isz, " requiring a storage size of ", needed,
                " are out of bounds for storage of size ", storage_->nbytes());
  }
  sizes_ = DimVector(sizes);
  strides_ = DimVector(strides);
  storage_offset_ = off;
  numel_ = n;
  is_contiguous_ = compute_contiguous(sizes_, strides_);
}

void TensorImpl::set_storage_offset(int64_t offset) { set_sizes_and_strides(sizes_, strides_, offset); }

void TensorImpl::set_storage(intrusive_ptr<StorageImpl> s) {
  EMBER_CHECK(s->device() == storage_->device() || s->device().type == device_.type,
              "set_storage: expected a storage on ", device_, " but got one on ", s->device());
  storage_ = std::move(s);
  device_ = storage_->device();
}

intrusive_ptr<TensorImpl> TensorImpl::make_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  auto v = make_intrusive<TensorImpl>(storage_, dtype_, key_set_);
  v->version_counter_ = version_counter_;
  v->set_sizes_and_strides(sizes, strides, offset);
  return v;
}

intrusive_ptr<TensorImpl> TensorImpl::shallow_copy() const {
  auto v = make_intrusive<TensorImpl>(storage_, dtype_, key_set_);
  v->version_counter_ = version_counter_;
  v->sizes_ = sizes_;
  v->strides_ = strides_;
  v->storage_offset_ = storage_offset_;
  v->numel_ = numel_;
  v->is_contiguous_ = is_contiguous_;
  v->is_wrapped_number_ = is_wrapped_number_;
  return v;
}

}  // namespace ember::c10
