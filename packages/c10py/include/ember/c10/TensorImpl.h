#pragma once
// TensorImpl: the metadata that turns a StorageImpl into a tensor -- sizes,
// strides, storage offset, dtype, device, dispatch key set -- plus the version
// counter that every view of one base shares (autograd uses it to detect an
// in-place change of a tensor it saved). Views are TensorImpls over the same
// StorageImpl with other geometry; making one never copies data.

#include <atomic>
#include <cstdint>
#include <optional>

#include <ember/c10/DispatchKey.h>
#include <ember/c10/ScalarType.h>
#include <ember/c10/StorageImpl.h>
#include <ember/c10/util/SmallVector.h>

namespace ember::c10 {

// Shared by a base tensor and all its views; bumped by every in-place write.
class EMBER_C10_API VersionCounter : public intrusive_ptr_target {
 public:
  uint32_t current() const { return version_.load(std::memory_order_relaxed); }
  void bump() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

// Strides of a contiguous (row-major) tensor of these sizes. Size-0/1 dims get the
// stride they would have if they were size 1, as PyTorch.
EMBER_C10_API DimVector contiguous_strides(IntArrayRef sizes);
// Number of elements, with a RuntimeError on negative sizes or overflow.
EMBER_C10_API int64_t checked_numel(IntArrayRef sizes);
// Wraps a possibly negative dim into [0, ndim). IndexError "Dimension out of range
// (expected to be in range of [-2, 1], but got 2)" otherwise. A 0-dim tensor accepts
// dims -1 and 0 when wrap_scalar (as PyTorch).
EMBER_C10_API int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool wrap_scalar = true);
// Whether these sizes/strides describe a row-major contiguous layout.
EMBER_C10_API bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides);
// Whether the elements cover a dense block of memory with no overlap (any order).
EMBER_C10_API bool compute_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

class EMBER_C10_API TensorImpl : public intrusive_ptr_target {
 public:
  // A 1-d, 0-element tensor over `storage` (call a set_sizes_* next). The key set
  // defaults to the storage device's backend key.
  TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype);
  TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, DispatchKeySet key_set);
  EMBER_DISABLE_COPY_AND_ASSIGN(TensorImpl);

  // New storage of the right size from the device's allocator; contiguous.
  static intrusive_ptr<TensorImpl> empty(IntArrayRef sizes, ScalarType dtype, Device device);
  static intrusive_ptr<TensorImpl> empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                                                 Device device);

  // ---- geometry ----
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t d) const { return sizes_[maybe_wrap_dim(d, dim(), false)]; }
  int64_t stride(int64_t d) const { return strides_[maybe_wrap_dim(d, dim(), false)]; }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return is_contiguous_; }
  bool is_non_overlapping_and_dense() const;

  // Contiguous strides for `sizes`; the storage must be large enough (or resizable:
  // then it grows, as resize_ does).
  void set_sizes_contiguous(IntArrayRef sizes);
  // Validated: sizes >= 0, strides >= 0, numel*itemsize fits int64, and the
  // furthest element lies inside the storage (RuntimeError naming all of them).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides,
                             std::optional<int64_t> storage_offset = std::nullopt);
  void set_storage_offset(int64_t offset);
  // Grows the storage if needed so the current geometry fits (used by resize_).
  void ensure_storage_fits();

  // ---- type, device, keys ----
  ScalarType dtype() const { return dtype_; }
  size_t itemsize() const { return elementSize(dtype_); }
  Device device() const { return device_; }
  DispatchKeySet key_set() const { return key_set_; }
  void set_key_set(DispatchKeySet ks) { key_set_ = ks; }
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool w) { is_wrapped_number_ = w; }

  // ---- data ----
  StorageImpl* storage() const { return storage_.get(); }
  const intrusive_ptr<StorageImpl>& storage_ptr() const { return storage_; }
  void set_storage(intrusive_ptr<StorageImpl> s);
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(itemsize());
  }
  template <typename T>
  T* data_ptr() const {
    return static_cast<T*>(data());
  }
  size_t nbytes() const { return static_cast<size_t>(numel_) * itemsize(); }

  // ---- version counter ----
  uint32_t version() const { return version_counter_->current(); }
  void bump_version() { version_counter_->bump(); }
  const intrusive_ptr<VersionCounter>& version_counter() const { return version_counter_; }
  void set_version_counter(intrusive_ptr<VersionCounter> vc) { version_counter_ = std::move(vc); }

  // A view: same storage and version counter, other geometry (validated).
  intrusive_ptr<TensorImpl> make_view(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const;
  // An alias with the same geometry (detach/alias).
  intrusive_ptr<TensorImpl> shallow_copy() const;

 private:
  void refresh_numel_and_contiguity();

  intrusive_ptr<StorageImpl> storage_;
  intrusive_ptr<VersionCounter> version_counter_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  ScalarType dtype_;
  Device device_;
  DispatchKeySet key_set_;
  bool is_contiguous_ = true;
  bool is_wrapped_number_ = false;
};

using TensorImplPtr = intrusive_ptr<TensorImpl>;
using StorageImplPtr = intrusive_ptr<StorageImpl>;

}  // namespace ember::c10
