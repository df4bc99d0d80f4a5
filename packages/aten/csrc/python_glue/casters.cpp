// The Python <-> C++ tensor conversion (see include/ember/aten/python/casters.h).
// Lives in libember_aten so that aten's module and extension modules share it.
#include <ember/aten/python/casters.h>
#include <ember/aten/python/tensor_object.h>

#include <cstring>

namespace ember::at::python {

namespace py = pybind11;

TensorClass& tensor_class() {
  static TensorClass c;
  return c;
}

// ---------------------------------------------------------------------------
// TensorBase: the native part of ember.aten.Tensor (see casters.h, TensorObject).
// ---------------------------------------------------------------------------

namespace {

inline TensorObject* as_tensor(PyObject* o) { return reinterpret_cast<TensorObject*>(o); }

// Replaces o's TensorImpl (the cached `_impl` object goes with the old one).
void set_impl(TensorObject* o, c10::TensorImpl* impl) {
  if (impl) c10::intrusive_incref(impl);
  c10::TensorImpl* old = o->impl;
  o->impl = impl;
  Py_CLEAR(o->impl_obj);
  if (old) c10::intrusive_decref(old);
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  TensorObject* o = as_tensor(self);
  Py_VISIT(o->base);
  Py_VISIT(o->meta);
  Py_VISIT(o->dict);
  Py_VISIT(o->impl_obj);
  return 0;
}

int tensor_clear(PyObject* self) {
  TensorObject* o = as_tensor(self);
  Py_CLEAR(o->base);
  Py_CLEAR(o->meta);
  Py_CLEAR(o->dict);
  Py_CLEAR(o->impl_obj);
  return 0;
}

void tensor_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  TensorObject* o = as_tensor(self);
  if (o->weakreflist) PyObject_ClearWeakRefs(self);
  tensor_clear(self);
  set_impl(o, nullptr);
  Py_TYPE(self)->tp_free(self);
}

// NULL (with RuntimeError) for a tensor without a TensorImpl.
c10::TensorImpl* impl_of(PyObject* self) {
  c10::TensorImpl* impl = as_tensor(self)->impl;
  if (!impl) PyErr_SetString(PyExc_RuntimeError, "this tensor has no TensorImpl (it was not made by ember.aten)");
  return impl;
}

PyObject* get_impl(PyObject* self, void*) {
  TensorObject* o = as_tensor(self);
  if (o->impl_obj) return Py_NewRef(o->impl_obj);
  if (!impl_of(self)) return nullptr;
  try {
    py::object obj = py::cast(c10::intrusive_ptr<c10::TensorImpl>(o->impl));
    o->impl_obj = obj.release().ptr();
    return Py_NewRef(o->impl_obj);
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* get_keys(PyObject* self, void*) {
  c10::TensorImpl* impl = as_tensor(self)->impl;
  if (!impl) {
    PyErr_SetString(PyExc_AttributeError, "_keys");
    return nullptr;
  }
  return PyLong_FromUnsignedLongLong(impl->key_set().raw_repr());
}

PyObject* get_version(PyObject* self, void*) {
  c10::TensorImpl* impl = impl_of(self);
  return impl ? PyLong_FromUnsignedLong(impl->version()) : nullptr;
}

PyObject* get_dtype(PyObject* self, void*) {
  c10::TensorImpl* impl = impl_of(self);
  if (!impl) return nullptr;
  try {
    return ember::c10::python::dtype_object(impl->dtype()).inc_ref().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* get_ndim(PyObject* self, void*) {
  c10::TensorImpl* impl = impl_of(self);
  return impl ? PyLong_FromLongLong(impl->dim()) : nullptr;
}

PyObject* get_is_cuda(PyObject* self, void*) {
  c10::TensorImpl* impl = impl_of(self);
  return impl ? PyBool_FromLong(impl->device().type == c10::DeviceType::CUDA) : nullptr;
}

PyObject* get_obj_slot(PyObject* v) { return Py_NewRef(v ? v : Py_None); }
int set_obj_slot(PyObject*& slot, PyObject* value) {
  Py_XSETREF(slot, Py_XNewRef(value));  // del t._base: back to None
  return 0;
}
PyObject* get_base(PyObject* self, void*) { return get_obj_slot(as_tensor(self)->base); }
int set_base(PyObject* self, PyObject* value, void*) { return set_obj_slot(as_tensor(self)->base, value); }
PyObject* get_meta(PyObject* self, void*) { return get_obj_slot(as_tensor(self)->meta); }
int set_meta(PyObject* self, PyObject* value, void*) { return set_obj_slot(as_tensor(self)->meta, value); }

PyGetSetDef tensor_getset[] = {
    {"_impl", get_impl, nullptr, "the c10py TensorImpl this tensor is the handle of", nullptr},
    {"_keys", get_keys, nullptr, "the raw dispatch key bits (the TensorImpl's key set)", nullptr},
    {"_base", get_base, set_base, "the root tensor of a view, else None", nullptr},
    {"_meta", get_meta, set_meta, "the AutogradMeta (None until autograd needs one)", nullptr},
    {"_version", get_version, nullptr, "the version counter (shared by the views of one storage)", nullptr},
    {"dtype", get_dtype, nullptr, "the element type", nullptr},
    {"ndim", get_ndim, nullptr, "the number of dimensions", nullptr},
    {"is_cuda", get_is_cuda, nullptr, "whether the tensor is on a CUDA device", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyObject* meth_dim(PyObject* self, PyObject*) { return get_ndim(self, nullptr); }
PyObject* meth_numel(PyObject* self, PyObject*) {
  c10::TensorImpl* impl = impl_of(self);
  return impl ? PyLong_FromLongLong(impl->numel()) : nullptr;
}

PyMethodDef tensor_methods[] = {
    {"dim", meth_dim, METH_NOARGS, "dim() -> int: the number of dimensions"},
    {"ndimension", meth_dim, METH_NOARGS, "ndimension() -> int: the number of dimensions (dim())"},
    {"numel", meth_numel, METH_NOARGS, "numel() -> int: the number of elements"},
    {"nelement", meth_numel, METH_NOARGS, "nelement() -> int: the number of elements (numel())"},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject TensorBaseType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "ember.aten._C.TensorBase";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_dealloc = tensor_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  t.tp_doc = "The native part of ember.aten.Tensor: the handle of one TensorImpl (csrc/python_glue/casters.cpp).";
  t.tp_traverse = tensor_traverse;
  t.tp_clear = tensor_clear;
  t.tp_weaklistoffset = offsetof(TensorObject, weakreflist);
  t.tp_dictoffset = offsetof(TensorObject, dict);
  t.tp_getset = tensor_getset;
  t.tp_methods = tensor_methods;
  return t;
}();

}  // namespace

PyTypeObject* tensor_base_type() {
  static const bool ready = [] {
    if (PyType_Ready(&TensorBaseType) < 0) throw py::error_already_set();
    return true;
  }();
  (void)ready;
  return &TensorBaseType;
}

bool is_tensor_object(PyObject* h) {
  PyObject* type = tensor_class().type;
  if (type == nullptr) return false;
  return Py_TYPE(h) == reinterpret_cast<PyTypeObject*>(type) ||
         PyObject_TypeCheck(h, reinterpret_cast<PyTypeObject*>(type));
}

namespace {
PyObject* s_keys_name = nullptr;  // interned "_keys"
}

// Declared where used (module.cpp): casters.h stays the extension API. `wrap` is
// ember.aten._tensor._wrap (which makes the same object as new_tensor_object).
void set_tensor_class(PyObject* type, PyObject* wrap) {
  if (!PyType_Check(type) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type), tensor_base_type())) {
    throw py::type_error("_set_tensor_class: the Tensor class must subclass ember.aten._C.TensorBase");
  }
  auto& tc = tensor_class();
  Py_INCREF(type);
  Py_XSETREF(tc.type, type);
  Py_INCREF(wrap);
  Py_XSETREF(tc.wrap, wrap);
  if (!tc.impl_name) tc.impl_name = PyUnicode_InternFromString("_impl");
  if (!s_keys_name) s_keys_name = PyUnicode_InternFromString("_keys");
}

Tensor unpack_tensor_object(PyObject* h) {
  c10::TensorImpl* impl = PyObject_TypeCheck(h, &TensorBaseType) ? as_tensor(h)->impl : nullptr;
  if (impl != nullptr) return Tensor(c10::intrusive_ptr<c10::TensorImpl>(impl));
  // no TensorImpl (a SparseTensor): its `_impl` says why a dense kernel cannot take it
  PyObject* obj = PyObject_GetAttr(h, tensor_class().impl_name);
  if (!obj) throw py::error_already_set();
  py::object owner = py::reinterpret_steal<py::object>(obj);
  return Tensor(owner.cast<c10::intrusive_ptr<TensorImpl>>());
}

bool tensor_key_bits(PyObject* h, uint64_t& out) {
  c10::TensorImpl* impl = PyObject_TypeCheck(h, &TensorBaseType) ? as_tensor(h)->impl : nullptr;
  if (impl != nullptr) {
    out = impl->key_set().raw_repr();
    return true;
  }
  PyObject* v = PyObject_GetAttr(h, s_keys_name);  // SparseTensor keeps its own
  if (!v) return false;
  out = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  return !(out == static_cast<uint64_t>(-1) && PyErr_Occurred());
}

PyObject* new_tensor_object(PyTypeObject* type, const Tensor& t) {
  PyObject* r = type->tp_alloc(type, 0);
  if (!r) return nullptr;
  set_impl(as_tensor(r), t.unsafeGetTensorImpl());  // _base / _meta stay NULL: None
  return r;
}

PyObject* wrap_tensor_object(const Tensor& t) {
  const auto& tc = tensor_class();
  if (!tc.type) throw std::runtime_error("ember.aten has not set its Tensor class (import ember.aten first)");
  PyObject* r = new_tensor_object(reinterpret_cast<PyTypeObject*>(tc.type), t);
  if (!r) throw py::error_already_set();
  return r;
}

// What the Python layers call on the TensorBase (module.cpp binds them into ember.aten._C).
namespace tensor_base {

// t's key set |= bits (or &= ~bits when clear); the TensorImpl's, or a SparseTensor's `_keys`.
bool update_keys(PyObject* t, uint64_t bits, bool clear) {
  if (!PyObject_TypeCheck(t, &TensorBaseType)) {
    PyErr_Format(PyExc_TypeError, "expected a Tensor, got %s", Py_TYPE(t)->tp_name);
    return false;
  }
  c10::TensorImpl* impl = as_tensor(t)->impl;
  if (impl) {
    const uint64_t raw = impl->key_set().raw_repr();
    impl->set_key_set(c10::DispatchKeySet::from_raw(clear ? raw & ~bits : raw | bits));
    return true;
  }
  uint64_t raw;
  if (!tensor_key_bits(t, raw)) return false;
  PyObject* v = PyLong_FromUnsignedLongLong(clear ? raw & ~bits : raw | bits);
  if (!v) return false;
  const int rc = PyObject_SetAttr(t, s_keys_name, v);
  Py_DECREF(v);
  return rc == 0;
}

// t now holds `impl` (`t.data = other`, a Parameter made over a tensor's TensorImpl).
bool set_impl_of(PyObject* t, const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  if (!PyObject_TypeCheck(t, &TensorBaseType)) {
    PyErr_Format(PyExc_TypeError, "expected a Tensor, got %s", Py_TYPE(t)->tp_name);
    return false;
  }
  set_impl(as_tensor(t), impl.get());
  return true;
}

}  // namespace tensor_base

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
