// Building tensors from Python data and back: tensor(data) / tolist() / from_numpy.
// Done in C++ because a nested list of a million numbers must not cost a million
// Python-level tensor operations.
#include <cstring>
#include <limits>
#include <string>

#include <ember/aten/Dispatch.h>
#include <ember/aten/python/casters.h>

namespace py = pybind11;
using namespace ember;
using namespace ember::at;

namespace {

// A NumPy scalar or 0-d array (np.float32(1.5), np.array(2)): its value and dtype.
bool unpack_numpy_scalar(py::handle obj, Scalar& value, std::optional<ScalarType>& dtype) {
  const char* type_name = Py_TYPE(obj.ptr())->tp_name;  // np.float64 is also a Python float
  if (std::strncmp(type_name, "numpy.", 6) != 0 || !py::hasattr(obj, "dtype") || !py::hasattr(obj, "ndim"))
    return false;
  if (obj.attr("ndim").cast<int64_t>() != 0) return false;
  const std::string kind = py::str(obj.attr("dtype").attr("kind"));
  if (kind == "b") {
    value = Scalar(obj.attr("item")().cast<bool>());
  } else if (kind == "i" || kind == "u") {
    value = Scalar(obj.attr("item")().cast<int64_t>());
  } else if (kind == "f") {
    value = Scalar(obj.attr("item")().cast<double>());
  } else {
    return false;
  }
  try {
    dtype = c10::parseScalarType(py::str(obj.attr("dtype").attr("name")));
  } catch (const std::exception&) {
    dtype = value.isFloatingPoint() ? get_default_dtype() : value.type();
  }
  return true;
}

// ---- tensor(data): three passes over hostile input -------------------------------------------
// 1. shape: follow the first element of each level down (as PyTorch), at most
//    kMaxDims levels, so a self-referential or 30,000-deep list is a ValueError
//    ("too many dimensions 'list'") instead of unbounded recursion;
// 2. dtype: every element, promoted together; the recursion stops at the shape's depth;
// 3. fill: every level re-read (PySequence_Fast) and checked against the shape before a
//    byte is written, because a sequence may change between passes or report a length
//    its iteration disagrees with. Nothing is written past the buffer, whatever the input.

constexpr size_t kMaxDims = 128;  // PyTorch's MAX_DIMS in tensor_new.cpp

std::string type_name_of(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

bool is_number_like(py::handle obj, Scalar& s, std::optional<ScalarType>& np_dtype) {
  return unpack_numpy_scalar(obj, s, np_dtype) || python::unpack_number(obj, s);
}

bool is_data_sequence(py::handle obj) {
  return PySequence_Check(obj.ptr()) && !PyUnicode_Check(obj.ptr()) && !PyBytes_Check(obj.ptr());
}

DimVector infer_shape(py::handle data) {
  DimVector shape;
  py::object obj = py::reinterpret_borrow<py::object>(data);
  while (true) {
    if (python::is_tensor(obj)) {
      for (int64_t s : python::unpack_tensor(obj).sizes()) shape.push_back(s);
      EMBER_CHECK_VALUE(shape.size() <= kMaxDims, "too many dimensions '", type_name_of(obj), "'");
      return shape;
    }
    Scalar s;
    std::optional<ScalarType> np_dtype;
    if (is_number_like(obj, s, np_dtype)) return shape;
    if (!PySequence_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) return shape;  // dtype pass names it
    const Py_ssize_t n = PySequence_Size(obj.ptr());
    if (n < 0) throw py::error_already_set();
    shape.push_back(n);
    // a str is a sequence of str without end: PyTorch names it "too many dimensions 'str'"
    EMBER_CHECK_VALUE(shape.size() <= kMaxDims && !PyUnicode_Check(obj.ptr()), "too many dimensions '",
                      type_name_of(obj), "'");
    if (n == 0) return shape;
    PyObject* first = PySequence_GetItem(obj.ptr(), 0);
    if (first == nullptr) throw py::error_already_set();
    obj = py::reinterpret_steal<py::object>(first);
  }
}

// The items of one level, read once (iteration, as PyTorch's PySequence_Fast), checked
// against the shape.
py::object sequence_items(py::handle obj, const DimVector& shape, size_t dim) {
  EMBER_CHECK_TYPE(is_data_sequence(obj), "not a sequence");
  PyObject* fast = PySequence_Fast(obj.ptr(), "not a sequence");
  if (fast == nullptr) throw py::error_already_set();
  py::object items = py::reinterpret_steal<py::object>(fast);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  EMBER_CHECK_VALUE(n == shape[dim], "expected sequence of length ", shape[dim], " at dim ", dim, " (got ", n, ")");
  return items;
}

// A tensor element covers the remaining dims exactly.
void check_tensor_element(const Tensor& t, const DimVector& shape, size_t dim) {
  IntArrayRef rest(shape.data() + dim, shape.size() - dim);
  if (t.sizes() == rest) return;
  if (t.dim() > 0 && dim < shape.size()) {
    EMBER_CHECK_VALUE(t.size(0) == shape[dim], "expected sequence of length ", shape[dim], " at dim ", dim, " (got ",
                      t.size(0), ")");
  }
  EMBER_CHECK_VALUE(false, "tensor(): a tensor of shape ", t.sizes(), " at dim ", dim, " where shape ", rest,
                    " was expected");
}

void infer_dtype(py::handle obj, const DimVector& shape, size_t dim, std::optional<ScalarType>& dtype) {
  auto merge = [&dtype](ScalarType t) { dtype = dtype ? c10::promoteTypes(*dtype, t) : t; };
  if (python::is_tensor(obj)) {
    Tensor t = python::unpack_tensor(obj);
    check_tensor_element(t, shape, dim);
    merge(t.dtype());
    return;
  }
  Scalar s;
  std::optional<ScalarType> np_dtype;
  if (is_number_like(obj, s, np_dtype)) {
    EMBER_CHECK_TYPE(dim == shape.size(), "not a sequence");
    merge(np_dtype ? *np_dtype : (s.isFloatingPoint() ? get_default_dtype() : s.type()));
    return;
  }
  if (dim == shape.size()) {
    EMBER_CHECK_TYPE(!is_data_sequence(obj), "must be real number, not ", type_name_of(obj));
    EMBER_CHECK_TYPE(false, "new(): invalid data type '", type_name_of(obj), "'");
  }
  if (!is_data_sequence(obj)) {
    EMBER_CHECK_TYPE(!PyUnicode_Check(obj.ptr()), "new(): invalid data type '", type_name_of(obj), "'");
    EMBER_CHECK_TYPE(false, "tensor(): could not infer dtype of ", type_name_of(obj));
  }
  py::object items = sequence_items(obj, shape, dim);
  // the size is re-read and each item held: an item's __index__ may change the list
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
    py::object item = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(items.ptr(), i));
    EMBER_CHECK_TYPE(!item.is(obj), "new(): self-referential lists are incompatible");
    infer_dtype(item, shape, dim + 1, dtype);
  }
}

// PyTorch's names in "value cannot be converted to type int8 without overflow".
const char* dtype_short_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return "uint8";
    case ScalarType::Char:
      return "int8";
    case ScalarType::Short:
      return "int16";
    case ScalarType::Int:
      return "int32";
    case ScalarType::Long:
      return "int64";
    default:
      return c10::toString(t);
  }
}

// A Python number into T, refusing integer overflow as PyTorch does (a float out of
// range or NaN; an int outside [-max, max] for unsigned types, so -1 wraps to 255 as
// in PyTorch). Floating dtypes round to +-inf; bool is value != 0.
template <typename T>
T checked_convert(const Scalar& s) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    constexpr ScalarType st = c10::CppTypeToScalarType<T>::value;
    using lim = std::numeric_limits<T>;
    bool ok;
    if (s.isFloatingPoint()) {
      const double d = s.toDouble();
      // 2^63 itself is out of int64's range (PyTorch wraps it to INT64_MIN silently)
      ok = d >= static_cast<double>(lim::lowest()) &&
           (std::is_same_v<T, int64_t> ? d < 9223372036854775808.0 : d <= static_cast<double>(lim::max()));
    } else {
      const int64_t v = s.toLong();
      if constexpr (std::is_unsigned_v<T>) {
        ok = v >= -static_cast<int64_t>(lim::max()) && v <= static_cast<int64_t>(lim::max());
      } else {
        ok = v >= static_cast<int64_t>(lim::lowest()) && v <= static_cast<int64_t>(lim::max());
      }
    }
    EMBER_CHECK(ok, "value cannot be converted to type ", dtype_short_name(st), " without overflow");
    return s.isFloatingPoint() ? static_cast<T>(static_cast<int64_t>(s.toDouble())) : static_cast<T>(s.toLong());
  } else {
    return s.to<T>();
  }
}

template <typename T>
struct Filler {
  const DimVector& shape;
  T* out;
  T* const end;

  void store(py::handle obj, size_t dim) {
    if (python::is_tensor(obj)) {
      const Tensor src = python::unpack_tensor(obj);
      check_tensor_element(src, shape, dim);
      const int64_t n = src.numel();
      EMBER_CHECK(n <= end - out, "tensor(): the data grew while it was copied");
      if (src.dim() == 0) {
        *out++ = checked_convert<T>(src.item());
        return;
      }
      Tensor t = src.to(c10::CppTypeToScalarType<T>::value).to(Device(DeviceType::CPU)).contiguous();
      std::memcpy(out, t.data_ptr(), static_cast<size_t>(n) * sizeof(T));
      out += n;
      return;
    }
    Scalar s;
    std::optional<ScalarType> np_dtype;
    if (is_number_like(obj, s, np_dtype)) {
      EMBER_CHECK_TYPE(dim == shape.size(), "not a sequence");
      EMBER_CHECK(out < end, "tensor(): the data grew while it was copied");
      *out++ = checked_convert<T>(s);
      return;
    }
    EMBER_CHECK_TYPE(dim < shape.size(), "must be real number, not ", type_name_of(obj));
    py::object items = sequence_items(obj, shape, dim);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.ptr()); ++i) {
      py::object item = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(items.ptr(), i));
      EMBER_CHECK_TYPE(!item.is(obj), "new(): self-referential lists are incompatible");
      store(item, dim + 1);
    }
  }
};

Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype, std::optional<Device> device) {
  const DimVector shape = infer_shape(data);
  std::optional<ScalarType> inferred;
  infer_dtype(data, shape, 0, inferred);
  // tensor([]) is the default dtype
  const ScalarType dt = dtype ? *dtype : inferred.value_or(get_default_dtype());
  Tensor out = empty(shape, dt, Device(DeviceType::CPU));
  EMBER_DISPATCH_ALL_TYPES(dt, "tensor", [&] {
    scalar_t* p = static_cast<scalar_t*>(out.data_ptr());
    Filler<scalar_t> filler{shape, p, p + out.numel()};
    filler.store(data, 0);
    EMBER_CHECK(filler.out == filler.end, "tensor(): the data shrank while it was copied");
  });
  if (device && !device->is_cpu()) out = out.to(*device);
  return out;
}

template <typename T>
py::object to_python(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return py::bool_(v);
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(static_cast<int64_t>(v));
  } else {
    return py::float_(static_cast<double>(opmath_t<T>(v)));
  }
}

template <typename T>
py::object tolist_rec(const char* base, IntArrayRef sizes, IntArrayRef strides, size_t d) {
  if (d == sizes.size()) return to_python(*reinterpret_cast<const T*>(base));
  const int64_t n = sizes[d];
  py::list l(n);
  for (int64_t i = 0; i < n; ++i) {
    l[i] = tolist_rec<T>(base + i * strides[d] * static_cast<int64_t>(sizeof(T)), sizes, strides, d + 1);
  }
  return std::move(l);
}

py::object tolist(const Tensor& t0) {
  Tensor t = t0.is_cpu() ? t0 : t0.to(Device(DeviceType::CPU));
  return EMBER_DISPATCH_ALL_TYPES(t.dtype(), "tolist", [&]() -> py::object {
    return tolist_rec<scalar_t>(static_cast<const char*>(t.data_ptr()), t.sizes(), t.strides(), 0);
  });
}

// A storage over memory owned by a Python object (NumPy array, DLPack capsule, ...).
struct PyOwnerContext {
  PyObject* owner;
};
void release_owner(void* p) {
  auto* ctx = static_cast<PyOwnerContext*>(p);
  if (Py_IsInitialized() && !_Py_IsFinalizing()) {
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(ctx->owner);
    PyGILState_Release(s);
  }
  delete ctx;
}

c10::intrusive_ptr<c10::StorageImpl> storage_from_pointer(uintptr_t ptr, int64_t nbytes, py::object owner,
                                                          const Device& device) {
  auto* ctx = new PyOwnerContext{owner.release().ptr()};
  return c10::make_intrusive<c10::StorageImpl>(static_cast<size_t>(nbytes),
                                               c10::DataPtr(reinterpret_cast<void*>(ptr), ctx, &release_owner, device),
                                               nullptr, false);
}

// Rewrites a bool tensor's bytes in place so that every byte != 0 becomes 1. For the
// places where bytes enter as bool without a conversion (load, safetensors, frombuffer,
// set_ on a storage). The CPU casts, copies, comparisons and logical/bitwise kernels read
// a bool as its byte != 0 anyway (as PyTorch); other kernels and raw byte moves
// (numpy(), storage copies, CUDA) would pass 2..255 on.
void normalize_bool_bytes_(const Tensor& t) {
  EMBER_CHECK_TYPE(t.dtype() == ScalarType::Bool, "_normalize_bool_bytes_: expected a bool tensor, got ",
                   c10::toPythonName(t.dtype()));
  if (t.numel() == 0) return;
  if (!t.is_cpu()) {
    Tensor c = t.to(Device(DeviceType::CPU));
    normalize_bool_bytes_(c);
    t.copy_(c);
    return;
  }
  if (t.is_contiguous()) {
    auto* p = static_cast<unsigned char*>(t.data_ptr());
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = p[i] != 0;
    return;
  }
  // the copy kernel reads bool as byte != 0 and writes 0/1
  Tensor c = empty(t.sizes(), ScalarType::Bool, t.device());
  c.copy_(t);
  t.copy_(c);
}

}  // namespace

void init_tensor_new(py::module_& m) {
  m.def("_normalize_bool_bytes_", &normalize_bool_bytes_, py::arg("tensor"),
        "Sets every nonzero byte of a bool tensor to 1, in place (for bytes that enter as bool unconverted).");
  m.def("_tensor_from_data", &tensor_from_data, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(),
        "A new tensor holding a copy of nested sequences of numbers / tensors (PyTorch's dtype inference).");
  m.def("_tolist", &tolist, py::arg("tensor"));
  m.def("_storage_from_pointer", &storage_from_pointer, py::arg("ptr"), py::arg("nbytes"), py::arg("owner"),
        py::arg("device") = Device(DeviceType::CPU),
        "A storage over memory owned by `owner` (kept alive until the storage dies).");
}
