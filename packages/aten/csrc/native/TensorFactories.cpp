// Factory kernels: empty, empty_strided, scalar_tensor, _to_copy, zeros/ones/full
// (and their out= and _like / new_ forms), arange, linspace, logspace, eye.
//
// TensorOptions arrive as dtype / device / pin_memory (layout is dropped by the
// codegen; requires_grad is set by the generated Python function afterwards).
// pin_memory=True allocates page-locked host memory from c10py's pinned allocator (CUDA
// builds with a device); without CUDA, or for a CUDA result, it raises PyTorch's errors
// (pinned_requested). The rand* factories use the same helpers (Distributions.cpp).
// An unspecified dtype is the default float dtype, except where PyTorch infers it
// from the values: full (from fill_value) and arange (int64 for integer bounds).
#include "TensorFactories.h"

#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/TensorIterator.h>
#include <ember/c10/cuda/CUDAFunctions.h>

namespace ember::at::native {

void copy_(const Tensor& self, const Tensor& src, bool non_blocking);  // Copy.cpp

namespace {

Device resolve_device(const std::optional<Device>& d) {
  if (!d) return Device(DeviceType::CPU);
  return *d;
}

void check_size_nonnegative(IntArrayRef size) {
  for (int64_t s : size) {
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  }
}

Tensor new_tensor(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<bool> pin_memory) {
  check_size_nonnegative(size);
  return factory_empty(size, dtype.value_or(get_default_dtype()), resolve_device(device), pin_memory);
}

// The dtype of full(size, v) without dtype=: bool -> bool, int -> int64, float -> default.
ScalarType fill_value_dtype(const Scalar& v) {
  if (v.isBoolean()) return ScalarType::Bool;
  if (v.isIntegral(false)) return ScalarType::Long;
  return get_default_dtype();
}

DimVector channels_last_strides(IntArrayRef sizes, MemoryFormat fmt) {
  const int64_t nd = fmt == MemoryFormat::ChannelsLast ? 4 : 5;
  EMBER_CHECK(static_cast<int64_t>(sizes.size()) == nd, "required rank ", nd, " tensor to use ",
              nd == 4 ? "channels_last" : "channels_last_3d", " format");
  const DimVector order = nd == 4 ? DimVector{1, 3, 2, 0} : DimVector{1, 4, 3, 2, 0};
  DimVector strides(nd);
  int64_t acc = 1;
  for (int64_t d : order) {
    strides[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

}  // namespace

// ---- allocation helpers (TensorFactories.h) ------------------------------------------

bool pinned_requested(std::optional<bool> pin_memory, Device device) {
  if (!pin_memory.value_or(false)) return false;
  EMBER_CHECK(device.is_cpu(), "Only dense CPU tensors can be pinned");
  EMBER_CHECK(c10::cuda::is_available(),
              "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available "
              "on this system.");
  return true;
}

Tensor empty_strided_pinned(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  check_size_nonnegative(sizes);
  EMBER_CHECK(sizes.size() == strides.size(), "empty_strided: got ", sizes.size(), " sizes but ", strides.size(),
              " strides");
  // bytes as TensorImpl::empty_strided counts them: 1 + sum (size - 1) * stride elements
  int64_t extent = c10::checked_numel(sizes) > 0 ? 1 : 0;
  for (size_t i = 0; extent > 0 && i < sizes.size(); ++i) {
    EMBER_CHECK(strides[i] >= 0, "empty_strided: negative strides are not supported, got strides ", strides);
    int64_t span;
    EMBER_CHECK(
        !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) && !__builtin_add_overflow(extent, span, &extent),
        "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  }
  int64_t nbytes;
  EMBER_CHECK(!__builtin_mul_overflow(extent, static_cast<int64_t>(c10::elementSize(dtype)), &nbytes),
              "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  auto storage =
      c10::make_intrusive<c10::StorageImpl>(static_cast<size_t>(nbytes), c10::cuda::GetPinnedHostAllocator(), true);
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), dtype);
  impl->set_sizes_and_strides(sizes, strides);
  return Tensor(std::move(impl));
}

Tensor factory_empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device,
                             std::optional<bool> pin_memory) {
  if (pinned_requested(pin_memory, device)) return empty_strided_pinned(sizes, strides, dtype);
  return at::empty_strided(sizes, strides, dtype, device);
}

Tensor factory_empty(IntArrayRef sizes, ScalarType dtype, Device device, std::optional<bool> pin_memory) {
  if (pinned_requested(pin_memory, device)) return empty_strided_pinned(sizes, c10::contiguous_strides(sizes), dtype);
  return at::empty(sizes, dtype, device);
}

Tensor factory_empty_like(const Tensor& like, ScalarType dtype, Device device, MemoryFormat fmt,
                          std::optional<bool> pin_memory) {
  if (pinned_requested(pin_memory, device)) return empty_strided_pinned(like.sizes(), like_strides(like, fmt), dtype);
  return empty_like_format(like, dtype, device, fmt);
}

DimVector like_strides(const Tensor& like, MemoryFormat fmt) {
  if (fmt == MemoryFormat::Contiguous) return c10::contiguous_strides(like.sizes());
  if (fmt != MemoryFormat::Preserve) return channels_last_strides(like.sizes(), fmt);
  if (like.is_non_overlapping_and_dense()) return DimVector(like.strides());
  // Dense strides in like's order: sort dims innermost-first by stride; a stride-0
  // (broadcast) dim or a tie expresses no order and keeps the logical one.
  const int64_t nd = like.dim();
  DimVector perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;  // innermost first
  for (int64_t i = 1; i < nd; ++i) {
    for (int64_t j = i; j > 0; --j) {
      const int64_t s0 = like.stride(perm[j - 1]), s1 = like.stride(perm[j]);
      if (s0 == 0 || s1 == 0 || s0 <= s1) break;
      std::swap(perm[j - 1], perm[j]);
    }
  }
  DimVector strides(nd);
  int64_t acc = 1;
  for (int64_t d : perm) {
    strides[d] = acc;
    acc *= std::max<int64_t>(like.size(d), 1);
  }
  return strides;
}

Tensor empty_like_preserve(const Tensor& like, ScalarType dtype, Device device) {
  return at::empty_strided(like.sizes(), like_strides(like, MemoryFormat::Preserve), dtype, device);
}

Tensor empty_like_format(const Tensor& like, ScalarType dtype, Device device, MemoryFormat fmt) {
  if (fmt == MemoryFormat::Contiguous) return at::empty(like.sizes(), dtype, device);
  return at::empty_strided(like.sizes(), like_strides(like, fmt), dtype, device);
}

// ---- empty, empty_strided, scalar_tensor, _to_copy --------------------------------------

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                           std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  check_size_nonnegative(size);
  const ScalarType dt = dtype.value_or(get_default_dtype());
  const Device dev = resolve_device(device);
  if (memory_format &&
      (*memory_format == MemoryFormat::ChannelsLast || *memory_format == MemoryFormat::ChannelsLast3d)) {
    return factory_empty_strided(size, channels_last_strides(size, *memory_format), dt, dev, pin_memory);
  }
  EMBER_CHECK(!memory_format || *memory_format != MemoryFormat::Preserve,
              "preserve memory format is unsupported by the empty operator");
  return factory_empty(size, dt, dev, pin_memory);
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Device> device, std::optional<bool> pin_memory) {
  check_size_nonnegative(size);
  return factory_empty_strided(size, stride, dtype.value_or(get_default_dtype()), resolve_device(device), pin_memory);
}

Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype, std::optional<Device> device,
                     std::optional<bool> pin_memory) {
  const ScalarType dt = dtype.value_or(get_default_dtype());
  if (pinned_requested(pin_memory, resolve_device(device))) {
    Tensor t = empty_strided_pinned({}, {}, dt);
    t.fill_(s);
    return t;
  }
  return at::scalar_tensor(s, dt, resolve_device(device));
}

// The copy behind Tensor.to(): new memory of the requested dtype/device, laid out
// like self (preserve_format) unless a format is asked for, then copy_.
Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                std::optional<bool> pin_memory, bool non_blocking, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like_format(self, dtype.value_or(self.dtype()), device ? *device : self.device(),
                                 memory_format.value_or(MemoryFormat::Preserve));
  copy_(out, self, non_blocking);  // non_blocking: a pinned host <-> device copy is asynchronous
  return out;
}

// ---- zeros, ones, full -------------------------------------------------------------------

Tensor zeros_factory(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                     std::optional<bool> pin_memory) {
  Tensor t = new_tensor(size, dtype, device, pin_memory);
  t.zero_();
  return t;
}

Tensor zeros_out(IntArrayRef size, const Tensor& out) {
  check_size_nonnegative(size);
  resize_output(out, size);
  out.zero_();
  return out;
}

Tensor ones_factory(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                    std::optional<bool> pin_memory) {
  Tensor t = new_tensor(size, dtype, device, pin_memory);
  t.fill_(Scalar(int64_t{1}));
  return t;
}

Tensor ones_out(IntArrayRef size, const Tensor& out) {
  check_size_nonnegative(size);
  resize_output(out, size);
  out.fill_(Scalar(int64_t{1}));
  return out;
}

Tensor full_factory(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
                    std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor t = new_tensor(size, dtype.value_or(fill_value_dtype(fill_value)), device, pin_memory);
  t.fill_(fill_value);
  return t;
}

Tensor full_out(IntArrayRef size, const Scalar& fill_value, const Tensor& out) {
  check_size_nonnegative(size);
  resize_output(out, size);
  out.fill_(fill_value);
  return out;
}

// ---- *_like and new_* -----------------------------------------------------------------------

namespace {
Tensor like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
            std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  return factory_empty_like(self, dtype.value_or(self.dtype()), device.value_or(self.device()),
                            memory_format.value_or(MemoryFormat::Preserve), pin_memory);
}
}  // namespace

Tensor empty_like_factory(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                          std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  return like(self, dtype, device, pin_memory, memory_format);
}

Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  Tensor t = like(self, dtype, device, pin_memory, memory_format);
  t.zero_();
  return t;
}

Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                 std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  Tensor t = like(self, dtype, device, pin_memory, memory_format);
  t.fill_(Scalar(int64_t{1}));
  return t;
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Device> device, std::optional<bool> pin_memory,
                 std::optional<MemoryFormat> memory_format) {
  Tensor t = like(self, dtype, device, pin_memory, memory_format);
  t.fill_(fill_value);
  return t;
}

Tensor new_empty(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                 std::optional<bool> pin_memory) {
  return new_tensor(size, dtype.value_or(self.dtype()), device.value_or(self.device()), pin_memory);
}

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  check_size_nonnegative(size);
  return factory_empty_strided(size, stride, dtype.value_or(self.dtype()), device.value_or(self.device()), pin_memory);
}

Tensor new_zeros(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                 std::optional<bool> pin_memory) {
  Tensor t = new_empty(self, size, dtype, device, pin_memory);
  t.zero_();
  return t;
}

Tensor new_ones(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device,
                std::optional<bool> pin_memory) {
  Tensor t = new_empty(self, size, dtype, device, pin_memory);
  t.fill_(Scalar(int64_t{1}));
  return t;
}

Tensor new_full(const Tensor& self, IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor t = new_empty(self, size, dtype, device, pin_memory);
  t.fill_(fill_value);
  return t;
}

// ---- arange -----------------------------------------------------------------------------------

namespace {

// Values are computed on the CPU in `out`'s dtype's accumulate type (int64 for
// integers, double otherwise), then copied to out's device.
template <typename scalar_t>
void arange_fill(const Scalar& start, const Scalar& end, const Scalar& step, const Tensor& out) {
  using acc_t = std::conditional_t<std::is_integral_v<scalar_t>, int64_t, double>;
  const acc_t xstart = start.to<acc_t>(), xend = end.to<acc_t>(), xstep = step.to<acc_t>();
  double size_d;
  if constexpr (std::is_same_v<scalar_t, int64_t>) {
    size_d = std::ceil(static_cast<double>(end.to<int64_t>() - start.to<int64_t>()) / step.to<int64_t>());
  } else {
    size_d = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  }
  // a nonzero step that is zero in an integer out's dtype (0.5 for int64): ValueError, as PyTorch's
  EMBER_CHECK_VALUE(xstep > 0 || xstep < 0 || step.to<double>() == 0, "step must be nonzero");
  EMBER_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(static_cast<double>(xstart)) && std::isfinite(static_cast<double>(xend)),
              "unsupported range: ", xstart, " -> ", xend);
  EMBER_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
              "upper bound and larger bound inconsistent with step sign");
  EMBER_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  const int64_t n = static_cast<int64_t>(size_d);
  resize_output(out, {n});
  if (n == 0) return;
  Tensor buf = out.is_cpu() && out.is_contiguous() ? out : at::empty({n}, out.dtype(), Device(DeviceType::CPU));
  scalar_t* p = static_cast<scalar_t*>(buf.data_ptr());
  parallel_for(0, n, GRAIN_SIZE, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      p[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(xstart + static_cast<acc_t>(i) * xstep));
    }
  });
  if (!buf.is_same(out)) out.copy_(buf);
}

ScalarType arange_dtype(std::initializer_list<const Scalar*> values) {
  for (const Scalar* v : values) {
    if (v->isFloatingPoint()) return get_default_dtype();
  }
  return ScalarType::Long;
}

}  // namespace

Tensor arange_out(const Scalar& start, const Scalar& end, const Scalar& step, const Tensor& out) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(out.dtype(), "arange", [&] { arange_fill<scalar_t>(start, end, step, out); });
  return out;
}

Tensor arange_end_out(const Scalar& end, const Tensor& out) {
  return arange_out(Scalar(int64_t{0}), end, Scalar(int64_t{1}), out);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<ScalarType> dtype,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  // a pinned storage grows from the pinned allocator when arange_out resizes it
  Tensor out =
      factory_empty({0}, dtype.value_or(arange_dtype({&start, &end, &step})), resolve_device(device), pin_memory);
  return arange_out(start, end, step, out);
}

Tensor arange_end(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Device> device,
                  std::optional<bool> pin_memory) {
  return arange_start_step(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dtype, device, pin_memory);
}

// ---- linspace, logspace ------------------------------------------------------------------------

namespace {

// PyTorch's linspace: the first half counts up from start, the second half down
// from end, so both ends are exact. Floating dtypes step in their own type (half
// types in float), integers in double.
template <typename scalar_t>
void linspace_fill(const Scalar& start, const Scalar& end, int64_t steps, std::optional<double> base, scalar_t* p) {
  using step_t = std::conditional_t<std::is_integral_v<scalar_t>, double, opmath_t<scalar_t>>;
  const step_t s = static_cast<step_t>(start.to<double>());
  const step_t e = static_cast<step_t>(end.to<double>());
  const step_t step = steps > 1 ? (e - s) / static_cast<step_t>(steps - 1) : step_t(0);
  const int64_t halfway = steps / 2;
  parallel_for(0, steps, GRAIN_SIZE, [&](int64_t b, int64_t end_i) {
    for (int64_t i = b; i < end_i; ++i) {
      const step_t x = steps == 1    ? s
                       : i < halfway ? s + step * static_cast<step_t>(i)
                                     : e - step * static_cast<step_t>(steps - i - 1);
      const auto v = base ? static_cast<step_t>(std::pow(*base, static_cast<double>(x))) : x;
      if constexpr (std::is_integral_v<scalar_t>) {
        p[i] = static_cast<scalar_t>(static_cast<int64_t>(v));  // through int64: no UB for negative -> uint8
      } else {
        p[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(v));
      }
    }
  });
}

// An integer linspace / logspace refuses ends its dtype cannot hold (inf, NaN, 300 for
// int8), as PyTorch's start.to<scalar_t>(): "value cannot be converted to type int8_t
// without overflow" (C++ type names, as PyTorch's message).
void check_space_ends(const Scalar& start, const Scalar& end, ScalarType t) {
  const char* name = nullptr;
  double lo = 0, hi = 0;
  switch (t) {
    case ScalarType::Byte:
      name = "uint8_t", lo = 0, hi = 255;
      break;
    case ScalarType::Char:
      name = "int8_t", lo = -128, hi = 127;
      break;
    case ScalarType::Short:
      name = "int16_t", lo = -32768, hi = 32767;
      break;
    case ScalarType::Int:
      name = "int", lo = -2147483648.0, hi = 2147483647.0;
      break;
    case ScalarType::Long:
      name = "int64_t", lo = -9223372036854775808.0, hi = 9223372036854775807.0;
      break;
    default:
      return;
  }
  for (const Scalar* s : {&start, &end}) {
    if (!s->isFloatingPoint()) {
      // c10's overflow rule for an integer into an unsigned type admits -max..max (uint8:
      // linspace(-10, 10, dtype=uint8) wraps, as in PyTorch)
      const double int_lo = t == ScalarType::Byte ? -hi : lo;
      EMBER_CHECK(t == ScalarType::Long ||
                      (static_cast<double>(s->toLong()) >= int_lo && static_cast<double>(s->toLong()) <= hi),
                  "value cannot be converted to type ", name, " without overflow");
      continue;
    }
    const double d = s->toDouble();
    EMBER_CHECK(d >= lo && (t == ScalarType::Long ? d < hi : d <= hi), "value cannot be converted to type ", name,
                " without overflow");
  }
}

Tensor space_out(const Scalar& start, const Scalar& end, int64_t steps, std::optional<double> base, const Tensor& out,
                 const char* name) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  check_space_ends(start, end, out.dtype());
  resize_output(out, {steps});
  if (steps == 0) return out;
  Tensor buf = out.is_cpu() && out.is_contiguous() ? out : at::empty({steps}, out.dtype(), Device(DeviceType::CPU));
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(out.dtype(), name, [&] {
    linspace_fill<scalar_t>(start, end, steps, base, static_cast<scalar_t*>(buf.data_ptr()));
  });
  if (!buf.is_same(out)) out.copy_(buf);
  return out;
}

}  // namespace

Tensor linspace_out(const Scalar& start, const Scalar& end, int64_t steps, const Tensor& out) {
  return space_out(start, end, steps, std::nullopt, out, "linspace");
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  return linspace_out(start, end, steps, new_tensor({steps}, dtype, device, pin_memory));
}

Tensor logspace_out(const Scalar& start, const Scalar& end, int64_t steps, double base, const Tensor& out) {
  return space_out(start, end, steps, base, out, "logspace");
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, std::optional<ScalarType> dtype,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  return logspace_out(start, end, steps, base, new_tensor({steps}, dtype, device, pin_memory));
}

// ---- eye ----------------------------------------------------------------------------------------

Tensor eye_m_out(int64_t n, int64_t m, const Tensor& out) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  resize_output(out, {n, m});
  out.zero_();
  const int64_t k = std::min(n, m);
  if (k > 0) out.as_strided({k}, {out.stride(0) + out.stride(1)}).fill_(Scalar(int64_t{1}));
  return out;
}

Tensor eye_out(int64_t n, const Tensor& out) { return eye_m_out(n, n, out); }

Tensor eye_m(int64_t n, int64_t m, std::optional<ScalarType> dtype, std::optional<Device> device,
             std::optional<bool> pin_memory) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  return eye_m_out(n, m, new_tensor({n, m}, dtype, device, pin_memory));
}

Tensor eye(int64_t n, std::optional<ScalarType> dtype, std::optional<Device> device, std::optional<bool> pin_memory) {
  return eye_m(n, n, dtype, device, pin_memory);
}

}  // namespace ember::at::native
