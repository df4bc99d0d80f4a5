// CUDA kernels of the random distributions (the stubs of ../Distributions.h).
//
// They follow the Philox stream layout written out in ../cpu/DistributionsKernel.cpp
// to the word: value i of a draw comes from block philox4x32_10(seed, offset + i / V),
// lane i % V, through the same dist:: arithmetic (Distributions.h: IEEE +, -, *, /,
// sqrt and bit operations, no libm). This file is compiled with --fmad=false
// (CMakeLists.txt), so no a*b+c is fused into an FMA, and nvcc's default
// -prec-div=true / -prec-sqrt=true / -ftz=false keep / and sqrt correctly rounded
// with subnormals: the result is the CPU kernel's, bit for bit, for every
// distribution and dtype (float16 / bfloat16 round through the same c10 conversions).
//
// One generic kernel: thread t of the grid-stride loop computes Philox block b and the
// V values of lanes 0..V-1 (a functor turns the block's four words into them).
//
// Host emulation (tests without a GPU): the block body and the functors are
// __host__ __device__; given a CPU tensor, launch_draw runs the blocks in a serial host
// loop instead of launching. cuda_distributions_emulation(true) puts these stub
// functions into the distribution stubs' CPU slots, so the CPU tests check this file's
// stream layout (which block, lane and words give value i) against the CPU kernels'.
// What the host cannot check is the device arithmetic itself (--fmad=false, IEEE / and
// sqrt): that is for a GPU run.
#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>

#include "../Distributions.h"
#include "CUDAUtils.cuh"
#include "StubEmulation.cuh"

namespace ember::at::native {
namespace {

using cuda::ceil_div;
using cuda::current_stream;
using cuda::grid_size;
using cuda::kNumThreads;

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

template <int V, typename T, typename Gen>
__global__ void draw_kernel(T* out, int64_t n, PhiloxDraw d, Gen gen) {
  const int64_t blocks = (n + V - 1) / V;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    draw_block<V>(out, n, d, gen, b);
  }
}

// Fills the contiguous tensor `self` (value i = its i-th element) with V values per block
// (a CPU `self`: the host emulation, see the top of the file).
template <int V, typename T, typename Gen>
void launch_draw(const Tensor& self, PhiloxDraw d, const Gen& gen) {
  const int64_t n = self.numel();
  if (n == 0) return;
  if (self.is_cpu()) {
    T* out = self.data_ptr<T>();
    for (int64_t b = 0, blocks = ceil_div<int64_t>(n, V); b < blocks; ++b) draw_block<V>(out, n, d, gen, b);
    return;
  }
  c10::DeviceGuard guard(self.device());
  const int64_t blocks = ceil_div<int64_t>(n, V);
  draw_kernel<V, T, Gen><<<grid_size(blocks), kNumThreads, 0, current_stream()>>>(self.data_ptr<T>(), n, d, gen);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
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

void uniform_kernel_cuda(const Tensor& self, double from, double to, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "uniform_", [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      launch_draw<2, double>(self, d, UniformDouble{from, to, to - from});
    } else {
      const float f = static_cast<float>(from), span = static_cast<float>(to - from);
      const float top = static_cast<float>(static_cast<scalar_t>(static_cast<float>(to)));
      launch_draw<4, scalar_t>(self, d, UniformLow<scalar_t>{f, span, top});
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

template <typename T, bool kLog>
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
  launch_draw<Normal<T, kLog>::V, T>(self, d, g);
}

void normal_kernel_cuda(const Tensor& self, const Tensor& mean_t, double mean, const Tensor& std_t, double std_,
                        PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), "normal_",
                                         [&] { normal_launch<scalar_t, false>(self, mean_t, mean, std_t, std_, d); });
}

void log_normal_kernel_cuda(const Tensor& self, double mean, double std_, PhiloxDraw d) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(
      self.dtype(), "log_normal_", [&] { normal_launch<scalar_t, true>(self, Tensor(), mean, Tensor(), std_, d); });
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

template <bool kCauchy>
void one_uniform_cuda(const Tensor& self, double a, double b, PhiloxDraw d, const char* name) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), name, [&] {
    if constexpr (std::is_same_v<scalar_t, double>) {
      launch_draw<2, double>(self, d, OneUniformDouble<kCauchy>{a, b});
    } else {
      launch_draw<4, scalar_t>(self, d, OneUniformLow<scalar_t, kCauchy>{static_cast<float>(a), static_cast<float>(b)});
    }
  });
}

void exponential_kernel_cuda(const Tensor& self, double lambd, PhiloxDraw d) {
  one_uniform_cuda<false>(self, lambd, 0.0, d, "exponential_");
}

void cauchy_kernel_cuda(const Tensor& self, double median, double sigma, PhiloxDraw d) {
  one_uniform_cuda<true>(self, median, sigma, d, "cauchy_");
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

void random_from_to_kernel_cuda(const Tensor& self, uint64_t range, int64_t base, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "random_", [&] {
    const uint64_t ub = static_cast<uint64_t>(base);
    switch (int_values_per_block(range)) {
      case 4:
        launch_draw<4, scalar_t>(self, d, RandomInt<scalar_t, 4>{range, ub});
        break;
      case 2:
        launch_draw<2, scalar_t>(self, d, RandomInt<scalar_t, 2>{range, ub});
        break;
      default:
        launch_draw<1, scalar_t>(self, d, RandomInt<scalar_t, 1>{range, ub});
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

void bernoulli_kernel_cuda(const Tensor& self, const Tensor& p_t, double p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "bernoulli_", [&] {
    const double* pp = p_t.defined() ? p_t.data_ptr<double>() : nullptr;
    launch_draw<2, scalar_t>(self, d, Bernoulli<scalar_t>{pp, p, self.numel()});
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

void geometric_kernel_cuda(const Tensor& self, double log1m_p, PhiloxDraw d) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(self.dtype(), "geometric_", [&] {
    Geometric<scalar_t> g{log1m_p, 0.0, scalar_t(0)};
    if constexpr (std::is_integral_v<scalar_t>) {
      g.top_value = std::numeric_limits<scalar_t>::max();
      g.top = static_cast<double>(g.top_value);
    }
    launch_draw<2, scalar_t>(self, d, g);
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(uniform_stub, &uniform_kernel_cuda);
REGISTER_CUDA_DISPATCH(normal_stub, &normal_kernel_cuda);
REGISTER_CUDA_DISPATCH(random_from_to_stub, &random_from_to_kernel_cuda);
REGISTER_CUDA_DISPATCH(exponential_stub, &exponential_kernel_cuda);
REGISTER_CUDA_DISPATCH(cauchy_stub, &cauchy_kernel_cuda);
REGISTER_CUDA_DISPATCH(log_normal_stub, &log_normal_kernel_cuda);
REGISTER_CUDA_DISPATCH(geometric_stub, &geometric_kernel_cuda);
REGISTER_CUDA_DISPATCH(bernoulli_stub, &bernoulli_kernel_cuda);

// true: the CPU slots of the distribution stubs run this file's kernels on the host
// (launch_draw's host loop, see the top of the file); false: the CPU kernels again.
// Returns whether emulation was on before.
bool cuda_distributions_emulation(bool on) {
  using cuda_emulation::SlotSwap;
  static bool active = false;
  static SlotSwap<uniform_stub_DECLARE_DISPATCH_type> s_uniform;
  static SlotSwap<normal_stub_DECLARE_DISPATCH_type> s_normal;
  static SlotSwap<random_from_to_stub_DECLARE_DISPATCH_type> s_random;
  static SlotSwap<exponential_stub_DECLARE_DISPATCH_type> s_exponential;
  static SlotSwap<cauchy_stub_DECLARE_DISPATCH_type> s_cauchy;
  static SlotSwap<log_normal_stub_DECLARE_DISPATCH_type> s_log_normal;
  static SlotSwap<geometric_stub_DECLARE_DISPATCH_type> s_geometric;
  static SlotSwap<bernoulli_stub_DECLARE_DISPATCH_type> s_bernoulli;
  const bool was = active;
  if (on == active) return was;
  s_uniform.swap(uniform_stub, &uniform_kernel_cuda, on);
  s_normal.swap(normal_stub, &normal_kernel_cuda, on);
  s_random.swap(random_from_to_stub, &random_from_to_kernel_cuda, on);
  s_exponential.swap(exponential_stub, &exponential_kernel_cuda, on);
  s_cauchy.swap(cauchy_stub, &cauchy_kernel_cuda, on);
  s_log_normal.swap(log_normal_stub, &log_normal_kernel_cuda, on);
  s_geometric.swap(geometric_stub, &geometric_kernel_cuda, on);
  s_bernoulli.swap(bernoulli_stub, &bernoulli_kernel_cuda, on);
  active = on;
  return was;
}

}  // namespace ember::at::native
