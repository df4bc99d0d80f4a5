#pragma once
// The element types of ember tensors, from ONE X-macro list. The enum, the names,
// the sizes, the category flags and the promotion rules below are all generated
// from EMBER_FORALL_SCALAR_TYPES; adding a dtype means adding one line there.

#include <cstdint>
#include <ostream>
#include <string>

#include <ember/c10/Exception.h>
#include <ember/c10/util/BFloat16.h>
#include <ember/c10/util/Half.h>

namespace ember::c10 {

// _(C++ type, enum name, Python name, category, is_signed)
// category: 0 = bool, 1 = integral, 2 = floating point.
#define EMBER_FORALL_SCALAR_TYPES(_)                     \
  _(bool, Bool, bool, 0, false)                          \
  _(uint8_t, Byte, uint8, 1, false)                      \
  _(int8_t, Char, int8, 1, true)                         \
  _(int16_t, Short, int16, 1, true)                      \
  _(int32_t, Int, int32, 1, true)                        \
  _(int64_t, Long, int64, 1, true)                       \
  _(::ember::c10::Half, Half, float16, 2, true)          \
  _(::ember::c10::BFloat16, BFloat16, bfloat16, 2, true) \
  _(float, Float, float32, 2, true)                      \
  _(double, Double, float64, 2, true)

enum class ScalarType : int8_t {
#define EMBER_DEFINE_ENUM_(ctype, name, pyname, cat, sgn) name,
  EMBER_FORALL_SCALAR_TYPES(EMBER_DEFINE_ENUM_)
#undef EMBER_DEFINE_ENUM_
      Undefined,
  NumOptions = Undefined,
};

constexpr int kNumScalarTypes = static_cast<int>(ScalarType::NumOptions);

namespace detail {
struct ScalarTypeInfo {
  const char* name;     // "Float"
  const char* py_name;  // "float32"
  uint8_t itemsize;
  uint8_t category;
  bool is_signed;
};
constexpr ScalarTypeInfo kScalarTypeInfo[] = {
#define EMBER_DEFINE_INFO_(ctype, name, pyname, cat, sgn) {#name, #pyname, sizeof(ctype), cat, sgn},
    EMBER_FORALL_SCALAR_TYPES(EMBER_DEFINE_INFO_)
#undef EMBER_DEFINE_INFO_
        {"Undefined", "undefined", 0, 255, false},
};
constexpr const ScalarTypeInfo& info(ScalarType t) { return kScalarTypeInfo[static_cast<int>(t)]; }
}  // namespace detail

constexpr const char* toString(ScalarType t) { return detail::info(t).name; }
constexpr const char* toPythonName(ScalarType t) { return detail::info(t).py_name; }
constexpr size_t elementSize(ScalarType t) { return detail::info(t).itemsize; }
constexpr bool isFloatingType(ScalarType t) { return detail::info(t).category == 2; }
constexpr bool isIntegralType(ScalarType t, bool includeBool) {
  return detail::info(t).category == 1 || (includeBool && detail::info(t).category == 0);
}
constexpr bool isSignedType(ScalarType t) { return detail::info(t).is_signed; }
constexpr bool isReducedFloatingType(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }
// 0 = bool, 1 = integral, 2 = floating: the result_type categories.
constexpr int typeCategory(ScalarType t) { return detail::info(t).category; }

inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toPythonName(t); }

// PyTorch's promoteTypes, from the categories and sizes above:
// the higher category wins; within integers an unsigned and a signed type meet at a
// signed type wide enough for both; float16 with bfloat16 gives float32.
constexpr ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined || b == ScalarType::Undefined) return ScalarType::Undefined;
  const auto& ia = detail::info(a);
  const auto& ib = detail::info(b);
  if (ia.category != ib.category) return ia.category > ib.category ? a : b;
  if (ia.category == 1) {
    if (ia.is_signed != ib.is_signed) {
      // the unsigned one is uint8 (1 byte); the signed one must be at least 2 bytes
      ScalarType s = ia.is_signed ? a : b;
      return elementSize(s) >= 2 ? s : ScalarType::Short;
    }
    return ia.itemsize >= ib.itemsize ? a : b;
  }
  // floating
  if (isReducedFloatingType(a) && isReducedFloatingType(b)) return ScalarType::Float;
  return ia.itemsize >= ib.itemsize ? a : b;
}

// Maps a C++ type to its ScalarType: CppTypeToScalarType<float>::value == Float.
template <typename T>
struct CppTypeToScalarType;
#define EMBER_SPECIALIZE_CPP_TO_ST_(ctype, name, pyname, cat, sgn) \
  template <>                                                      \
  struct CppTypeToScalarType<ctype> {                              \
    static constexpr ScalarType value = ScalarType::name;          \
  };
EMBER_FORALL_SCALAR_TYPES(EMBER_SPECIALIZE_CPP_TO_ST_)
#undef EMBER_SPECIALIZE_CPP_TO_ST_

// Parses "float32", "float", "torch.float32", "ember.aten.float32" and PyTorch's aliases.
EMBER_C10_API ScalarType parseScalarType(const std::string& s);

}  // namespace ember::c10
