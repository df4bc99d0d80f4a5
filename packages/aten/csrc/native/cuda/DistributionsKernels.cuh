#pragma once
// The random distributions' CUDA code (Distributions.cu) without its launch: the Philox block
// body and the functors that turn a block's four words into values are __host__ __device__,
// and each stub function is a template over how the blocks run -- `Launch::draw<V, T>(self,
// d, gen)` fills the contiguous `self` with V values per block. Distributions.cu launches
// draw_kernel; the test-only module ember_aten_testing (packages/aten/testing) runs the
// blocks in a serial host loop on CPU tensors, so the CPU tests check this stream layout
// (which block, lane and words give value i) against the CPU kernels'. What the host cannot
// check is the device arithmetic itself (--fmad=false, IEEE / and sqrt): that is for a GPU run.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>

#include "../Distributions.h"
#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_distributions {

// Philox block b of the draw: values b * V .. b * V + V - 1 (those below n) of out.
template <int V, typename T, typename Gen>
EMBER_HOST_DEVICE inline void draw_block(T* out, int64_t n, const PhiloxDraw& d, const Gen& gen, int64_t b) {
  const PhiloxBlock r = philox4x32_10(d.seed, d.offset + static_cast<uint64_t>(b));
  const int64_t first = b * V;
  T v[V];
  gen(r, first, v);
#pragma unroll
  for (int l = 0; l < V; ++l) {
    if (first + l < n) out[first + l] = v[l];
  }
}

template <typename T>
EMBER_HOST_DEVICE constexpr int real_v() {
  return std::is_same_v<T, double> ? 2 : 4;
}

template <typename T>
EMBER_HOST_DEVICE constexpr int uniform_digits() {
  if constexpr (std::is_same_v<T, Half>)
    return 11;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 8;
  else
    return 24;
}

// ---- uniform ----
template <typename T>
struct UniformLow {  // float32 / float16 / bfloat16
  float from, span, top;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, T (&v)[4]) const {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      const T x = static_cast<T>(from + span * dist::uniform_bits<uniform_digits<T>()>(r.x[l]));
      v[l] = static_cast<float>(x) >= top && span > 0 ? static_cast<T>(from) : x;
    }
  }
};
struct UniformDouble {
  double from, to, span;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, double (&v)[2]) const {
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      const double x = from + span * uniform_double(r.x[2 * l], r.x[2 * l + 1]);
      v[l] = x >= to && span > 0 ? from : x;
    }
  }
};

template <typename Launch>
void uniform_kernel(const Tensor& self, double from, double to, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "uniform_", [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      Launch::template draw<2, double>(self, d, UniformDouble{from, to, to - from});
    } else {
      const float f = static_cast<float>(from), span = static_cast<float>(to - from);
      const float top = static_cast<float>(static_cast<scalar_t>(static_cast<float>(to)));
      Launch::template draw<4, scalar_t>(self, d, UniformLow<scalar_t>{f, span, top});
    }
  });
}

// ---- normal and log_normal ----
// Standard normals of one block, as the CPU's normals(): pairs (x0, x1) and (x2, x3)
// (float) or one pair of 53-bit uniforms (double).
EMBER_HOST_DEVICE inline void block_normals(const PhiloxBlock& r, float (&z)[4]) {
  dist::box_muller_f(uniform_float(r.x[0]), uniform_float(r.x[1]), z[0], z[1]);
  dist::box_muller_f(uniform_float(r.x[2]), uniform_float(r.x[3]), z[2], z[3]);
}
EMBER_HOST_DEVICE inline void block_normals(const PhiloxBlock& r, double (&z)[2]) {
  dist::box_muller_d(uniform_double(r.x[0], r.x[1]), uniform_double(r.x[2], r.x[3]), z[0], z[1]);
}

template <typename T, bool kLog>
struct Normal {
  using acc_t = opmath_t<T>;
  static constexpr int V = real_v<T>();
  acc_t m, s;             // applied in the draw (0 and 1 when per element)
  const T* mp = nullptr;  // per-element mean / std (contiguous, self's numel) or null
  const T* sp = nullptr;
  acc_t m0 = 0, s0 = 1;  // the scalars used where mp / sp is null
  bool per_element = false;
  int64_t n = 0;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t first, T (&v)[V]) const {
    acc_t z[V];
    block_normals(r, z);
#pragma unroll
    for (int l = 0; l < V; ++l) {
      acc_t x = m + s * z[l];
      if constexpr (kLog) {
        if constexpr (std::is_same_v<acc_t, double>)
          x = dist::exp_d(x);
        else
          x = dist::exp_f(x);
      }
      T val = static_cast<T>(x);
      // the CPU's second pass: the standard normal rounded to T, then mean[i] + std[i] * it
      const int64_t i = first + l;
      if (per_element && i < n) {
        const acc_t mi = mp ? static_cast<acc_t>(mp[i]) : m0;
        const acc_t si = sp ? static_cast<acc_t>(sp[i]) : s0;
        val = static_cast<T>(mi + si * static_cast<acc_t>(val));
      }
      v[l] = val;
    }
  }
};

template <typename Launch, typename T, bool kLog>
void normal_launch(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                   PhiloxDraw d) {
  using acc_t = opmath_t<T>;
  Normal<T, kLog> g;
  g.per_element = mean_t.defined() || std_t.defined();
  g.m = g.per_element ? acc_t(0) : static_cast<acc_t>(mean);
  g.s = g.per_element ? acc_t(1) : static_cast<acc_t>(std_);
  g.mp = mean_t.defined() ? mean_t.data_ptr<T>() : nullptr;
  g.sp = std_t.defined() ? std_t.data_ptr<T>() : nullptr;
  g.m0 = static_cast<acc_t>(mean);
  g.s0 = static_cast<acc_t>(std_);
  g.n = self.numel();
  Launch::template draw<Normal<T, kLog>::V, T>(self, d, g);
}

template <typename Launch>
void normal_kernel(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                   PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(
      self.dtype(), "normal_", [&] { normal_launch<Launch, scalar_t, false>(self, mean_t, mean, std_t, std_, d); });
}

template <typename Launch>
void log_normal_kernel(const Tensor& self, double mean, double std_, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "log_normal_", [&] {
    normal_launch<Launch, scalar_t, true>(self, Tensor(), mean, Tensor(), std_, d);
  });
}

// ---- exponential and cauchy: one uniform per value ----
template <typename T, bool kCauchy>
struct OneUniformLow {  // float32 / float16 / bfloat16: a = lambda or median, b = sigma
  float a, b;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, T (&v)[4]) const {
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      if constexpr (kCauchy) {
        float sn, cs;
        dist::sincos_turn_f(dist::uniform_float_open(r.x[l]) * 0.5f - 0.25f, sn, cs);
        v[l] = static_cast<T>(a + b * (sn / cs));
      } else {
        v[l] = static_cast<T>(-dist::log_f(1.0f - uniform_float(r.x[l])) / a);
      }
    }
  }
};
template <bool kCauchy>
struct OneUniformDouble {
  double a, b;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, double (&v)[2]) const {
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      if constexpr (kCauchy) {
        double sn, cs;
        dist::sincos_turn_d(dist::uniform_double_open(r.x[2 * l], r.x[2 * l + 1]) * 0.5 - 0.25, sn, cs);
        v[l] = a + b * (sn / cs);
      } else {
        v[l] = -dist::log_d(1.0 - uniform_double(r.x[2 * l], r.x[2 * l + 1])) / a;
      }
    }
  }
};

template <typename Launch, bool kCauchy>
void one_uniform(const Tensor& self, double a, double b, PhiloxDraw d, const char* name) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), name, [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      Launch::template draw<2, double>(self, d, OneUniformDouble<kCauchy>{a, b});
    } else {
      Launch::template draw<4, scalar_t>(
          self, d, OneUniformLow<scalar_t, kCauchy>{static_cast<float>(a), static_cast<float>(b)});
    }
  });
}

template <typename Launch>
void exponential_kernel(const Tensor& self, double lambd, PhiloxDraw d) {
  one_uniform<Launch, false>(self, lambd, 0.0, d, "exponential_");
}

template <typename Launch>
void cauchy_kernel(const Tensor& self, double median, double sigma, PhiloxDraw d) {
  one_uniform<Launch, true>(self, median, sigma, d, "cauchy_");
}

// ---- integers ----
template <typename T>
EMBER_HOST_DEVICE inline T from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(v);
  else
    return static_cast<T>(static_cast<opmath_t<T>>(v));
}

template <typename T, int V>
struct RandomInt {
  uint64_t range, base;
  EMBER_HOST_DEVICE T val(uint64_t v) const { return from_int64<T>(static_cast<int64_t>(base + v)); }
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, T (&v)[V]) const {
    if constexpr (V == 4) {
#pragma unroll
      for (int l = 0; l < 4; ++l) v[l] = val(dist::scale32(r.x[l], range));
    } else if constexpr (V == 2) {
#pragma unroll
      for (int l = 0; l < 2; ++l) v[l] = val(dist::scale64(r.x[2 * l], r.x[2 * l + 1], range));
    } else {
      v[0] = val(dist::scale128(r, range));
    }
  }
};

template <typename Launch>
void random_from_to_kernel(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "random_", [&] {
    const uint64_t ub = static_cast<uint64_t>(base);
    switch (int_values_per_block(range)) {
      case 4:
        Launch::template draw<4, scalar_t>(self, d, RandomInt<scalar_t, 4>{range, ub});
        break;
      case 2:
        Launch::template draw<2, scalar_t>(self, d, RandomInt<scalar_t, 2>{range, ub});
        break;
      default:
        Launch::template draw<1, scalar_t>(self, d, RandomInt<scalar_t, 1>{range, ub});
        break;
    }
  });
}

// ---- bernoulli and geometric: one 53-bit uniform per value ----
template <typename T>
struct Bernoulli {
  const double* pp;  // per-element probabilities (contiguous, self's numel) or null
  double p;
  int64_t n;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t first, T (&v)[2]) const {
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      const int64_t i = first + l < n ? first + l : n - 1;
      v[l] = uniform_double(r.x[2 * l], r.x[2 * l + 1]) < (pp ? pp[i] : p) ? from_int64<T>(1) : from_int64<T>(0);
    }
  }
};

template <typename Launch>
void bernoulli_kernel(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "bernoulli_", [&] {
    const double* pp = p_t.defined() ? p_t.data_ptr<double>() : nullptr;
    Launch::template draw<2, scalar_t>(self, d, Bernoulli<scalar_t>{pp, p, self.numel()});
  });
}

template <typename T>
struct Geometric {
  double log1m_p;
  double top;  // the largest value of an integral T (counts beyond it saturate)
  T top_value;
  EMBER_HOST_DEVICE void operator()(const PhiloxBlock& r, int64_t, T (&v)[2]) const {
#pragma unroll
    for (int l = 0; l < 2; ++l) {
      double k = std::ceil(dist::log_d(1.0 - uniform_double(r.x[2 * l], r.x[2 * l + 1])) / log1m_p);
      k = k < 1.0 ? 1.0 : k;
      if constexpr (std::is_integral_v<T>) {
        v[l] = k >= top ? top_value : static_cast<T>(k);
      } else {
        v[l] = static_cast<T>(static_cast<opmath_t<T>>(k));
      }
    }
  }
};

template <typename Launch>
void geometric_kernel(const Tensor& self, double log1m_p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(self.dtype(), "geometric_", [&] {
    Geometric<scalar_t> g{log1m_p, 0.0, scalar_t(0)};
    if constexpr (std::is_integral_v<scalar_t>) {
      g.top_value = std::numeric_limits<scalar_t>::max();
      g.top = static_cast<double>(g.top_value);
    }
    Launch::template draw<2, scalar_t>(self, d, g);
  });
}

}  // namespace ember::at::native::cuda_distributions
