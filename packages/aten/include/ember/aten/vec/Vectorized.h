#pragma once
// Vectorized<T>: one SIMD register of T, written once with GCC vector extensions.
// A kernel file is compiled once per CPU capability with EMBER_VEC_BYTES set to
// 16 (SSE2 baseline), 32 (AVX2) or 64 (AVX-512), so the same source becomes
// 128-, 256- or 512-bit code. Only arithmetic T (float, double, integers); half
// and bfloat16 kernels convert to float and use Vectorized<float>.
//
// Elementwise helpers written as plain loops over size() lanes compile to single
// instructions at -O3 (sqrt, min, max, conversions).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifndef EMBER_VEC_BYTES
#define EMBER_VEC_BYTES 16
#endif

#ifndef CPU_CAPABILITY
#define CPU_CAPABILITY DEFAULT
#endif

namespace ember::at::vec {
inline namespace CPU_CAPABILITY {

template <typename T>
struct Vectorized {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "Vectorized holds arithmetic types");
  static constexpr int kBytes = EMBER_VEC_BYTES;
  static constexpr int size() { return kBytes / static_cast<int>(sizeof(T)); }
  // Naturally aligned (to its size): loads and stores go through memcpy, so memory
  // needs no alignment, and a register-sized type keeps the value in a register. An
  // under-aligned V (aligned(alignof(T))) made GCC 12 copy every loaded vector through
  // the stack as two 128-bit halves and read it back whole, a store-forwarding stall
  // per operand that made AVX2 kernels ~8x slower than their memory traffic.
  typedef T V __attribute__((vector_size(EMBER_VEC_BYTES)));

  V v;

  Vectorized() = default;
  // (No constructor from V: GCC cannot tell V from T in a template declaration.)
  static Vectorized make(V x) {
    Vectorized r;
    r.v = x;
    return r;
  }
  // s - 0 is s exactly (-0.0 too): GCC makes it one broadcast, where a loop over the
  // lanes became one insert per lane in the inner loops that broadcast a scalar.
  Vectorized(T s) { v = s - V{}; }

  static Vectorized loadu(const void* p) {
    Vectorized r;
    std::memcpy(&r.v, p, sizeof(V));
    return r;
  }
  // Loads `count` < size() elements; the rest are zero.
  static Vectorized loadu(const void* p, int count) {
    Vectorized r(T(0));
    std::memcpy(&r.v, p, static_cast<size_t>(count) * sizeof(T));
    return r;
  }
  void store(void* p) const { std::memcpy(p, &v, sizeof(V)); }
  void store(void* p, int count) const { std::memcpy(p, &v, static_cast<size_t>(count) * sizeof(T)); }

  T operator[](int i) const { return v[i]; }

  friend Vectorized operator+(Vectorized a, Vectorized b) { return make(a.v + b.v); }
  friend Vectorized operator-(Vectorized a, Vectorized b) { return make(a.v - b.v); }
  friend Vectorized operator*(Vectorized a, Vectorized b) { return make(a.v * b.v); }
  friend Vectorized operator/(Vectorized a, Vectorized b) { return make(a.v / b.v); }
  Vectorized operator-() const { return make(-v); }
  Vectorized& operator+=(Vectorized b) {
    v += b.v;
    return *this;
  }
  Vectorized& operator*=(Vectorized b) {
    v *= b.v;
    return *this;
  }

  T reduce_add() const {
    T s = v[0];
    for (int i = 1; i < size(); ++i) s += v[i];
    return s;
  }
};

template <typename T>
inline Vectorized<T> fmadd(Vectorized<T> a, Vectorized<T> b, Vectorized<T> c) {
  return Vectorized<T>::make(a.v * b.v + c.v);
}

// NaN-propagating max/min, as PyTorch's maximum/minimum.
template <typename T>
inline Vectorized<T> maximum(Vectorized<T> a, Vectorized<T> b) {
  Vectorized<T> r;
  for (int i = 0; i < Vectorized<T>::size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      r.v[i] = (a.v[i] != a.v[i]) ? a.v[i] : ((b.v[i] != b.v[i]) ? b.v[i] : (a.v[i] > b.v[i] ? a.v[i] : b.v[i]));
    } else {
      r.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    }
  }
  return r;
}
template <typename T>
inline Vectorized<T> minimum(Vectorized<T> a, Vectorized<T> b) {
  Vectorized<T> r;
  for (int i = 0; i < Vectorized<T>::size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      r.v[i] = (a.v[i] != a.v[i]) ? a.v[i] : ((b.v[i] != b.v[i]) ? b.v[i] : (a.v[i] < b.v[i] ? a.v[i] : b.v[i]));
    } else {
      r.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
    }
  }
  return r;
}

template <typename T, typename F>
inline Vectorized<T> map(Vectorized<T> a, F f) {
  Vectorized<T> r;
  for (int i = 0; i < Vectorized<T>::size(); ++i) r.v[i] = f(a.v[i]);
  return r;
}

// e^r for r in [-ln2/2, ln2/2]: Cephes' expf polynomial (degree 6), the body shared by every
// float exp of the CPU kernels; each caller reduces x = n ln2 + r and scales by 2^n its own way.
inline Vectorized<float>::V exp_reduced(Vectorized<float>::V r) {
  using V = Vectorized<float>::V;
  V p = r * 1.9875691500E-4f + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  return p * (r * r) + r + 1.0f;
}

// exp for float lanes: range reduction x = n ln2 + r, a degree-6 polynomial for
// e^r on [-ln2/2, ln2/2] (Cephes' expf coefficients), then scaling by 2^n in two
// steps so results in the subnormal range and near overflow stay exact.
// Accurate to ~1 ulp; inf, -inf, NaN and overflow behave as std::exp.
inline Vectorized<float> exp(Vectorized<float> x) {
  using V = Vectorized<float>::V;
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  const V xin = x.v;
  // (lane selects written as vector ?: so that they compile to blends)
  V xc = xin > 88.8f ? V{} + 88.8f : xin;
  xc = xc < -104.0f ? V{} - 104.0f : xc;  // NaN passes through both
  const float log2e = 1.44269504088896341f;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  V t = xc * log2e + shifter;
  V n = t - shifter;
  V r = xc - n * 0.693359375f;  // ln2 split in a high part exact in float...
  r = r - n * -2.12194440e-4f;  // ...and the rest
  V p = exp_reduced(r);
  VI ni = __builtin_convertvector(n, VI);
  VI n1 = ni >> 1;  // arithmetic shift: floor(n / 2)
  VI n2 = ni - n1;
  VI b1 = (n1 + 127) << 23;
  VI b2 = (n2 + 127) << 23;
  V s1, s2;
  std::memcpy(&s1, &b1, sizeof(V));
  std::memcpy(&s2, &b2, sizeof(V));
  V res = p * s1 * s2;
  res = xin > 88.72283935546875f ? V{} + std::numeric_limits<float>::infinity() : res;
  res = xin < -103.972084045410f ? V{} : res;
  res = xin != xin ? xin : res;  // NaN
  return Vectorized<float>::make(res);
}

// ---- elementwise math used by the unary and activation kernels -------------------
// Lane masks: a comparison of two V gives an integer vector (all ones / zeros per
// lane) that selects with GCC's vector `?:`; that compiles to blends, no branches.

namespace detail {
typedef int32_t VI32 __attribute__((vector_size(EMBER_VEC_BYTES)));
// Bit casts (a GCC vector cast between same-size vector types reinterprets the bits).
inline Vectorized<float>::V as_float(VI32 i) { return (Vectorized<float>::V)i; }
inline VI32 as_int(Vectorized<float>::V f) { return (VI32)f; }
}  // namespace detail

// |x|; for floating types the sign bit is cleared (abs(-0.0) = 0.0, NaN stays NaN).
template <typename T>
inline Vectorized<T> abs(Vectorized<T> a) {
  if constexpr (std::is_same_v<T, float>) {
    return Vectorized<float>::make(detail::as_float(detail::as_int(a.v) & 0x7fffffff));
  } else {
    Vectorized<T> r;
    for (int i = 0; i < Vectorized<T>::size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        r.v[i] = std::fabs(a.v[i]);
      } else if constexpr (std::is_signed_v<T>) {
        r.v[i] = a.v[i] < 0 ? static_cast<T>(-a.v[i]) : a.v[i];
      } else {
        r.v[i] = a.v[i];
      }
    }
    return r;
  }
}

// sqrt of each lane: one vsqrtps/vsqrtpd (the kernels are built with -fno-math-errno).
template <typename T>
inline Vectorized<T> sqrt(Vectorized<T> a) {
  Vectorized<T> r;
  for (int i = 0; i < Vectorized<T>::size(); ++i) r.v[i] = std::sqrt(a.v[i]);
  return r;
}

// Natural log for float lanes (Cephes' logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// log(x) = e ln2 + log1p(m - 1) with a degree-9 polynomial; ln2 split in two parts.
// Subnormals are scaled by 2^23 first. Accurate to ~1 ulp; log(0) = -inf,
// log(x < 0) = NaN, log(inf) = inf, NaN stays NaN, as std::log.
inline Vectorized<float> log(Vectorized<float> x) {
  using V = Vectorized<float>::V;
  using detail::VI32;
  const V xin = x.v;
  const VI32 tiny = xin < 1.17549435e-38f;  // subnormal (or zero / negative: fixed below)
  const V xs = tiny ? xin * 8388608.0f : xin;
  const VI32 bits = detail::as_int(xs);
  VI32 e = ((bits >> 23) & 0xff) - 126;
  e = tiny ? e - 23 : e;
  V m = detail::as_float((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const VI32 below = m < 0.707106781186547524f;
  V ef = __builtin_convertvector(e, V);
  ef = below ? ef - 1.0f : ef;
  m = below ? (m + m) - 1.0f : m - 1.0f;
  const V z = m * m;
  V y = m * 7.0376836292E-2f - 1.1514610310E-1f;
  y = y * m + 1.1676998740E-1f;
  y = y * m - 1.2420140846E-1f;
  y = y * m + 1.4249322787E-1f;
  y = y * m - 1.6668057665E-1f;
  y = y * m + 2.0000714765E-1f;
  y = y * m - 2.4999993993E-1f;
  y = y * m + 3.3333331174E-1f;
  y = y * m * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  V r = m + y;
  r = r + ef * 0.693359375f;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  r = (xin == inf) ? V{} + inf : r;
  r = (xin == 0.0f) ? V{} - inf : r;
  r = (xin < 0.0f) ? V{} + nan : r;
  r = (xin != xin) ? xin : r;
  return Vectorized<float>::make(r);
}

// tanh for float lanes: an odd polynomial below |x| = 0.625 (Cephes' tanhf),
// 1 - 2 / (exp(2|x|) + 1) with x's sign above. ~1 ulp; +-0, +-inf and NaN exact.
inline Vectorized<float> tanh(Vectorized<float> x) {
  using V = Vectorized<float>::V;
  const V xin = x.v;
  const V ax = abs(x).v;
  const V s = xin * xin;
  V p = s * -5.70498872745E-3f + 2.06390887954E-2f;
  p = p * s - 5.37397155531E-2f;
  p = p * s + 1.33314422036E-1f;
  p = p * s - 3.33332819422E-1f;
  const V small = xin + (xin * s) * p;
  const V axc = ax > 10.0f ? V{} + 10.0f : ax;  // tanh(10) rounds to 1; NaN passes through
  const V e = exp(Vectorized<float>::make(axc + axc)).v;
  const V big = 1.0f - 2.0f / (e + 1.0f);
  const V r = ax < 0.625f ? small : big;
  // |r| with x's sign: tanh is odd, and this keeps tanh(-0.0) = -0.0
  return Vectorized<float>::make(
      detail::as_float((detail::as_int(r) & 0x7fffffff) | (detail::as_int(xin) & static_cast<int32_t>(0x80000000u))));
}

// 1 / (1 + exp(-x)): exp(-x) overflowing to inf gives 0, as the scalar formula.
inline Vectorized<float> sigmoid(Vectorized<float> x) {
  return Vectorized<float>(1.0f) / (Vectorized<float>(1.0f) + exp(-x));
}

}  // namespace CPU_CAPABILITY
}  // namespace ember::at::vec
