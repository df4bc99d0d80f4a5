// The attribute names the C++ entry points (dispatch_entry.cpp, autograd_engine.cpp) read from
// or write to Python objects, each interned once when the module is imported: a lookup by an
// interned string compares pointers.
#pragma once

#include <Python.h>

// (C++ name, Python attribute)
#define EMBER_INTERNED_NAMES(_)                \
  _(apply, "apply")                            \
  _(exclude_not, "exclude_not")                \
  _(grad, "grad")                              \
  _(grad_accumulator, "grad_accumulator")      \
  _(grad_fn, "grad_fn")                        \
  _(include, "include")                        \
  _(input_meta, "_input_meta")                 \
  _(name, "name")                              \
  _(next_edges, "next_edges")                  \
  _(output_nr, "output_nr")                    \
  _(post_hooks, "_post_hooks")                 \
  _(pre_hooks, "_pre_hooks")                   \
  _(release_variables, "release_variables")    \
  _(requires_grad, "requires_grad")            \
  _(retains_grad_hooks, "_retains_grad_hooks") \
  _(seq, "_seq")                               \
  _(slow, "_slow")                             \
  _(tensor_pre_hooks, "_tensor_pre_hooks")     \
  _(type_error, "_type_error")                 \
  _(variable, "variable")                      \
  _(view_info, "view_info")

namespace ember::at::python::names {

#define EMBER_DECLARE_INTERNED(id, text) extern PyObject* id;
EMBER_INTERNED_NAMES(EMBER_DECLARE_INTERNED)
#undef EMBER_DECLARE_INTERNED

// Interns every name above; called once at import, before any entry point runs (module.cpp).
void intern_all();

}  // namespace ember::at::python::names
