// ember.aten._C (skeleton: the kernels arrive with the aten core issue).
#include <ember/c10/python/pybind.h>

PYBIND11_MODULE(_C, m) {
  m.doc() = "ember.aten._C";
  m.def("_c10_version_check", [] { return ember::c10::toPythonName(ember::c10::ScalarType::Float); });
}
