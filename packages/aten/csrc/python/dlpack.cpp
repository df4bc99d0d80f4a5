// DLPack: tensors in and out as capsules (the data-interchange ABI of the Python array
// world: NumPy, PyTorch, CuPy, JAX).
//
// Ownership protocol (the DLPack spec):
// - An exported capsule is named "dltensor" (legacy DLManagedTensor) or
//   "dltensor_versioned" (DLManagedTensorVersioned, DLPack >= 1.0). Its manager_ctx
//   holds a reference to the TensorImpl, so the memory lives while the consumer uses it.
// - The consumer renames the capsule to "used_dltensor"/"used_dltensor_versioned" and
//   becomes responsible for calling the managed tensor's deleter exactly once. The
//   capsule's own destructor calls the deleter only if nobody consumed it.
// - ember as a consumer does the same: it renames the capsule, then the StorageImpl it
//   builds over the memory calls the producer's deleter when the last view dies.
// Our deleter only drops a C++ reference (no Python calls), so it is safe to run at
// interpreter shutdown or from any thread.
#include <algorithm>
#include <cstring>
#include <vector>

#include <ember/aten/python/casters.h>

namespace py = pybind11;
using namespace ember;
using namespace ember::at;

namespace {

// ---- the DLPack ABI (dlpack.h, version 1.1) ---------------------------------------------
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 1;
constexpr uint64_t kFlagReadOnly = 1ULL << 0;
constexpr uint64_t kFlagIsCopied = 1ULL << 1;

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

[[noreturn]] void buffer_error(const std::string& msg) { throw py::buffer_error(msg); }

// ---- dtypes -----------------------------------------------------------------------------------
DLDataType to_dl_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return {kDLBool, 8, 1};
    case ScalarType::Byte:
      return {kDLUInt, 8, 1};
    case ScalarType::Char:
      return {kDLInt, 8, 1};
    case ScalarType::Short:
      return {kDLInt, 16, 1};
    case ScalarType::Int:
      return {kDLInt, 32, 1};
    case ScalarType::Long:
      return {kDLInt, 64, 1};
    case ScalarType::Half:
      return {kDLFloat, 16, 1};
    case ScalarType::BFloat16:
      return {kDLBfloat, 16, 1};
    case ScalarType::Float:
      return {kDLFloat, 32, 1};
    case ScalarType::Double:
      return {kDLFloat, 64, 1};
    default:
      buffer_error("__dlpack__: dtype has no DLPack equivalent");
  }
}

ScalarType from_dl_dtype(DLDataType d) {
  if (d.lanes != 1) {
    buffer_error("from_dlpack: vector dtypes (lanes=" + std::to_string(d.lanes) + ") are not supported");
  }
  switch (d.code) {
    case kDLBool:
      if (d.bits == 8) return ScalarType::Bool;
      break;
    case kDLUInt:
      if (d.bits == 8) return ScalarType::Byte;
      break;
    case kDLInt:
      if (d.bits == 8) return ScalarType::Char;
      if (d.bits == 16) return ScalarType::Short;
      if (d.bits == 32) return ScalarType::Int;
      if (d.bits == 64) return ScalarType::Long;
      break;
    case kDLFloat:
      if (d.bits == 16) return ScalarType::Half;
      if (d.bits == 32) return ScalarType::Float;
      if (d.bits == 64) return ScalarType::Double;
      break;
    case kDLBfloat:
      if (d.bits == 16) return ScalarType::BFloat16;
      break;
    default:
      break;
  }
  buffer_error("from_dlpack: unsupported DLPack dtype (type code " + std::to_string(d.code) + ", " +
               std::to_string(d.bits) +
               " bits); ember supports bool, uint8, int8-int64, float16, bfloat16, "
               "float32 and float64");
}

// ---- export -----------------------------------------------------------------------------------
struct ExportContext {
  c10::intrusive_ptr<TensorImpl> impl;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

template <class Managed>
void export_deleter(Managed* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);
  delete self;
}

void fill_dl_tensor(DLTensor& dl, ExportContext* ctx) {
  const TensorImpl& impl = *ctx->impl;
  dl.data = impl.numel() == 0 ? nullptr : impl.data();
  const Device dev = impl.device();
  if (dev.is_cpu()) {
    dl.device = {kDLCPU, 0};
  } else if (dev.is_cuda()) {
    dl.device = {kDLCUDA, dev.has_index() ? dev.index : 0};
  } else {
    buffer_error("__dlpack__: the tensor's device has no DLPack equivalent");
  }
  dl.ndim = static_cast<int32_t>(impl.dim());
  dl.dtype = to_dl_dtype(impl.dtype());
  ctx->shape.assign(impl.sizes().begin(), impl.sizes().end());
  ctx->strides.assign(impl.strides().begin(), impl.strides().end());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
}

void legacy_capsule_destructor(PyObject* capsule) {
  // Consumed capsules (renamed) belong to their consumer.
  if (!PyCapsule_IsValid(capsule, kLegacyName)) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
  if (m && m->deleter) m->deleter(m);
}

void versioned_capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kVersionedName)) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
  if (m && m->deleter) m->deleter(m);
}

py::object to_dlpack(const Tensor& t, bool versioned, bool copied, uint32_t minor) {
  auto ctx = std::make_unique<ExportContext>();
  ctx->impl = t.impl();
  if (!versioned) {
    auto m = std::make_unique<DLManagedTensor>();
    fill_dl_tensor(m->dl_tensor, ctx.get());
    m->manager_ctx = ctx.get();
    m->deleter = &export_deleter<DLManagedTensor>;
    PyObject* cap = PyCapsule_New(m.get(), kLegacyName, &legacy_capsule_destructor);
    if (!cap) throw py::error_already_set();
    ctx.release();
    m.release();
    return py::reinterpret_steal<py::object>(cap);
  }
  auto m = std::make_unique<DLManagedTensorVersioned>();
  // A consumer that asked for max_version (1, 0) gets 1.0: the layout is the same, the label must not exceed it.
  m->version = {kDLPackMajor, std::min(minor, kDLPackMinor)};
  m->flags = copied ? kFlagIsCopied : 0;
  fill_dl_tensor(m->dl_tensor, ctx.get());
  m->manager_ctx = ctx.get();
  m->deleter = &export_deleter<DLManagedTensorVersioned>;
  PyObject* cap = PyCapsule_New(m.get(), kVersionedName, &versioned_capsule_destructor);
  if (!cap) throw py::error_already_set();
  ctx.release();
  m.release();
  return py::reinterpret_steal<py::object>(cap);
}

// ---- import -----------------------------------------------------------------------------------
void call_legacy_deleter(void* p) {
  auto* m = static_cast<DLManagedTensor*>(p);
  if (m->deleter) m->deleter(m);
}

void call_versioned_deleter(void* p) {
  auto* m = static_cast<DLManagedTensorVersioned*>(p);
  if (m->deleter) m->deleter(m);
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) buffer_error("from_dlpack: the tensor's extent overflows int64");
  return r;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) buffer_error("from_dlpack: the tensor's extent overflows int64");
  return r;
}

Tensor from_dlpack_capsule(py::handle capsule) {
  PyObject* cap = capsule.ptr();
  if (!PyCapsule_CheckExact(cap)) {
    throw c10::TypeError(std::string("from_dlpack: expected a DLPack capsule, got ") + Py_TYPE(cap)->tp_name);
  }
  const bool versioned = PyCapsule_IsValid(cap, kVersionedName) != 0;
  if (!versioned && !PyCapsule_IsValid(cap, kLegacyName)) {
    if (PyCapsule_IsValid(cap, kUsedLegacyName) || PyCapsule_IsValid(cap, kUsedVersionedName)) {
      throw c10::ValueError("from_dlpack: this DLPack capsule was already consumed (a capsule can be used once)");
    }
    const char* name = PyCapsule_GetName(cap);
    PyErr_Clear();
    throw c10::ValueError(
        std::string("from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got '") +
        (name ? name : "") + "'");
  }
  void* managed = PyCapsule_GetPointer(cap, versioned ? kVersionedName : kLegacyName);
  if (!managed) throw py::error_already_set();
  DLTensor* dl = nullptr;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    if (m->version.major != kDLPackMajor) {
      buffer_error("from_dlpack: DLPack version " + std::to_string(m->version.major) + "." +
                   std::to_string(m->version.minor) + " is not supported (ember reads major version 1)");
    }
    if (m->flags & kFlagReadOnly) {
      // As from_numpy on a read-only array (and PyTorch's from_dlpack): shared, with a warning.
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "The given DLPack tensor is read-only, and ember does not support non-writable tensors. This "
                       "means writing to this tensor will result in undefined behavior. You may want to pass "
                       "copy=True to protect its data.",
                       1) != 0) {
        throw py::error_already_set();
      }
    }
    dl = &m->dl_tensor;
  } else {
    dl = &static_cast<DLManagedTensor*>(managed)->dl_tensor;
  }

  Device device(DeviceType::CPU);
  switch (dl->device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
#ifdef EMBER_WITH_CUDA
      device = Device(DeviceType::CUDA, static_cast<int8_t>(dl->device.device_id));
      break;
#else
      buffer_error("from_dlpack: the tensor is on a CUDA device but this ember was built without CUDA");
#endif
    default:
      buffer_error("from_dlpack: unsupported DLPack device type " + std::to_string(dl->device.device_type));
  }
  const ScalarType dtype = from_dl_dtype(dl->dtype);
  if (dl->ndim < 0 || dl->ndim > 64) {
    buffer_error("from_dlpack: invalid number of dimensions " + std::to_string(dl->ndim));
  }
  const int64_t ndim = dl->ndim;
  std::vector<int64_t> sizes(dl->shape, dl->shape + ndim);
  std::vector<int64_t> strides;
  if (dl->strides != nullptr) {
    strides.assign(dl->strides, dl->strides + ndim);
  } else {
    auto cs = c10::contiguous_strides(sizes);
    strides.assign(cs.begin(), cs.end());
  }
  int64_t numel = 1;
  int64_t extent = 1;  // elements from the first to one past the furthest
  for (int64_t d = 0; d < ndim; ++d) {
    if (sizes[d] < 0) buffer_error("from_dlpack: negative size in the DLPack shape");
    if (strides[d] < 0) {
      buffer_error("from_dlpack: negative strides are not supported (ember tensors have non-negative strides)");
    }
    numel = checked_mul(numel, sizes[d]);
    if (sizes[d] > 0) extent = checked_add(extent, checked_mul(sizes[d] - 1, strides[d]));
  }
  const int64_t itemsize = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t nbytes = numel == 0 ? 0 : checked_mul(extent, itemsize);
  char* data = static_cast<char*>(dl->data);
  if (data != nullptr) data += dl->byte_offset;

  // Validated: take ownership. From here the capsule is ours (renamed), and the
  // storage calls the producer's deleter when the last view of it dies.
  if (PyCapsule_SetName(cap, versioned ? kUsedVersionedName : kUsedLegacyName) != 0) throw py::error_already_set();
  c10::DataPtr ptr(data, managed, versioned ? &call_versioned_deleter : &call_legacy_deleter, device);
  auto storage = c10::make_intrusive<c10::StorageImpl>(static_cast<size_t>(nbytes), std::move(ptr), nullptr, false);
  auto impl = c10::make_intrusive<TensorImpl>(std::move(storage), dtype);
  impl->set_sizes_and_strides(sizes, strides, 0);
  return Tensor(std::move(impl));
}

}  // namespace

void init_dlpack(py::module_& m) {
  m.def("_to_dlpack", &to_dlpack, py::arg("tensor"), py::arg("versioned"), py::arg("copied") = false,
        py::arg("minor") = kDLPackMinor,
        "A DLPack capsule sharing the tensor's memory: 'dltensor_versioned' (DLPack 1.<minor>, at most 1.1) when "
        "versioned, else the legacy 'dltensor'. IS_COPIED is set when `copied`.");
  m.def("_from_dlpack_capsule", &from_dlpack_capsule, py::arg("capsule"),
        "A tensor over a DLPack capsule's memory (zero-copy); renames the capsule to used_dltensor[_versioned].");
  m.attr("_DLPACK_VERSION") = py::make_tuple(kDLPackMajor, kDLPackMinor);
}
