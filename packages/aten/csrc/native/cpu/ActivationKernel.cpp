// CPU kernels of the activation functions. float32 runs on Vectorized<float> where
// the op is hot (relu, threshold, hardtanh, gelu, silu, leaky_relu, hardsigmoid,
// hardswish); half and bfloat16 compute in float, one element at a time.
#include <cmath>
#include <limits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../Activation.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;
using VF = Vectorized<float>::V;

template <typename T>
constexpr bool kVectorizable =
    std::is_same_v<T, float> || std::is_same_v<T, double> || (std::is_integral_v<T> && !std::is_same_v<T, bool>);

// ---- relu, threshold, hardtanh: every numeric dtype ---------------------------------

template <typename scalar_t>
void relu_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    using V = typename Vectorized<scalar_t>::V;
    cpu_kernel_vec(
        iter, [](scalar_t a) -> scalar_t { return a < scalar_t(0) ? scalar_t(0) : a; },
        [](Vectorized<scalar_t> a) { return Vectorized<scalar_t>::make(a.v < V{} ? V{} : a.v); });
  } else {
    cpu_kernel(iter, [](scalar_t a) -> scalar_t { return static_cast<float>(a) < 0.0f ? scalar_t(0.0f) : a; });
  }
}

void relu_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "relu", [&] { relu_impl<scalar_t>(iter); });
}

template <typename scalar_t>
void threshold_impl(TensorIterator& iter, const Scalar& threshold_s, const Scalar& value_s) {
  using opmath = opmath_t<scalar_t>;
  const opmath th = threshold_s.to<opmath>();
  const scalar_t value = static_cast<scalar_t>(value_s.to<opmath>());
  if constexpr (kVectorizable<scalar_t>) {
    using V = typename Vectorized<scalar_t>::V;
    const V vth = V{} + th, vval = V{} + value;
    cpu_kernel_vec(
        iter, [th, value](scalar_t a) -> scalar_t { return a <= th ? value : a; },
        [vth, vval](Vectorized<scalar_t> a) { return Vectorized<scalar_t>::make(a.v <= vth ? vval : a.v); });
  } else {
    cpu_kernel(iter, [th, value](scalar_t a) -> scalar_t { return static_cast<opmath>(a) <= th ? value : a; });
  }
}

void threshold_kernel(TensorIterator& iter, const Scalar& threshold, const Scalar& value) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "threshold",
                                    [&] { threshold_impl<scalar_t>(iter, threshold, value); });
}

// inputs (self, grad_output): a NaN self passes the gradient (NaN <= th is false), as PyTorch's.
template <typename scalar_t>
void threshold_backward_impl(TensorIterator& iter, const Scalar& threshold_s) {
  using opmath = opmath_t<scalar_t>;
  const opmath th = threshold_s.to<opmath>();
  if constexpr (kVectorizable<scalar_t>) {
    using V = typename Vectorized<scalar_t>::V;
    const V vth = V{} + th;
    cpu_kernel_vec(
        iter, [th](scalar_t x, scalar_t g) -> scalar_t { return x <= th ? scalar_t(0) : g; },
        [vth](Vectorized<scalar_t> x, Vectorized<scalar_t> g) {
          return Vectorized<scalar_t>::make(x.v <= vth ? V{} : g.v);
        });
  } else {
    cpu_kernel(iter,
               [th](scalar_t x, scalar_t g) -> scalar_t { return static_cast<opmath>(x) <= th ? scalar_t(0.0f) : g; });
  }
}

void threshold_backward_kernel(TensorIterator& iter, const Scalar& threshold) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "threshold_backward",
                                    [&] { threshold_backward_impl<scalar_t>(iter, threshold); });
}

// clamp to [lo, hi]; NaN passes through (PyTorch's clamp).
template <typename scalar_t>
void hardtanh_impl(TensorIterator& iter, const Scalar& min_s, const Scalar& max_s) {
  using opmath = opmath_t<scalar_t>;
  const opmath lo = min_s.to<opmath>(), hi = max_s.to<opmath>();
  if constexpr (kVectorizable<scalar_t>) {
    using V = typename Vectorized<scalar_t>::V;
    const V vlo = V{} + lo, vhi = V{} + hi;
    cpu_kernel_vec(
        iter,
        [lo, hi](scalar_t a) -> scalar_t {
          const scalar_t r = a < lo ? lo : a;
          return r > hi ? hi : r;
        },
        [vlo, vhi](Vectorized<scalar_t> a) {
          const V r = a.v < vlo ? vlo : a.v;
          return Vectorized<scalar_t>::make(r > vhi ? vhi : r);
        });
  } else {
    cpu_kernel(iter, [lo, hi](scalar_t a) -> scalar_t {
      opmath r = static_cast<opmath>(a);
      r = r < lo ? lo : r;
      return static_cast<scalar_t>(r > hi ? hi : r);
    });
  }
}

void hardtanh_kernel(TensorIterator& iter, const Scalar& min_val, const Scalar& max_val) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "hardtanh",
                                    [&] { hardtanh_impl<scalar_t>(iter, min_val, max_val); });
}

// ---- floating-point activations ---------------------------------------------------------

// Ops as in UnaryOpsKernel.cpp: apply() on the compute type, vec() for float32 lanes.
template <typename scalar_t, typename Op>
void activation_impl(TensorIterator& iter, const Op& op) {
  if constexpr (std::is_same_v<scalar_t, float> && Op::kVecFloat) {
    cpu_kernel_vec(
        iter, [op](float a) -> float { return op.apply(a); }, [op](Vectorized<float> a) { return op.vec(a); });
  } else {
    using opmath = opmath_t<scalar_t>;
    cpu_kernel(iter, [op](scalar_t a) -> scalar_t { return static_cast<scalar_t>(op.apply(static_cast<opmath>(a))); });
  }
}

template <typename Op>
void activation_kernel(TensorIterator& iter, const char* name, const Op& op) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), name, [&] { activation_impl<scalar_t>(iter, op); });
}

struct EluOp {
  static constexpr bool kVecFloat = false;
  double neg_coef, pos_coef, input_scale;
  template <typename T>
  T apply(T x) const {
    return x <= T(0) ? std::expm1(x * static_cast<T>(input_scale)) * static_cast<T>(neg_coef)
                     : x * static_cast<T>(pos_coef);
  }
};

void elu_kernel(TensorIterator& iter, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  activation_kernel(iter, "elu", EluOp{alpha.toDouble() * scale.toDouble(), scale.toDouble(), input_scale.toDouble()});
}

// gelu with erf: x * Phi(x), Phi the standard normal CDF, in two pieces fitted for
// float32 (least squares on a float64 reference, coefficients below):
//   |x| < 1/sqrt(2):  Phi(x) = 1/2 + x Q(x^2)
//   otherwise:        Phi(-|x|) = exp(-x^2 / 2) S(|x|), S a polynomial in |x| - 1.6036
//                     up to 2.5 and w P(w^2), w = 1/|x|, above; Phi(x) = 1 - Phi(-x)
//                     for x > 0. The tail never computes 1 + erf(x) for negative x
//                     (which cancels), and x^2 / 2 is split so its rounding does not
//                     reach the exponent. Within ~3 ulp of float64 over the whole range.
inline Vectorized<float> gelu_erf_vec(Vectorized<float> xv) {
  const VF x = xv.v;
  const VF ax = vec::abs(xv).v;
  const VF s = x * x;
  VF q = s * -8.681962754e-06f + 1.151593024e-04f;
  q = q * s - 1.187314978e-03f;
  q = q * s + 9.973566979e-03f;
  q = q * s - 6.649038196e-02f;
  q = q * s + 3.989422917e-01f;
  const VF phi_small = 0.5f + x * q;

  const VF at = ax > 15.0f ? VF{} + 15.0f : ax;  // Phi(-15) underflows float anyway
  const VF u = at - 1.6035534143447876f;
  VF sa = u * 1.393962634e-06f - 6.016403859e-06f;
  sa = sa * u + 2.127044172e-05f;
  sa = sa * u - 8.147736662e-05f;
  sa = sa * u + 3.020705772e-04f;
  sa = sa * u - 1.058919705e-03f;
  sa = sa * u + 3.510227893e-03f;
  sa = sa * u - 1.092239842e-02f;
  sa = sa * u + 3.155556321e-02f;
  sa = sa * u - 8.336831629e-02f;
  sa = sa * u + 1.967966706e-01f;
  const VF w = 1.0f / at;
  const VF w2 = w * w;
  VF sb = w2 * 6.278988647e+02f + 1.311576660e+03f;
  sb = sb * w2 + 1.217970703e+03f;
  sb = sb * w2 - 1.642039673e+03f;
  sb = sb * w2 + 7.107114868e+02f;
  sb = sb * w2 - 1.790729065e+02f;
  sb = sb * w2 + 3.328061676e+01f;
  sb = sb * w2 - 5.734347820e+00f;
  sb = sb * w2 + 1.192548513e+00f;
  sb = sb * w2 - 3.989056945e-01f;
  sb = sb * w2 + 3.989421725e-01f;
  sb = sb * w;
  const VF S = at < 2.5f ? sa : sb;

  // x^2 / 2 = xh^2 / 2 (exact: xh keeps 12 significant bits) + d, d small.
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  VI bits;
  std::memcpy(&bits, &at, sizeof(bits));
  bits &= static_cast<int32_t>(0xfffff000u);
  VF xh;
  std::memcpy(&xh, &bits, sizeof(xh));
  const VF xl = at - xh;
  const VF a = xh * xh * 0.5f;
  const VF d = xl * (at + xh) * 0.5f;
  // exp(-d) by its series (|d| < 0.1 here)
  VF ed = 1.0f - d * 0.2f;
  ed = 1.0f - d * 0.25f * ed;
  ed = 1.0f - d * (1.0f / 3.0f) * ed;
  ed = 1.0f - d * 0.5f * ed;
  ed = 1.0f - d * ed;
  const VF tail = vec::exp(Vectorized<float>::make(-a)).v * ed * S;

  const VF phi_big = x < 0.0f ? tail : 1.0f - tail;
  const VF phi = ax < 0.70710678f ? phi_small : phi_big;
  return Vectorized<float>::make(x * phi);
}

struct GeluErfOp {
  static constexpr bool kVecFloat = true;
  // The scalar path (strided inputs, tails, double, half) in double: x Phi(x) with erfc.
  template <typename T>
  T apply(T x) const {
    const double xd = static_cast<double>(x);
    return static_cast<T>(xd * 0.5 * std::erfc(-xd * 0.70710678118654752440));
  }
  Vectorized<float> vec(Vectorized<float> x) const { return gelu_erf_vec(x); }
};

// gelu with tanh: 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3);
// the second form does not cancel for negative x.
struct GeluTanhOp {
  static constexpr bool kVecFloat = true;
  template <typename T>
  T apply(T x) const {
    const T k2 = static_cast<T>(2 * 0.79788456080286535588);
    const T inner = k2 * (x + static_cast<T>(0.044715) * x * x * x);
    return x / (T(1) + std::exp(-inner));
  }
  Vectorized<float> vec(Vectorized<float> x) const {
    const Vectorized<float> k2(2 * 0.79788456080286535588f);
    const Vectorized<float> inner = k2 * (x + Vectorized<float>(0.044715f) * x * x * x);
    return x / (Vectorized<float>(1.0f) + vec::exp(-inner));
  }
};

void gelu_kernel(TensorIterator& iter, bool tanh_approximation) {
  if (tanh_approximation) {
    activation_kernel(iter, "gelu", GeluTanhOp{});
  } else {
    activation_kernel(iter, "gelu", GeluErfOp{});
  }
}

struct SiluOp {
  static constexpr bool kVecFloat = true;
  template <typename T>
  T apply(T x) const {
    return x / (T(1) + std::exp(-x));
  }
  Vectorized<float> vec(Vectorized<float> x) const { return x / (Vectorized<float>(1.0f) + vec::exp(-x)); }
};

void silu_kernel(TensorIterator& iter) { activation_kernel(iter, "silu", SiluOp{}); }

struct MishOp {
  static constexpr bool kVecFloat = false;
  template <typename T>
  T apply(T x) const {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
};

void mish_kernel(TensorIterator& iter) { activation_kernel(iter, "mish", MishOp{}); }

struct SoftplusOp {
  static constexpr bool kVecFloat = false;
  double beta, threshold;
  template <typename T>
  T apply(T x) const {
    const T b = static_cast<T>(beta);
    return x * b > static_cast<T>(threshold) ? x : std::log1p(std::exp(x * b)) / b;
  }
};

void softplus_kernel(TensorIterator& iter, const Scalar& beta, const Scalar& threshold) {
  activation_kernel(iter, "softplus", SoftplusOp{beta.toDouble(), threshold.toDouble()});
}

struct LeakyReluOp {
  static constexpr bool kVecFloat = true;
  double slope;
  template <typename T>
  T apply(T x) const {
    return x > T(0) ? x : x * static_cast<T>(slope);
  }
  Vectorized<float> vec(Vectorized<float> x) const {
    return Vectorized<float>::make(x.v > 0.0f ? x.v : x.v * static_cast<float>(slope));
  }
};

void leaky_relu_kernel(TensorIterator& iter, const Scalar& negative_slope) {
  activation_kernel(iter, "leaky_relu", LeakyReluOp{negative_slope.toDouble()});
}

// clamp(x + 3, 0, 6) (NaN passes through)
template <typename V>
inline V relu6_shifted(V x) {
  V t = x + 3.0f;
  t = t < 0.0f ? V{} : t;
  return t > 6.0f ? V{} + 6.0f : t;
}

struct HardsigmoidOp {
  static constexpr bool kVecFloat = true;
  template <typename T>
  T apply(T x) const {
    T t = x + T(3);
    t = t < T(0) ? T(0) : t;
    t = t > T(6) ? T(6) : t;
    return t / T(6);
  }
  Vectorized<float> vec(Vectorized<float> x) const { return Vectorized<float>::make(relu6_shifted(x.v) / 6.0f); }
};

void hardsigmoid_kernel(TensorIterator& iter) { activation_kernel(iter, "hardsigmoid", HardsigmoidOp{}); }

struct HardswishOp {
  static constexpr bool kVecFloat = true;
  template <typename T>
  T apply(T x) const {
    T t = x + T(3);
    t = t < T(0) ? T(0) : t;
    t = t > T(6) ? T(6) : t;
    return x * t / T(6);
  }
  Vectorized<float> vec(Vectorized<float> x) const { return Vectorized<float>::make(x.v * relu6_shifted(x.v) / 6.0f); }
};

void hardswish_kernel(TensorIterator& iter) { activation_kernel(iter, "hardswish", HardswishOp{}); }

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(relu_stub, &relu_kernel);
REGISTER_DISPATCH(threshold_stub, &threshold_kernel);
REGISTER_DISPATCH(threshold_backward_stub, &threshold_backward_kernel);
REGISTER_DISPATCH(hardtanh_stub, &hardtanh_kernel);
REGISTER_DISPATCH(elu_stub, &elu_kernel);
REGISTER_DISPATCH(gelu_stub, &gelu_kernel);
REGISTER_DISPATCH(silu_stub, &silu_kernel);
REGISTER_DISPATCH(mish_stub, &mish_kernel);
REGISTER_DISPATCH(softplus_stub, &softplus_kernel);
REGISTER_DISPATCH(leaky_relu_stub, &leaky_relu_kernel);
REGISTER_DISPATCH(hardsigmoid_stub, &hardsigmoid_kernel);
REGISTER_DISPATCH(hardswish_stub, &hardswish_kernel);

}  // namespace ember::at::native
