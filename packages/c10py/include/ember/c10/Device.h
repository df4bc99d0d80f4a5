#pragma once
// Device = (DeviceType, index). index -1 means "the current device of that type".

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include <ember/c10/Exception.h>

namespace ember::c10 {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

EMBER_C10_API const char* toString(DeviceType t);  // "cpu", "cuda"

struct EMBER_C10_API Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  // "cpu", "cuda", "cuda:1", "cpu:0"; anything else -> ValueError naming the string.
  explicit Device(const std::string& s);

  constexpr bool is_cpu() const { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type == DeviceType::CUDA; }
  constexpr bool has_index() const { return index >= 0; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cuda:1", "cpu"
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace ember::c10

template <>
struct std::hash<ember::c10::Device> {
  size_t operator()(const ember::c10::Device& d) const noexcept {
    return (static_cast<size_t>(d.type) << 16) ^ static_cast<size_t>(static_cast<uint8_t>(d.index));
  }
};
