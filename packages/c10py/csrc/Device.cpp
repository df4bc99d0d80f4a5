#include <ember/c10/Device.h>

#include <cctype>

namespace ember::c10 {

const char* toString(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
  }
  return "unknown";
}

Device::Device(const std::string& s) {
  auto fail = [&s]() {
    throw ValueError(c10::str("Invalid device string: '", s,
                              "' (expected 'cpu' or 'cuda', optionally followed by ':<non-negative index>')"));
  };
  const auto colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else {
    fail();
  }
  if (colon == std::string::npos) return;
  const std::string idx = s.substr(colon + 1);
  if (idx.empty() || idx.size() > 3) fail();
  for (char c : idx)
    if (!std::isdigit(static_cast<unsigned char>(c))) fail();
  if (idx.size() > 1 && idx[0] == '0') fail();  // "cuda:01"
  const int v = std::stoi(idx);
  if (v > 127) fail();
  if (type == DeviceType::CPU && v != 0) {
    throw ValueError(c10::str("Invalid device string: '", s, "' (the CPU device index must be 0)"));
  }
  index = static_cast<int8_t>(v);
}

std::string Device::str() const {
  std::string s = toString(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember::c10
