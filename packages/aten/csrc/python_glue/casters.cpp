// The Python <-> C++ tensor conversion (see include/ember/aten/python/casters.h).
// Lives in libember_aten so that aten's module and extension modules share it.
#include <ember/aten/python/casters.h>

#include <cstring>

namespace ember::at::python {

namespace py = pybind11;

TensorClass& tensor_class() {
  static TensorClass c;
  return c;
}

bool is_tensor_object(PyObject* h) {
  PyObject* type = tensor_class().type;
  return type != nullptr && PyObject_TypeCheck(h, reinterpret_cast<PyTypeObject*>(type));
}

Tensor unpack_tensor_object(PyObject* h) {
  PyObject* impl = PyObject_GetAttr(h, tensor_class().impl_name);
  if (!impl) throw py::error_already_set();
  py::object owner = py::reinterpret_steal<py::object>(impl);
  return Tensor(owner.cast<c10::intrusive_ptr<TensorImpl>>());
}

PyObject* wrap_tensor_object(const Tensor& t) {
  PyObject* wrap = tensor_class().wrap;
  if (!wrap) throw std::runtime_error("ember.aten has not set its Tensor class (import ember.aten first)");
  py::object impl = py::cast(t.impl());
  PyObject* r = PyObject_CallOneArg(wrap, impl.ptr());
  if (!r) throw py::error_already_set();
  return r;
}

bool unpack_number_object(PyObject* o, Scalar& out) {
  py::handle h(o);
  if (PyBool_Check(o)) {
    out = Scalar(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) throw c10::ValueError("value cannot be converted to type int64 without overflow");
    out = Scalar(static_cast<int64_t>(v));
    return true;
  }
  if (PyFloat_Check(o)) {
    out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (is_tensor_object(o)) return false;
  // NumPy scalars (np.int64, np.float32, np.bool_) and other number-likes.
  PyTypeObject* tp = Py_TYPE(o);
  const char* tname = tp->tp_name;
  if (tname && (std::strcmp(tname, "numpy.bool") == 0 || std::strcmp(tname, "numpy.bool_") == 0)) {
    out = Scalar(PyObject_IsTrue(o) == 1);
    return true;
  }
  if (PyIndex_Check(o)) {
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!idx) {
      PyErr_Clear();
      return false;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    if (overflow != 0) throw c10::ValueError("value cannot be converted to type int64 without overflow");
    out = Scalar(static_cast<int64_t>(v));
    return true;
  }
  if (tp->tp_as_number && tp->tp_as_number->nb_float && !PySequence_Check(o)) {
    const double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out = Scalar(d);
    return true;
  }
  return false;
}

}  // namespace ember::at::python
