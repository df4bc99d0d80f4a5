#pragma once
// pybind11 conversions between Python and aten's C++ types, shared by ember.aten._C
// and C++ extension packages:
//   ember.aten.Tensor  <-> at::Tensor   (the Python object holds the TensorImpl in `_impl`;
//                                       a Python number in a Tensor position becomes a
//                                       0-dim "wrapped number" tensor, as in PyTorch)
//   int/float/bool     <-> at::Scalar   (a one-element tensor is read with item())
// plus KernelSink, the list that C++ kernel registrations are collected into
// before Python's dispatcher takes them.

#include <ember/aten/Generator.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/python/pybind.h>

namespace ember::at::python {

// The Python Tensor class and its constructor from a TensorImpl, set by
// ember.aten at import (`_C._set_tensor_class`).
struct TensorClass {
  PyObject* type = nullptr;       // ember.aten.Tensor
  PyObject* wrap = nullptr;       // callable: TensorImpl -> Tensor
  PyObject* impl_name = nullptr;  // interned "_impl"
};
TensorClass& tensor_class();

// (Plain PyObject* in the exported functions: pybind11's types are hidden symbols,
// and a function taking one would be hidden from other modules too.)
bool is_tensor_object(PyObject* h);
Tensor unpack_tensor_object(PyObject* h);       // h must be an ember.aten.Tensor
PyObject* wrap_tensor_object(const Tensor& t);  // new reference; throws error_already_set
// Python bool/int/float (and NumPy scalars) -> Scalar; false if h is none of these.
bool unpack_number_object(PyObject* h, Scalar& out);

inline bool is_tensor(pybind11::handle h) { return is_tensor_object(h.ptr()); }
inline Tensor unpack_tensor(pybind11::handle h) { return unpack_tensor_object(h.ptr()); }
inline pybind11::object wrap_tensor(const Tensor& t) {
  return pybind11::reinterpret_steal<pybind11::object>(wrap_tensor_object(t));
}
inline bool unpack_number(pybind11::handle h, Scalar& out) { return unpack_number_object(h.ptr(), out); }

// Collects (qualified op name, dispatch key, kernel name, callable) registrations.
struct KernelSink {
  pybind11::list records;
  void add(const char* qualname, std::initializer_list<const char*> keys, const char* kernel,
           pybind11::cpp_function fn) {
    for (const char* key : keys) records.append(pybind11::make_tuple(qualname, key, kernel, fn));
  }
};

}  // namespace ember::at::python

namespace pybind11::detail {

template <>
struct type_caster<ember::at::Tensor> {
  PYBIND11_TYPE_CASTER(ember::at::Tensor, const_name("Tensor"));

  bool load(handle src, bool convert) {
    if (!src) return false;
    if (ember::at::python::is_tensor(src)) {
      value = ember::at::python::unpack_tensor(src);
      return true;
    }
    // A Python number where a tensor is expected: a 0-dim wrapped number.
    if (convert && !src.is_none()) {
      ember::at::Scalar s;
      if (ember::at::python::unpack_number(src, s)) {
        value = ember::at::wrapped_scalar_tensor(s);
        return true;
      }
    }
    return false;
  }

  static handle cast(const ember::at::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    return ember::at::python::wrap_tensor(t).release();
  }
};

template <>
struct type_caster<ember::at::Scalar> {
  PYBIND11_TYPE_CASTER(ember::at::Scalar, const_name("Number"));

  bool load(handle src, bool) {
    if (!src || src.is_none()) return false;
    if (ember::at::python::unpack_number(src, value)) return true;
    if (ember::at::python::is_tensor(src)) {
      ember::at::Tensor t = ember::at::python::unpack_tensor(src);
      if (t.numel() != 1) return false;
      value = t.item();
      return true;
    }
    return false;
  }

  static handle cast(const ember::at::Scalar& s, return_value_policy, handle) {
    switch (s.tag()) {
      case ember::at::Scalar::Tag::Bool:
        return pybind11::bool_(s.toBool()).release();
      case ember::at::Scalar::Tag::Int:
        return PyLong_FromLongLong(s.toLong());
      case ember::at::Scalar::Tag::Double:
        return PyFloat_FromDouble(s.toDouble());
    }
    return none().release();
  }
};

}  // namespace pybind11::detail
