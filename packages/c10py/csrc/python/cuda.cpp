// ember.c10py._C.cuda: device queries, streams, events and the CUDA allocators.
#include "bindings.h"

#include <ember/c10/cuda/CUDAFunctions.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

void init_cuda(py::module_& parent) {
  py::module_ m = parent.def_submodule("cuda", "CUDA devices (absent devices read as is_available() == False).");
  m.def("is_compiled", &cuda::is_compiled, "True if this build of ember.c10py includes CUDA.");
  m.def("is_available", &cuda::is_available, "True if a CUDA device can be used now.");
  m.def("device_count", &cuda::device_count);
  m.def("availability_error", &cuda::availability_error,
        "Why is_available() is False (the CUDA runtime's message), or ''.");
  m.def("current_device", &cuda::current_device);
  m.def("set_device", &cuda::set_device, py::arg("device"));
  m.def("synchronize", &cuda::synchronize, py::arg("device") = -1);
}

}  // namespace ember::c10::python
