// CPU kernels of the reductions: one "ops" struct per reduction, run by
// run_reduction (cpu/Reduce.h), which picks the loop layout and the threads.
//
// Accuracy: floating sums are pairwise (cascade) sums over vector accumulators, in
// the input type (float for half/bfloat16); integer sums wrap in 64 bits; var/std
// combine 64-element blocks (two-pass within a block, in double) with Chan's
// formula; logsumexp combines (max, sum of exp(x - max)) pairs block by block.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Reduce.h>

#include "../ReduceOps.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using reduce_detail::kColBlock;
using vec::Vectorized;

template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;
template <typename T>
constexpr bool is_float_like_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// Loads Vectorized<opmath_t<T>>::size() elements of T as opmath_t<T> lanes.
template <typename scalar_t>
inline Vectorized<opmath_t<scalar_t>> vload(const scalar_t* p) {
  if constexpr (std::is_same_v<scalar_t, c10::Half>) {
    Vectorized<float> r;
#if EMBER_VEC_BYTES == 64
    const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    std::memcpy(&r.v, &f, sizeof(f));
#elif EMBER_VEC_BYTES == 32 && defined(__F16C__)
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    std::memcpy(&r.v, &f, sizeof(f));
#else
    for (int i = 0; i < Vectorized<float>::size(); ++i) r.v[i] = static_cast<float>(p[i]);
#endif
    return r;
  } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    typedef uint16_t U16 __attribute__((vector_size(EMBER_VEC_BYTES / 2)));
    typedef uint32_t U32 __attribute__((vector_size(EMBER_VEC_BYTES)));
    U16 h;
    std::memcpy(&h, p, sizeof(h));
    const U32 w = __builtin_convertvector(h, U32) << 16;
    Vectorized<float> r;
    std::memcpy(&r.v, &w, sizeof(w));
    return r;
  } else {
    return Vectorized<scalar_t>::loadu(p);
  }
}

template <typename T>
inline T to_acc(T v) {
  return v;
}
inline float to_acc(c10::Half v) { return static_cast<float>(v); }
inline float to_acc(c10::BFloat16 v) { return static_cast<float>(v); }

template <typename scalar_t, typename acc_t>
inline scalar_t from_acc(acc_t v) {
  if constexpr (is_reduced_float_v<scalar_t>)
    return scalar_t(static_cast<float>(v));
  else
    return static_cast<scalar_t>(v);
}

template <typename T>
inline bool is_nan(T v) {
  if constexpr (is_float_like_v<T>)
    return v != v;
  else
    return false;
}

// bool data is 0/1 bytes: reductions whose result a uint8 kernel computes identically
// (sum, prod, max, min, argmax, argmin) run bool inputs through the uint8 instantiation.
inline ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

// ---------------------------------------------------------------------------
// sums: pairwise over vector accumulators
// ---------------------------------------------------------------------------

struct MapIdentity {
  template <typename V>
  V operator()(V x) const {
    return x;
  }
};
struct MapNanToZero {
  template <typename T>
  Vectorized<T> operator()(Vectorized<T> x) const {
    return Vectorized<T>::make(x.v == x.v ? x.v : Vectorized<T>(T(0)).v);
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  T operator()(T x) const {
    return x == x ? x : T(0);
  }
};
struct MapAbs {
  template <typename T>
  Vectorized<T> operator()(Vectorized<T> x) const {
    return Vectorized<T>::make(x.v < T(0) ? -x.v : x.v);
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  T operator()(T x) const {
    return std::abs(x);
  }
};
struct MapSquare {
  template <typename V>
  V operator()(V x) const {
    return x * x;
  }
};

// Cascade summation without recursion: blocks of kFan steps (each step four vector
// accumulators) are summed naively; block sums enter level 0, and every kFan
// partials of a level are added into one partial of the next level (a base-16
// summation tree: the error grows with log16(n), not n). Iterative, so the loop
// stays as fast as a naive vector sum.
template <typename scalar_t, typename Map>
struct Cascade {
  using acc_t = opmath_t<scalar_t>;
  using Vec = Vectorized<acc_t>;
  static constexpr int64_t W = Vec::size();
  static constexpr int64_t kStep = 4 * W;
  static constexpr int kFan = 16;
  static constexpr int kLevels = 16;

  static acc_t lanes_sum(Vec v) {  // pairwise over the lanes
    acc_t a[W];
    v.store(a);
    for (int64_t h = W / 2; h >= 1; h /= 2)
      for (int64_t i = 0; i < h; ++i) a[i] += a[i + h];
    return a[0];
  }

  static acc_t contiguous(const scalar_t* x, int64_t n, const Map& f) {
    const int64_t nsteps = n / kStep;
    Vec lv[kLevels];
    int cnt[kLevels];
    int top = 0;  // levels [0, top) are in use
    auto push = [&](Vec v) {
      if (top == 0) {
        lv[0] = v;
        cnt[0] = 1;
        top = 1;
      } else {
        lv[0] += v;
        ++cnt[0];
      }
      for (int l = 0; cnt[l] == kFan && l + 1 < kLevels; ++l) {
        if (top == l + 1) {
          lv[l + 1] = lv[l];
          cnt[l + 1] = 1;
          top = l + 2;
        } else {
          lv[l + 1] += lv[l];
          ++cnt[l + 1];
        }
        lv[l] = Vec(acc_t(0));
        cnt[l] = 0;
      }
    };
    int64_t i = 0;
    for (; i < nsteps; i += kFan) {
      const int64_t len = std::min<int64_t>(kFan, nsteps - i);
      const scalar_t* p = x + i * kStep;
      Vec a0(acc_t(0)), a1(acc_t(0)), a2(acc_t(0)), a3(acc_t(0));
      for (int64_t k = 0; k < len; ++k, p += kStep) {
        a0 += f(vload(p));
        a1 += f(vload(p + W));
        a2 += f(vload(p + 2 * W));
        a3 += f(vload(p + 3 * W));
      }
      push((a0 + a1) + (a2 + a3));
    }
    acc_t s(0);
    if (top) {
      Vec r = lv[0];
      for (int l = 1; l < top; ++l) r += lv[l];
      s = lanes_sum(r);
    }
    acc_t t(0);
    for (int64_t k = nsteps * kStep; k < n; ++k) t += f(to_acc(x[k]));
    return s + t;
  }

  static acc_t strided(const scalar_t* x, int64_t n, int64_t s, const Map& f) {
    acc_t lv[kLevels];
    int cnt[kLevels];
    int top = 0;
    for (int64_t b = 0; b < n; b += kFan) {
      const int64_t len = std::min<int64_t>(kFan, n - b);
      acc_t a(0);
      for (int64_t k = 0; k < len; ++k) a += f(to_acc(x[(b + k) * s]));
      if (top == 0) {
        lv[0] = a;
        cnt[0] = 1;
        top = 1;
      } else {
        lv[0] += a;
        ++cnt[0];
      }
      for (int l = 0; cnt[l] == kFan && l + 1 < kLevels; ++l) {
        if (top == l + 1) {
          lv[l + 1] = lv[l];
          cnt[l + 1] = 1;
          top = l + 2;
        } else {
          lv[l + 1] += lv[l];
          ++cnt[l + 1];
        }
        lv[l] = acc_t(0);
        cnt[l] = 0;
      }
    }
    acc_t r(0);
    for (int l = 0; l < top; ++l) r += lv[l];
    return r;
  }

  // out[j] = sum over rows r < nrows of x[r * s + j], for j < m <= kColBlock: the same
  // cascade per column, vectorised across the columns.
  static void columns(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* out, const Map& f) {
    acc_t lv[kLevels][kColBlock];
    int cnt[kLevels];
    int top = 0;
    acc_t blk[kColBlock];
    for (int64_t r0 = 0; r0 < nrows; r0 += kFan) {
      const int64_t len = std::min<int64_t>(kFan, nrows - r0);
      const scalar_t* p = x + r0 * s;
      int64_t j = 0;
      for (; j + W <= m; j += W) {
        Vec a(acc_t(0));
        for (int64_t r = 0; r < len; ++r) a += f(vload(p + r * s + j));
        a.store(blk + j);
      }
      for (; j < m; ++j) {
        acc_t a(0);
        for (int64_t r = 0; r < len; ++r) a += f(to_acc(p[r * s + j]));
        blk[j] = a;
      }
      if (top == 0) {
        for (int64_t q = 0; q < m; ++q) lv[0][q] = blk[q];
        cnt[0] = 1;
        top = 1;
      } else {
        for (int64_t q = 0; q < m; ++q) lv[0][q] += blk[q];
        ++cnt[0];
      }
      for (int l = 0; cnt[l] == kFan && l + 1 < kLevels; ++l) {
        if (top == l + 1) {
          for (int64_t q = 0; q < m; ++q) lv[l + 1][q] = lv[l][q];
          cnt[l + 1] = 1;
          top = l + 2;
        } else {
          for (int64_t q = 0; q < m; ++q) lv[l + 1][q] += lv[l][q];
          ++cnt[l + 1];
        }
        for (int64_t q = 0; q < m; ++q) lv[l][q] = acc_t(0);
        cnt[l] = 0;
      }
    }
    for (int64_t q = 0; q < m; ++q) {
      acc_t a(0);
      for (int l = 0; l < top; ++l) a += lv[l][q];
      out[q] = a;
    }
  }
};

// sum / mean (divisor) / nansum / 1- and 2-norms (sqrt) of floating types.
template <typename scalar_t, typename Map>
struct SumOps {
  using input_t = scalar_t;
  using acc_t = opmath_t<scalar_t>;
  using C = Cascade<scalar_t, Map>;
  scalar_t* out;
  acc_t divisor;
  bool take_sqrt;
  Map f{};

  acc_t identity() const { return acc_t(0); }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    return acc + (s == 1 ? C::contiguous(x, n, f) : C::strided(x, n, s, f));
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    acc_t tmp[kColBlock];
    C::columns(x, nrows, s, m, tmp, f);
    for (int64_t j = 0; j < m; ++j) acc[j] += tmp[j];
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void project(acc_t a, int64_t off) const {
    if (take_sqrt) a = std::sqrt(a);
    out[off] = from_acc<scalar_t>(a / divisor);
  }
};

template <typename scalar_t, typename Map>
void run_sum(const ReductionPlan& p, bool take_sqrt) {
  using acc_t = opmath_t<scalar_t>;
  SumOps<scalar_t, Map> ops{static_cast<scalar_t*>(p.out[0]), static_cast<acc_t>(p.param), take_sqrt};
  run_reduction(p, ops);
}

// Integral and bool sums: 64-bit, wrapping (unsigned arithmetic, then reinterpreted). Bool
// data is read as bytes and counts 1 when non-zero: a bool tensor may hold bytes 2..255
// (uint8.view(bool), a NumPy bool array), and PyTorch's sum of them is the count of trues.
template <typename scalar_t, bool kBoolBytes = false>
struct IntSumOps {
  using input_t = scalar_t;
  using acc_t = uint64_t;
  int64_t* out;
  static acc_t as_acc(scalar_t v) {
    if constexpr (kBoolBytes) {
      return v != 0 ? 1 : 0;
    } else {
      return static_cast<acc_t>(static_cast<int64_t>(v));
    }
  }
  acc_t identity() const { return 0; }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    if (s == 1) {
      for (int64_t i = 0; i < n; ++i) acc += as_acc(x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc += as_acc(x[i * s]);
    }
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    for (int64_t r = 0; r < nrows; ++r) {
      const scalar_t* row = x + r * s;
      for (int64_t j = 0; j < m; ++j) acc[j] += as_acc(row[j]);
    }
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void project(acc_t a, int64_t off) const { out[off] = static_cast<int64_t>(a); }
};

void sum_kernel(const ReductionPlan& p) {
  if (p.in_dtype == ScalarType::Bool) {
    run_reduction(p, IntSumOps<uint8_t, true>{static_cast<int64_t*>(p.out[0])});
    return;
  }
  if (c10::isIntegralType(p.in_dtype, /*includeBool=*/false)) {
    EMBER_DISPATCH_INTEGRAL_TYPES(p.in_dtype, "sum",
                                  [&] { run_reduction(p, IntSumOps<scalar_t>{static_cast<int64_t*>(p.out[0])}); });
    return;
  }
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "sum", [&] { run_sum<scalar_t, MapIdentity>(p, false); });
}

void nansum_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "nansum", [&] { run_sum<scalar_t, MapNanToZero>(p, false); });
}

// ---------------------------------------------------------------------------
// amax / amin: NaN propagates
// ---------------------------------------------------------------------------

template <typename scalar_t, bool kMax>
struct MinMaxOps {
  using input_t = scalar_t;
  using acc_t = std::conditional_t<is_reduced_float_v<scalar_t>, float, scalar_t>;
  static constexpr bool kVec = std::is_arithmetic_v<scalar_t> && !std::is_same_v<scalar_t, bool>;
  scalar_t* out;

  static acc_t upd(acc_t m, acc_t x) {
    const bool better = kMax ? (x > m) : (x < m);
    return (better || is_nan(x)) ? x : m;
  }
  template <typename V>
  static V vupd(V m, V x) {
    if constexpr (std::is_floating_point_v<scalar_t>) {
      if constexpr (kMax)
        return V::make(((x.v > m.v) | (x.v != x.v)) ? x.v : m.v);
      else
        return V::make(((x.v < m.v) | (x.v != x.v)) ? x.v : m.v);
    } else {
      if constexpr (kMax)
        return V::make(x.v > m.v ? x.v : m.v);
      else
        return V::make(x.v < m.v ? x.v : m.v);
    }
  }
  acc_t identity() const {
    using L = std::numeric_limits<acc_t>;
    if constexpr (std::is_same_v<acc_t, bool>)
      return !kMax;
    else if constexpr (L::has_infinity)
      return kMax ? -L::infinity() : L::infinity();
    else
      return kMax ? L::lowest() : L::max();
  }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    int64_t i = 0;
    if constexpr (kVec) {
      using V = Vectorized<scalar_t>;
      constexpr int64_t W = V::size();
      if (s == 1 && n >= 4 * W) {
        V m0(identity()), m1(identity()), m2(identity()), m3(identity());
        for (; i + 4 * W <= n; i += 4 * W) {
          m0 = vupd(m0, V::loadu(x + i));
          m1 = vupd(m1, V::loadu(x + i + W));
          m2 = vupd(m2, V::loadu(x + i + 2 * W));
          m3 = vupd(m3, V::loadu(x + i + 3 * W));
        }
        const V m = vupd(vupd(m0, m1), vupd(m2, m3));
        for (int l = 0; l < W; ++l) acc = upd(acc, m.v[l]);
      }
    }
    for (; i < n; ++i) acc = upd(acc, to_acc(x[i * s]));
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    int64_t j = 0;
    if constexpr (kVec) {
      using V = Vectorized<scalar_t>;
      constexpr int64_t W = V::size();
      for (; j + W <= m; j += W) {
        V a = V::loadu(acc + j);
        for (int64_t r = 0; r < nrows; ++r) a = vupd(a, V::loadu(x + r * s + j));
        a.store(acc + j);
      }
    }
    for (; j < m; ++j) {
      acc_t a = acc[j];
      for (int64_t r = 0; r < nrows; ++r) a = upd(a, to_acc(x[r * s + j]));
      acc[j] = a;
    }
  }
  acc_t combine(acc_t a, acc_t b) const { return upd(a, b); }
  void project(acc_t a, int64_t off) const { out[off] = from_acc<scalar_t>(a); }
};

void amax_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "amax", [&] {
    run_reduction(p, MinMaxOps<scalar_t, true>{static_cast<scalar_t*>(p.out[0])});
  });
}
void amin_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "amin", [&] {
    run_reduction(p, MinMaxOps<scalar_t, false>{static_cast<scalar_t*>(p.out[0])});
  });
}

// ---------------------------------------------------------------------------
// argmax / argmin (with values): the first extreme index; NaN is the most extreme
// ---------------------------------------------------------------------------

template <typename scalar_t, bool kMax>
struct ArgOps {
  using input_t = scalar_t;
  using val_t = std::conditional_t<is_reduced_float_v<scalar_t>, float, scalar_t>;
  struct acc_t {
    val_t v;
    int64_t i;
  };
  // Lanes of Vectorized<scalar_t> carry an index of the same width.
  static constexpr bool kVec = (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double> ||
                                std::is_same_v<scalar_t, int32_t> || std::is_same_v<scalar_t, int64_t>);
  scalar_t* values;  // may be null (argmax)
  int64_t* indices;

  static bool better(val_t x, val_t m) {
    if constexpr (is_float_like_v<scalar_t>)
      return (kMax ? x > m : x < m) || (x != x && m == m);
    else
      return kMax ? x > m : x < m;
  }
  acc_t identity() const { return {val_t(), -1}; }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    return better(b.v, a.v) ? b : a;
  }
  acc_t contiguous_vec(const scalar_t* x, int64_t n, int64_t idx0) const;
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t idx0) const {
    if (n <= 0) return acc;
    if constexpr (kVec) {
      if (s == 1 && n >= 128) return combine(acc, contiguous_vec(x, n, idx0));
    }
    int64_t i = 0;
    if (acc.i < 0) {
      acc = {to_acc(x[0]), idx0};
      i = 1;
    }
    for (; i < n; ++i) {
      const val_t v = to_acc(x[i * s]);
      if (better(v, acc.v)) acc = {v, idx0 + i};
    }
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t idx0) const {
    for (int64_t r = 0; r < nrows; ++r) {
      const scalar_t* row = x + r * s;
      for (int64_t j = 0; j < m; ++j) {
        const val_t v = to_acc(row[j]);
        if (acc[j].i < 0 || better(v, acc[j].v)) acc[j] = {v, idx0 + r};
      }
    }
  }
  void project(acc_t a, int64_t off) const {
    if (values) values[off] = from_acc<scalar_t>(a.v);
    indices[off] = a.i;
  }
};

template <typename scalar_t, bool kMax>
typename ArgOps<scalar_t, kMax>::acc_t ArgOps<scalar_t, kMax>::contiguous_vec(const scalar_t* x, int64_t n,
                                                                              int64_t idx0) const {
  if constexpr (kVec) {
    using V = Vectorized<scalar_t>;
    using I = std::conditional_t<sizeof(scalar_t) == 4, int32_t, int64_t>;
    typedef I VI __attribute__((vector_size(EMBER_VEC_BYTES)));
    constexpr int64_t W = V::size();
    constexpr int64_t kBlock = int64_t{1} << 30;  // lane indices stay within int32
    acc_t best = identity();
    for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
      const int64_t len = std::min(kBlock, n - b0);
      const scalar_t* p = x + b0;
      acc_t blk{p[0], 0};
      int64_t i = 1;
      if (len >= 4 * W) {
        // four independent (value, index) lane sets, so the compare-and-blend chains overlap
        auto upd = [](V& m, VI& idx, const V& v, const VI& at) {
          VI mask;
          if constexpr (std::is_floating_point_v<scalar_t>) {
            if constexpr (kMax)
              mask = (v.v > m.v) | ((v.v != v.v) & (m.v == m.v));
            else
              mask = (v.v < m.v) | ((v.v != v.v) & (m.v == m.v));
          } else {
            if constexpr (kMax)
              mask = v.v > m.v;
            else
              mask = v.v < m.v;
          }
          m.v = mask ? v.v : m.v;
          idx = mask ? at : idx;
        };
        VI iota;
        for (int l = 0; l < W; ++l) iota[l] = static_cast<I>(l);
        V m[4];
        VI idx[4];
        for (int k = 0; k < 4; ++k) {
          m[k] = V::loadu(p + k * W);
          idx[k] = iota + static_cast<I>(k * W);
        }
        for (i = 4 * W; i + 4 * W <= len; i += 4 * W) {
          const VI at = iota + static_cast<I>(i);
          upd(m[0], idx[0], V::loadu(p + i), at);
          upd(m[1], idx[1], V::loadu(p + i + W), at + static_cast<I>(W));
          upd(m[2], idx[2], V::loadu(p + i + 2 * W), at + static_cast<I>(2 * W));
          upd(m[3], idx[3], V::loadu(p + i + 3 * W), at + static_cast<I>(3 * W));
        }
        for (; i + W <= len; i += W) upd(m[0], idx[0], V::loadu(p + i), iota + static_cast<I>(i));
        blk = {m[0].v[0], static_cast<int64_t>(idx[0][0])};
        for (int k = 0; k < 4; ++k) {
          for (int l = 0; l < W; ++l) {
            const acc_t c{m[k].v[l], static_cast<int64_t>(idx[k][l])};
            if (better(c.v, blk.v) || (!better(blk.v, c.v) && c.i < blk.i)) blk = c;
          }
        }
      }
      for (; i < len; ++i) {
        if (better(p[i], blk.v)) blk = {p[i], i};
      }
      blk.i += idx0 + b0;
      best = combine(best, blk);
    }
    return best;
  } else {
    return reduce_1d(x, n, 1, identity(), idx0);
  }
}

void argmax_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "argmax", [&] {
    run_reduction(p, ArgOps<scalar_t, true>{static_cast<scalar_t*>(p.out[0]), static_cast<int64_t*>(p.out[1])});
  });
}
void argmin_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "argmin", [&] {
    run_reduction(p, ArgOps<scalar_t, false>{static_cast<scalar_t*>(p.out[0]), static_cast<int64_t*>(p.out[1])});
  });
}

// ---------------------------------------------------------------------------
// var / std (and the mean): blocks of 64 reduced exactly, merged with Chan's formula
// ---------------------------------------------------------------------------

struct WelfordAcc {
  double n = 0, mean = 0, m2 = 0;
};

inline WelfordAcc welford_merge(const WelfordAcc& a, const WelfordAcc& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const double n = a.n + b.n;
  const double delta = b.mean - a.mean;
  return {n, a.mean + delta * (b.n / n), a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
}

template <typename scalar_t>
struct VarOps {
  using input_t = scalar_t;
  using acc_t = WelfordAcc;
  static constexpr int64_t kBlock = 64;
  scalar_t* var_out;
  scalar_t* mean_out;  // may be null
  double correction;
  bool take_sqrt;

  acc_t identity() const { return {}; }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      const scalar_t* p = x + b * s;
      double sum = 0;
      for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(to_acc(p[i * s]));
      const double mu = sum / static_cast<double>(len);
      double m2 = 0;
      for (int64_t i = 0; i < len; ++i) {
        const double d = static_cast<double>(to_acc(p[i * s])) - mu;
        m2 += d * d;
      }
      acc = welford_merge(acc, {static_cast<double>(len), mu, m2});
    }
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    double sum[kColBlock], m2[kColBlock];
    for (int64_t b = 0; b < nrows; b += kBlock) {
      const int64_t len = std::min(kBlock, nrows - b);
      const scalar_t* p = x + b * s;
      for (int64_t j = 0; j < m; ++j) sum[j] = m2[j] = 0;
      for (int64_t r = 0; r < len; ++r)
        for (int64_t j = 0; j < m; ++j) sum[j] += static_cast<double>(to_acc(p[r * s + j]));
      for (int64_t j = 0; j < m; ++j) sum[j] /= static_cast<double>(len);  // now the block means
      for (int64_t r = 0; r < len; ++r)
        for (int64_t j = 0; j < m; ++j) {
          const double d = static_cast<double>(to_acc(p[r * s + j])) - sum[j];
          m2[j] += d * d;
        }
      for (int64_t j = 0; j < m; ++j) acc[j] = welford_merge(acc[j], {static_cast<double>(len), sum[j], m2[j]});
    }
  }
  acc_t combine(const acc_t& a, const acc_t& b) const { return welford_merge(a, b); }
  void project(const acc_t& a, int64_t off) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double var = a.n == 0 ? nan : a.m2 / std::max(0.0, a.n - correction);
    if (take_sqrt) var = std::sqrt(var);
    var_out[off] = from_acc<scalar_t>(var);
    if (mean_out) mean_out[off] = from_acc<scalar_t>(a.n == 0 ? nan : a.mean);
  }
};

void var_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "var", [&] {
    run_reduction(p, VarOps<scalar_t>{static_cast<scalar_t*>(p.out[0]), static_cast<scalar_t*>(p.out[1]), p.param,
                                      (p.flags & 1) != 0});
  });
}

// ---------------------------------------------------------------------------
// vector 1- and 2-norms: sums of |x| and x*x (other orders: ReduceOps.cpp)
// ---------------------------------------------------------------------------

template <typename scalar_t>
void norm_impl(const ReductionPlan& p) {
  using acc_t = opmath_t<scalar_t>;
  scalar_t* out = static_cast<scalar_t*>(p.out[0]);
  if (p.param == 1) {
    run_reduction(p, SumOps<scalar_t, MapAbs>{out, acc_t(1), false});
  } else {
    run_reduction(p, SumOps<scalar_t, MapSquare>{out, acc_t(1), true});
  }
}

void norm_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "linalg.vector_norm", [&] { norm_impl<scalar_t>(p); });
}

// ---------------------------------------------------------------------------
// logsumexp: (m, s) = (max, sum of exp(x - max)) per block, merged
// ---------------------------------------------------------------------------

template <typename scalar_t>
struct LogSumExpOps
    : ColumnReduceDefault<LogSumExpOps<scalar_t>, scalar_t, std::pair<opmath_t<scalar_t>, opmath_t<scalar_t>>> {
  using input_t = scalar_t;
  using T = opmath_t<scalar_t>;
  using acc_t = std::pair<T, T>;
  static constexpr int64_t kBlock = 256;
  scalar_t* out;

  acc_t identity() const { return {-std::numeric_limits<T>::infinity(), T(0)}; }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.second == T(0)) return b;
    if (b.second == T(0)) return a;
    if (a.first != a.first || b.first != b.first) return {std::numeric_limits<T>::quiet_NaN(), T(1)};
    const T m = std::max(a.first, b.first);
    if (std::isinf(m)) return {m, T(1)};
    return {m, a.second * std::exp(a.first - m) + b.second * std::exp(b.first - m)};
  }
  acc_t block(const scalar_t* x, int64_t n, int64_t s) const {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      const T v = to_acc(x[i * s]);
      if (v > m || v != v) m = v;
      if (m != m) return {m, T(1)};
    }
    if (m == std::numeric_limits<T>::infinity()) return {m, T(1)};
    if (m == -std::numeric_limits<T>::infinity()) return {m, T(0)};
    T sum(0);
    int64_t i = 0;
    if constexpr (std::is_same_v<T, float>) {
      if (s == 1) {
        using V = Vectorized<float>;
        constexpr int64_t W = V::size();
        V acc(0.0f);
        const V vm(m);
        for (; i + W <= n; i += W) acc += vec::exp(vload(x + i) - vm);
        sum = acc.reduce_add();
      }
    }
    for (; i < n; ++i) sum += std::exp(to_acc(x[i * s]) - m);
    return {m, sum};
  }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    for (int64_t b = 0; b < n; b += kBlock) acc = combine(acc, block(x + b * s, std::min(kBlock, n - b), s));
    return acc;
  }
  void project(acc_t a, int64_t off) const { out[off] = from_acc<scalar_t>(std::log(a.second) + a.first); }
};

void logsumexp_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(
      p.in_dtype, "logsumexp", [&] { run_reduction(p, LogSumExpOps<scalar_t>{{}, static_cast<scalar_t*>(p.out[0])}); });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(sum_stub, &sum_kernel);
REGISTER_DISPATCH(nansum_stub, &nansum_kernel);
REGISTER_DISPATCH(amax_stub, &amax_kernel);
REGISTER_DISPATCH(amin_stub, &amin_kernel);
REGISTER_DISPATCH(argmax_stub, &argmax_kernel);
REGISTER_DISPATCH(argmin_stub, &argmin_kernel);
REGISTER_DISPATCH(var_stub, &var_kernel);
REGISTER_DISPATCH(norm_stub, &norm_kernel);
REGISTER_DISPATCH(logsumexp_stub, &logsumexp_kernel);

}  // namespace ember::at::native
