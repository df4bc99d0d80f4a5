// The interned attribute names of interned.h.
#include "interned.h"

#include <pybind11/pybind11.h>

namespace ember::at::python::names {

#define EMBER_DEFINE_INTERNED(id, text) PyObject* id = nullptr;
EMBER_INTERNED_NAMES(EMBER_DEFINE_INTERNED)
#undef EMBER_DEFINE_INTERNED

void intern_all() {
#define EMBER_INTERN(id, text)           \
  id = PyUnicode_InternFromString(text); \
  if (!id) throw pybind11::error_already_set();
  EMBER_INTERNED_NAMES(EMBER_INTERN)
#undef EMBER_INTERN
}

}  // namespace ember::at::python::names
