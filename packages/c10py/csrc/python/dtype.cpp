// dtype objects: ember.c10py.dtype singletons, one per ScalarType.
#include "bindings.h"

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

void init_dtype(py::module_& m) {
  py::class_<DType>(m, "dtype", "The element type of a tensor (ember.aten.float32, ...).")
      .def_property_readonly(
          "is_floating_point", [](const DType& d) { return isFloatingType(d.scalar_type); },
          "True for float16, bfloat16, float32 and float64.")
      .def_property_readonly("is_signed", [](const DType& d) { return isSignedType(d.scalar_type); })
      .def_property_readonly("is_complex", [](const DType&) { return false; })
      .def_property_readonly(
          "itemsize", [](const DType& d) { return elementSize(d.scalar_type); }, "Bytes per element.")
      .def_property_readonly("_scalar_type", [](const DType& d) { return static_cast<int>(d.scalar_type); })
      .def_property_readonly("_name", [](const DType& d) { return toPythonName(d.scalar_type); })
      .def_property_readonly(
          "_category", [](const DType& d) { return typeCategory(d.scalar_type); },
          "0 bool, 1 integral, 2 floating: the result_type categories.")
      .def("__repr__", [](const DType& d) { return std::string("ember.aten.") + toPythonName(d.scalar_type); })
      .def("__reduce__",
           [](const DType& d) {
             return py::make_tuple(py::module_::import("ember.c10py._C").attr("_dtype_from_name"),
                                   py::make_tuple(toPythonName(d.scalar_type)));
           })
      .def("__copy__", [](py::handle self) { return self; })
      .def("__deepcopy__", [](py::handle self, py::handle) { return self; });

  py::tuple table(kNumScalarTypes);
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto st = static_cast<ScalarType>(i);
    py::object obj = py::cast(DType{st}, py::return_value_policy::move);
    table[i] = obj;
    m.attr(toPythonName(st)) = obj;
  }
  // Leaked on purpose so the singletons outlive every tensor.
  m.attr("_dtype_table") = table;
  table.inc_ref();

  m.def(
      "_dtype_from_name", [](const std::string& name) { return parseScalarType(name); }, py::arg("name"),
      "The dtype named `name` ('float32', 'float', 'torch.float32', ...); ValueError if unknown.");
  m.def(
      "promote_types", [](ScalarType a, ScalarType b) { return promoteTypes(a, b); }, py::arg("type1"),
      py::arg("type2"), "The smallest dtype both can be cast to without losing their category (PyTorch's rule).");
  m.def("_all_dtypes", [] {
    py::list l;
    for (int i = 0; i < kNumScalarTypes; ++i) l.append(static_cast<ScalarType>(i));
    return l;
  });
}

}  // namespace ember::c10::python
