// ember.c10py._C: the Python face of libember_c10.
#include "bindings.h"

#include <ember/c10/cuda/CUDAFunctions.h>

namespace py = pybind11;
using namespace ember::c10;

namespace ember::c10::python {

void init_exceptions(py::module_& m) {
  // Python classes for the two errors that have no built-in twin; both subclass
  // the built-in a PyTorch user would catch. OutOfMemoryError is a RuntimeError as
  // PyTorch's (`except RuntimeError` around a CUDA allocation catches it) and a
  // MemoryError as Python's own.
  static py::exception<OutOfMemoryError> oom(
      m, "OutOfMemoryError", py::make_tuple(py::handle(PyExc_RuntimeError), py::handle(PyExc_MemoryError)));
  static py::exception<LinAlgError> linalg(m, "LinAlgError", PyExc_RuntimeError);
  // Registered globally: every module built with this pybind11 (aten, extensions)
  // shares the translator, so a c10::IndexError thrown anywhere is an IndexError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oom.ptr(), e.what());
    } catch (const LinAlgError& e) {
      PyErr_SetString(linalg.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def(
      "_test_throw",
      [](const std::string& kind, const std::string& msg) {
        if (kind == "Error") EMBER_CHECK(false, msg);
        if (kind == "IndexError") EMBER_CHECK_INDEX(false, msg);
        if (kind == "ValueError") EMBER_CHECK_VALUE(false, msg);
        if (kind == "TypeError") EMBER_CHECK_TYPE(false, msg);
        if (kind == "NotImplementedError") EMBER_CHECK_NOT_IMPLEMENTED(false, msg);
        if (kind == "OutOfMemoryError") ::ember::c10::throw_error<OutOfMemoryError>(__FILE__, __LINE__, msg);
        if (kind == "LinAlgError") EMBER_CHECK_LINALG(false, msg);
        throw ValueError("_test_throw: unknown kind " + kind);
      },
      py::arg("kind"), py::arg("msg"), "Raises the C++ error `kind` with `msg` (tests the exception mapping).");
}

}  // namespace ember::c10::python

PYBIND11_MODULE(_C, m) {
  using namespace ember::c10::python;
  m.doc() = "ember.c10py._C: dtypes, devices, dispatch keys, allocators, storages and TensorImpl.";
  init_exceptions(m);
  init_dtype(m);
  init_device(m);
  init_dispatch_key(m);
  init_storage(m);
  init_tensor_impl(m);
  init_allocator(m);
  init_cuda(m);
  init_testing(m);

  py::dict info;
  info["cuda_compiled"] = cuda::is_compiled();
#ifdef EMBER_NVCC_FOUND
  info["nvcc_found"] = true;
#else
  info["nvcc_found"] = false;
#endif
#ifdef EMBER_CUDA_ARCHS
  info["cuda_archs"] = EMBER_CUDA_ARCHS;
#else
  info["cuda_archs"] = "";
#endif
#ifdef NDEBUG
  info["debug"] = false;
#else
  info["debug"] = true;
#endif
  info["compiler"] = __VERSION__;
  info["cxx_standard"] = __cplusplus;
  m.attr("_build_info") = info;
}
