// DispatchKey and DispatchKeySet.
#include "bindings.h"

#include <ember/c10/DispatchKey.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

void init_dispatch_key(py::module_& m) {
  py::enum_<DispatchKey> keys(m, "DispatchKey", "Dispatch keys, lowest priority first.");
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    keys.value(toString(k), k);
  }
  keys.def_property_readonly("is_alias", [](DispatchKey k) { return isAliasKey(k); })
      .def_property_readonly("is_per_backend_functionality",
                             [](DispatchKey k) { return isPerBackendFunctionalityKey(k); })
      .def_property_readonly("is_runtime_per_backend", [](DispatchKey k) { return isRuntimePerBackendKey(k); })
      .def_property_readonly("functionality", [](DispatchKey k) { return toFunctionalityKey(k); });

  py::class_<DispatchKeySet>(m, "DispatchKeySet",
                             "A set of dispatch keys; the highest-priority key present picks the kernel.")
      .def(py::init<>())
      .def(py::init([](DispatchKey k) {
             EMBER_CHECK_VALUE(!isAliasKey(k), "DispatchKeySet: alias key ", toString(k),
                               " cannot be part of a key set");
             return DispatchKeySet(k);
           }),
           py::arg("key"))
      .def(py::init([](const std::vector<DispatchKey>& ks) {
             DispatchKeySet s;
             for (auto k : ks) {
               EMBER_CHECK_VALUE(!isAliasKey(k), "DispatchKeySet: alias key ", toString(k),
                                 " cannot be part of a key set");
               s = s.add(k);
             }
             return s;
           }),
           py::arg("keys"))
      .def_static("from_raw", &DispatchKeySet::from_raw, py::arg("raw"))
      .def_property_readonly("raw", &DispatchKeySet::raw_repr, "The 64-bit representation (backend bits lowest).")
      .def("has", &DispatchKeySet::has, py::arg("key"))
      .def("__contains__", &DispatchKeySet::has)
      .def("add", &DispatchKeySet::add, py::arg("key"))
      .def("remove", &DispatchKeySet::remove, py::arg("key"))
      .def("highest_priority_key", &DispatchKeySet::highestPriorityKey)
      .def("highest_functionality_key", &DispatchKeySet::highestFunctionalityKey)
      .def("keys", &DispatchKeySet::keys, "Runtime keys, highest priority first.")
      .def("__iter__", [](const DispatchKeySet& s) { return py::iter(py::cast(s.keys())); })
      .def("__len__", [](const DispatchKeySet& s) { return s.keys().size(); })
      .def("__bool__", [](const DispatchKeySet& s) { return !s.empty(); })
      .def("__or__", &DispatchKeySet::operator|)
      .def("__and__", &DispatchKeySet::operator&)
      .def("__sub__", &DispatchKeySet::operator-)
      .def("__eq__", &DispatchKeySet::operator==)
      .def("__eq__", [](const DispatchKeySet&, py::handle) { return false; })
      .def("__hash__", [](const DispatchKeySet& s) { return std::hash<uint64_t>()(s.raw_repr()); })
      .def("__repr__", &DispatchKeySet::str);

  m.def("keys_after", &keys_after, py::arg("key"),
        "Every key below `key` in priority (with all backend bits): mask a call's key set with it to redispatch.");
  m.def("runtime_keys_for_alias", &runtimeKeysForAlias, py::arg("alias"));
  m.def("key_set_for_device", [](const Device& d) { return keySetForDevice(d.type); }, py::arg("device"));
  m.def("backend_key_for_device", [](const Device& d) { return backendKeyFor(d.type); }, py::arg("device"));
  m.def("autograd_key_for_device", [](const Device& d) { return autogradKeyFor(d.type); }, py::arg("device"));
}

}  // namespace ember::c10::python
