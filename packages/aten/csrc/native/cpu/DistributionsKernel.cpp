// Floating-point contraction off for this whole file (see the contract below): with
// -mfma GCC would fuse a*b+c into one FMA, which rounds differently from the baseline
// build and from CUDA. Must come before any code.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// CPU kernels of the random distributions (ember.aten.rand, randn, uniform_, normal_,
// random_, bernoulli, exponential_, cauchy_, log_normal_, geometric_).
//
// ==================== THE PHILOX STREAM LAYOUT (the contract for CUDA) ====================
//
// A generator's state is (seed, offset). A draw of N values reserves
// B = ceil(N / V) counters with Generator::philox_reserve(B) (the offset advances by B)
// and computes value i from the block
//
//     philox4x32_10(key = seed, counter = offset + i / V, subsequence = 0) -> words x0..x3
//
// using lane l = i % V of it. "Value i" is the i-th element of the output in row-major
// order (a non-contiguous output is filled through a contiguous temporary). Nothing
// depends on how the elements are split among threads, so any thread (or CUDA thread)
// can compute any element, and a CUDA kernel that follows this table reproduces the CPU
// numbers bit for bit. The arithmetic is in ../Distributions.h (namespace dist): IEEE
// +, -, *, /, sqrt (and ceil in geometric_), no FMA contraction, in float for float32/float16/bfloat16
// (rounded once to the output dtype) and in double for float64.
//
//   u24(x)      = (x >> 8) * 2^-24                     24-bit uniform in [0, 1)
//   uD(x)       = (x >> (32 - D)) * 2^-D               D = 24 float32, 11 float16, 8 bfloat16
//   U(h, l)     = ((h << 32 | l) >> 11) * 2^-53        53-bit uniform in [0, 1)
//   u24o(x)     = ((x >> 9) + 1/2) * 2^-23              strictly inside (0, 1)
//   Uo(h, l)    = (((h << 32 | l) >> 12) + 1/2) * 2^-52  strictly inside (0, 1)
//   BM(a, b)    = (rho cos 2 pi b, rho sin 2 pi b), rho = sqrt(-2 ln(1 - a))
//
//   op                  dtype           V  value of lane l
//   ------------------  --------------  -  --------------------------------------------------
//   uniform_ / rand     float32/16/bf16 4  from + (to - from) * uD(x_l)      (== to -> from)
//                       float64         2  from + (to - from) * U(x_2l, x_2l+1)  (same)
//   normal_ / randn /   float32/16/bf16 4  mean + std * z_l, (z0, z1) = BM(u24(x0), u24(x1)),
//   normal                                                 (z2, z3) = BM(u24(x2), u24(x3))
//                       float64         2  mean + std * z_l, (z0, z1) = BM(U(x0, x1), U(x2, x3))
//                                          (tensor mean / std: z_l is rounded to the output
//                                          dtype first, then mean[i] + std[i] * z_l)
//   log_normal_         as normal_         exp(mean + std * z_l)
//   exponential_        float32/16/bf16 4  -ln(1 - u24(x_l)) / lambd
//                       float64         2  -ln(1 - U(x_2l, x_2l+1)) / lambd
//   cauchy_             float32/16/bf16 4  median + sigma * tan(pi (u24o(x_l) - 1/2))
//                       float64         2  median + sigma * tan(pi (Uo(x_2l, x_2l+1) - 1/2))
//                                          (tan as sin / cos of the turn u/2 - 1/4)
//   random_ / randint   any, range R    4  base + floor(x_l * R / 2^32)            R <= 2^16
//                                       2  base + floor((x_2l:x_2l+1) * R / 2^64)  R <= 2^32
//                                       1  base + floor((x0:x1:x2:x3) * R / 2^128) otherwise
//   bernoulli           any             2  U(x_2l, x_2l+1) < p
//   geometric_          any             2  max(1, ceil(ln(1 - U(x_2l, x_2l+1)) / log1p(-p)))
//   multinomial (../Distributions.cpp)  2  U per value; with replacement (num_samples > 1):
//                                          value r*S + s picks the first category whose
//                                          normalised cumulative probability exceeds U;
//                                          otherwise value r*K + j gives the category j of row
//                                          r the key p_j / -ln(1 - U) and the S largest keys win
//                                          (ties and p_j = 0: lower index first)
//   randperm (../Randperm.cpp)          V of random_ with R = n: Fisher-Yates, step k = 0..n-2
//                                          swaps perm[n-1-k] with perm[value k in [0, n-k)]
//                                          (the range of value k is n - k, its lane layout that
//                                          of R = n)
//
// (x_2l:x_2l+1) is the 64-bit number with x_2l as its high word. Empty draws reserve nothing.
// ==========================================================================================

#include <algorithm>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

#include "../Distributions.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

namespace {

// The draw is computed in batches of kB consecutive blocks held "structure of arrays"
// (word l of block j in w[l][j]), so that the loops over j -- Philox itself, log,
// sin/cos -- compile to vector instructions.
constexpr int kB = 16;
// Batches per parallel_for grain: 512 * 16 blocks, 32768 float32 values.
constexpr int64_t kGrainBatches = 512;

struct Words {
  alignas(64) uint32_t x[4][kB];
};

inline void philox_batch(const PhiloxDraw& d, int64_t first_block, Words& w) {
  for (int j = 0; j < kB; ++j) {
    const PhiloxBlock r = philox4x32_10(d.seed, d.offset + static_cast<uint64_t>(first_block + j));
    w.x[0][j] = r.x[0];
    w.x[1][j] = r.x[1];
    w.x[2][j] = r.x[2];
    w.x[3][j] = r.x[3];
  }
}

// Fills out[0, n) with a draw of V values per block: gen(w, first, v) turns the words of
// one batch into its values, v[l][j] = value l of block j of the batch (value index
// first + j * V + l; values past n are computed and dropped).
template <int V, typename T, typename Gen>
void draw(T* out, int64_t n, const PhiloxDraw& d, const Gen& gen) {
  const int64_t batches = divup(divup(n, V), kB);
  parallel_for(0, batches, kGrainBatches, [&](int64_t q0, int64_t q1) {
    Words w;
    alignas(64) T v[V][kB];
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t first = q * kB * V;
      philox_batch(d, q * kB, w);
      gen(w, first, v);
      T* o = out + first;
      if (first + kB * V <= n) {
        for (int j = 0; j < kB; ++j)
          for (int l = 0; l < V; ++l) o[j * V + l] = v[l][j];
      } else {
        for (int64_t i = 0; i < n - first; ++i) o[i] = v[i % V][i / V];
      }
    }
  });
}

template <typename scalar_t>
constexpr int uniform_digits() {
  if constexpr (std::is_same_v<scalar_t, Half>)
    return 11;
  else if constexpr (std::is_same_v<scalar_t, BFloat16>)
    return 8;
  else
    return 24;
}

// ---- uniform ----
template <typename scalar_t>
void uniform_impl(const Tensor& self, double from, double to, PhiloxDraw d) {
  scalar_t* out = self.data_ptr<scalar_t>();
  const int64_t n = self.numel();
  if constexpr (std::is_same_v<scalar_t, double>) {
    const double span = to - from;
    draw<2>(out, n, d, [&](const Words& w, int64_t, double (&v)[2][kB]) {
      for (int l = 0; l < 2; ++l)
        for (int j = 0; j < kB; ++j) {
          const double x = from + span * uniform_double(w.x[2 * l][j], w.x[2 * l + 1][j]);
          v[l][j] = x >= to && span > 0 ? from : x;  // rounding up to `to` would leave [from, to)
        }
    });
  } else {
    constexpr int D = uniform_digits<scalar_t>();
    const float f = static_cast<float>(from), span = static_cast<float>(to - from);
    const float top = static_cast<float>(static_cast<scalar_t>(static_cast<float>(to)));
    draw<4>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[4][kB]) {
      for (int l = 0; l < 4; ++l)
        for (int j = 0; j < kB; ++j) {
          const scalar_t x = static_cast<scalar_t>(f + span * dist::uniform_bits<D>(w.x[l][j]));
          v[l][j] = static_cast<float>(x) >= top && span > 0 ? static_cast<scalar_t>(f) : x;
        }
    });
  }
}

void uniform_kernel(const Tensor& self, double from, double to, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "uniform_", [&] { uniform_impl<scalar_t>(self, from, to, d); });
}

// ---- normal (and log_normal: exp of it) ----
// Standard normals of one batch: z[l][j], V = 4 (float) or 2 (double).
inline void normals(const Words& w, float (&z)[4][kB]) {
  for (int j = 0; j < kB; ++j) dist::box_muller_f(uniform_float(w.x[0][j]), uniform_float(w.x[1][j]), z[0][j], z[1][j]);
  for (int j = 0; j < kB; ++j) dist::box_muller_f(uniform_float(w.x[2][j]), uniform_float(w.x[3][j]), z[2][j], z[3][j]);
}
inline void normals(const Words& w, double (&z)[2][kB]) {
  for (int j = 0; j < kB; ++j)
    dist::box_muller_d(uniform_double(w.x[0][j], w.x[1][j]), uniform_double(w.x[2][j], w.x[3][j]), z[0][j], z[1][j]);
}

template <typename scalar_t, bool kLog>
void normal_impl(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                 PhiloxDraw d) {
  using acc_t = opmath_t<scalar_t>;
  constexpr int V = std::is_same_v<scalar_t, double> ? 2 : 4;
  scalar_t* out = self.data_ptr<scalar_t>();
  const int64_t n = self.numel();
  const bool per_element = mean_t.defined() || std_t.defined();
  // Scalar mean/std are applied in the batch; tensor ones in a second pass below.
  const acc_t m = per_element ? acc_t(0) : static_cast<acc_t>(mean);
  const acc_t s = per_element ? acc_t(1) : static_cast<acc_t>(std_);
  draw<V>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[V][kB]) {
    alignas(64) acc_t z[V][kB];
    normals(w, z);
    for (int l = 0; l < V; ++l)
      for (int j = 0; j < kB; ++j) {
        acc_t x = m + s * z[l][j];
        if constexpr (kLog) {
          if constexpr (std::is_same_v<acc_t, double>)
            x = dist::exp_d(x);
          else
            x = dist::exp_f(x);
        }
        v[l][j] = static_cast<scalar_t>(x);
      }
  });
  if (per_element) {
    const scalar_t* mp = mean_t.defined() ? mean_t.data_ptr<scalar_t>() : nullptr;
    const scalar_t* sp = std_t.defined() ? std_t.data_ptr<scalar_t>() : nullptr;
    const acc_t m0 = static_cast<acc_t>(mean), s0 = static_cast<acc_t>(std_);
    parallel_for(0, n, GRAIN_SIZE, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const acc_t mi = mp ? static_cast<acc_t>(mp[i]) : m0;
        const acc_t si = sp ? static_cast<acc_t>(sp[i]) : s0;
        out[i] = static_cast<scalar_t>(mi + si * static_cast<acc_t>(out[i]));
      }
    });
  }
}

void normal_kernel(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                   PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "normal_",
                                         [&] { normal_impl<scalar_t, false>(self, mean_t, mean, std_t, std_, d); });
}

void log_normal_kernel(const Tensor& self, double mean, double std_, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "log_normal_",
                                         [&] { normal_impl<scalar_t, true>(self, Tensor(), mean, Tensor(), std_, d); });
}

// ---- exponential and cauchy: one uniform per value ----
template <typename scalar_t, bool kCauchy>
void one_uniform_impl(const Tensor& self, double a, double b, PhiloxDraw d) {
  scalar_t* out = self.data_ptr<scalar_t>();
  const int64_t n = self.numel();
  if constexpr (std::is_same_v<scalar_t, double>) {
    draw<2>(out, n, d, [&](const Words& w, int64_t, double (&v)[2][kB]) {
      for (int l = 0; l < 2; ++l)
        for (int j = 0; j < kB; ++j) {
          if constexpr (kCauchy) {
            double sn, cs;
            dist::sincos_turn_d(dist::uniform_double_open(w.x[2 * l][j], w.x[2 * l + 1][j]) * 0.5 - 0.25, sn, cs);
            v[l][j] = a + b * (sn / cs);
          } else {
            v[l][j] = -dist::log_d(1.0 - uniform_double(w.x[2 * l][j], w.x[2 * l + 1][j])) / a;
          }
        }
    });
  } else {
    const float af = static_cast<float>(a), bf = static_cast<float>(b);
    draw<4>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[4][kB]) {
      for (int l = 0; l < 4; ++l)
        for (int j = 0; j < kB; ++j) {
          if constexpr (kCauchy) {
            float sn, cs;
            dist::sincos_turn_f(dist::uniform_float_open(w.x[l][j]) * 0.5f - 0.25f, sn, cs);
            v[l][j] = static_cast<scalar_t>(af + bf * (sn / cs));
          } else {
            v[l][j] = static_cast<scalar_t>(-dist::log_f(1.0f - uniform_float(w.x[l][j])) / af);
          }
        }
    });
  }
}

void exponential_kernel(const Tensor& self, double lambd, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "exponential_",
                                         [&] { one_uniform_impl<scalar_t, false>(self, lambd, 0.0, d); });
}

void cauchy_kernel(const Tensor& self, double median, double sigma, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "cauchy_",
                                         [&] { one_uniform_impl<scalar_t, true>(self, median, sigma, d); });
}

// ---- integers ----
template <typename scalar_t>
inline scalar_t from_int64(int64_t v) {
  if constexpr (std::is_same_v<scalar_t, bool>)
    return v != 0;
  else if constexpr (std::is_integral_v<scalar_t>)
    return static_cast<scalar_t>(v);
  else
    return static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(v));
}

template <typename scalar_t>
void random_impl(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw d) {
  scalar_t* out = self.data_ptr<scalar_t>();
  const int64_t n = self.numel();
  const uint64_t ub = static_cast<uint64_t>(base);
  const auto val = [ub](uint64_t v) { return from_int64<scalar_t>(static_cast<int64_t>(ub + v)); };
  switch (int_values_per_block(range)) {
    case 4:
      draw<4>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[4][kB]) {
        for (int l = 0; l < 4; ++l)
          for (int j = 0; j < kB; ++j) v[l][j] = val(dist::scale32(w.x[l][j], range));
      });
      break;
    case 2:
      draw<2>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[2][kB]) {
        for (int l = 0; l < 2; ++l)
          for (int j = 0; j < kB; ++j) v[l][j] = val(dist::scale64(w.x[2 * l][j], w.x[2 * l + 1][j], range));
      });
      break;
    default:
      draw<1>(out, n, d, [&](const Words& w, int64_t, scalar_t(&v)[1][kB]) {
        for (int j = 0; j < kB; ++j) {
          const PhiloxBlock b{{w.x[0][j], w.x[1][j], w.x[2][j], w.x[3][j]}};
          v[0][j] = val(dist::scale128(b, range));
        }
      });
      break;
  }
}

void random_from_to_kernel(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "random_",
                                             [&] { random_impl<scalar_t>(self, range, base, d); });
}

// ---- bernoulli and geometric: one double uniform per value ----
template <typename scalar_t>
void bernoulli_impl(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw d) {
  scalar_t* out = self.data_ptr<scalar_t>();
  const int64_t n = self.numel();
  const double* pp = p_t.defined() ? p_t.data_ptr<double>() : nullptr;
  const scalar_t one = from_int64<scalar_t>(1), zero = from_int64<scalar_t>(0);
  draw<2>(out, n, d, [&](const Words& w, int64_t first, scalar_t(&v)[2][kB]) {
    for (int l = 0; l < 2; ++l)
      for (int j = 0; j < kB; ++j) {
        const int64_t i = std::min(first + j * 2 + l, n - 1);
        v[l][j] = uniform_double(w.x[2 * l][j], w.x[2 * l + 1][j]) < (pp ? pp[i] : p) ? one : zero;
      }
  });
}

void bernoulli_kernel(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "bernoulli_",
                                             [&] { bernoulli_impl<scalar_t>(self, p_t, p, d); });
}

template <typename scalar_t>
void geometric_impl(const Tensor& self, double log1m_p, PhiloxDraw d) {
  draw<2>(self.data_ptr<scalar_t>(), self.numel(), d, [&](const Words& w, int64_t, scalar_t(&v)[2][kB]) {
    for (int l = 0; l < 2; ++l)
      for (int j = 0; j < kB; ++j) {
        double k = std::ceil(dist::log_d(1.0 - uniform_double(w.x[2 * l][j], w.x[2 * l + 1][j])) / log1m_p);
        k = k < 1.0 ? 1.0 : k;
        if constexpr (std::is_integral_v<scalar_t>) {
          // Counts beyond the dtype saturate instead of wrapping.
          constexpr double top = static_cast<double>(std::numeric_limits<scalar_t>::max());
          v[l][j] = k >= top ? std::numeric_limits<scalar_t>::max() : static_cast<scalar_t>(k);
        } else {
          v[l][j] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(k));
        }
      }
  });
}

void geometric_kernel(const Tensor& self, double log1m_p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(self.dtype(), "geometric_", [&] { geometric_impl<scalar_t>(self, log1m_p, d); });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(uniform_stub, &uniform_kernel);
REGISTER_DISPATCH(normal_stub, &normal_kernel);
REGISTER_DISPATCH(random_from_to_stub, &random_from_to_kernel);
REGISTER_DISPATCH(exponential_stub, &exponential_kernel);
REGISTER_DISPATCH(cauchy_stub, &cauchy_kernel);
REGISTER_DISPATCH(log_normal_stub, &log_normal_kernel);
REGISTER_DISPATCH(geometric_stub, &geometric_kernel);
REGISTER_DISPATCH(bernoulli_stub, &bernoulli_kernel);

}  // namespace ember::at::native
