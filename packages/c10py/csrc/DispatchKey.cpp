#include <ember/c10/DispatchKey.h>

#include <unordered_map>

namespace ember::c10 {

const char* toString(DispatchKey k) {
  switch (k) {
    case DispatchKey::Undefined:
      return "Undefined";
    case DispatchKey::Dense:
      return "Dense";
    case DispatchKey::AutogradOther:
      return "AutogradOther";
    case DispatchKey::AutogradFunctionality:
      return "AutogradFunctionality";
    case DispatchKey::AutocastCPU:
      return "AutocastCPU";
    case DispatchKey::AutocastCUDA:
      return "AutocastCUDA";
    case DispatchKey::Python:
      return "Python";
    case DispatchKey::Profiler:
      return "Profiler";
    case DispatchKey::Tracer:
      return "Tracer";
    case DispatchKey::CPU:
      return "CPU";
    case DispatchKey::CUDA:
      return "CUDA";
    case DispatchKey::AutogradCPU:
      return "AutogradCPU";
    case DispatchKey::AutogradCUDA:
      return "AutogradCUDA";
    case DispatchKey::Autograd:
      return "Autograd";
    case DispatchKey::CompositeImplicitAutograd:
      return "CompositeImplicitAutograd";
    case DispatchKey::CompositeExplicitAutograd:
      return "CompositeExplicitAutograd";
    case DispatchKey::NumDispatchKeys:
      break;
  }
  return "UNKNOWN_DISPATCH_KEY";
}

const char* toString(BackendComponent b) {
  switch (b) {
    case BackendComponent::InvalidBit:
      return "InvalidBit";
    case BackendComponent::CPUBit:
      return "CPUBit";
    case BackendComponent::CUDABit:
      return "CUDABit";
  }
  return "UNKNOWN_BACKEND";
}

DispatchKey parseDispatchKey(const std::string& s) {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (s == toString(k)) return k;
  }
  throw ValueError(str("unknown dispatch key: '", s, "'"));
}

DispatchKey DispatchKeySet::highestFunctionalityKey() const {
  const uint64_t f = repr_ >> kNumBackends;
  if (f == 0) return DispatchKey::Undefined;
  return static_cast<DispatchKey>(64 - __builtin_clzll(f));
}

BackendComponent DispatchKeySet::highestBackend() const {
  const uint64_t b = repr_ & kBackendMask;
  if (b == 0) return BackendComponent::InvalidBit;
  return static_cast<BackendComponent>(64 - __builtin_clzll(b));
}

DispatchKey DispatchKeySet::highestPriorityKey() const {
  const DispatchKey f = highestFunctionalityKey();
  if (!isPerBackendFunctionalityKey(f)) return f;
  const BackendComponent b = highestBackend();
  if (b == BackendComponent::InvalidBit) return f;
  return toRuntimePerBackendKey(f, b);
}

std::vector<DispatchKey> DispatchKeySet::keys() const {
  std::vector<DispatchKey> out;
  for (int f = kNumFunctionalityKeys; f >= 1; --f) {
    const auto fk = static_cast<DispatchKey>(f);
    if (!(repr_ & functionality_bit(fk))) continue;
    if (!isPerBackendFunctionalityKey(fk)) {
      out.push_back(fk);
      continue;
    }
    bool any = false;
    for (int b = kNumBackends; b >= 1; --b) {
      const auto bc = static_cast<BackendComponent>(b);
      if (has_backend(bc)) {
        out.push_back(toRuntimePerBackendKey(fk, bc));
        any = true;
      }
    }
    if (!any) out.push_back(fk);
  }
  return out;
}

std::string DispatchKeySet::str() const {
  std::string s = "DispatchKeySet(";
  bool first = true;
  for (auto k : keys()) {
    if (!first) s += ", ";
    s += toString(k);
    first = false;
  }
  return s + ")";
}

DispatchKeySet keys_after(DispatchKey k) {
  const DispatchKey f = toFunctionalityKey(k);
  EMBER_CHECK_VALUE(isFunctionalityKey(f), "keys_after: ", toString(k), " is not a runtime dispatch key");
  // functionality bits strictly below f, plus every backend bit
  const uint64_t below = (uint64_t{1} << (kNumBackends + static_cast<int>(f) - 1)) - 1;
  return DispatchKeySet::from_raw(below | DispatchKeySet::kBackendMask);
}

std::vector<DispatchKey> runtimeKeysForAlias(DispatchKey alias) {
  switch (alias) {
    case DispatchKey::Autograd:
      return {DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA, DispatchKey::AutogradOther};
    case DispatchKey::CompositeImplicitAutograd:
      return {DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA,
              DispatchKey::AutogradOther};
    case DispatchKey::CompositeExplicitAutograd:
      return {DispatchKey::CPU, DispatchKey::CUDA};
    default:
      return {alias};
  }
}

}  // namespace ember::c10
