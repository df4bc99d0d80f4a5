#pragma once
// at::Tensor: the C++ handle kernels work with -- one intrusive pointer to a
// c10::TensorImpl. Copying a Tensor copies the handle, never the data. In Python
// the same TensorImpl is held by an `ember.aten.Tensor` object (see
// python/tensor_caster.h for the conversion in both directions).

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ember/aten/Scalar.h>
#include <ember/c10/TensorImpl.h>

namespace ember::at {

using c10::Device;
using c10::DeviceType;
using c10::DimVector;
using c10::IntArrayRef;
using c10::ScalarType;
using c10::TensorImpl;

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(c10::intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_.defined(); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const c10::intrusive_ptr<TensorImpl>& impl() const { return impl_; }

  // ---- metadata ----
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t d) const { return impl_->size(d); }
  int64_t stride(int64_t d) const { return impl_->stride(d); }
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  ScalarType dtype() const { return impl_->dtype(); }
  size_t itemsize() const { return impl_->itemsize(); }
  size_t element_size() const { return impl_->itemsize(); }
  size_t nbytes() const { return impl_->nbytes(); }
  Device device() const { return impl_->device(); }
  bool is_cpu() const { return impl_->device().is_cpu(); }
  bool is_cuda() const { return impl_->device().is_cuda(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_contiguous(MemoryFormat fmt) const;
  bool is_non_overlapping_and_dense() const { return impl_->is_non_overlapping_and_dense(); }
  bool is_wrapped_number() const { return impl_->is_wrapped_number(); }
  bool is_floating_point() const { return c10::isFloatingType(dtype()); }
  c10::StorageImpl* storage() const { return impl_->storage(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  bool is_alias_of(const Tensor& o) const { return impl_->storage() == o.impl_->storage(); }
  uint32_t version() const { return impl_->version(); }
  void bump_version() const { impl_->bump_version(); }

  // ---- data ----
  void* data_ptr() const { return impl_->data(); }
  // Checked: T must be the tensor's dtype.
  template <typename T>
  T* data_ptr() const {
    EMBER_CHECK(c10::CppTypeToScalarType<T>::value == dtype(), "expected scalar type ",
                c10::toPythonName(c10::CppTypeToScalarType<T>::value), " but found ", c10::toPythonName(dtype()));
    return static_cast<T*>(impl_->data());
  }

  // ---- views (metadata only) ----
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset = std::nullopt) const;
  Tensor alias() const { return Tensor(impl_->shallow_copy()); }
  // A view with these sizes; RuntimeError if the strides cannot express it (use reshape).
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;

  // ---- helpers kernels use (direct C++ calls, no dispatch) ----
  Tensor contiguous(MemoryFormat fmt = MemoryFormat::Contiguous) const;
  Tensor to(ScalarType dtype, bool copy = false) const;
  Tensor to(Device device, bool copy = false) const;
  Tensor clone() const;
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& fill_(const Scalar& v) const;
  const Tensor& zero_() const;
  Scalar item() const;

  // "float32[2, 3]" (for error messages).
  std::string toString() const;

 private:
  c10::intrusive_ptr<TensorImpl> impl_;
};

using TensorList = std::vector<Tensor>;

// ---- allocation ----
Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device = Device(DeviceType::CPU));
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device = Device(DeviceType::CPU));
// Same sizes; strides follow `t` when it is non-overlapping and dense (Preserve), else contiguous.
Tensor empty_like(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt,
                  MemoryFormat fmt = MemoryFormat::Preserve);
Tensor zeros(IntArrayRef sizes, ScalarType dtype, Device device = Device(DeviceType::CPU));
Tensor full(IntArrayRef sizes, const Scalar& v, ScalarType dtype, Device device = Device(DeviceType::CPU));
// A 0-dim tensor marked as a wrapped number (a Python scalar in a tensor position):
// bool -> bool, int -> int64, float -> float64; type promotion treats it as weak.
Tensor wrapped_scalar_tensor(const Scalar& s, Device device = Device(DeviceType::CPU));
// 0-dim tensor of dtype `t` holding s.
Tensor scalar_tensor(const Scalar& s, ScalarType t, Device device = Device(DeviceType::CPU));

// PyTorch's resize_output: an out= tensor of the wrong shape is resized (it must not
// be a view that would need new storage while shared); same shape: untouched.
// Returns true if it resized.
bool resize_output(const Tensor& out, IntArrayRef shape);
// In-place resize of t to sizes (contiguous strides), growing the storage if needed.
void resize_(const Tensor& t, IntArrayRef sizes);

// ---- global settings (ember.aten.set_default_dtype etc.) ----
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);
int get_num_threads();
void set_num_threads(int n);

// Checks for kernels: same device, expected dtypes, dims.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
std::string shape_str(IntArrayRef sizes);  // "[2, 3]"

}  // namespace ember::at
