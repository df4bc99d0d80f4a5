#include <ember/c10/Allocator.h>

#include <array>
#include <atomic>

namespace ember::c10 {

namespace {
std::array<std::atomic<Allocator*>, kNumDeviceTypes>& registry() {
  static std::array<std::atomic<Allocator*>, kNumDeviceTypes> r{};
  return r;
}
}  // namespace

void SetAllocator(DeviceType t, Allocator* a) { registry()[static_cast<int>(t)].store(a); }

Allocator* GetAllocator(DeviceType t) {
  Allocator* a = registry()[static_cast<int>(t)].load();
  EMBER_CHECK(a != nullptr, "no allocator registered for device type ", toString(t));
  return a;
}

}  // namespace ember::c10
