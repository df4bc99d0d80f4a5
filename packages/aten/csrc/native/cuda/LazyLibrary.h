// Loading an NVIDIA library (cuBLAS, cuSOLVER) on first use instead of linking it, so that
// importing ember.aten -- and everything on the CPU -- works where the library is absent.
// LazyCuBLAS.cpp and LazyCuSOLVER.cpp define one forwarder per function ember calls with
// EMBER_LAZY_FORWARD; the real function is resolved with dlsym the first time it runs.
#pragma once

namespace ember::at::cuda {

// The handle of the library, looked for in this order: the file named by $env_var; the
// pip wheel's copy beside ember in site-packages (nvidia/cu13/lib/<soname>, whose own
// dependencies resolve through its $ORIGIN run path); the system loader's path. Raises a
// RuntimeError naming every path tried, the variable and `pip install <pip_name>`.
// (name: "cuBLAS"; env_var: "EMBER_CUBLAS_LIBRARY"; soname: "libcublas.so.13".)
void* open_nvidia_library(const char* name, const char* env_var, const char* soname, const char* pip_name);

// The library's function `symbol`, or a RuntimeError naming it.
void* library_symbol(void* handle, const char* name, const char* symbol);

}  // namespace ember::at::cuda

// ret name(params) forwards to the library's `name`, resolved once through lookup(#name).
#define EMBER_LAZY_FORWARD(lookup, ret, name, params, args)       \
  extern "C" ret name params {                                    \
    using fn_t = ret(*) params;                                   \
    static const fn_t fn = reinterpret_cast<fn_t>(lookup(#name)); \
    return fn args;                                               \
  }
