#pragma once
// bfloat16: the top 16 bits of a binary32. From float it rounds to nearest, ties
// to even; every NaN becomes the canonical quiet NaN 0x7fc0 (as PyTorch), and
// values past the largest finite bfloat16 round to infinity.

#include <cstdint>
#include <limits>
#include <ostream>

#include <ember/c10/util/Half.h>

namespace ember::c10 {

namespace detail {

EMBER_HOST_DEVICE inline float bf16_to_fp32(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

EMBER_HOST_DEVICE inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return 0x7fc0u;  // canonical quiet NaN
  }
  const uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

}  // namespace detail

struct alignas(2) BFloat16 {
  uint16_t x = 0;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  BFloat16() = default;
  constexpr EMBER_HOST_DEVICE BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  EMBER_HOST_DEVICE BFloat16(float v) : x(detail::fp32_to_bf16(v)) {}
  EMBER_HOST_DEVICE operator float() const { return detail::bf16_to_fp32(x); }
};

inline std::ostream& operator<<(std::ostream& os, BFloat16 h) { return os << static_cast<float>(h); }

EMBER_HALF_LIKE_OPS(BFloat16)

}  // namespace ember::c10

namespace std {
template <>
class numeric_limits<ember::c10::BFloat16> {
  using B = ember::c10::BFloat16;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr B min() { return B(0x0080, B::from_bits()); }
  static constexpr B lowest() { return B(0xff7f, B::from_bits()); }
  static constexpr B max() { return B(0x7f7f, B::from_bits()); }
  static constexpr B epsilon() { return B(0x3c00, B::from_bits()); }
  static constexpr B infinity() { return B(0x7f80, B::from_bits()); }
  static constexpr B quiet_NaN() { return B(0x7fc0, B::from_bits()); }
  static constexpr B denorm_min() { return B(0x0001, B::from_bits()); }
};
}  // namespace std
