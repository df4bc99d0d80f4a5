#pragma once
// DeviceGuard: RAII that makes `device` current for its scope and restores the
// previous device on exit. Each device type registers a DeviceGuardImpl (CPU's
// does nothing; CUDA's calls cudaSetDevice), so code that is not CUDA-aware can
// still switch devices.

#include <ember/c10/Device.h>

namespace ember::c10 {

class EMBER_C10_API DeviceGuardImpl {
 public:
  virtual ~DeviceGuardImpl() = default;
  virtual DeviceType type() const = 0;
  virtual Device getDevice() const = 0;
  virtual void setDevice(Device d) const = 0;
  virtual int deviceCount() const noexcept = 0;
};

EMBER_C10_API void RegisterDeviceGuardImpl(DeviceType t, const DeviceGuardImpl* impl);
EMBER_C10_API const DeviceGuardImpl* GetDeviceGuardImpl(DeviceType t);  // RuntimeError if none

class EMBER_C10_API DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  EMBER_DISABLE_COPY_AND_ASSIGN(DeviceGuard);

  Device original_device() const { return original_; }
  Device current_device() const { return current_; }

 private:
  const DeviceGuardImpl* impl_;
  Device original_;
  Device current_;
};

}  // namespace ember::c10
