#pragma once
// One init function per binding file (one file per area, as MLX's bindings/).
#include <ember/c10/python/pybind.h>

namespace ember::c10::python {
void init_exceptions(pybind11::module_& m);
void init_dtype(pybind11::module_& m);
void init_device(pybind11::module_& m);
void init_dispatch_key(pybind11::module_& m);
void init_storage(pybind11::module_& m);
void init_tensor_impl(pybind11::module_& m);
void init_allocator(pybind11::module_& m);
void init_cuda(pybind11::module_& m);
void init_testing(pybind11::module_& m);  // _C._test_* hooks for the test-suite
}  // namespace ember::c10::python
