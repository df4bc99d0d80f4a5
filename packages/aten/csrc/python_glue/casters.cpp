// The Python <-> C++ tensor conversion (see include/ember/aten/python/casters.h).
// Lives in libember_aten so that aten's module and extension modules share it.
#include <ember/aten/python/casters.h>

#include <structmember.h>  // PyMemberDef (the offsets of Tensor's slots)

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

namespace {

Py_ssize_t slot_offset(PyObject* type, const char* name) {
  py::object d = py::reinterpret_steal<py::object>(PyObject_GetAttrString(type, name));
  if (!d) throw py::error_already_set();
  if (!Py_IS_TYPE(d.ptr(), &PyMemberDescr_Type)) {
    throw std::runtime_error(std::string("ember.aten.Tensor.") + name + " must be a __slots__ member");
  }
  return reinterpret_cast<PyMemberDescrObject*>(d.ptr())->d_member->offset;
}

inline PyObject*& slot(PyObject* obj, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset);
}

// Byte offsets of the Tensor's slots, found from the class's member descriptors, so that
// unpacking an argument or wrapping a result enters no Python code.
struct SlotOffsets {
  PyTypeObject* impl_type = nullptr;  // ember.c10py.TensorImpl
  Py_ssize_t impl = -1, keys = -1, base = -1, meta = -1;
};
SlotOffsets& offsets() {
  static SlotOffsets o;
  return o;
}

}  // namespace

// Declared where used (module.cpp, dispatch_entry.cpp): casters.h stays the extension API.
void set_tensor_class(PyObject* type, PyObject* wrap) {
  auto& tc = tensor_class();
  Py_INCREF(type);
  Py_INCREF(wrap);
  tc.type = type;
  tc.wrap = wrap;
  tc.impl_name = PyUnicode_InternFromString("_impl");
  auto& o = offsets();
  o.impl = slot_offset(type, "_impl");
  o.keys = slot_offset(type, "_keys");
  o.base = slot_offset(type, "_base");
  o.meta = slot_offset(type, "_meta");
  o.impl_type = reinterpret_cast<PyTypeObject*>(py::type::of<c10::TensorImpl>().ptr());
}

Py_ssize_t tensor_keys_offset() { return offsets().keys; }

Tensor unpack_tensor_object(PyObject* h) {
  const auto& o = offsets();
  PyObject* impl = o.impl >= 0 ? slot(h, o.impl) : nullptr;
  if (impl != nullptr && Py_IS_TYPE(impl, o.impl_type)) {
    // the pybind11 instance's value pointer (TensorImpl is bound with the simple layout)
    auto* inst = reinterpret_cast<py::detail::instance*>(impl);
    auto* p = static_cast<c10::TensorImpl*>(inst->get_value_and_holder().value_ptr());
    if (p != nullptr) return Tensor(c10::intrusive_ptr<c10::TensorImpl>(p));
  }
  if (impl == nullptr) {
    impl = PyObject_GetAttr(h, tensor_class().impl_name);
    if (!impl) throw py::error_already_set();
    py::object owner = py::reinterpret_steal<py::object>(impl);
    return Tensor(owner.cast<c10::intrusive_ptr<TensorImpl>>());
  }
  return Tensor(py::handle(impl).cast<c10::intrusive_ptr<TensorImpl>>());
}

PyObject* wrap_tensor_object(const Tensor& t) {
  const auto& tc = tensor_class();
  const auto& o = offsets();
  if (!tc.type || o.impl < 0) {
    throw std::runtime_error("ember.aten has not set its Tensor class (import ember.aten first)");
  }
  // as ember.aten._tensor._wrap: a new Tensor with _impl, _keys from the impl, no _base / _meta
  py::object impl = py::cast(t.impl());
  PyObject* keys = PyLong_FromUnsignedLongLong(t.impl()->key_set().raw_repr());
  if (!keys) throw py::error_already_set();
  auto* type = reinterpret_cast<PyTypeObject*>(tc.type);
  PyObject* r = type->tp_alloc(type, 0);
  if (!r) {
    Py_DECREF(keys);
    throw py::error_already_set();
  }
  slot(r, o.impl) = impl.release().ptr();
  slot(r, o.keys) = keys;
  Py_INCREF(Py_None);
  slot(r, o.base) = Py_None;
  Py_INCREF(Py_None);
  slot(r, o.meta) = Py_None;
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
