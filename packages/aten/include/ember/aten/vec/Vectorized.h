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
  typedef T V __attribute__((vector_size(EMBER_VEC_BYTES), aligned(alignof(T))));

  V v;

  Vectorized() = default;
  // (No constructor from V: GCC cannot tell V from T in a template declaration.)
  static Vectorized make(V x) {
    Vectorized r;
    r.v = x;
    return r;
  }
  Vectorized(T s) {
    for (int i = 0; i < size(); ++i) v[i] = s;
  }

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
  Vectorized& operator+=(Vectorized b) { v += b.v; return *this; }
  Vectorized& operator*=(Vectorized b) { v *= b.v; return *this; }

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

// exp for float lanes: range reduction x = n ln2 + r, a degree-6 polynomial for
// e^r on [-ln2/2, ln2/2] (Cephes' expf coefficients), then scaling by 2^n in two
// steps so results in the subnormal range and near overflow stay exact.
// Accurate to ~1 ulp; inf, -inf, NaN and overflow behave as std::exp.
inline Vectorized<float> exp(Vectorized<float> x) {
  using V = Vectorized<float>::V;
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  const V xin = x.v;
  V xc = xin;
  for (int i = 0; i < Vectorized<float>::size(); ++i) {
    xc[i] = xc[i] > 88.8f ? 88.8f : (xc[i] < -104.0f ? -104.0f : xc[i]);
  }
  const float log2e = 1.44269504088896341f;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  V t = xc * log2e + shifter;
  V n = t - shifter;
  V r = xc - n * 0.693359375f;   // ln2 split in a high part exact in float...
  r = r - n * -2.12194440e-4f;   // ...and the rest
  V p = r * 1.9875691500E-4f + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * (r * r) + r + 1.0f;
  VI ni = __builtin_convertvector(n, VI);
  VI n1 = ni >> 1;  // arithmetic shift: floor(n / 2)
  VI n2 = ni - n1;
  VI b1 = (n1 + 127) << 23;
  VI b2 = (n2 + 127) << 23;
  V s1, s2;
  std::memcpy(&s1, &b1, sizeof(V));
  std::memcpy(&s2, &b2, sizeof(V));
  V res = p * s1 * s2;
  (void)0;
  for (int i = 0; i < Vectorized<float>::size(); ++i) {
    if (xin[i] != xin[i]) res[i] = xin[i];                                    // NaN
    else if (xin[i] > 88.72283935546875f) res[i] = std::numeric_limits<float>::infinity();
    else if (xin[i] < -103.972084045410f) res[i] = 0.0f;
  }
  return Vectorized<float>::make(res);
}

}  // namespace CPU_CAPABILITY
}  // namespace ember::at::vec
