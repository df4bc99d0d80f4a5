// TensorImpl: geometry, dtype, device, key set and version counter over a storage.
#include "bindings.h"

#include <ember/c10/TensorImpl.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

void init_tensor_impl(py::module_& m) {
  py::class_<TensorImpl, intrusive_ptr<TensorImpl>>(
      m, "TensorImpl", "Sizes, strides, offset, dtype, device and key set over a StorageImpl.")
      .def(py::init([](intrusive_ptr<StorageImpl> storage, ScalarType dtype, std::optional<DimVector> sizes,
                       std::optional<DimVector> strides, int64_t storage_offset) {
             auto impl = make_intrusive<TensorImpl>(std::move(storage), dtype);
             DimVector sz =
                 sizes ? *sizes : DimVector{static_cast<int64_t>(impl->storage()->nbytes() / elementSize(dtype))};
             DimVector st = strides ? *strides : contiguous_strides(sz);
             impl->set_sizes_and_strides(sz, st, storage_offset);
             return impl;
           }),
           py::arg("storage"), py::arg("dtype"), py::arg("sizes") = py::none(), py::arg("strides") = py::none(),
           py::arg("storage_offset") = 0,
           "A tensor over `storage`; without sizes it is 1-d and spans the whole storage.")
      .def_static("empty", &TensorImpl::empty, py::arg("sizes"), py::arg("dtype"),
                  py::arg("device") = Device(DeviceType::CPU))
      .def_static("empty_strided", &TensorImpl::empty_strided, py::arg("sizes"), py::arg("strides"), py::arg("dtype"),
                  py::arg("device") = Device(DeviceType::CPU))
      .def_property_readonly("sizes", [](const TensorImpl& t) { return DimVector(t.sizes()); })
      .def_property_readonly("strides", [](const TensorImpl& t) { return DimVector(t.strides()); })
      .def("size", &TensorImpl::size, py::arg("dim"))
      .def("stride", &TensorImpl::stride, py::arg("dim"))
      .def_property_readonly("dim", &TensorImpl::dim)
      .def_property_readonly("numel", &TensorImpl::numel)
      .def_property_readonly("storage_offset", &TensorImpl::storage_offset)
      .def_property_readonly("dtype", &TensorImpl::dtype)
      .def_property_readonly("itemsize", &TensorImpl::itemsize)
      .def_property_readonly("nbytes", &TensorImpl::nbytes)
      .def_property_readonly("device", &TensorImpl::device)
      .def_property_readonly("storage", [](const TensorImpl& t) { return t.storage_ptr(); })
      .def_property_readonly("data_ptr", [](const TensorImpl& t) { return reinterpret_cast<uintptr_t>(t.data()); })
      .def_property_readonly("is_contiguous", &TensorImpl::is_contiguous)
      .def_property_readonly("is_non_overlapping_and_dense", &TensorImpl::is_non_overlapping_and_dense)
      .def_property("key_set", &TensorImpl::key_set, &TensorImpl::set_key_set)
      .def_property_readonly("_key_bits", [](const TensorImpl& t) { return t.key_set().raw_repr(); })
      .def_property("is_wrapped_number", &TensorImpl::is_wrapped_number, &TensorImpl::set_wrapped_number)
      .def_property_readonly("version", &TensorImpl::version)
      .def("bump_version", &TensorImpl::bump_version)
      .def(
          "shares_version_counter",
          [](const TensorImpl& a, const TensorImpl& b) { return a.version_counter() == b.version_counter(); },
          py::arg("other"))
      .def(
          "set_version_counter_from",
          [](TensorImpl& a, const TensorImpl& b) { a.set_version_counter(b.version_counter()); }, py::arg("other"),
          "Makes this tensor share `other`'s version counter (detach keeps the counter).")
      .def("set_sizes_and_strides", &TensorImpl::set_sizes_and_strides, py::arg("sizes"), py::arg("strides"),
           py::arg("storage_offset") = py::none())
      .def("set_sizes_contiguous", &TensorImpl::set_sizes_contiguous, py::arg("sizes"))
      .def("set_storage_offset", &TensorImpl::set_storage_offset, py::arg("storage_offset"))
      .def("set_storage", &TensorImpl::set_storage, py::arg("storage"))
      .def("make_view", &TensorImpl::make_view, py::arg("sizes"), py::arg("strides"), py::arg("storage_offset"),
           "A view with this geometry over the same storage and version counter.")
      .def("shallow_copy", &TensorImpl::shallow_copy)
      .def("__repr__", [](const TensorImpl& t) {
        return str("TensorImpl(sizes=", t.sizes(), ", strides=", t.strides(), ", storage_offset=", t.storage_offset(),
                   ", dtype=", toPythonName(t.dtype()), ", device='", t.device(), "')");
      });

  m.def("contiguous_strides", [](const DimVector& sizes) { return contiguous_strides(sizes); }, py::arg("sizes"));
  m.def("maybe_wrap_dim", &maybe_wrap_dim, py::arg("dim"), py::arg("ndim"), py::arg("wrap_scalar") = true);
}

}  // namespace ember::c10::python
