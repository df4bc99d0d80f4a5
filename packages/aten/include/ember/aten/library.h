#pragma once
// Operators and kernels from a C++ extension package (PyTorch's TORCH_LIBRARY, for ember):
//
//   at::Tensor my_add_cpu(const at::Tensor& x, const at::Tensor& y) { ... }
//
//   EMBER_LIBRARY(myops, m) {                 // defines the operators of namespace myops
//     m.def("my_add(Tensor x, Tensor y) -> Tensor");
//   }
//   EMBER_LIBRARY_IMPL(myops, CPU, m) {       // kernels for one dispatch key
//     m.impl("my_add", &my_add_cpu);
//   }
//   EMBER_EXTENSION_MODULE(_C)                // the Python module that hands them over
//
// The blocks run when Python imports the module (`import mypkg._C`): each becomes a list
// of records (def: the schema; impl: the operator, the key, a pybind11 function wrapping
// the kernel, and the __FILE__ / __LINE__ of the block) given to
// ember.aten.library._load_cpp_library, which defines the operators in ember's
// dispatcher. Afterwards they are called as ember.aten.ops.myops.my_add(x, y), are
// shown by the dispatch trace with their file and line, and take a derivative from
// ember.aten.library.register_autograd like any operator.
//
// Kernels take and return at::Tensor / at::Scalar / int64_t / double / bool /
// std::vector<int64_t> / std::optional<...> in the schema's argument order.

#include <ember/aten/python/casters.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

namespace ember::at {

class Library {
 public:
  Library(std::string ns, std::string key, const char* file, int line)
      : ns_(std::move(ns)), key_(std::move(key)), file_(file), line_(line) {}

  // An operator schema without the namespace: "my_add(Tensor x, Tensor y) -> Tensor".
  Library& def(const std::string& schema) {
    records_.append(pybind11::make_tuple("def", ns_, schema, pybind11::none(), pybind11::none(), file_, line_));
    return *this;
  }

  // A kernel for operator `name` ("my_add" or "my_add.overload") under this block's key.
  template <typename Fn>
  Library& impl(const std::string& name, Fn* fn, const char* kernel_name = nullptr) {
    const std::string kernel = kernel_name ? kernel_name : ns_ + "::" + name + "_" + key_;
    records_.append(
        pybind11::make_tuple("impl", ns_ + "::" + name, key_, kernel, pybind11::cpp_function(fn), file_, line_));
    return *this;
  }

  pybind11::list& records() { return records_; }

 private:
  std::string ns_, key_;
  const char* file_;
  int line_;
  pybind11::list records_;
};

namespace detail {

// One EMBER_LIBRARY / EMBER_LIBRARY_IMPL block, collected by a static initializer of the
// extension's shared library and run by EMBER_EXTENSION_MODULE (with the GIL held).
struct LibraryBlock {
  const char* ns;
  const char* key;  // "" for EMBER_LIBRARY
  void (*init)(Library&);
  const char* file;
  int line;
};

// One list per extension module (this header is compiled into each extension).
inline std::vector<LibraryBlock>& pending_blocks() {
  static std::vector<LibraryBlock> blocks;
  return blocks;
}

struct LibraryBlockRegistrar {
  LibraryBlockRegistrar(const char* ns, const char* key, void (*init)(Library&), const char* file, int line) {
    pending_blocks().push_back({ns, key, init, file, line});
  }
};

// Definitions before implementations, whatever the order of the blocks in the sources.
inline void load_pending_libraries() {
  pybind11::module_ library = pybind11::module_::import("ember.aten.library");
  pybind11::list records;
  for (int pass = 0; pass < 2; ++pass) {
    for (const LibraryBlock& b : pending_blocks()) {
      const bool is_def = b.key[0] == '\0';
      if (is_def != (pass == 0)) continue;
      Library lib(b.ns, b.key, b.file, b.line);
      b.init(lib);
      for (pybind11::handle r : lib.records()) records.append(r);
    }
  }
  pending_blocks().clear();
  library.attr("_load_cpp_library")(records);
}

}  // namespace detail
}  // namespace ember::at

#define EMBER_LIBRARY_CONCAT_INNER(a, b) a##b
#define EMBER_LIBRARY_CONCAT(a, b) EMBER_LIBRARY_CONCAT_INNER(a, b)
#define EMBER_LIBRARY_UID EMBER_LIBRARY_CONCAT(_ember_library_, __COUNTER__)

#define EMBER_LIBRARY_BLOCK(ns, key, m, uid)                                                     \
  static void EMBER_LIBRARY_CONCAT(uid, _init)(::ember::at::Library&);                           \
  static const ::ember::at::detail::LibraryBlockRegistrar EMBER_LIBRARY_CONCAT(uid, _registrar)( \
      #ns, key, &EMBER_LIBRARY_CONCAT(uid, _init), __FILE__, __LINE__);                          \
  static void EMBER_LIBRARY_CONCAT(uid, _init)(::ember::at::Library & m)

// Defines the operators of namespace `ns` (m.def(...)).
#define EMBER_LIBRARY(ns, m) EMBER_LIBRARY_BLOCK(ns, "", m, EMBER_LIBRARY_UID)
// Registers kernels of namespace `ns` for dispatch key `key` (CPU, CUDA,
// CompositeImplicitAutograd, ...) (m.impl(...)).
#define EMBER_LIBRARY_IMPL(ns, key, m) EMBER_LIBRARY_BLOCK(ns, #key, m, EMBER_LIBRARY_UID)
// The extension's Python module: importing it registers every block above.
#define EMBER_EXTENSION_MODULE(name) \
  PYBIND11_MODULE(name, module) { ::ember::at::detail::load_pending_libraries(); }
