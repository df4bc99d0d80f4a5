// DispatchEntry: the dispatcher's entry of one operator, in C++ (ember.aten._C._dispatch_entry).
//
// It does what the generated Python entry `_call_<op>` (tools/codegen/gen_python.py) does
// for an operator whose result needs no post-processing beyond a version bump (no view base,
// no named tuple) -- most of the ops on a model's hot path, in-place and out= ones included:
//
//   ks = (keys of the tensor arguments | tls.include) & tls.exclude_not
//   r = (op._table.get(ks) or op._slow(ks))(*args)
//   (in-place / out=: bump the version of each written tensor, return the one written)
//
// reading each Tensor's key set from its TensorImpl (a Tensor is the handle of one: see
// python_glue/casters.cpp), so the common call enters no Python code between the caller and
// the kernel. The table is the operator's own `_table` dict:
// Python kernels (autograd formulas, `library` ops, the trace/profiler keys) registered
// with OpOverload.register are found exactly as from Python. Anything unusual -- another
// number of arguments, an int[] argument that is neither a list, a tuple nor an int --
// goes to the Python entry, which stays the reference implementation.
//
// The same type serves three other uses:
//   mode "dunder" / "rdunder": a Tensor operator (a + b, 2 - a) appending constant extra
//     arguments (alpha=1), returning NotImplemented for an operand no op accepts;
//   mode "redispatch": op.redispatch(ks, *args), the call an Autograd kernel makes below itself;
//   mode "redispatch_below": the same with keys excluded on this thread during the call
//     (`extra` is their bits: an Autograd kernel's "run the op with Autograd excluded").
// Instances are method descriptors, so `Tensor.__add__ = entry` binds like a function.
//
// The thread-local include / exclude sets live in C++ (DispatchTLS below, `_dispatch.tls`): the
// entry reads them as two integers instead of two attribute lookups on a threading.local, and
// the Autograd kernels' `tls.exclude_not = ...` writes one.
//
// Below it, the helpers of the autograd engine's hot path (_input_meta, _meta_matches, _add_keys,
// _remove_keys, _bump_version, _grad_stealable).
#include <ember/aten/python/casters.h>
#include <ember/aten/python/tensor_object.h>
#include "interned.h"

#include <cstring>

namespace py = pybind11;
using namespace ember::at;
namespace names = ember::at::python::names;

namespace ember::at::python::tensor_base {
bool update_keys(PyObject* t, uint64_t bits, bool clear);  // python_glue/casters.cpp
}

namespace {

// ---------------------------------------------------------------------------
// DispatchTLS: ember.aten._dispatch.tls, the thread-local key sets of the dispatcher.
//
// `include` (keys added to every call on this thread: Tracer, Profiler, Python, autocast) and
// `exclude_not` (the complement of the excluded keys: no_grad clears the Autograd bits) are
// raw DispatchKeySet bits in a C++ thread_local, read by the C++ entries without entering
// Python. Every other attribute (view_creation, ...) is kept per thread by a Python
// threading.local given at creation. There is one instance (the C++ sets are per thread,
// not per object); a new thread starts from the defaults given at creation.
// ---------------------------------------------------------------------------

struct LocalKeys {
  bool init = false;
  uint64_t include = 0;
  uint64_t exclude_not = 0;
};
thread_local LocalKeys t_keys;
uint64_t g_default_include = 0;
uint64_t g_default_exclude_not = ~uint64_t{0};

inline LocalKeys& local_keys() {
  LocalKeys& k = t_keys;
  if (!k.init) {
    k.init = true;
    k.include = g_default_include;
    k.exclude_not = g_default_exclude_not;
  }
  return k;
}

struct DispatchTLS {
  PyObject_HEAD PyObject* rest;  // threading.local: the attributes other than the two key sets
};

PyObject* g_tls = nullptr;  // the one instance

// 1: include, 2: exclude_not, 0: another name
int tls_field(PyObject* name) {
  if (name == names::include) return 1;
  if (name == names::exclude_not) return 2;
  if (!PyUnicode_Check(name)) return 0;
  if (PyUnicode_Compare(name, names::include) == 0) return 1;
  if (PyUnicode_Compare(name, names::exclude_not) == 0) return 2;
  return 0;
}

PyObject* tls_getattro(PyObject* self, PyObject* name) {
  switch (tls_field(name)) {
    case 1:
      return PyLong_FromUnsignedLongLong(local_keys().include);
    case 2:
      return PyLong_FromUnsignedLongLong(local_keys().exclude_not);
    default:
      break;
  }
  PyObject* r = PyObject_GenericGetAttr(self, name);  // __class__, __repr__, ...
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<DispatchTLS*>(self)->rest, name);
}

int tls_setattro(PyObject* self, PyObject* name, PyObject* value) {
  const int field = tls_field(name);
  if (field == 0) return PyObject_SetAttr(reinterpret_cast<DispatchTLS*>(self)->rest, name, value);
  LocalKeys& k = local_keys();
  uint64_t bits;
  if (value == nullptr) {  // del tls.include: back to the default, as a threading.local's class attribute
    bits = field == 1 ? g_default_include : g_default_exclude_not;
  } else {
    if (!PyLong_Check(value)) {
      PyErr_Format(PyExc_TypeError, "dispatch tls.%U must be an int (a raw DispatchKeySet), got %s", name,
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    bits = PyLong_AsUnsignedLongLong(value);
    if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) return -1;
  }
  (field == 1 ? k.include : k.exclude_not) = bits;
  return 0;
}

void tls_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<DispatchTLS*>(self)->rest);
  Py_TYPE(self)->tp_free(self);
}

PyObject* tls_repr(PyObject*) {
  const LocalKeys& k = local_keys();
  py::object inc = py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(k.include));
  py::object exc = py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(k.exclude_not));
  if (!inc || !exc) return nullptr;
  py::object inc_hex = py::reinterpret_steal<py::object>(PyNumber_ToBase(inc.ptr(), 16));
  py::object exc_hex = py::reinterpret_steal<py::object>(PyNumber_ToBase(exc.ptr(), 16));
  if (!inc_hex || !exc_hex) return nullptr;
  return PyUnicode_FromFormat("<dispatch tls include=%U exclude_not=%U>", inc_hex.ptr(), exc_hex.ptr());
}

PyTypeObject DispatchTLSType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "ember.aten._C.DispatchTLS";
  t.tp_basicsize = sizeof(DispatchTLS);
  t.tp_dealloc = tls_dealloc;
  t.tp_repr = tls_repr;
  t.tp_getattro = tls_getattro;
  t.tp_setattro = tls_setattro;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "The dispatcher's thread-local key sets (include, exclude_not) in C++; other attributes per thread.";
  return t;
}();

enum class Mode : int { Call = 0, Dunder = 1, ReflectedDunder = 2, Redispatch = 3 };

constexpr int kMaxArgs = 24;

struct DispatchEntry {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* op;          // the OpOverload
  PyObject* table;       // op._table
  PyObject* tls;         // ember.aten._dispatch.tls
  PyObject* fallback;    // the Python entry (_call_<op>), for the unusual calls
  PyObject* extra;       // tuple of constant trailing arguments (dunders), or NULL
  PyObject* is_operand;  // dunders: callable telling a foreign operand (-> NotImplemented)
  PyObject* name;        // __name__
  Mode mode;
  uint64_t below_exclude_not;  // Redispatch: exclude_not is ANDed with this during the call
  Py_ssize_t nargs;            // schema arguments (Call/Redispatch without ks)
  int ntensors;
  int tensor_pos[kMaxArgs];
  int nintlists;
  int intlist_pos[kMaxArgs];
  int intlist_n[kMaxArgs];
  int nbump;  // in-place ops: the written Tensor(a!) arguments, bumped after the kernel
  int bump_pos[kMaxArgs];
  int ret_pos;  // in-place ops: the argument returned (the kernel's result is dropped), else -1
};

bool read_u64(PyObject* o, uint64_t& out) {
  if (o == nullptr) return false;
  out = PyLong_AsUnsignedLongLong(o);
  if (out == static_cast<uint64_t>(-1) && PyErr_Occurred()) return false;
  return true;
}

// The kernel for raw key set `ks`: op._table[ks], else op._slow(ks). New reference.
PyObject* kernel_for(DispatchEntry* e, uint64_t ks) {
  PyObject* key = PyLong_FromUnsignedLongLong(ks);
  if (!key) return nullptr;
  PyObject* fn = PyDict_GetItemWithError(e->table, key);
  if (fn) {
    Py_INCREF(fn);
  } else if (!PyErr_Occurred()) {
    fn = PyObject_CallMethodOneArg(e->op, names::slow, key);
  }
  Py_DECREF(key);
  return fn;
}

// The call's key set from its tensor arguments and the thread-local sets; false with an
// exception set, or (no exception) when the Python entry should handle the call.
bool call_keys(DispatchEntry* e, PyObject* const* args, uint64_t& ks) {
  uint64_t k = 0;
  for (int i = 0; i < e->ntensors; ++i) {
    PyObject* a = args[e->tensor_pos[i]];
    if (!python::is_tensor_object(a)) continue;  // None, or a Python number (getattr(x, "_keys", 0))
    uint64_t bits;
    if (!python::tensor_key_bits(a, bits)) {
      PyErr_Clear();
      return false;
    }
    k |= bits;
  }
  if (e->tls == g_tls) {  // the C++ thread-local sets (always, unless a test passes its own object)
    const LocalKeys& lk = local_keys();
    ks = (k | lk.include) & lk.exclude_not;
    return true;
  }
  PyObject* inc = PyObject_GetAttr(e->tls, names::include);
  PyObject* exc = PyObject_GetAttr(e->tls, names::exclude_not);
  uint64_t include = 0, exclude_not = 0;
  const bool ok = read_u64(inc, include) && read_u64(exc, exclude_not);
  Py_XDECREF(inc);
  Py_XDECREF(exc);
  if (!ok) {
    PyErr_Clear();
    return false;
  }
  ks = (k | include) & exclude_not;
  return true;
}

// A TypeError from the kernel becomes the operator's argument error (OpOverload._type_error).
void translate_type_error(DispatchEntry* e, PyObject* const* args, Py_ssize_t nargs) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject* tuple = PyTuple_New(nargs);
  if (!tuple) {
    PyErr_Restore(type, value, tb);
    return;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, i, args[i]);
  }
  PyObject* err = PyObject_CallMethodObjArgs(e->op, names::type_error, value, tuple, nullptr);
  Py_DECREF(tuple);
  if (!err) {  // the translation itself failed: keep the original error
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return;
  }
  if (err == value) {
    Py_DECREF(err);
    PyErr_Restore(type, value, tb);
    return;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyException_SetCause(err, Py_NewRef(Py_None));  // raise ... from None
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err)), err);
  Py_DECREF(err);
}

PyObject* call_fallback(DispatchEntry* e, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(e->fallback, args, nargsf, kwnames);
}

// Bumps the version counter of every tensor an in-place op wrote (PyTorch's increment_version).
bool bump_written(DispatchEntry* e, PyObject* const* argv) {
  for (int i = 0; i < e->nbump; ++i) {
    PyObject* a = argv[e->bump_pos[i]];
    if (!python::is_tensor_object(a)) continue;
    try {
      python::unpack_tensor_object(a).unsafeGetTensorImpl()->bump_version();
    } catch (...) {
      py::detail::try_translate_exceptions();
      return false;
    }
  }
  return true;
}

// Runs the kernel on the schema's arguments `argv` (nargs of them).
PyObject* dispatch(DispatchEntry* e, PyObject* const* argv, Py_ssize_t nargs, bool& use_fallback) {
  use_fallback = false;
  uint64_t ks;
  if (!call_keys(e, argv, ks)) {
    use_fallback = !PyErr_Occurred();
    return nullptr;
  }
  PyObject* fn = kernel_for(e, ks);
  if (!fn) return nullptr;
  PyObject* r = PyObject_Vectorcall(fn, argv, static_cast<size_t>(nargs), nullptr);
  Py_DECREF(fn);
  if (!r) {
    translate_type_error(e, argv, nargs);
    return nullptr;
  }
  if (e->nbump == 0 && e->ret_pos < 0) return r;
  if (!bump_written(e, argv)) {
    Py_DECREF(r);
    return nullptr;
  }
  if (e->ret_pos < 0) return r;
  Py_DECREF(r);
  return Py_NewRef(argv[e->ret_pos]);
}

PyObject* entry_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* e = reinterpret_cast<DispatchEntry*>(self);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (e->mode == Mode::Redispatch) {
    if (kwnames || n != e->nargs + 1) return call_fallback(e, args, nargsf, kwnames);
    uint64_t ks;
    if (!read_u64(args[0], ks)) return nullptr;
    PyObject* fn = kernel_for(e, ks);
    if (!fn) return nullptr;
    PyObject* r;
    if (e->below_exclude_not == ~uint64_t{0}) {
      r = PyObject_Vectorcall(fn, args + 1, static_cast<size_t>(n - 1), nullptr);
    } else {
      LocalKeys& lk = local_keys();
      const uint64_t prev = lk.exclude_not;
      lk.exclude_not = prev & e->below_exclude_not;
      r = PyObject_Vectorcall(fn, args + 1, static_cast<size_t>(n - 1), nullptr);
      local_keys().exclude_not = prev;  // restored as a `finally:` would, on error too
    }
    Py_DECREF(fn);
    return r;
  }
  if (e->mode == Mode::Dunder || e->mode == Mode::ReflectedDunder) {
    if (kwnames || n != 2) {
      PyErr_Format(PyExc_TypeError, "%U expected 1 argument, got %zd", e->name, n - 1);
      return nullptr;
    }
    if (!PyObject_TypeCheck(args[0], ember::at::python::tensor_base_type())) {
      // called unbound with another self (Tensor.__radd__(2, t)): PyTorch's descriptor error
      PyErr_Format(PyExc_TypeError, "descriptor '%U' for 'Tensor' objects doesn't apply to a '%s' object", e->name,
                   Py_TYPE(args[0])->tp_name);
      return nullptr;
    }
    PyObject* argv[kMaxArgs];
    const Py_ssize_t nextra = e->extra ? PyTuple_GET_SIZE(e->extra) : 0;
    argv[0] = e->mode == Mode::Dunder ? args[0] : args[1];
    argv[1] = e->mode == Mode::Dunder ? args[1] : args[0];
    for (Py_ssize_t i = 0; i < nextra; ++i) argv[2 + i] = PyTuple_GET_ITEM(e->extra, i);
    bool use_fallback = false;
    PyObject* r = (2 + nextra == e->nargs) ? dispatch(e, argv, 2 + nextra, use_fallback) : nullptr;
    if (!r && (use_fallback || 2 + nextra != e->nargs)) {
      r = PyObject_Vectorcall(e->fallback, argv, static_cast<size_t>(2 + nextra), nullptr);
    }
    if (!r && PyErr_ExceptionMatches(PyExc_TypeError)) {
      // an operand no operator takes (None, a str, a list): NotImplemented, so Python tries the
      // reflected operator and otherwise raises its own TypeError (as PyTorch's dunders)
      PyObject* other = args[1];
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyObject* ok = PyObject_CallOneArg(e->is_operand, other);
      if (ok == Py_False) {
        Py_DECREF(ok);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        Py_RETURN_NOTIMPLEMENTED;
      }
      Py_XDECREF(ok);
      if (PyErr_Occurred()) PyErr_Clear();
      PyErr_Restore(type, value, tb);
    }
    return r;
  }
  // Mode::Call
  if (kwnames || n != e->nargs) return call_fallback(e, args, nargsf, kwnames);
  PyObject* const* argv = args;
  PyObject* conv[kMaxArgs];
  PyObject* owned[kMaxArgs];
  int nowned = 0;
  if (e->nintlists) {
    std::memcpy(conv, args, sizeof(PyObject*) * static_cast<size_t>(n));
    for (int i = 0; i < e->nintlists; ++i) {
      PyObject* a = conv[e->intlist_pos[i]];
      if (a == Py_None || PyTuple_Check(a) || PyList_Check(a)) continue;
      if (PyLong_CheckExact(a)) {  // int[N] given as one int: N copies (int[]: a one-element list)
        const int reps = e->intlist_n[i] > 0 ? e->intlist_n[i] : 1;
        PyObject* t = PyTuple_New(reps);
        if (!t) {
          for (int j = 0; j < nowned; ++j) Py_DECREF(owned[j]);
          return nullptr;
        }
        for (int j = 0; j < reps; ++j) PyTuple_SET_ITEM(t, j, Py_NewRef(a));
        owned[nowned++] = t;
        conv[e->intlist_pos[i]] = t;
        continue;
      }
      for (int j = 0; j < nowned; ++j) Py_DECREF(owned[j]);
      return call_fallback(e, args, nargsf, kwnames);  // the Python entry's rules (NumPy ints, ...)
    }
    argv = conv;
  }
  bool use_fallback = false;
  PyObject* r = dispatch(e, argv, n, use_fallback);
  for (int j = 0; j < nowned; ++j) Py_DECREF(owned[j]);
  if (!r && use_fallback) return call_fallback(e, args, nargsf, kwnames);
  return r;
}

void entry_dealloc(PyObject* self) {
  auto* e = reinterpret_cast<DispatchEntry*>(self);
  Py_XDECREF(e->op);
  Py_XDECREF(e->table);
  Py_XDECREF(e->tls);
  Py_XDECREF(e->fallback);
  Py_XDECREF(e->extra);
  Py_XDECREF(e->is_operand);
  Py_XDECREF(e->name);
  Py_TYPE(self)->tp_free(self);
}

PyObject* entry_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* entry_repr(PyObject* self) {
  auto* e = reinterpret_cast<DispatchEntry*>(self);
  return PyUnicode_FromFormat("<dispatch entry %U of %R>", e->name, e->op);
}

PyObject* get_name(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<DispatchEntry*>(self)->name); }
int set_name(PyObject* self, PyObject* value, void*) {
  if (!value || !PyUnicode_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "__name__ must be a str");
    return -1;
  }
  auto* e = reinterpret_cast<DispatchEntry*>(self);
  Py_SETREF(e->name, Py_NewRef(value));
  return 0;
}
PyObject* get_op(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<DispatchEntry*>(self)->op); }
PyObject* get_fallback(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<DispatchEntry*>(self)->fallback); }

PyGetSetDef entry_getset[] = {
    {"__name__", get_name, set_name, "the entry's name", nullptr},
    {"__qualname__", get_name, set_name, "the entry's name", nullptr},
    {"op", get_op, nullptr, "the OpOverload this entry dispatches", nullptr},
    {"python_entry", get_fallback, nullptr, "the generated Python entry that this one mirrors", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject DispatchEntryType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "ember.aten._C.DispatchEntry";
  t.tp_basicsize = sizeof(DispatchEntry);
  t.tp_dealloc = entry_dealloc;
  t.tp_vectorcall_offset = offsetof(DispatchEntry, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = entry_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc = "An operator's dispatcher entry in C++ (see csrc/python/dispatch_entry.cpp).";
  t.tp_descr_get = entry_descr_get;
  t.tp_getset = entry_getset;
  return t;
}();

}  // namespace

// ---------------------------------------------------------------------------
// Tensor metadata for the autograd engine's hot path, in one call each:
//   _C._input_meta(t)            -> (sizes, dtype, backend bits), a Node's record of one input
//   _C._meta_matches(t, meta)    -> t has exactly that shape, dtype and backend
// Both equal what ember.autograd computes from `t._impl.sizes`, `t._impl.dtype` and
// `t._keys & 0x3`, without the two pybind11 property calls per tensor.
//   _C._add_keys(t, bits) / _C._remove_keys(t, bits), _C._bump_version(t): the writes to the
// TensorImpl's key set and version counter that autograd and the Python entries make.
//   _C._grad_stealable(grads, i, variable): AccumulateGrad's test for keeping a gradient uncopied.
//   _C._set_history_1(r, node, meta_class, bits): a recorded op's one output joins the graph.
//   _C._gradient_edge_function(accumulate_grad_cls, accumulate_seq, fallback): the recorded op's edge
//   of an input; _C._save_input_function(fallback): its record of an input saved for backward.
// ---------------------------------------------------------------------------

namespace ember::at::python {

int tensor_meta_matches(PyObject* t, PyObject* meta) {
  try {
    const Tensor tensor = unpack_tensor_object(t);
    PyObject* shape = PyTuple_GET_ITEM(meta, 0);
    const auto sizes = tensor.impl()->sizes();
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != static_cast<Py_ssize_t>(sizes.size())) return 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const long long s = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, static_cast<Py_ssize_t>(i)));
      if (s == -1 && PyErr_Occurred()) return -1;
      if (s != sizes[i]) return 0;
    }
    if (ember::c10::python::dtype_object(tensor.impl()->dtype()).ptr() != PyTuple_GET_ITEM(meta, 1)) return 0;
    uint64_t keys;
    if (!tensor_key_bits(t, keys)) return -1;
    const unsigned long long backend = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(meta, 2));
    if (backend == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return -1;
    return (keys & 0x3) == backend ? 1 : 0;
  } catch (...) {
    py::detail::try_translate_exceptions();
    return -1;
  }
}

}  // namespace ember::at::python

namespace {

constexpr uint64_t kBackendBits = 0x3;  // the CPU / CUDA backend bits of a key set

// The Tensor's key bits as an int; false with an exception set.
bool keys_of(PyObject* t, uint64_t& out) { return python::tensor_key_bits(t, out); }

PyObject* input_meta(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !python::is_tensor_object(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_input_meta(tensor)");
    return nullptr;
  }
  try {
    const Tensor t = python::unpack_tensor_object(args[0]);
    uint64_t keys;
    if (!keys_of(args[0], keys)) return nullptr;
    const auto sizes = t.impl()->sizes();
    PyObject* shape = PyTuple_New(static_cast<Py_ssize_t>(sizes.size()));
    if (!shape) return nullptr;
    for (size_t i = 0; i < sizes.size(); ++i) {
      PyTuple_SET_ITEM(shape, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(sizes[i]));
    }
    PyObject* dtype = ember::c10::python::dtype_object(t.impl()->dtype()).ptr();
    return Py_BuildValue("(NOK)", shape, dtype, static_cast<unsigned long long>(keys & kBackendBits));
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// _set_history_1(r, node, meta_class, bits): r, the one output of an op recorded as `node`, becomes
// node's output 0 (ember.autograd's _set_history_1, in one call): node._input_meta = (meta,) with
// meta = _input_meta(r); for a floating-point r also r._meta = meta_class(True, node) -- made
// without running its __init__, its slots written here -- and `bits` (the Autograd key) added to
// r's key set. An integer or bool r records None (it carries no gradient).
PyObject* g_zero = nullptr;

PyObject* set_history_1(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4 || !PyType_Check(args[2]) || !PyLong_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError, "_set_history_1(tensor, node, meta_class, bits)");
    return nullptr;
  }
  PyObject* r = args[0];
  PyObject* node = args[1];
  py::object meta = py::reinterpret_steal<py::object>(input_meta(self, args, 1));
  if (!meta) return nullptr;
  auto* o = reinterpret_cast<python::TensorObject*>(r);  // input_meta checked it is a Tensor with an impl
  PyObject* entry = meta.ptr();
  if (!ember::c10::isFloatingType(o->impl->dtype())) {
    entry = Py_None;
  } else {
    auto* cls = reinterpret_cast<PyTypeObject*>(args[2]);
    py::object empty = py::reinterpret_steal<py::object>(PyTuple_New(0));
    if (!empty) return nullptr;
    py::object m = py::reinterpret_steal<py::object>(PyBaseObject_Type.tp_new(cls, empty.ptr(), nullptr));
    if (!m) return nullptr;
    if (PyObject_SetAttr(m.ptr(), names::requires_grad, Py_True) < 0 ||
        PyObject_SetAttr(m.ptr(), names::grad, Py_None) < 0 || PyObject_SetAttr(m.ptr(), names::grad_fn, node) < 0 ||
        PyObject_SetAttr(m.ptr(), names::output_nr, g_zero) < 0 ||
        PyObject_SetAttr(m.ptr(), names::view_info, Py_None) < 0) {
      return nullptr;
    }
    const uint64_t bits = PyLong_AsUnsignedLongLong(args[3]);
    if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) return nullptr;
    Py_XSETREF(o->meta, m.release().ptr());
    if (!python::tensor_base::update_keys(r, bits, false)) return nullptr;
  }
  py::object one = py::reinterpret_steal<py::object>(PyTuple_Pack(1, entry));
  if (!one || PyObject_SetAttr(node, names::input_meta, one.ptr()) < 0) return nullptr;
  Py_RETURN_NONE;
}

PyObject* meta_matches(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !python::is_tensor_object(args[0]) || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != 3) {
    PyErr_SetString(PyExc_TypeError, "_meta_matches(tensor, (sizes, dtype, backend))");
    return nullptr;
  }
  const int r = python::tensor_meta_matches(args[0], args[1]);
  if (r < 0) return nullptr;
  return PyBool_FromLong(r);
}

// _add_keys(t, bits) / _remove_keys(t, bits): t's key set (its TensorImpl's) |= bits / &= ~bits.
PyObject* change_keys(PyObject* const* args, Py_ssize_t nargs, bool clear) {
  if (nargs != 2 || !PyLong_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, clear ? "_remove_keys(tensor, bits)" : "_add_keys(tensor, bits)");
    return nullptr;
  }
  const uint64_t bits = PyLong_AsUnsignedLongLong(args[1]);
  if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) return nullptr;
  if (!python::tensor_base::update_keys(args[0], bits, clear)) return nullptr;
  Py_RETURN_NONE;
}
PyObject* add_keys(PyObject*, PyObject* const* args, Py_ssize_t nargs) { return change_keys(args, nargs, false); }
PyObject* remove_keys(PyObject*, PyObject* const* args, Py_ssize_t nargs) { return change_keys(args, nargs, true); }

// _bump_version(t): t was written in place (its version counter, shared by its views, goes up).
PyObject* bump_version(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !python::is_tensor_object(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_bump_version(tensor)");
    return nullptr;
  }
  try {
    python::unpack_tensor_object(args[0]).unsafeGetTensorImpl()->bump_version();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
  Py_RETURN_NONE;
}

// Whether `t` (a Tensor object whose refcount is `refs`) has no autograd state and is the only
// holder of its TensorImpl (its cached `_impl` object, if made, held by nothing else).
bool sole_handle(PyObject* t, Py_ssize_t refs) {
  if (Py_REFCNT(t) != refs || !python::is_tensor_object(t)) return false;
  const auto* o = reinterpret_cast<const python::TensorObject*>(t);
  if (o->impl == nullptr || (o->meta != nullptr && o->meta != Py_None)) return false;
  const size_t own = o->impl_obj != nullptr ? 2 : 1;  // the `_impl` object holds one reference
  return o->impl->use_count() == own && (o->impl_obj == nullptr || Py_REFCNT(o->impl_obj) == 1);
}

// _grad_stealable(grads, i, variable) -> bool: whether grads[i], the first gradient of the leaf
// `variable`, may become variable.grad itself instead of a copy (PyTorch's AccumulateGrad
// "steals" it). True when nothing but the list can reach its data: the list is the only holder
// of the Tensor object (no name, hook, retained grad, other buffer or view refers to it), that
// object the only holder of its TensorImpl, it has no autograd state, and no other TensorImpl
// shares its storage -- but for a view's base, held by the view alone (a gradient made by
// reshape / view of a gradient nobody else holds). Stricter than PyTorch, which steals a view
// of a tensor the user holds (x.view(6).backward(g) leaves x.grad aliasing g): here that is
// copied. And it obeys the gradient layout contract with `variable` (variable's strides, size-1
// dims aside, where variable is non-overlapping and dense; else row-major contiguous). The
// caller checks grad mode (off: no double backward is being set up).
PyObject* grad_stealable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyList_Check(args[0]) || !PyLong_Check(args[1]) || !python::is_tensor_object(args[2])) {
    PyErr_SetString(PyExc_TypeError, "_grad_stealable(grads: list, i: int, variable: Tensor)");
    return nullptr;
  }
  const Py_ssize_t i = PyLong_AsSsize_t(args[1]);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  if (i < 0 || i >= PyList_GET_SIZE(args[0])) {
    PyErr_SetString(PyExc_IndexError, "_grad_stealable: index out of range");
    return nullptr;
  }
  PyObject* g = PyList_GET_ITEM(args[0], i);  // borrowed: the list's reference
  if (!sole_handle(g, 1)) Py_RETURN_FALSE;
  const auto* go = reinterpret_cast<const python::TensorObject*>(g);
  const ember::c10::TensorImpl* gi = go->impl;
  const ember::c10::TensorImpl* vi = reinterpret_cast<const python::TensorObject*>(args[2])->impl;
  if (vi == nullptr) Py_RETURN_FALSE;
  size_t storage_users = 1;
  if (go->base != nullptr && go->base != Py_None) {
    if (!sole_handle(go->base, 1)) Py_RETURN_FALSE;
    const auto* bi = reinterpret_cast<const python::TensorObject*>(go->base)->impl;
    if (bi->storage() != gi->storage()) Py_RETURN_FALSE;
    storage_users = 2;
  }
  if (gi->storage() == nullptr || gi->storage()->use_count() != storage_users) Py_RETURN_FALSE;
  const auto sizes = gi->sizes();
  if (sizes.size() != vi->sizes().size()) Py_RETURN_FALSE;
  if (vi->is_non_overlapping_and_dense()) {
    const auto gs = gi->strides();
    const auto vs = vi->strides();
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != 1 ? gs[d] != vs[d] : gs[d] == 0) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
  }
  return PyBool_FromLong(gi->is_contiguous());
}

// _gradient_edge_function(accumulate_grad_cls, accumulate_seq, fallback) -> edge(t): ember.autograd's
// gradient_edge(t) for the generated kernels, in C++ for the common tensors: None for what does
// not require grad (None, a Python number, a tensor without autograd state or not requiring
// grad); (grad_fn, output_nr) for a recorded output that is no view; (AccumulateGrad, 0) for a
// leaf -- its live accumulator (held weakly by the leaf's meta), else a new one, made as
// AccumulateGrad.__init__ makes it (without running it: next_edges (), variable t, _input_meta
// (_input_meta(t),), _seq accumulate_seq), the leaf's `grad_accumulator` then a weak reference
// to it. Anything else (a view, whose grad_fn may need regenerating; another object) is fallback(t).

py::object new_accumulate_grad(PyObject* cls, PyObject* seq, PyObject* t) {
  py::object meta = py::reinterpret_steal<py::object>(input_meta(nullptr, &t, 1));
  if (!meta) return {};
  py::object empty = py::reinterpret_steal<py::object>(PyTuple_New(0));
  if (!empty) return {};
  py::object acc = py::reinterpret_steal<py::object>(
      PyBaseObject_Type.tp_new(reinterpret_cast<PyTypeObject*>(cls), empty.ptr(), nullptr));
  if (!acc) return {};
  py::object one = py::reinterpret_steal<py::object>(PyTuple_Pack(1, meta.ptr()));
  if (!one || PyObject_SetAttr(acc.ptr(), names::next_edges, empty.ptr()) < 0 ||
      PyObject_SetAttr(acc.ptr(), names::variable, t) < 0 ||
      PyObject_SetAttr(acc.ptr(), names::input_meta, one.ptr()) < 0 ||
      PyObject_SetAttr(acc.ptr(), names::seq, seq) < 0) {
    return {};
  }
  return acc;
}

PyObject* gradient_edge(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "gradient_edge(tensor)");
    return nullptr;
  }
  PyObject* t = args[0];
  PyObject* fallback = PyTuple_GET_ITEM(self, 1);
  if (!python::is_tensor_object(t)) {
    if (t == Py_None || PyFloat_CheckExact(t) || PyLong_CheckExact(t) || PyBool_Check(t)) Py_RETURN_NONE;
    return PyObject_CallOneArg(fallback, t);
  }
  PyObject* m = reinterpret_cast<python::TensorObject*>(t)->meta;
  if (m == nullptr || m == Py_None) Py_RETURN_NONE;
  py::object rg = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::requires_grad));
  if (!rg) return nullptr;
  const int
    requires
  = PyObject_IsTrue(rg.ptr());
  if (requires <= 0) {
    if (requires < 0) return nullptr;
    Py_RETURN_NONE;
  }
  py::object vi = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::view_info));
  if (!vi) return nullptr;
  if (vi.ptr() != Py_None) return PyObject_CallOneArg(fallback, t);
  py::object fn = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::grad_fn));
  if (!fn) return nullptr;
  if (fn.ptr() != Py_None) {
    py::object nr = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::output_nr));
    if (!nr) return nullptr;
    return PyTuple_Pack(2, fn.ptr(), nr.ptr());
  }
  py::object ref = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::grad_accumulator));
  if (!ref) return nullptr;
  if (PyWeakref_Check(ref.ptr())) {
    PyObject* acc = PyWeakref_GetObject(ref.ptr());  // borrowed; Py_None once dead
    if (acc == nullptr) return nullptr;
    if (acc != Py_None) return PyTuple_Pack(2, acc, g_zero);
  } else if (ref.ptr() != Py_None) {
    return PyObject_CallOneArg(fallback, t);
  }
  py::object acc = new_accumulate_grad(PyTuple_GET_ITEM(self, 0), PyTuple_GET_ITEM(self, 2), t);
  if (!acc) return nullptr;
  py::object weak = py::reinterpret_steal<py::object>(PyWeakref_NewRef(acc.ptr(), nullptr));
  if (!weak || PyObject_SetAttr(m, names::grad_accumulator, weak.ptr()) < 0) return nullptr;
  return PyTuple_Pack(2, acc.ptr(), g_zero);
}

PyMethodDef gradient_edge_def = {
    "gradient_edge", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&gradient_edge)), METH_FASTCALL,
    "gradient_edge(t) -> (node, input_nr) or None: where a gradient for t goes (ember.autograd's gradient_edge)."};

PyObject* gradient_edge_function(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyType_Check(args[0]) || !PyLong_Check(args[1]) || !PyCallable_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "_gradient_edge_function(accumulate_grad_cls, accumulate_seq, fallback)");
    return nullptr;
  }
  py::object state = py::reinterpret_steal<py::object>(PyTuple_Pack(3, args[0], args[2], args[1]));
  if (!state) return nullptr;
  return PyCFunction_NewEx(&gradient_edge_def, state.ptr(), nullptr);
}

// _save_input_function(fallback) -> save(t): ember.autograd's record of an input saved for backward
// (_meta.save) in C++ for a dense tensor: (t, version, grad_fn, output_nr) -- the version counter's
// value now, and t's place in the graph now (None, 0 without autograd state). Anything that is not
// a Tensor stays as it is; a tensor with no dense TensorImpl (sparse) is fallback(t).
PyObject* save_input(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "save(tensor)");
    return nullptr;
  }
  PyObject* t = args[0];
  if (!python::is_tensor_object(t)) return Py_NewRef(t);
  auto* o = reinterpret_cast<python::TensorObject*>(t);
  if (o->impl == nullptr) return PyObject_CallOneArg(self, t);
  py::object version = py::reinterpret_steal<py::object>(PyLong_FromUnsignedLong(o->impl->version()));
  if (!version) return nullptr;
  PyObject* m = o->meta;
  if (m == nullptr || m == Py_None) return PyTuple_Pack(4, t, version.ptr(), Py_None, g_zero);
  py::object fn = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::grad_fn));
  if (!fn) return nullptr;
  py::object nr = py::reinterpret_steal<py::object>(PyObject_GetAttr(m, names::output_nr));
  if (!nr) return nullptr;
  return PyTuple_Pack(4, t, version.ptr(), fn.ptr(), nr.ptr());
}

PyMethodDef save_input_def = {"save", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&save_input)),
                              METH_FASTCALL,
                              "save(t): the record of an input saved for backward (ember.autograd's _meta.save)."};

PyObject* save_input_function(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyCallable_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_save_input_function(fallback)");
    return nullptr;
  }
  return PyCFunction_NewEx(&save_input_def, args[0], nullptr);
}

PyMethodDef methods[] = {
    {"_add_keys", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&add_keys)), METH_FASTCALL,
     "_add_keys(tensor, bits): the tensor's dispatch key set (its TensorImpl's) |= bits."},
    {"_remove_keys", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&remove_keys)), METH_FASTCALL,
     "_remove_keys(tensor, bits): the tensor's dispatch key set (its TensorImpl's) &= ~bits."},
    {"_bump_version", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&bump_version)), METH_FASTCALL,
     "_bump_version(tensor): bumps the tensor's version counter (an in-place write)."},
    {"_input_meta", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&input_meta)), METH_FASTCALL,
     "_input_meta(tensor) -> (sizes, dtype, backend bits): what a backward Node records of an input."},
    {"_meta_matches", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&meta_matches)), METH_FASTCALL,
     "_meta_matches(tensor, meta) -> whether tensor has meta's shape, dtype and backend."},
    {"_set_history_1", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&set_history_1)), METH_FASTCALL,
     "_set_history_1(tensor, node, meta_class, bits): the tensor becomes the recorded node's one output."},
    {"_grad_stealable", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&grad_stealable)), METH_FASTCALL,
     "_grad_stealable(grads, i, variable) -> whether grads[i] may become variable's first .grad uncopied."},
    {"_gradient_edge_function", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&gradient_edge_function)),
     METH_FASTCALL,
     "_gradient_edge_function(accumulate_grad_cls, accumulate_seq, fallback) -> gradient_edge(t), in C++ for the "
     "common tensors."},
    {"_save_input_function", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&save_input_function)),
     METH_FASTCALL, "_save_input_function(fallback) -> save(t): a saved input's record, in C++ for dense tensors."},
};

}  // namespace

static void init_tensor_meta(py::module_& m) {
  g_zero = PyLong_FromLong(0);
  for (auto& def : methods) {
    PyObject* fn = PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.attr(def.ml_name) = py::reinterpret_steal<py::object>(fn);
  }
}

void init_dispatch_entry(py::module_& m) {
  if (PyType_Ready(&DispatchEntryType) < 0) throw py::error_already_set();
  init_tensor_meta(m);
  if (PyType_Ready(&DispatchTLSType) < 0) throw py::error_already_set();
  m.attr("DispatchTLS") = py::handle(reinterpret_cast<PyObject*>(&DispatchTLSType));
  m.def(
      "_dispatch_tls",
      [](uint64_t default_include, uint64_t default_exclude_not, py::object rest) {
        if (g_tls != nullptr) {  // one instance: the sets are per thread, not per object
          if (default_include != g_default_include || default_exclude_not != g_default_exclude_not) {
            throw ember::c10::ValueError("_dispatch_tls: already created with other defaults");
          }
          return py::reinterpret_borrow<py::object>(g_tls);
        }
        auto* t = PyObject_New(DispatchTLS, &DispatchTLSType);
        if (!t) throw py::error_already_set();
        t->rest = Py_NewRef(rest.ptr());
        g_default_include = default_include;
        g_default_exclude_not = default_exclude_not;
        g_tls = reinterpret_cast<PyObject*>(t);
        Py_INCREF(g_tls);  // kept for the process: entries compare their tls with it
        return py::reinterpret_steal<py::object>(g_tls);
      },
      py::arg("default_include"), py::arg("default_exclude_not"), py::arg("rest"),
      "The dispatcher's thread-local key sets (`_dispatch.tls`): include / exclude_not in C++, other "
      "attributes on `rest` (a threading.local).");
  m.attr("DispatchEntry") = py::handle(reinterpret_cast<PyObject*>(&DispatchEntryType));
  m.def(
      "_dispatch_entry",
      [](py::object op, py::object tls, py::object fallback, const std::string& mode, int nargs,
         std::vector<int> tensor_pos, std::vector<std::pair<int, int>> intlists, py::object extra,
         py::object is_operand, const std::string& name, std::vector<int> bump, int ret) {
        if (tensor_pos.size() > kMaxArgs || intlists.size() > kMaxArgs || bump.size() > kMaxArgs ||
            nargs > kMaxArgs - 4 || ret >= nargs) {
          throw ember::c10::ValueError("_dispatch_entry: too many arguments");
        }
        auto* e = PyObject_New(DispatchEntry, &DispatchEntryType);
        if (!e) throw py::error_already_set();
        e->vectorcall = entry_call;
        e->op = Py_NewRef(op.ptr());
        py::object table = op.attr("_table");
        e->table = Py_NewRef(table.ptr());
        e->tls = Py_NewRef(tls.ptr());
        e->fallback = Py_NewRef(fallback.ptr());
        e->extra = extra.is_none() ? nullptr : Py_NewRef(extra.ptr());
        e->is_operand = is_operand.is_none() ? nullptr : Py_NewRef(is_operand.ptr());
        e->name = PyUnicode_FromString(name.c_str());
        if (mode == "call") {
          e->mode = Mode::Call;
        } else if (mode == "dunder") {
          e->mode = Mode::Dunder;
        } else if (mode == "rdunder") {
          e->mode = Mode::ReflectedDunder;
        } else if (mode == "redispatch" || mode == "redispatch_below") {
          e->mode = Mode::Redispatch;
        } else {
          Py_DECREF(e);
          throw ember::c10::ValueError("_dispatch_entry: unknown mode " + mode);
        }
        if ((e->mode == Mode::Dunder || e->mode == Mode::ReflectedDunder) && !e->is_operand) {
          Py_DECREF(e);
          throw ember::c10::ValueError("_dispatch_entry: a dunder needs is_operand");
        }
        e->below_exclude_not = ~uint64_t{0};
        if (mode == "redispatch_below") {
          if (tls.ptr() != g_tls || e->extra == nullptr || !PyLong_Check(e->extra)) {
            Py_DECREF(e);
            throw ember::c10::ValueError("_dispatch_entry: redispatch_below needs the C++ tls and the excluded bits");
          }
          const uint64_t bits = PyLong_AsUnsignedLongLong(e->extra);
          if (bits == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
            Py_DECREF(e);
            throw py::error_already_set();
          }
          e->below_exclude_not = ~bits;
        }
        e->nargs = nargs;
        e->ntensors = static_cast<int>(tensor_pos.size());
        for (size_t i = 0; i < tensor_pos.size(); ++i) e->tensor_pos[i] = tensor_pos[i];
        e->nintlists = static_cast<int>(intlists.size());
        for (size_t i = 0; i < intlists.size(); ++i) {
          e->intlist_pos[i] = intlists[i].first;
          e->intlist_n[i] = intlists[i].second;
        }
        e->nbump = static_cast<int>(bump.size());
        for (size_t i = 0; i < bump.size(); ++i) {
          if (bump[i] < 0 || bump[i] >= nargs) {
            Py_DECREF(e);
            throw ember::c10::ValueError("_dispatch_entry: a bumped position outside the arguments");
          }
          e->bump_pos[i] = bump[i];
        }
        e->ret_pos = ret;
        return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(e));
      },
      py::arg("op"), py::arg("tls"), py::arg("fallback"), py::arg("mode"), py::arg("nargs"), py::arg("tensor_pos"),
      py::arg("intlists"), py::arg("extra"), py::arg("is_operand"), py::arg("name"),
      py::arg("bump") = std::vector<int>{}, py::arg("ret") = -1,
      "A C++ dispatcher entry for `op` (see csrc/python/dispatch_entry.cpp); `fallback` is the Python entry. "
      "`bump`: the positions of the tensors an in-place op writes (their version is bumped after the kernel); "
      "`ret`: the position of the argument returned instead of the kernel's result (-1: the result).");
}
