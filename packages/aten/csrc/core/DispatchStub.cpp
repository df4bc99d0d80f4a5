#include <ember/aten/native/DispatchStub.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace ember::at::native {

CPUCapability detected_cpu_capability() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma")) {
    return CPUCapability::AVX512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CPUCapability::AVX2;
#endif
  return CPUCapability::DEFAULT;
}

#ifndef EMBER_CPU_CAPABILITIES_BUILT
#define EMBER_CPU_CAPABILITIES_BUILT 1
#endif

// Whether this build compiled the kernels for `c`; one left out runs the best built below it.
bool cpu_capability_built(CPUCapability c) { return (EMBER_CPU_CAPABILITIES_BUILT >> static_cast<int>(c)) & 1; }

namespace {
std::atomic<int> forced{-1};  // set through set_cpu_capability (tests)

CPUCapability from_env() {
  const CPUCapability hw = detected_cpu_capability();
  const char* env = std::getenv("EMBER_CPU_CAPABILITY");
  if (!env || !*env) return hw;
  const std::string s(env);
  CPUCapability want = hw;
  if (s == "default")
    want = CPUCapability::DEFAULT;
  else if (s == "avx2")
    want = CPUCapability::AVX2;
  else if (s == "avx512")
    want = CPUCapability::AVX512;
  // never pick more than the CPU can run
  return want < hw ? want : hw;
}
}  // namespace

CPUCapability get_cpu_capability() {
  const int f = forced.load();
  if (f >= 0) return static_cast<CPUCapability>(f);
  static const CPUCapability cap = from_env();
  return cap;
}

const char* cpu_capability_name(CPUCapability c) {
  switch (c) {
    case CPUCapability::DEFAULT:
      return "default";
    case CPUCapability::AVX2:
      return "avx2";
    case CPUCapability::AVX512:
      return "avx512";
    default:
      return "unknown";
  }
}

namespace {
std::mutex& reset_mutex() {
  static std::mutex m;
  return m;
}
std::vector<void (*)()>& resetters() {
  static std::vector<void (*)()> r;
  return r;
}
}  // namespace

void register_stub_reset(void (*reset)()) {
  std::lock_guard<std::mutex> lock(reset_mutex());
  resetters().push_back(reset);
}

void reset_all_stubs() {
  std::lock_guard<std::mutex> lock(reset_mutex());
  for (auto r : resetters()) r();
}

// Used by ember.aten._C._set_cpu_capability: switches every stub in this process.
void set_cpu_capability(const std::string& name) {
  CPUCapability hw = detected_cpu_capability();
  CPUCapability want;
  if (name == "default")
    want = CPUCapability::DEFAULT;
  else if (name == "avx2")
    want = CPUCapability::AVX2;
  else if (name == "avx512")
    want = CPUCapability::AVX512;
  else
    throw c10::ValueError("unknown CPU capability '" + name + "' (expected default, avx2 or avx512)");
  EMBER_CHECK(want <= hw, "this CPU does not support ", name, " (it supports up to ", cpu_capability_name(hw), ")");
  // a build without the baseline (EMBER_CPU_BASELINE=OFF) has nothing below its lowest copy
  bool runnable = false;
  for (int c = 0; c <= static_cast<int>(want); ++c) runnable |= cpu_capability_built(static_cast<CPUCapability>(c));
  EMBER_CHECK(runnable, "ember.aten was built without the CPU kernels of ", name, " or any capability below it");
  forced.store(static_cast<int>(want));
  reset_all_stubs();
}

namespace {
std::vector<StubInfo>& stub_infos() {
  static std::vector<StubInfo> v;
  return v;
}
}  // namespace

void register_stub_info(StubInfo info) {
  std::lock_guard<std::mutex> lock(reset_mutex());
  stub_infos().push_back(info);
}

std::vector<StubInfo> registered_stubs() {
  std::lock_guard<std::mutex> lock(reset_mutex());
  return stub_infos();
}

}  // namespace ember::at::native
