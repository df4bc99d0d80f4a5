#pragma once
// pybind11 glue shared by every ember extension module (c10py, aten, third-party
// operator packages): intrusive_ptr as a holder, sizes as tuples, and dtypes as the
// `ember.c10py.dtype` singletons. Include this header, not <pybind11/pybind11.h>
// directly, in any binding that passes c10 types.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ember/c10/ScalarType.h>
#include <ember/c10/TensorImpl.h>

PYBIND11_DECLARE_HOLDER_TYPE(T, ember::c10::intrusive_ptr<T>, true)

namespace ember::c10::python {

// The C++ side of a Python `dtype` object: one immortal instance per ScalarType.
struct DType {
  ScalarType scalar_type;
};

// The `ember.c10py.dtype` object for t (a borrowed, immortal singleton).
inline pybind11::handle dtype_object(ScalarType t) {
  static pybind11::object* table = [] {
    auto* obj = new pybind11::object(pybind11::module_::import("ember.c10py._C").attr("_dtype_table"));
    return obj;
  }();
  return (*table)[pybind11::int_(static_cast<int>(t))].ptr();
}

}  // namespace ember::c10::python

namespace pybind11::detail {

// Sizes and strides: accept any sequence of ints, return tuples.
template <typename Vec>
struct ember_int_vector_caster {
  bool load_into(handle src, ember::c10::DimVector& out) {
    if (!src || !PySequence_Check(src.ptr()) || PyUnicode_Check(src.ptr()) || PyBytes_Check(src.ptr())) {
      return false;
    }
    const Py_ssize_t n = PySequence_Size(src.ptr());
    if (n < 0) {
      PyErr_Clear();
      return false;
    }
    out.clear();
    out.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      object item = reinterpret_steal<object>(PySequence_GetItem(src.ptr(), i));
      if (!item) {
        PyErr_Clear();
        return false;
      }
      // ints and objects with __index__ (0-dim integer tensors, NumPy ints); not floats or bools
      if (PyBool_Check(item.ptr()) || PyFloat_Check(item.ptr())) return false;
      if (!PyLong_Check(item.ptr()) && !PyIndex_Check(item.ptr())) return false;
      object idx = reinterpret_steal<object>(PyNumber_Index(item.ptr()));
      if (!idx) {
        PyErr_Clear();
        return false;
      }
      const long long v = PyLong_AsLongLong(idx.ptr());
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      out.push_back(static_cast<int64_t>(v));
    }
    return true;
  }
  static handle to_tuple(ember::c10::IntArrayRef a) {
    tuple t(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(a[i]));
    }
    return t.release();
  }
};

template <>
struct type_caster<ember::c10::DimVector> : ember_int_vector_caster<ember::c10::DimVector> {
  PYBIND11_TYPE_CASTER(ember::c10::DimVector, const_name("Sequence[int]"));
  bool load(handle src, bool) { return load_into(src, value); }
  static handle cast(const ember::c10::DimVector& v, return_value_policy, handle) { return to_tuple(v); }
};

template <>
struct type_caster<ember::c10::IntArrayRef> : ember_int_vector_caster<ember::c10::IntArrayRef> {
  PYBIND11_TYPE_CASTER(ember::c10::IntArrayRef, const_name("Sequence[int]"));
  bool load(handle src, bool) {
    if (!load_into(src, storage_)) return false;
    value = ember::c10::IntArrayRef(storage_.data(), storage_.size());
    return true;
  }
  static handle cast(ember::c10::IntArrayRef v, return_value_policy, handle) { return to_tuple(v); }

 private:
  ember::c10::DimVector storage_;
};

template <>
struct type_caster<ember::c10::ScalarType> {
  PYBIND11_TYPE_CASTER(ember::c10::ScalarType, const_name("dtype"));
  bool load(handle src, bool) {
    if (!src || !isinstance<ember::c10::python::DType>(src)) return false;
    value = src.cast<const ember::c10::python::DType&>().scalar_type;
    return true;
  }
  static handle cast(ember::c10::ScalarType t, return_value_policy, handle) {
    return ember::c10::python::dtype_object(t).inc_ref();
  }
};

}  // namespace pybind11::detail
