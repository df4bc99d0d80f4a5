// See LazyLibrary.h.
#include "LazyLibrary.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include <ember/c10/Exception.h>

namespace ember::at::cuda {
namespace {

// The folder of libember_aten.so: .../site-packages/ember/aten/lib
std::string library_dir_of_this_file() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_dir_of_this_file), &info) == 0 || !info.dli_fname) return "";
  std::string path(info.dli_fname);
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

void* open_nvidia_library(const char* name, const char* env_var, const char* soname, const char* pip_name) {
  std::string tried;
  auto attempt = [&](const std::string& path) -> void* {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) tried += "\n  " + path + ": " + dlerror();
    return h;
  };
  if (const char* env = std::getenv(env_var); env && *env) {
    if (void* h = attempt(env)) return h;
  }
  const std::string here = library_dir_of_this_file();
  if (!here.empty()) {
    if (void* h = attempt(here + "/../../../nvidia/cu13/lib/" + soname)) return h;
  }
  if (void* h = attempt(soname)) return h;
  throw c10::Error(c10::str(name, " could not be loaded (install it with `pip install ", pip_name, "`, or point ",
                            env_var, " at ", soname, "); tried:", tried));
}

void* library_symbol(void* handle, const char* name, const char* symbol) {
  void* sym = dlsym(handle, symbol);
  EMBER_CHECK(sym != nullptr, name, ": the loaded library has no function ", symbol);
  return sym;
}

}  // namespace ember::at::cuda
