#pragma once
// IEEE 754 binary16 (float16). Stored as its 16 bits; arithmetic goes through
// float, as on CPUs without native half arithmetic. Conversions round to nearest,
// ties to even, keep NaN a NaN (quiet, sign preserved) and overflow to infinity.

#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>

#include <ember/c10/Macros.h>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace ember::c10 {

namespace detail {

EMBER_HOST_DEVICE inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

EMBER_HOST_DEVICE inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

// binary16 -> binary32, exact.
EMBER_HOST_DEVICE inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) {  // inf or NaN: keep the payload, force quiet.
    return bits_float(sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
  }
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);  // signed zero
    // Subnormal: value = mant * 2^-24, exactly representable in float.
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
    return (sign ? -v : v);
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

// binary32 -> binary16, round to nearest even.
EMBER_HOST_DEVICE inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {  // NaN: quiet, keep the top payload bits.
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) {  // rounds to >= 65520: overflow to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (ax < 0x38800000u) {               // below the smallest normal half (2^-14): subnormal or zero
    if (ax < 0x33000000u) return sign;  // < 2^-25 rounds to zero (ties included)
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;  // implicit bit
    // value = m * 2^(e-150); half subnormal unit = 2^-24 -> shift = 126 - e
    const uint32_t shift = 126u - e;
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias exponent and round the 13 dropped mantissa bits.
  uint32_t r = ax - 0x38000000u;  // exponent 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // may carry into exponent: fine
  return static_cast<uint16_t>(sign | r);
}

}  // namespace detail

struct alignas(2) Half {
  uint16_t x = 0;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Half() = default;
  constexpr EMBER_HOST_DEVICE Half(uint16_t bits, from_bits_t) : x(bits) {}
  EMBER_HOST_DEVICE Half(float v) : x(detail::fp32_to_fp16(v)) {}
#if defined(__CUDACC__)
  EMBER_HOST_DEVICE Half(const __half& h) : x(*reinterpret_cast<const uint16_t*>(&h)) {}
  EMBER_HOST_DEVICE operator __half() const { return *reinterpret_cast<const __half*>(&x); }
#endif
  EMBER_HOST_DEVICE operator float() const { return detail::fp16_to_fp32(x); }
};

inline std::ostream& operator<<(std::ostream& os, Half h) { return os << static_cast<float>(h); }

// Arithmetic through float (the result rounds back when stored as Half).
#define EMBER_HALF_LIKE_OPS(T)                                                        \
  EMBER_HOST_DEVICE inline T operator+(T a, T b) { return T(float(a) + float(b)); }   \
  EMBER_HOST_DEVICE inline T operator-(T a, T b) { return T(float(a) - float(b)); }   \
  EMBER_HOST_DEVICE inline T operator*(T a, T b) { return T(float(a) * float(b)); }   \
  EMBER_HOST_DEVICE inline T operator/(T a, T b) { return T(float(a) / float(b)); }   \
  EMBER_HOST_DEVICE inline T operator-(T a) { return T(-float(a)); }                  \
  EMBER_HOST_DEVICE inline T& operator+=(T& a, T b) { return a = a + b; }             \
  EMBER_HOST_DEVICE inline T& operator-=(T& a, T b) { return a = a - b; }             \
  EMBER_HOST_DEVICE inline T& operator*=(T& a, T b) { return a = a * b; }             \
  EMBER_HOST_DEVICE inline T& operator/=(T& a, T b) { return a = a / b; }             \
  EMBER_HOST_DEVICE inline bool operator<(T a, T b) { return float(a) < float(b); }   \
  EMBER_HOST_DEVICE inline bool operator>(T a, T b) { return float(a) > float(b); }   \
  EMBER_HOST_DEVICE inline bool operator<=(T a, T b) { return float(a) <= float(b); } \
  EMBER_HOST_DEVICE inline bool operator>=(T a, T b) { return float(a) >= float(b); } \
  EMBER_HOST_DEVICE inline bool operator==(T a, T b) { return float(a) == float(b); } \
  EMBER_HOST_DEVICE inline bool operator!=(T a, T b) { return float(a) != float(b); }

EMBER_HALF_LIKE_OPS(Half)

}  // namespace ember::c10

namespace std {
template <>
class numeric_limits<ember::c10::Half> {
  using H = ember::c10::Half;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr H min() { return H(0x0400, H::from_bits()); }
  static constexpr H lowest() { return H(0xfbff, H::from_bits()); }
  static constexpr H max() { return H(0x7bff, H::from_bits()); }
  static constexpr H epsilon() { return H(0x1400, H::from_bits()); }
  static constexpr H infinity() { return H(0x7c00, H::from_bits()); }
  static constexpr H quiet_NaN() { return H(0x7e00, H::from_bits()); }
  static constexpr H denorm_min() { return H(0x0001, H::from_bits()); }
};
}  // namespace std
