#pragma once
// Random distributions: the stubs the CPU (and a future CUDA) kernel fill, and the
// arithmetic that turns Philox words into values. The arithmetic is part of the
// stream contract written out in cpu/DistributionsKernel.cpp: it is EMBER_HOST_DEVICE,
// uses only +, -, *, /, sqrt and bit operations (IEEE-exact everywhere; no
// libm, whose log/sin differ between glibc and CUDA), and must be compiled without
// floating-point contraction (a*b+c fused into an FMA rounds differently). The CPU
// kernel file turns contraction off; a CUDA kernel must be built with --fmad=false.

#include <cmath>
#include <cstdint>
#include <cstring>

#include <ember/aten/Generator.h>
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// The counters of one draw: element i uses Philox block (offset + i / values_per_block)
// under key `seed`.
struct PhiloxDraw {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// Every stub fills a contiguous tensor; element i is its i-th element in memory
// (= row-major) order.
using uniform_fn = void (*)(const Tensor& self, double from, double to, PhiloxDraw draw);
// self[i] = mean[i] + std[i] * z_i; mean / std are either undefined (use the scalar) or
// contiguous tensors of self's dtype and numel.
using normal_fn = void (*)(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std,
                           PhiloxDraw draw);
// self[i] = base + (a uniform integer in [0, range)); range == 0 means 2^64.
using random_fn = void (*)(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw draw);
// exponential (a = lambda), cauchy (a = median, b = sigma), log_normal (a = mean, b = std),
// geometric (a = log1p(-p), computed once on the host).
using exponential_fn = void (*)(const Tensor& self, double lambd, PhiloxDraw draw);
using two_param_fn = void (*)(const Tensor& self, double a, double b, PhiloxDraw draw);
using geometric_fn = void (*)(const Tensor& self, double log1m_p, PhiloxDraw draw);
// self[i] = U_i < p (p_t undefined) or U_i < p_t[i] (p_t: contiguous float64, self's numel).
using bernoulli_fn = void (*)(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw draw);

DECLARE_DISPATCH(uniform_fn, uniform_stub);
DECLARE_DISPATCH(normal_fn, normal_stub);
DECLARE_DISPATCH(random_fn, random_from_to_stub);
DECLARE_DISPATCH(exponential_fn, exponential_stub);
DECLARE_DISPATCH(two_param_fn, cauchy_stub);
DECLARE_DISPATCH(two_param_fn, log_normal_stub);
DECLARE_DISPATCH(geometric_fn, geometric_stub);
DECLARE_DISPATCH(bernoulli_fn, bernoulli_stub);

// ---- how many values one Philox block gives (the layout's table) --------------------
// float32 / float16 / bfloat16: 4 (one 32-bit word each); float64: 2 (two words each).
inline int64_t real_values_per_block(ScalarType t) { return t == ScalarType::Double ? 2 : 4; }
// Integers in [0, range): 4 per block up to 2^16, 2 (64 bits each) up to 2^32, else 1
// (all 128 bits), so that the bias of the multiply-shift is at most 2^-16 relative.
// range == 0 stands for 2^64.
inline int64_t int_values_per_block(uint64_t range) {
  if (range != 0 && range <= (uint64_t{1} << 16)) return 4;
  if (range != 0 && range <= (uint64_t{1} << 32)) return 2;
  return 1;
}
// bernoulli, geometric, multinomial: one 53-bit double uniform per value.
constexpr int64_t kDoubleValuesPerBlock = 2;

namespace dist {

// ---- bits -> [0, 1) -------------------------------------------------------------------
EMBER_HOST_DEVICE inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}
EMBER_HOST_DEVICE inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}
EMBER_HOST_DEVICE inline double bits_to_double(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof(d));
  return d;
}
EMBER_HOST_DEVICE inline uint64_t double_to_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof(b));
  return b;
}

// D = digits random bits of x as a multiple of 2^-D in [0, 1): exact in a type with D digits.
template <int D>
EMBER_HOST_DEVICE inline float uniform_bits(uint32_t x) {
  return static_cast<float>(x >> (32 - D)) * (1.0f / static_cast<float>(1u << D));
}
// Strictly inside (0, 1), exactly: ((x >> 9) + 1/2) * 2^-23 and ((hi:lo >> 12) + 1/2) * 2^-52
// (one bit fewer than the [0, 1) versions, so that the half step is representable).
EMBER_HOST_DEVICE inline float uniform_float_open(uint32_t x) {
  return (static_cast<float>(x >> 9) + 0.5f) * (1.0f / 8388608.0f);
}
EMBER_HOST_DEVICE inline double uniform_double_open(uint32_t hi, uint32_t lo) {
  const uint64_t bits = 0x3ff0000000000000ull | ((static_cast<uint64_t>(hi) << 32 | lo) >> 12);
  return (bits_to_double(bits) - 1.0) + 1.0 / 9007199254740992.0;
}

// floor(y) for |y| < 2^22 (float) / 2^51 (double) with adds and a compare only: adding
// and subtracting 1.5 * 2^23 (2^52) rounds y to an integer. No libm call and no
// float <-> int conversion, so the loops around it vectorize even on plain SSE2.
EMBER_HOST_DEVICE inline float floor_small_f(float y) {
  const float r = (y + 12582912.0f) - 12582912.0f;
  return r > y ? r - 1.0f : r;
}
EMBER_HOST_DEVICE inline double floor_small_d(double y) {
  const double r = (y + 6755399441055744.0) - 6755399441055744.0;
  return r > y ? r - 1.0 : r;
}

// 2^k for an integral k in the normal exponent range, from bits: k + bias lands in the
// low mantissa bits of 2^23 (2^52) and is shifted into the exponent field.
EMBER_HOST_DEVICE inline float pow2_f(float k) { return bits_to_float(float_to_bits(k + (127.0f + 8388608.0f)) << 23); }
EMBER_HOST_DEVICE inline double pow2_d(double k) {
  return bits_to_double(double_to_bits(k + (1023.0 + 4503599627370496.0)) << 52);
}

// ---- natural log of a positive normal number ---------------------------------------
// x = 2^e * m with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1),
// |s| <= 0.1716, summed as 2s + 2s * (s^2/3 + s^4/5 + ...) (the odd Taylor series of
// atanh: exact rational coefficients). e * ln2 is added in two parts (Cody-Waite),
// the first exact. Accurate to ~1 ulp.
EMBER_HOST_DEVICE inline float log_f(float x) {
  // The exponent field becomes a float through the mantissa of 2^23 (no int conversion).
  const uint32_t bits = float_to_bits(x);
  float e = bits_to_float(0x4b000000u | (bits >> 23)) - (8388608.0f + 127.0f);
  float m = bits_to_float((bits & 0x007fffffu) | 0x3f800000u);
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1.0f : e;
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  const float p = s2 * (1.0f / 3.0f + s2 * (1.0f / 5.0f + s2 * (1.0f / 7.0f + s2 * (1.0f / 9.0f))));
  const float two_s = s + s;
  return e * 0.693359375f + ((two_s + two_s * p) + e * -2.12194440e-4f);
}

EMBER_HOST_DEVICE inline double log_d(double x) {
  // As log_f (no 64-bit int <-> double conversion: AVX2 has none).
  const uint64_t bits = double_to_bits(x);
  double e = bits_to_double(0x4330000000000000ull | (bits >> 52)) - (4503599627370496.0 + 1023.0);
  double m = bits_to_double((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  const bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  e = big ? e + 1.0 : e;
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  const double p =
      s2 * (1.0 / 3 +
            s2 * (1.0 / 5 +
                  s2 * (1.0 / 7 +
                        s2 * (1.0 / 9 +
                              s2 * (1.0 / 11 +
                                    s2 * (1.0 / 13 +
                                          s2 * (1.0 / 15 + s2 * (1.0 / 17 + s2 * (1.0 / 19 + s2 * (1.0 / 21))))))))));
  const double two_s = s + s;
  return e * 6.93147180369123816490e-01 + ((two_s + two_s * p) + e * 1.90821492927058770002e-10);
}

// ---- sin and cos of a fraction of a turn -------------------------------------------
// sin(2 pi v), cos(2 pi v) for |v| <= 1 where v is a multiple of 2^-26 (float) or 2^-55
// (double) -- what the uniforms below produce. v = k/4 + r with r exact and |r| <= 1/8,
// so x = 2 pi r is in [-pi/4, pi/4], where the Taylor series converge fast; the quadrant
// k rotates the result.
EMBER_HOST_DEVICE inline void sincos_turn_f(float v, float& sn, float& cs) {
  const float k = floor_small_f(v * 4.0f + 0.5f);
  const float x = (v - k * 0.25f) * 6.28318530717958647692f;
  const float x2 = x * x;
  const float s = x + x * x2 * (-1.0f / 6.0f + x2 * (1.0f / 120.0f + x2 * (-1.0f / 5040.0f + x2 * (1.0f / 362880.0f))));
  const float c =
      1.0f +
      x2 * (-0.5f + x2 * (1.0f / 24.0f + x2 * (-1.0f / 720.0f + x2 * (1.0f / 40320.0f + x2 * (-1.0f / 3628800.0f)))));
  const float q = k - 4.0f * floor_small_f(k * 0.25f);  // k mod 4
  sn = q == 0.0f ? s : q == 1.0f ? c : q == 2.0f ? -s : -c;
  cs = q == 0.0f ? c : q == 1.0f ? -s : q == 2.0f ? -c : s;
}

EMBER_HOST_DEVICE inline void sincos_turn_d(double v, double& sn, double& cs) {
  const double k = floor_small_d(v * 4.0 + 0.5);
  const double x = (v - k * 0.25) * 6.283185307179586;
  const double x2 = x * x;
  const double s =
      x + x * x2 *
              (-1.0 / 6 +
               x2 * (1.0 / 120 +
                     x2 * (-1.0 / 5040 +
                           x2 * (1.0 / 362880 +
                                 x2 * (-1.0 / 39916800 + x2 * (1.0 / 6227020800.0 +
                                                               x2 * (-1.0 / 1307674368000.0 +
                                                                     x2 * (1.0 / 355687428096000.0 +
                                                                           x2 * (-1.0 / 121645100408832000.0)))))))));
  const double c =
      1.0 +
      x2 * (-0.5 + x2 * (1.0 / 24 +
                         x2 * (-1.0 / 720 +
                               x2 * (1.0 / 40320 +
                                     x2 * (-1.0 / 3628800 +
                                           x2 * (1.0 / 479001600 + x2 * (-1.0 / 87178291200.0 +
                                                                         x2 * (1.0 / 20922789888000.0 +
                                                                               x2 * (-1.0 / 6402373705728000.0)))))))));
  const double q = k - 4.0 * floor_small_d(k * 0.25);  // k mod 4
  sn = q == 0.0 ? s : q == 1.0 ? c : q == 2.0 ? -s : -c;
  cs = q == 0.0 ? c : q == 1.0 ? -s : q == 2.0 ? -c : s;
}

// ---- exp ------------------------------------------------------------------------------
// x = k ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by its Taylor series, times 2^k applied
// as two exact powers of two (so results that underflow round once, like any product).
EMBER_HOST_DEVICE inline float exp_f(float x) {
  if (x != x) return x;
  if (x > 89.0f) return bits_to_float(0x7f800000u);
  if (x < -104.0f) return 0.0f;
  const float k = floor_small_f(x * 1.44269504088896341f + 0.5f);
  const float r = (x - k * 0.693359375f) - k * -2.12194440e-4f;
  const float p =
      1.0f +
      r * (1.0f +
           r * (0.5f + r * (1.0f / 6.0f +
                            r * (1.0f / 24.0f + r * (1.0f / 120.0f + r * (1.0f / 720.0f + r * (1.0f / 5040.0f)))))));
  const float k1 = floor_small_f(k * 0.5f);
  return p * pow2_f(k1) * pow2_f(k - k1);
}

EMBER_HOST_DEVICE inline double exp_d(double x) {
  if (x != x) return x;
  if (x > 710.0) return bits_to_double(0x7ff0000000000000ull);
  if (x < -746.0) return 0.0;
  const double k = floor_small_d(x * 1.4426950408889634 + 0.5);
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  const double p =
      1.0 +
      r * (1.0 +
           r * (0.5 +
                r * (1.0 / 6 +
                     r * (1.0 / 24 +
                          r * (1.0 / 120 +
                               r * (1.0 / 720 +
                                    r * (1.0 / 5040 +
                                         r * (1.0 / 40320 +
                                              r * (1.0 / 362880 +
                                                   r * (1.0 / 3628800 +
                                                        r * (1.0 / 39916800 + r * (1.0 / 479001600 +
                                                                                   r * (1.0 / 6227020800.0)))))))))))));
  const double k1 = floor_small_d(k * 0.5);
  return p * pow2_d(k1) * pow2_d(k - k1);
}

// ---- Box-Muller ---------------------------------------------------------------------
// Two standard normals from two uniforms a, b in [0, 1): rho = sqrt(-2 ln(1 - a))
// (1 - a is in (0, 1], so the log is finite), z0 = rho cos(2 pi b), z1 = rho sin(2 pi b).
EMBER_HOST_DEVICE inline void box_muller_f(float a, float b, float& z0, float& z1) {
  const float rho = std::sqrt(-2.0f * log_f(1.0f - a));
  float s, c;
  sincos_turn_f(b, s, c);
  z0 = rho * c;
  z1 = rho * s;
}
EMBER_HOST_DEVICE inline void box_muller_d(double a, double b, double& z0, double& z1) {
  const double rho = std::sqrt(-2.0 * log_d(1.0 - a));
  double s, c;
  sincos_turn_d(b, s, c);
  z0 = rho * c;
  z1 = rho * s;
}

// ---- integers in [0, range) -----------------------------------------------------------
// floor(V * range / 2^bits(V)) for a 32-, 64- or 128-bit random V; range == 0 means 2^64.
EMBER_HOST_DEVICE inline uint64_t mulhi_u64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}
EMBER_HOST_DEVICE inline uint64_t scale32(uint32_t v, uint64_t range) {
  return (static_cast<uint64_t>(v) * range) >> 32;  // range <= 2^16 here
}
EMBER_HOST_DEVICE inline uint64_t scale64(uint32_t hi, uint32_t lo, uint64_t range) {
  return mulhi_u64(static_cast<uint64_t>(hi) << 32 | lo, range);  // range <= 2^32 here
}
EMBER_HOST_DEVICE inline uint64_t scale128(const PhiloxBlock& b, uint64_t range) {
  const uint64_t hi = static_cast<uint64_t>(b.x[0]) << 32 | b.x[1];
  const uint64_t lo = static_cast<uint64_t>(b.x[2]) << 32 | b.x[3];
  if (range == 0) return hi;
  // floor((hi * 2^64 + lo) * range / 2^128)
  const uint64_t lo_hi = mulhi_u64(lo, range);
  const uint64_t mid_lo = hi * range;  // low 64 bits of hi * range
  const uint64_t carry = (mid_lo + lo_hi) < mid_lo ? 1 : 0;
  return mulhi_u64(hi, range) + carry;
}

}  // namespace dist
}  // namespace ember::at::native
