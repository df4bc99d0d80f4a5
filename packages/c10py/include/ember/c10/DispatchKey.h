#pragma once
// Dispatch keys and key sets, laid out as in PyTorch's c10/core/DispatchKeySet.h.
//
// A DispatchKeySet is a 64-bit set with two kinds of bits:
//   bits [0, kNumBackends)         backend bits (CPUBit, CUDABit)
//   bits [kNumBackends, ...)       functionality bits, in priority order
// A "per-backend" functionality (Dense, AutogradFunctionality) combines with the
// backend bits to name runtime keys: Dense+CPUBit is CPU, AutogradFunctionality+
// CUDABit is AutogradCUDA. The highest functionality bit wins; for a per-backend
// functionality the highest backend bit then chooses the runtime key (CUDA above
// CPU). So a call on {AutogradCPU, CPU} runs the AutogradCPU kernel first, which
// redispatches on the set masked by keys_after(AutogradCPU), reaching CPU.

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include <ember/c10/Device.h>
#include <ember/c10/Exception.h>

namespace ember::c10 {

enum class BackendComponent : uint8_t {
  InvalidBit = 0,
  CPUBit,
  CUDABit,
  EndOfBackendKeys = CUDABit,
};
constexpr int kNumBackends = static_cast<int>(BackendComponent::EndOfBackendKeys);

enum class DispatchKey : uint8_t {
  Undefined = 0,

  // ---- functionality keys, lowest priority first ----
  Dense,                  // per-backend: CPU, CUDA
  AutogradOther,          // autograd for backends without their own autograd key
  AutogradFunctionality,  // per-backend: AutogradCPU, AutogradCUDA
  // Automatic mixed precision (ember.aten.autocast), one key per device type as in
  // PyTorch: above Autograd, so the casts an autocast kernel makes are recorded by
  // autograd (gradients flow back to the parameters' dtype); reached only while a
  // thread's autocast region includes the key (tls include set).
  AutocastCPU,
  AutocastCUDA,
  Python,    // Python-mode kernels (user subclasses / modes)
  Profiler,  // ember.aten.profiler records ops here
  Tracer,    // the dispatch trace (ember.aten.trace_dispatch)
  EndOfFunctionalityKeys = Tracer,

  // ---- runtime per-backend keys ----
  CPU,
  CUDA,
  AutogradCPU,
  AutogradCUDA,

  // ---- alias keys: only for registering kernels, never in a key set ----
  Autograd,                   // -> AutogradCPU, AutogradCUDA, AutogradOther
  CompositeImplicitAutograd,  // -> every backend and autograd key
  CompositeExplicitAutograd,  // -> every backend key

  NumDispatchKeys,
};

constexpr int kNumFunctionalityKeys = static_cast<int>(DispatchKey::EndOfFunctionalityKeys);
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumDispatchKeys);

EMBER_C10_API const char* toString(DispatchKey k);
EMBER_C10_API const char* toString(BackendComponent b);
EMBER_C10_API DispatchKey parseDispatchKey(const std::string& s);  // ValueError if unknown
inline std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << toString(k); }

constexpr bool isFunctionalityKey(DispatchKey k) {
  return k > DispatchKey::Undefined && k <= DispatchKey::EndOfFunctionalityKeys;
}
constexpr bool isPerBackendFunctionalityKey(DispatchKey k) {
  return k == DispatchKey::Dense || k == DispatchKey::AutogradFunctionality;
}
constexpr bool isRuntimePerBackendKey(DispatchKey k) { return k >= DispatchKey::CPU && k <= DispatchKey::AutogradCUDA; }
constexpr bool isAliasKey(DispatchKey k) { return k >= DispatchKey::Autograd && k < DispatchKey::NumDispatchKeys; }

// CPU -> Dense, AutogradCUDA -> AutogradFunctionality, Python -> Python.
constexpr DispatchKey toFunctionalityKey(DispatchKey k) {
  switch (k) {
    case DispatchKey::CPU:
    case DispatchKey::CUDA:
      return DispatchKey::Dense;
    case DispatchKey::AutogradCPU:
    case DispatchKey::AutogradCUDA:
      return DispatchKey::AutogradFunctionality;
    default:
      return k;
  }
}

constexpr BackendComponent toBackendComponent(DispatchKey k) {
  switch (k) {
    case DispatchKey::CPU:
    case DispatchKey::AutogradCPU:
      return BackendComponent::CPUBit;
    case DispatchKey::CUDA:
    case DispatchKey::AutogradCUDA:
      return BackendComponent::CUDABit;
    default:
      return BackendComponent::InvalidBit;
  }
}

constexpr DispatchKey toRuntimePerBackendKey(DispatchKey functionality, BackendComponent b) {
  if (functionality == DispatchKey::Dense) {
    return b == BackendComponent::CUDABit ? DispatchKey::CUDA : DispatchKey::CPU;
  }
  return b == BackendComponent::CUDABit ? DispatchKey::AutogradCUDA : DispatchKey::AutogradCPU;
}

constexpr BackendComponent toBackendComponent(DeviceType t) {
  return t == DeviceType::CUDA ? BackendComponent::CUDABit : BackendComponent::CPUBit;
}
constexpr DispatchKey backendKeyFor(DeviceType t) {
  return t == DeviceType::CUDA ? DispatchKey::CUDA : DispatchKey::CPU;
}
constexpr DispatchKey autogradKeyFor(DeviceType t) {
  return t == DeviceType::CUDA ? DispatchKey::AutogradCUDA : DispatchKey::AutogradCPU;
}

class EMBER_C10_API DispatchKeySet {
 public:
  static constexpr uint64_t kBackendMask = (uint64_t{1} << kNumBackends) - 1;

  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(uint64_t raw, bool /*from_raw*/) : repr_(raw) {}
  constexpr DispatchKeySet(BackendComponent b)
      : repr_(b == BackendComponent::InvalidBit ? 0 : uint64_t{1} << (static_cast<int>(b) - 1)) {}
  constexpr DispatchKeySet(DispatchKey k) : repr_(bits_of(k)) {}
  DispatchKeySet(std::initializer_list<DispatchKey> ks) {
    for (auto k : ks) repr_ |= bits_of(k);
  }

  static constexpr DispatchKeySet from_raw(uint64_t raw) { return DispatchKeySet(raw, true); }
  constexpr uint64_t raw_repr() const { return repr_; }

  constexpr bool empty() const { return repr_ == 0; }
  // True if every bit of k is present (for a runtime key: its functionality and backend).
  constexpr bool has(DispatchKey k) const {
    const uint64_t b = bits_of(k);
    return b != 0 && (repr_ & b) == b;
  }
  constexpr bool has_backend(BackendComponent b) const { return has_all(DispatchKeySet(b)); }
  constexpr bool has_all(DispatchKeySet o) const { return (repr_ & o.repr_) == o.repr_; }
  constexpr bool has_any(DispatchKeySet o) const { return (repr_ & o.repr_) != 0; }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_raw(repr_ | o.repr_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_raw(repr_ & o.repr_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_raw(repr_ & ~o.repr_); }
  constexpr DispatchKeySet operator^(DispatchKeySet o) const { return from_raw(repr_ ^ o.repr_); }
  constexpr bool operator==(DispatchKeySet o) const { return repr_ == o.repr_; }
  constexpr bool operator!=(DispatchKeySet o) const { return repr_ != o.repr_; }

  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  // Removes only the functionality bit of k: removing AutogradCPU from {AutogradCPU, CPU}
  // leaves {CPU} (the CPU backend bit is still needed by the Dense key), as in PyTorch.
  constexpr DispatchKeySet remove(DispatchKey k) const { return from_raw(repr_ & ~(bits_of(k) & ~kBackendMask)); }

  DispatchKey highestFunctionalityKey() const;
  BackendComponent highestBackend() const;
  // The key whose kernel runs for this set (Undefined for an empty set).
  DispatchKey highestPriorityKey() const;
  // Runtime keys in priority order, highest first.
  std::vector<DispatchKey> keys() const;
  std::string str() const;  // "DispatchKeySet(AutogradCPU, CPU)"

 private:
  static constexpr uint64_t functionality_bit(DispatchKey f) {
    return uint64_t{1} << (kNumBackends + static_cast<int>(f) - 1);
  }
  static constexpr uint64_t bits_of(DispatchKey k) {
    if (k == DispatchKey::Undefined || isAliasKey(k)) return 0;
    if (isFunctionalityKey(k)) return functionality_bit(k);
    return functionality_bit(toFunctionalityKey(k)) | DispatchKeySet(toBackendComponent(k)).repr_;
  }
  uint64_t repr_ = 0;
};

inline std::ostream& operator<<(std::ostream& os, DispatchKeySet ks) { return os << ks.str(); }

// Every key strictly below `k` in priority, with all backend bits kept: masking a call's
// key set with this and taking the highest key is "redispatch below k".
EMBER_C10_API DispatchKeySet keys_after(DispatchKey k);

// The runtime keys an alias key expands to when a kernel is registered under it.
EMBER_C10_API std::vector<DispatchKey> runtimeKeysForAlias(DispatchKey alias);

// All keys a freshly made tensor on `device` carries (the backend key only: the
// autograd layer adds the Autograd key while a tensor requires grad).
constexpr DispatchKeySet keySetForDevice(DeviceType t) { return DispatchKeySet(backendKeyFor(t)); }

}  // namespace ember::c10
