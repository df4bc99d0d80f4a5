#include <ember/c10/ScalarType.h>

#include <unordered_map>

namespace ember::c10 {

ScalarType parseScalarType(const std::string& s) {
  static const std::unordered_map<std::string, ScalarType> names = [] {
    std::unordered_map<std::string, ScalarType> m;
#define EMBER_NAME_(ctype, name, pyname, cat, sgn) m[#pyname] = ScalarType::name;
    EMBER_FORALL_SCALAR_TYPES(EMBER_NAME_)
#undef EMBER_NAME_
    // PyTorch's aliases.
    m["float"] = ScalarType::Float;
    m["double"] = ScalarType::Double;
    m["half"] = ScalarType::Half;
    m["long"] = ScalarType::Long;
    m["int"] = ScalarType::Int;
    m["short"] = ScalarType::Short;
    return m;
  }();
  std::string key = s;
  for (const char* prefix : {"torch.", "ember.aten.", "ember."}) {
    const std::string p(prefix);
    if (key.rfind(p, 0) == 0) {
      key = key.substr(p.size());
      break;
    }
  }
  auto it = names.find(key);
  EMBER_CHECK_VALUE(it != names.end(), "unknown dtype name: '", s, "'");
  return it->second;
}

}  // namespace ember::c10
