// copy_, contiguous, clone, to(dtype/device), fill_, zero_, item: the data-moving
// core every other kernel leans on.
#include "Copy.h"

#include <cmath>
#include <cstring>

#include "TensorFactories.h"

namespace ember::at::native {

DEFINE_DISPATCH(copy_stub);
DEFINE_DISPATCH(fill_stub);

void copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  if (self.is_same(src)) return;
  if (self.numel() == 0) {
    // Still broadcast-check, as PyTorch does.
    (void)infer_size(self.sizes(), src.sizes(), "copy_");
    return;
  }
  auto iter = TensorIteratorConfig()
                  .name("copy_")
                  .add_output(self)
                  .add_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .build();
  const DeviceType dt = (self.is_cuda() || src.is_cuda()) ? DeviceType::CUDA : DeviceType::CPU;
  copy_stub(dt, iter, non_blocking);
}

}  // namespace ember::at::native

namespace ember::at {

const Tensor& Tensor::copy_(const Tensor& src) const {
  native::copy_(*this, src, false);
  return *this;
}

namespace {

// PyTorch's checked conversion of a fill value: an integer must fit the integer dtype
// (an unsigned one also takes negatives down to -max, which wrap), a float must fit a
// floating dtype's range (inf and nan pass) and, converted to an integer dtype, its
// range; anything converts to bool.
void check_fill_value(const Scalar& v, ScalarType t) {
  if (t == ScalarType::Bool) return;
  double lo = 0, hi = 0;
  const char* name = "";
  switch (t) {
    case ScalarType::Byte:
      lo = -255, hi = 255, name = "uint8_t";
      break;
    case ScalarType::Char:
      lo = -128, hi = 127, name = "int8_t";
      break;
    case ScalarType::Short:
      lo = -32768, hi = 32767, name = "int16_t";
      break;
    case ScalarType::Int:
      lo = -2147483648.0, hi = 2147483647.0, name = "int";
      break;
    case ScalarType::Half:
      lo = -65504, hi = 65504, name = "c10::Half";
      break;
    case ScalarType::BFloat16:
      lo = -3.3895313892515355e38, hi = 3.3895313892515355e38, name = "c10::BFloat16";
      break;
    case ScalarType::Float:
      lo = -3.4028234663852886e38, hi = 3.4028234663852886e38, name = "float";
      break;
    case ScalarType::Long:
      lo = -9.2233720368547758e18, hi = 9.2233720368547758e18, name = "int64_t";
      break;
    default:
      return;  // double holds every Scalar
  }
  const double d = v.toDouble();
  const bool in_range = v.isFloatingPoint() && !std::isfinite(d) ? c10::isFloatingType(t) : (d >= lo && d <= hi);
  EMBER_CHECK(in_range, "value cannot be converted to type ", name, " without overflow");
}

}  // namespace

const Tensor& Tensor::fill_(const Scalar& v) const {
  check_fill_value(v, dtype());
  if (numel() == 0) return *this;
  auto iter =
      TensorIteratorConfig().name("fill_").add_output(*this).resize_outputs(false).check_all_same_dtype(false).build();
  native::fill_stub(device().type, iter, v);
  return *this;
}

const Tensor& Tensor::zero_() const { return fill_(Scalar(int64_t{0})); }

Tensor Tensor::contiguous(MemoryFormat fmt) const {
  if (is_contiguous(fmt)) return *this;
  Tensor out;
  if (fmt == MemoryFormat::ChannelsLast || fmt == MemoryFormat::ChannelsLast3d) {
    EMBER_CHECK(dim() == (fmt == MemoryFormat::ChannelsLast ? 4 : 5), "required rank ",
                fmt == MemoryFormat::ChannelsLast ? 4 : 5, " tensor to use channels_last format");
    DimVector strides(dim());
    const DimVector order = dim() == 4 ? DimVector{1, 3, 2, 0} : DimVector{1, 4, 3, 2, 0};
    int64_t acc = 1;
    for (int64_t d : order) {
      strides[d] = acc;
      acc *= std::max<int64_t>(size(d), 1);
    }
    out = empty_strided(sizes(), strides, dtype(), device());
  } else {
    out = empty(sizes(), dtype(), device());
  }
  out.copy_(*this);
  return out;
}

Tensor Tensor::clone() const {
  Tensor out = native::empty_like_preserve(*this, dtype(), device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(ScalarType t, bool copy) const {
  if (t == dtype() && !copy) return *this;
  Tensor out = empty_like(*this, t);
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device d, bool copy) const {
  if (d.type == device().type && (d.index < 0 || d.index == device().index) && !copy) return *this;
  Tensor out = empty_strided(
      sizes(), is_non_overlapping_and_dense() ? DimVector(strides()) : c10::contiguous_strides(sizes()), dtype(), d);
  out.copy_(*this);
  return out;
}

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  if (!is_cpu()) return to(Device(DeviceType::CPU)).item();
  const void* p = data_ptr();
  switch (dtype()) {
#define EMBER_ITEM_CASE_(ctype, name, pyname, cat, sgn) \
  case ScalarType::name:                                \
    return Scalar(*static_cast<const ctype*>(p));
    EMBER_FORALL_SCALAR_TYPES(EMBER_ITEM_CASE_)
#undef EMBER_ITEM_CASE_
    default:
      break;
  }
  EMBER_ERROR("item: unsupported dtype");
}

bool Scalar::fits(ScalarType t) const {
  if (tag_ == Tag::Double) {
    if (!c10::isFloatingType(t)) return false;
    return true;
  }
  const int64_t v = v_.i;
  switch (t) {
    case ScalarType::Bool:
      return v == 0 || v == 1;
    case ScalarType::Byte:
      return v >= 0 && v <= 255;
    case ScalarType::Char:
      return v >= -128 && v <= 127;
    case ScalarType::Short:
      return v >= -32768 && v <= 32767;
    case ScalarType::Int:
      return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    default:
      return true;
  }
}

}  // namespace ember::at

namespace ember::at::native {

Tensor copy_kernel_op(const Tensor& self, const Tensor& src, bool non_blocking) {
  copy_(self, src, non_blocking);
  return self;
}

Tensor fill_scalar_(const Tensor& self, const Scalar& value) {
  self.fill_(value);
  return self;
}

Tensor fill_tensor_(const Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  self.fill_(value.item());
  return self;
}

Tensor zero_(const Tensor& self) {
  self.zero_();
  return self;
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like_format(self, self.dtype(), self.device(), memory_format.value_or(MemoryFormat::Preserve));
  out.copy_(self);
  return out;
}

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) { return self.contiguous(memory_format); }

}  // namespace ember::at::native
