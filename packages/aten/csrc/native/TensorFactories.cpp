// Factory kernels: empty, empty_strided, scalar_tensor, _to_copy.
#include <ember/aten/TensorIterator.h>

namespace ember::at::native {

namespace {
Device resolve_device(const std::optional<Device>& d) {
  if (!d) return Device(DeviceType::CPU);
  return *d;
}
}  // namespace

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                           std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  }
  Tensor t = empty(size, dtype.value_or(get_default_dtype()), resolve_device(device));
  if (memory_format && (*memory_format == MemoryFormat::ChannelsLast || *memory_format == MemoryFormat::ChannelsLast3d)) {
    return t.contiguous(*memory_format);
  }
  return t;
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Device> device, std::optional<bool> pin_memory) {
  return at::empty_strided(size, stride, dtype.value_or(get_default_dtype()), resolve_device(device));
}

Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype, std::optional<Device> device,
                     std::optional<bool> pin_memory) {
  return at::scalar_tensor(s, dtype.value_or(get_default_dtype()), resolve_device(device));
}

// The copy behind Tensor.to(): new memory of the requested dtype/device, laid out
// like self when self is dense (preserve_format), then copy_.
Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                std::optional<bool> pin_memory, bool non_blocking, std::optional<MemoryFormat> memory_format) {
  const ScalarType dt = dtype.value_or(self.dtype());
  const Device dev = device ? *device : self.device();
  const MemoryFormat fmt = memory_format.value_or(MemoryFormat::Preserve);
  Tensor out;
  if (fmt == MemoryFormat::Preserve && self.is_non_overlapping_and_dense()) {
    out = at::empty_strided(self.sizes(), self.strides(), dt, dev);
  } else if (fmt == MemoryFormat::ChannelsLast || fmt == MemoryFormat::ChannelsLast3d) {
    out = at::empty(self.sizes(), dt, dev).contiguous(fmt);
  } else {
    out = at::empty(self.sizes(), dt, dev);
  }
  out.copy_(self);
  return out;
}

}  // namespace ember::at::native
