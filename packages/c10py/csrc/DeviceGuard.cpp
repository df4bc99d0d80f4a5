#include <ember/c10/DeviceGuard.h>

#include <array>
#include <atomic>

namespace ember::c10 {

namespace {

std::array<std::atomic<const DeviceGuardImpl*>, kNumDeviceTypes>& registry() {
  static std::array<std::atomic<const DeviceGuardImpl*>, kNumDeviceTypes> r{};
  return r;
}

class CPUGuardImpl final : public DeviceGuardImpl {
 public:
  DeviceType type() const override { return DeviceType::CPU; }
  Device getDevice() const override { return Device(DeviceType::CPU, -1); }
  void setDevice(Device) const override {}
  int deviceCount() const noexcept override { return 1; }
};

const bool cpu_registered = [] {
  static CPUGuardImpl impl;
  RegisterDeviceGuardImpl(DeviceType::CPU, &impl);
  return true;
}();

}  // namespace

void RegisterDeviceGuardImpl(DeviceType t, const DeviceGuardImpl* impl) { registry()[static_cast<int>(t)].store(impl); }

const DeviceGuardImpl* GetDeviceGuardImpl(DeviceType t) {
  (void)cpu_registered;
  const DeviceGuardImpl* impl = registry()[static_cast<int>(t)].load();
  EMBER_CHECK(impl != nullptr, "no device guard registered for device type ", toString(t), " (was ember built with ",
              toString(t), " support?)");
  return impl;
}

DeviceGuard::DeviceGuard(Device d) : impl_(GetDeviceGuardImpl(d.type)) {
  original_ = impl_->getDevice();
  current_ = original_;
  if (d.index >= 0 && d != original_) {
    impl_->setDevice(d);
    current_ = d;
  }
}

DeviceGuard::~DeviceGuard() {
  if (current_ != original_) {
    try {
      impl_->setDevice(original_);
    } catch (...) {
      // A destructor must not throw; the device stays switched.
    }
  }
}

}  // namespace ember::c10
