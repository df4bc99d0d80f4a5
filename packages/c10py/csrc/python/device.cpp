// ember.c10py.device and DeviceGuard.
#include "bindings.h"

#include <ember/c10/DeviceGuard.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

namespace {

Device device_from(py::handle type_or_str, py::object index) {
  if (py::isinstance<Device>(type_or_str)) {
    EMBER_CHECK_VALUE(index.is_none(), "device(): an index cannot be given together with a device");
    return type_or_str.cast<Device>();
  }
  if (PyLong_Check(type_or_str.ptr()) && !PyBool_Check(type_or_str.ptr())) {
    // device(1) means cuda:1, as in PyTorch.
    const int64_t i = type_or_str.cast<int64_t>();
    EMBER_CHECK_VALUE(i >= 0 && i <= 127 && index.is_none(), "Invalid device index: ", i,
                      " (expected a non-negative device ordinal)");
    return Device(DeviceType::CUDA, static_cast<int8_t>(i));
  }
  EMBER_CHECK_TYPE(py::isinstance<py::str>(type_or_str), "device(): expected a str, int or device, but got ",
                   py::str(py::type::of(type_or_str).attr("__name__")).cast<std::string>());
  const std::string s = type_or_str.cast<std::string>();
  Device d(s);
  if (!index.is_none()) {
    EMBER_CHECK_VALUE(!d.has_index(),
                      "device(): type (string) must not include an index because index was "
                      "passed explicitly: ",
                      s);
    const int64_t i = index.cast<int64_t>();
    EMBER_CHECK_VALUE(i >= 0 && i <= 127, "Invalid device index: ", i, " (expected a non-negative device ordinal)");
    EMBER_CHECK_VALUE(!d.is_cpu() || i == 0, "Invalid device index for cpu: ", i, " (the CPU device index must be 0)");
    d.index = static_cast<int8_t>(i);
  }
  return d;
}

}  // namespace

void init_device(py::module_& m) {
  py::class_<Device>(m, "device", "A device: device('cpu'), device('cuda', 1), device('cuda:1').")
      .def(py::init(&device_from), py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return toString(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (d.has_index()) return py::int_(d.index);
                               return py::none();
                             })
      .def("__repr__",
           [](const Device& d) {
             std::string s = std::string("device(type='") + toString(d.type) + "'";
             if (d.has_index()) s += ", index=" + std::to_string(d.index);
             return s + ")";
           })
      .def("__str__", &Device::str)
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__eq__", [](const Device&, py::handle) { return false; })
      .def("__hash__", [](const Device& d) { return std::hash<Device>()(d); })
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::module_::import("ember.c10py._C").attr("device"), py::make_tuple(d.str()));
      });
  py::implicitly_convertible<py::str, Device>();

  // RAII over Python's with-statement: `with DeviceGuard(device('cuda', 1)): ...`
  struct PyDeviceGuard {
    Device device;
    std::unique_ptr<DeviceGuard> guard;
  };
  py::class_<PyDeviceGuard>(m, "DeviceGuard",
                            "Makes `device` current inside a with-block, then restores the previous one.")
      .def(py::init([](Device d) { return PyDeviceGuard{d, nullptr}; }), py::arg("device"))
      .def(
          "__enter__",
          [](PyDeviceGuard& g) -> PyDeviceGuard& {
            g.guard = std::make_unique<DeviceGuard>(g.device);
            return g;
          },
          py::return_value_policy::reference)
      .def("__exit__",
           [](PyDeviceGuard& g, py::args) {
             g.guard.reset();
             return false;
           })
      .def_property_readonly("original_device",
                             [](const PyDeviceGuard& g) { return g.guard ? g.guard->original_device() : g.device; });
}

}  // namespace ember::c10::python
