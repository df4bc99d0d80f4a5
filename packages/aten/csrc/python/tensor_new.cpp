// Building tensors from Python data and back: tensor(data) / tolist() / from_numpy.
// Done in C++ because a nested list of a million numbers must not cost a million
// Python-level tensor operations.
#include <cstring>

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

// The shape of the data and the dtype PyTorch infers for it: a Python bool is bool,
// an int int64, a float the default dtype; a tensor or NumPy scalar keeps its dtype;
// the elements' dtypes are promoted together (promote_types).
void infer_shape_and_dtype(py::handle obj, size_t depth, DimVector& shape, std::optional<ScalarType>& dtype) {
  auto merge = [&dtype](ScalarType t) { dtype = dtype ? c10::promoteTypes(*dtype, t) : t; };
  if (python::is_tensor(obj)) {
    Tensor t = python::unpack_tensor(obj);
    EMBER_CHECK_VALUE(t.dim() == 0 || depth < shape.size() || shape.size() == depth,
                      "tensor(): a list mixes tensors with other elements at depth ", depth);
    if (depth == shape.size()) {
      for (int64_t s : t.sizes()) shape.push_back(s);
    }
    merge(t.dtype());
    return;
  }
  Scalar s;
  std::optional<ScalarType> np_dtype;
  if (unpack_numpy_scalar(obj, s, np_dtype) || python::unpack_number(obj, s)) {
    EMBER_CHECK_VALUE(depth == shape.size(), "tensor(): expected a sequence at depth ", depth,
                      " (all rows must have the same nesting), got a number");
    merge(np_dtype ? *np_dtype : (s.isFloatingPoint() ? get_default_dtype() : s.type()));
    return;
  }
  EMBER_CHECK_TYPE(PySequence_Check(obj.ptr()) && !PyUnicode_Check(obj.ptr()) && !PyBytes_Check(obj.ptr()),
                   "tensor(): could not infer dtype of ",
                   py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
  const Py_ssize_t n = PySequence_Size(obj.ptr());
  if (n < 0) throw py::error_already_set();
  if (depth == shape.size()) {
    shape.push_back(n);
  } else {
    EMBER_CHECK_VALUE(shape[depth] == n, "expected sequence of length ", shape[depth], " at dim ", depth, " (got ", n,
                      ")");
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  for (Py_ssize_t i = 0; i < n; ++i) infer_shape_and_dtype(seq[i], depth + 1, shape, dtype);
}

template <typename T>
void fill_from(py::handle obj, T*& out) {
  if (python::is_tensor(obj)) {
    Tensor t =
        python::unpack_tensor(obj).to(c10::CppTypeToScalarType<T>::value).to(Device(DeviceType::CPU)).contiguous();
    const int64_t n = t.numel();
    std::memcpy(out, t.data_ptr(), n * sizeof(T));
    out += n;
    return;
  }
  Scalar s;
  std::optional<ScalarType> np_dtype;
  if (unpack_numpy_scalar(obj, s, np_dtype) || python::unpack_number(obj, s)) {
    *out++ = s.to<T>();
    return;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  for (auto item : seq) fill_from<T>(item, out);
}

Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype, std::optional<Device> device) {
  DimVector shape;
  std::optional<ScalarType> inferred;
  infer_shape_and_dtype(data, 0, shape, inferred);
  // tensor([]) is the default dtype
  const ScalarType dt = dtype ? *dtype : inferred.value_or(get_default_dtype());
  Tensor out = empty(shape, dt, Device(DeviceType::CPU));
  EMBER_DISPATCH_ALL_TYPES(dt, "tensor", [&] {
    scalar_t* p = static_cast<scalar_t*>(out.data_ptr());
    fill_from<scalar_t>(data, p);
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

}  // namespace

void init_tensor_new(py::module_& m) {
  m.def("_tensor_from_data", &tensor_from_data, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(),
        "A new tensor holding a copy of nested sequences of numbers / tensors (PyTorch's dtype inference).");
  m.def("_tolist", &tolist, py::arg("tensor"));
  m.def("_storage_from_pointer", &storage_from_pointer, py::arg("ptr"), py::arg("nbytes"), py::arg("owner"),
        py::arg("device") = Device(DeviceType::CPU),
        "A storage over memory owned by `owner` (kept alive until the storage dies).");
}
