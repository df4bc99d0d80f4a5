#pragma once
// DispatchStub: one kernel, compiled once per CPU capability, chosen once at run
// time (as PyTorch's DispatchStub).
//
// A kernel file in csrc/native/cpu/ is compiled three times -- baseline x86-64,
// AVX2+FMA, AVX-512 -- each time with CPU_CAPABILITY defined to DEFAULT, AVX2 or
// AVX512 and its code inside `inline namespace CPU_CAPABILITY`, so the three copies
// do not collide. REGISTER_DISPATCH stores each copy's function pointer in the
// stub's slot for that capability; the first call picks the best slot the CPU
// supports (or the one EMBER_CPU_CAPABILITY=default|avx2|avx512 names) and caches it.
// CUDA kernels register into the same stub with REGISTER_CUDA_DISPATCH.

#include <atomic>
#include <vector>

#include <ember/c10/Device.h>
#include <ember/c10/Exception.h>

namespace ember::at::native {

enum class CPUCapability : int { DEFAULT = 0, AVX2 = 1, AVX512 = 2, NUM_OPTIONS };

// The capability in use (detected with cpuid, capped by EMBER_CPU_CAPABILITY).
CPUCapability get_cpu_capability();
const char* cpu_capability_name(CPUCapability c);  // "default", "avx2", "avx512"
// Best capability this CPU supports, ignoring the environment.
CPUCapability detected_cpu_capability();

template <typename FnPtr, typename T>
struct DispatchStub;

template <typename rT, typename T, typename... Args>
struct DispatchStub<rT (*)(Args...), T> {
  using FnPtr = rT (*)(Args...);

  DispatchStub() = default;
  DispatchStub(const DispatchStub&) = delete;
  DispatchStub& operator=(const DispatchStub&) = delete;

  template <typename... ArgTypes>
  rT operator()(c10::DeviceType device_type, ArgTypes&&... args) {
    return (*get(device_type))(std::forward<ArgTypes>(args)...);
  }

  FnPtr get(c10::DeviceType device_type) {
    if (device_type == c10::DeviceType::CPU) {
      FnPtr p = cpu_ptr.load(std::memory_order_relaxed);
      if (!p) {
        p = choose_cpu_impl();
        cpu_ptr.store(p, std::memory_order_relaxed);
      }
      return p;
    }
    FnPtr p = cuda_ptr.load(std::memory_order_relaxed);
    EMBER_CHECK(p != nullptr, T::stub_name(), ": no CUDA kernel (ember.aten was built without CUDA kernels for it)");
    return p;
  }

  // Forget the cached choice (tests switch capabilities in one process).
  void reset_cpu() { cpu_ptr.store(nullptr); }

  void set_cuda_dispatch_ptr(FnPtr p) { cuda_ptr.store(p); }
  bool has_cuda_kernel() const { return cuda_ptr.load() != nullptr; }

  static FnPtr DEFAULT;
  static FnPtr AVX2;
  static FnPtr AVX512;

 private:
  FnPtr choose_cpu_impl() {
    const CPUCapability cap = get_cpu_capability();
    if (cap >= CPUCapability::AVX512 && AVX512) return AVX512;
    if (cap >= CPUCapability::AVX2 && AVX2) return AVX2;
    EMBER_CHECK(DEFAULT != nullptr, T::stub_name(), ": no CPU kernel registered");
    return DEFAULT;
  }

  std::atomic<FnPtr> cpu_ptr{nullptr};
  std::atomic<FnPtr> cuda_ptr{nullptr};
};

// The three slots have no generic definition: each kernel file's REGISTER_DISPATCH
// defines them (explicit specialisations), and the linker joins the uses here to
// those definitions, as in PyTorch. A stub without CPU kernels fails to link.

// Every stub registers itself so tests can reset them all when switching capability.
void register_stub_reset(void (*reset)());
void reset_all_stubs();

// Every stub also registers its name and whether a CUDA kernel filled its CUDA slot,
// so a test can list the stubs a CUDA build still lacks (_C._dispatch_stubs()).
struct StubInfo {
  const char* name;
  bool (*has_cuda)();
};
void register_stub_info(StubInfo info);
std::vector<StubInfo> registered_stubs();

}  // namespace ember::at::native

// Declares stub `name` of function-pointer type `fn` (in a header).
#define DECLARE_DISPATCH(fn, name)                                                                            \
  struct name##_DECLARE_DISPATCH_type : ::ember::at::native::DispatchStub<fn, name##_DECLARE_DISPATCH_type> { \
    static const char* stub_name() { return #name; }                                                          \
  };                                                                                                          \
  extern name##_DECLARE_DISPATCH_type name

// Defines the stub object (in exactly one non-kernel .cpp).
#define DEFINE_DISPATCH(name)                                                                \
  name##_DECLARE_DISPATCH_type name;                                                         \
  static const bool name##_reset_registered = [] {                                           \
    ::ember::at::native::register_stub_reset([] { name.reset_cpu(); });                      \
    ::ember::at::native::register_stub_info({#name, [] { return name.has_cuda_kernel(); }}); \
    return true;                                                                             \
  }()

#define EMBER_STUB_SLOT_(name, arch) \
  ::ember::at::native::DispatchStub<decltype(name)::FnPtr, name##_DECLARE_DISPATCH_type>::arch

// In a csrc/native/cpu/*_kernel.cpp: fills this capability's slot.
#if defined(CPU_CAPABILITY)
#define REGISTER_DISPATCH(name, fn)                                                                                    \
  template <>                                                                                                          \
  name##_DECLARE_DISPATCH_type::FnPtr::ember::at::native::DispatchStub<name##_DECLARE_DISPATCH_type::FnPtr,            \
                                                                       name##_DECLARE_DISPATCH_type>::CPU_CAPABILITY = \
      fn
#endif

// In a csrc/native/cuda/*.cu: fills the CUDA slot at load time.
#define REGISTER_CUDA_DISPATCH(name, fn)          \
  static const bool name##_cuda_registered = [] { \
    name.set_cuda_dispatch_ptr(fn);               \
    return true;                                  \
  }()

// In a non-kernel .cpp (compiled once, not per capability): `fn` fills the DEFAULT
// slot and the vector slots stay empty, so every capability runs it. Must come
// before the first call of the stub in that file.
#define REGISTER_BASELINE_DISPATCH(name, fn)                                  \
  template <>                                                                 \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, DEFAULT) = fn;   \
  template <>                                                                 \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, AVX2) = nullptr; \
  template <>                                                                 \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, AVX512) = nullptr
