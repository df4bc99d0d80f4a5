#pragma once
// The native Tensor object: ember.aten.Tensor *is* the handle of one TensorImpl (PyTorch's
// THPVariable). `ember.aten._C.TensorBase` holds the TensorImpl reference and the slots aten
// and autograd share (`_base`, `_meta`), plus a `__dict__` and weak references for
// subclasses; `ember.aten.Tensor` subclasses it in Python. The key set and the version
// counter live in the TensorImpl only (`t._keys` / `t._version` read them). `impl` is null
// only for a tensor with no dense TensorImpl (SparseTensor), whose keys are its own `_keys`
// slot. Defined in python_glue/casters.cpp, next to the casters that read and make it.

#include <ember/aten/python/casters.h>

namespace ember::at::python {

struct TensorObject {
  PyObject_HEAD c10::TensorImpl* impl;  // one reference (intrusive_incref), or null
  PyObject* impl_obj;                   // the c10py TensorImpl object, made on the first `_impl` read
  PyObject* base;                       // `_base`: the root tensor of a view (NULL reads as None)
  PyObject* meta;                       // `_meta`: the AutogradMeta (NULL reads as None)
  PyObject* dict;
  PyObject* weakreflist;
};

PyTypeObject* tensor_base_type();  // ember.aten._C.TensorBase
// A new instance of `type` (ember.aten.Tensor or a subclass) holding t's TensorImpl, with no
// _base and no _meta; NULL with an exception set.
PyObject* new_tensor_object(PyTypeObject* type, const Tensor& t);
// The raw dispatch key bits of a Tensor object; false with an exception set.
bool tensor_key_bits(PyObject* h, uint64_t& out);

}  // namespace ember::at::python
