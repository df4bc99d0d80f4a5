#pragma once
// Scalar: a bool, an int64 or a double, as a Python number arrives in C++
// (PyTorch's c10::Scalar without complex). Kernels convert it to their compute
// type with to<T>().

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include <ember/c10/ScalarType.h>

namespace ember::at {

using c10::ScalarType;

class Scalar {
 public:
  enum class Tag : uint8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : tag_(Tag::Bool) { v_.i = v ? 1 : 0; }
  Scalar(double v) : tag_(Tag::Double) { v_.d = v; }
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(c10::Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}
  Scalar(c10::BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int) {
    v_.i = static_cast<int64_t>(v);
  }

  Tag tag() const { return tag_; }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  bool isIntegral(bool includeBool) const { return tag_ == Tag::Int || (includeBool && tag_ == Tag::Bool); }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  // The dtype a wrapped number of this kind gets: bool, int64 or float64.
  ScalarType type() const {
    switch (tag_) {
      case Tag::Bool:
        return ScalarType::Bool;
      case Tag::Int:
        return ScalarType::Long;
      case Tag::Double:
        return ScalarType::Double;
    }
    return ScalarType::Undefined;
  }

  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return tag_ == Tag::Double ? v_.d != 0 : v_.i != 0;
    } else if constexpr (std::is_integral_v<T>) {
      // float -> int truncates as a C cast would (Python's int(x) for finite x)
      return tag_ == Tag::Double ? static_cast<T>(static_cast<int64_t>(v_.d)) : static_cast<T>(v_.i);
    } else {
      return tag_ == Tag::Double ? static_cast<T>(v_.d) : static_cast<T>(static_cast<double>(v_.i));
    }
  }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }
  bool toBool() const { return to<bool>(); }

  // Whether the value survives a round trip through dtype t (range check for ints).
  bool fits(ScalarType t) const;

  Scalar operator-() const {
    switch (tag_) {
      case Tag::Double:
        return Scalar(-v_.d);
      case Tag::Int:
        return Scalar(-v_.i);
      case Tag::Bool:
        break;
    }
    return Scalar(-v_.i);
  }

  bool equal(double d) const { return toDouble() == d; }

 private:
  Tag tag_;
  union {
    int64_t i;
    double d;
  } v_;
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.tag()) {
    case Scalar::Tag::Bool:
      return os << (s.toBool() ? "True" : "False");
    case Scalar::Tag::Int:
      return os << s.toLong();
    case Scalar::Tag::Double:
      return os << s.toDouble();
  }
  return os;
}

}  // namespace ember::at
