// CPU kernels of the activation functions. float32 runs on Vectorized<float> where
// the op is hot (relu, threshold, hardtanh, gelu, silu, leaky_relu, hardsigmoid,
// hardswish); half and bfloat16 compute in float, one element at a time.
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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
//                     (which cancels), and the rounding of x^2 / 2 never reaches the
//                     exponent. Within ~3 ulp of float64 over the whole range.
//
// A vector whose lanes all lie below 0.7071 skips the tail; one whose lanes all lie below
// 2.5 (nearly every vector of a network's activations) takes a short path: no asymptotic
// piece, and exp(-x^2 / 2) with the square's exact residual folded into exp's argument
// reduction (no special lanes to handle). normal_cdf_vec also gives exp(-x^2 / 2), which
// the tail computes anyway, for the density in gelu's derivative.
inline float lane_max(VF v) {
  float m = v[0];
  for (int i = 1; i < Vectorized<float>::size(); ++i) m = v[i] > m ? v[i] : m;  // NaN lanes skipped
  return m;
}

// The polynomials are evaluated by Estrin's scheme (pairs, then powers u^2, u^4, u^8): a
// dependency chain of 4 multiply-adds instead of Horner's 10 lets the core overlap them.
inline VF phi_small_vec(VF x, VF s) {
  const VF s2 = s * s;
  const VF a0 = s * -6.649038196e-02f + 3.989422917e-01f;
  const VF a1 = s * -1.187314978e-03f + 9.973566979e-03f;
  const VF a2 = s * -8.681962754e-06f + 1.151593024e-04f;
  const VF q = a0 + s2 * (a1 + s2 * a2);
  return 0.5f + x * q;
}

// The middle piece's polynomial S(|x|), |x| in [1/sqrt(2), 2.5] (Estrin, in |x| - 1.6036)
inline VF tail_mid_vec(VF at) {
  const VF u = at - 1.6035534143447876f;
  const VF u2 = u * u, u4 = u2 * u2, u8 = u4 * u4;
  const VF p01 = u * -8.336831629e-02f + 1.967966706e-01f;
  const VF p23 = u * -1.092239842e-02f + 3.155556321e-02f;
  const VF p45 = u * -1.058919705e-03f + 3.510227893e-03f;
  const VF p67 = u * -8.147736662e-05f + 3.020705772e-04f;
  const VF p89 = u * -6.016403859e-06f + 2.127044172e-05f;
  const VF q0 = p01 + u2 * p23, q1 = p45 + u2 * p67, q2 = p89 + u2 * 1.393962634e-06f;
  return (q0 + u4 * q1) + u8 * q2;
}

// x * x - s exactly, s = x * x rounded: one fused multiply-add where the capability has it,
// Dekker's product of 12-bit halves otherwise.
inline VF square_residual(VF x, VF s) {
#if defined(__FMA__)
  VF r;
  for (int i = 0; i < Vectorized<float>::size(); ++i) r[i] = __builtin_fmaf(x[i], x[i], -s[i]);
  return r;
#else
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  VI bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits &= static_cast<int32_t>(0xfffff000u);
  VF xh;
  std::memcpy(&xh, &bits, sizeof(xh));
  const VF xl = x - xh;
  return ((xh * xh - s) + 2.0f * xh * xl) + xl * xl;
#endif
}

// exp(-x^2 / 2) for |x| <= 2.5 (no overflow, underflow or special lanes but NaN, which
// passes through), from s = x * x: x^2 / 2 = s / 2 + r / 2 exactly (r the square's
// residual), and s / 2 - n ln2_hi is exact, so the reduced argument carries no rounding
// of x^2. Then vec::exp's polynomial (~1 ulp) and 2^n as one exponent field (n >= -5).
inline VF exp_neg_half_square_vec(VF x, VF s) {
  const VF h = s * 0.5f;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const VF t = h * -1.44269504088896341f + shifter;
  const VF n = t - shifter;
  VF r = n * -0.693359375f - h;
  r = n * 2.12194440e-4f + r;
  r = square_residual(x, s) * -0.5f + r;
  VF p = vec::exp_reduced(r);
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  VI ti, sh;
  std::memcpy(&ti, &t, sizeof(VI));
  sh = VI{} + 0x4B400000;  // the bits of the shifter: t's bits minus these are n
  const VI bits = (ti - sh + 127) << 23;
  VF scale;
  std::memcpy(&scale, &bits, sizeof(VF));
  return p * scale;
}

#if defined(__AVX512F__)
// AVX-512: Phi(-|x|) and exp(-x^2 / 2) for |x| < 4 by table, in about half the operations of
// the polynomial-times-exp pieces below: 32 intervals of width 1/8, a degree-5 polynomial in
// v = 8|x| - i on interval i, its six coefficients picked per lane by vpermt2ps from two
// registers each. Fitted by weighted least squares for relative error against a
// high-precision reference (Chebyshev nodes on each interval), each coefficient rounded to
// float and the higher ones refitted; c[0] of interval 0 is exact (Phi(0) = 1/2,
// exp(0) = 1). Relative error ~1.1e-7 after float evaluation (gelu within ~2 ulp). A vector
// with a lane at |x| >= 4, inf or NaN takes the pieces below.
// Phi(-a) on [i/8, (i+1)/8): sum_k c[k][i] v^k, v = 8a - i
alignas(64) constexpr float kNormalTailTable[6][32] = {
    {5.000000000e-01f, 4.502617717e-01f, 4.012936652e-01f, 3.538302481e-01f, 3.085375428e-01f, 2.659855187e-01f,
     2.266273499e-01f, 1.907869577e-01f, 1.586552560e-01f, 1.302945167e-01f, 1.056497768e-01f, 8.456572145e-02f,
     6.680720299e-02f, 5.208127946e-02f, 4.005915672e-02f, 3.039636090e-02f, 2.275013179e-02f, 1.679330692e-02f,
     1.222447306e-02f, 8.774475195e-03f, 6.209665444e-03f, 4.332448356e-03f, 2.979763318e-03f, 2.020137385e-03f,
     1.349898055e-03f, 8.890252793e-04f, 5.770250573e-04f, 3.690784506e-04f, 2.326290851e-04f, 1.444807276e-04f,
     8.841728413e-05f, 5.331234934e-05f},
    {-4.986778647e-02f, -4.947954044e-02f, -4.833307117e-02f, -4.648260027e-02f, -4.400836304e-02f, -4.101962224e-02f,
     -3.764205799e-02f, -3.400710970e-02f, -3.024644032e-02f, -2.648455836e-02f, -2.283128165e-02f, -1.937649027e-02f,
     -1.618978195e-02f, -1.331728511e-02f, -1.078465767e-02f, -8.598243818e-03f, -6.748863496e-03f, -5.215145182e-03f,
     -3.967475612e-03f, -2.971492242e-03f, -2.191042993e-03f, -1.590522355e-03f, -1.136699109e-03f, -7.997601642e-04f,
     -5.539820995e-04f, -3.777813399e-04f, -2.536316752e-04f, -1.676396787e-04f, -1.090855949e-04f, -6.988274981e-05f,
     -4.407440429e-05f, -2.736643000e-05f},
    {1.339434075e-08f, 3.852117225e-04f, 7.517114864e-04f, 1.095036161e-03f, 1.376804197e-03f, 1.598427421e-03f,
     1.763526350e-03f, 1.861590543e-03f, 1.891174354e-03f, 1.862020814e-03f, 1.784818713e-03f, 1.664836542e-03f,
     1.518427161e-03f, 1.352546853e-03f, 1.179517596e-03f, 1.007297542e-03f, 8.435535710e-04f, 6.928041694e-04f,
     5.580717698e-04f, 4.411162809e-04f, 3.423914604e-04f, 2.609426156e-04f, 1.953985193e-04f, 1.436705061e-04f,
     1.038792907e-04f, 7.377852307e-05f, 5.152372978e-05f, 3.536002987e-05f, 2.386423694e-05f, 1.583312587e-05f,
     1.032944692e-05f, 6.627565654e-06f},
    {1.298247807e-04f,  1.305897749e-04f,  1.277163101e-04f,  8.846779383e-05f,  8.167331544e-05f,  7.594951603e-05f,
     4.552080645e-05f,  1.568364314e-05f,  -2.139437356e-06f, -1.783084917e-05f, -3.656714762e-05f, -4.402242485e-05f,
     -5.446901923e-05f, -5.692247942e-05f, -5.777771366e-05f, -5.547291221e-05f, -5.257847806e-05f, -4.821469702e-05f,
     -4.238027032e-05f, -3.601039134e-05f, -3.007042324e-05f, -2.439264972e-05f, -1.950476326e-05f, -1.503108069e-05f,
     -1.156206872e-05f, -8.604085451e-06f, -6.328772997e-06f, -4.531568266e-06f, -3.200263563e-06f, -2.209877493e-06f,
     -1.497583867e-06f, -9.979240758e-07f},
    {4.479029414e-08f,  -5.769748896e-06f, -1.392784725e-05f, 1.357217570e-05f,  -9.078263474e-08f, -1.775553028e-05f,
     -8.597358828e-06f, 3.126789068e-07f,  -2.516336508e-06f, -4.764680853e-06f, 1.811844186e-07f,  -3.439065495e-06f,
     5.144268016e-07f,  -6.041213965e-07f, -6.273376130e-08f, -2.766711589e-07f, 9.410910593e-07f,  1.899100994e-06f,
     1.959592510e-06f,  1.632447379e-06f,  1.579605168e-06f,  1.316301109e-06f,  1.248999638e-06f,  8.721364679e-07f,
     8.338813018e-07f,  6.271737902e-07f,  5.203864930e-07f,  3.801408752e-07f,  2.912849766e-07f,  2.086817545e-07f,
     1.462052808e-07f,  1.021093183e-07f},
    {-3.213711182e-07f, 1.414480721e-06f,  4.147494565e-06f,  -7.198183994e-06f, -2.041010475e-06f, 4.843387160e-06f,
     1.213311407e-06f,  -2.185081939e-06f, -8.188748097e-07f, 3.904452228e-07f,  -1.207967216e-06f, 5.957513736e-07f,
     -6.155701158e-07f, 1.422929046e-07f,  1.856932670e-07f,  4.675582659e-07f,  1.220903414e-07f,  -1.779968386e-07f,
     -1.737402044e-07f, -5.603361330e-08f, -7.481082065e-08f, -2.902675078e-08f, -6.952994624e-08f, 9.320703320e-09f,
     -4.177492485e-08f, -2.049567982e-08f, -3.028079831e-08f, -1.829305241e-08f, -1.802641236e-08f, -1.262373051e-08f,
     -8.597806911e-09f, -6.428144239e-09f},
};
// exp(-a^2 / 2) on the same intervals
alignas(64) constexpr float kHalfGaussTable[6][32] = {
    {1.000000000e+00f, 9.922179580e-01f, 9.692332149e-01f, 9.321025014e-01f, 8.824968934e-01f, 8.225775361e-01f,
     7.548395991e-01f, 6.819407344e-01f, 6.065306664e-01f, 5.310959816e-01f, 4.578333497e-01f, 3.885581195e-01f,
     3.246524632e-01f, 2.670518458e-01f, 2.162651718e-01f, 1.724216193e-01f, 1.353352815e-01f, 1.045790017e-01f,
     7.955951244e-02f, 5.958731845e-02f, 4.393693432e-02f, 3.189479187e-02f, 2.279418148e-02f, 1.603771001e-02f,
     1.110899635e-02f, 7.575677242e-03f, 5.086069461e-03f, 3.361686599e-03f, 2.187491162e-03f, 1.401359448e-03f,
     8.838262875e-04f, 5.487802555e-04f},
    {-1.936520055e-09f, -1.550437883e-02f, -3.028757498e-02f, -4.369274899e-02f, -5.515560880e-02f, -6.426259130e-02f,
     -7.076607645e-02f, -7.458645105e-02f, -7.581665367e-02f, -7.468491793e-02f, -7.153588533e-02f, -6.678304821e-02f,
     -6.087213755e-02f, -5.424540862e-02f, -4.730824009e-02f, -4.041109979e-02f, -3.383373842e-02f, -2.777881548e-02f,
     -2.237628773e-02f, -1.768997125e-02f, -1.373032480e-02f, -1.046540961e-02f, -7.835527882e-03f, -5.763586145e-03f,
     -4.165865015e-03f, -2.959239762e-03f, -2.066226210e-03f, -1.418216503e-03f, -9.570292896e-04f, -6.349922623e-04f,
     -4.142926482e-04f, -2.658163721e-04f},
    {-7.812472526e-03f, -7.622795645e-03f, -7.106546313e-03f, -6.254467182e-03f, -5.174430553e-03f, -3.926229663e-03f,
     -2.581096021e-03f, -1.255147159e-03f, 2.523620196e-06f,  1.098532812e-03f,  2.007425996e-03f,  2.700610319e-03f,
     3.168862546e-03f,  3.426843788e-03f,  3.486570669e-03f,  3.386959201e-03f,  3.171282820e-03f,  2.872492885e-03f,
     2.526447177e-03f,  2.160226926e-03f,  1.802358660e-03f,  1.467282418e-03f,  1.168865827e-03f,  9.106086218e-04f,
     6.942467880e-04f,  5.187232164e-04f,  3.800458799e-04f,  2.729287371e-04f,  1.922742085e-04f,  1.329262741e-04f,
     9.018771379e-05f,  6.009659410e-05f},
    {-1.266129743e-07f, 9.864950698e-05f,  2.530948259e-04f,  3.154244332e-04f,  4.048815754e-04f,  4.649443435e-04f,
     4.522102245e-04f,  4.520154325e-04f,  3.879163414e-04f,  3.473165852e-04f,  2.803702082e-04f,  2.011910547e-04f,
     1.232495706e-04f,  3.993298378e-05f,  -1.272541795e-05f, -4.960006845e-05f, -8.636661369e-05f, -1.100498121e-04f,
     -1.239331323e-04f, -1.213761570e-04f, -1.169227544e-04f, -1.045941390e-04f, -9.370138287e-05f, -7.975904009e-05f,
     -6.491749082e-05f, -5.194999540e-05f, -4.091091978e-05f, -3.109055251e-05f, -2.309057709e-05f, -1.679219531e-05f,
     -1.191365482e-05f, -8.334338418e-06f},
    {3.077235669e-05f,  5.439461529e-05f,  1.583546691e-06f,  3.200117862e-05f,  2.791062570e-06f,  -2.539583511e-05f,
     -3.910418855e-06f, -2.751808279e-05f, -4.520168659e-06f, -2.757229413e-05f, -3.263089820e-05f, -2.824978219e-05f,
     -2.293274156e-05f, -3.748493327e-06f, -7.536129488e-06f, -1.530894951e-05f, -8.829668332e-06f, -3.456465038e-06f,
     2.825885986e-06f,  3.130903110e-07f,  2.867122475e-06f,  1.372334395e-06f,  4.127899047e-06f,  4.367826477e-06f,
     3.202819926e-06f,  2.858342214e-06f,  2.893108331e-06f,  2.314385483e-06f,  1.809330797e-06f,  1.403420811e-06f,
     1.019347451e-06f,  7.882482578e-07f},
    {-2.329787492e-07f, -1.061248531e-05f, 8.739361874e-06f,  -5.816859812e-06f, 3.044271352e-06f,  1.136252376e-05f,
     2.721579762e-08f,  7.041281151e-06f,  -3.947314781e-06f, 4.029159754e-06f,  5.508019512e-06f,  3.851048859e-06f,
     2.333651310e-06f,  -4.307245490e-06f, -1.620871785e-06f, 2.717186590e-06f,  1.373034365e-06f,  3.356301193e-07f,
     -1.248693138e-06f, 4.227931356e-07f,  -1.196939081e-07f, 7.390834753e-07f,  -2.370939711e-07f, -3.452510384e-07f,
     1.412567574e-08f,  3.238793678e-10f,  -1.849841169e-07f, -1.316188900e-07f, -9.544297086e-08f, -7.839676641e-08f,
     -4.679999677e-08f, -5.177277984e-08f},
};

inline __m512 table_poly(const float (&c)[6][32], __m512i idx, __m512 v) {
  const auto coef = [&](int k) { return _mm512_permutex2var_ps(_mm512_load_ps(c[k]), idx, _mm512_load_ps(c[k] + 16)); };
  __m512 p = coef(5);
  for (int k = 4; k >= 0; --k) p = _mm512_fmadd_ps(p, v, coef(k));
  return p;
}

// Phi(x) (and exp(-x^2 / 2) in *density) from the tables: false when some lane is off them.
template <bool with_density>
inline bool normal_cdf_table(VF x, VF ax, VF* phi, VF* density) {
  const __m512 a = ax;
  if (_mm512_cmp_ps_mask(a, _mm512_set1_ps(4.0f), _CMP_NLT_UQ) != 0) return false;  // |x| >= 4, NaN
  const __m512 t = _mm512_mul_ps(a, _mm512_set1_ps(8.0f));
  const __m512i idx = _mm512_cvttps_epi32(t);
  const __m512 v = _mm512_sub_ps(t, _mm512_cvtepi32_ps(idx));
  const VF tail = table_poly(kNormalTailTable, idx, v);
  *phi = x < 0.0f ? tail : 1.0f - tail;
  if (with_density) *density = table_poly(kHalfGaussTable, idx, v);
  return true;
}
#endif

// Phi(x) and exp(-x^2 / 2); with_density false: the density only where the tail needs it.
template <bool with_density>
inline VF normal_cdf_vec(VF x, VF* density) {
  const VF ax = vec::abs(Vectorized<float>::make(x)).v;
#if defined(__AVX512F__)
  {
    VF phi;
    if (normal_cdf_table<with_density>(x, ax, &phi, density)) return phi;
  }
#endif
  const VF s = x * x;
  const float amax = lane_max(ax);
  if (!with_density && amax < 0.70710678f) return phi_small_vec(x, s);  // (a NaN lane: NaN here too)
  const VF phi_small = phi_small_vec(x, s);

  if (amax < 2.5f) {  // no lane in the asymptotic piece (the common case): the short path
    const VF e = exp_neg_half_square_vec(x, s);
    if (with_density) *density = e;
    const VF tail = e * tail_mid_vec(ax);
    const VF phi_big = x < 0.0f ? tail : 1.0f - tail;
    return ax < 0.70710678f ? phi_small : phi_big;
  }

  const VF at = ax > 15.0f ? VF{} + 15.0f : ax;  // Phi(-15) underflows float anyway
  const VF sa = tail_mid_vec(at);
  VF S = sa;
  {  // some lane in the asymptotic piece (or NaN / inf)
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
    S = at < 2.5f ? sa : sb;
  }

  // x^2 / 2 = xh^2 / 2 (exact: xh keeps 12 significant bits) + d, d small; exp(-x^2 / 2)
  // reaches the subnormals here, so vec::exp's full range.
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  VI bits;
  std::memcpy(&bits, &at, sizeof(bits));
  bits &= static_cast<int32_t>(0xfffff000u);
  VF xh;
  std::memcpy(&xh, &bits, sizeof(xh));
  const VF xl = at - xh;
  const VF a = xh * xh * 0.5f;
  const VF d = xl * (at + xh) * 0.5f;
  // exp(-d) by its series to d^5 (|d| < 0.12 here)
  const VF d2 = d * d;
  const VF ed = (1.0f - d) + d2 * ((0.5f - d * (1.0f / 6.0f)) + d2 * ((1.0f / 24.0f) - d * (1.0f / 120.0f)));
  const VF e = vec::exp(Vectorized<float>::make(-a)).v * ed;  // exp(-x^2 / 2) (0 beyond |x| = 15)
  if (with_density) *density = e;
  const VF tail = e * S;

  const VF phi_big = x < 0.0f ? tail : 1.0f - tail;
  return ax < 0.70710678f ? phi_small : phi_big;
}

inline Vectorized<float> gelu_erf_vec(Vectorized<float> xv) {
  return Vectorized<float>::make(xv.v * normal_cdf_vec<false>(xv.v, nullptr));
}

// d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
inline Vectorized<float> gelu_erf_grad_vec(Vectorized<float> gv, Vectorized<float> xv) {
  VF e;
  const VF phi = normal_cdf_vec<true>(xv.v, &e);
  return Vectorized<float>::make(gv.v * (phi + xv.v * e * 0.3989422804014327f));
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

// ---- gelu_backward: grad * gelu'(x) ----------------------------------------------------
// The scalar path (strided inputs, tails, double, half) in double, as the forward's.
struct GeluErfGradOp {
  template <typename T>
  T apply(T g, T x) const {
    const double xd = static_cast<double>(x);
    const double cdf = 0.5 * std::erfc(-xd * 0.70710678118654752440);
    const double pdf = std::exp(-0.5 * xd * xd) * 0.39894228040143267794;
    return static_cast<T>(static_cast<double>(g) * (cdf + xd * pdf));
  }
  Vectorized<float> vec(Vectorized<float> g, Vectorized<float> x) const { return gelu_erf_grad_vec(g, x); }
};

// s = sigmoid(2u) = 0.5 (1 + tanh(u)): gelu = x s, gelu' = s + x s (1 - s) 2u', 2u' = k2 (1 + 3 c x^2).
// x^2 is taken of x clamped to +-1e4 (s (1 - s) is 0 there; it keeps 0 * inf out).
struct GeluTanhGradOp {
  template <typename T>
  T apply(T g, T x) const {
    const T k2 = static_cast<T>(2 * 0.79788456080286535588), c = static_cast<T>(0.044715);
    const T xc = x > T(1e4) ? T(1e4) : (x < T(-1e4) ? T(-1e4) : x);
    const T s = T(1) / (T(1) + std::exp(-k2 * (x + c * x * x * x)));
    return g * (s + x * s * (T(1) - s) * k2 * (T(1) + T(3) * c * xc * xc));
  }
  Vectorized<float> vec(Vectorized<float> g, Vectorized<float> x) const {
    const VF xv = x.v;
    const float k2 = 2 * 0.79788456080286535588f, c = 0.044715f;
    const VF xc = xv > 1e4f ? VF{} + 1e4f : (xv < -1e4f ? VF{} - 1e4f : xv);
    const VF inner = k2 * (xv + c * xv * xv * xv);
    const VF s = 1.0f / (1.0f + vec::exp(Vectorized<float>::make(-inner)).v);
    return Vectorized<float>::make(g.v * (s + xv * s * (1.0f - s) * k2 * (1.0f + 3.0f * c * xc * xc)));
  }
};

template <typename scalar_t, typename Op>
void activation_grad_impl(TensorIterator& iter, const Op& op) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    cpu_kernel_vec(
        iter, [op](float g, float x) -> float { return op.apply(g, x); },
        [op](Vectorized<float> g, Vectorized<float> x) { return op.vec(g, x); });
  } else {
    using opmath = opmath_t<scalar_t>;
    cpu_kernel(iter, [op](scalar_t g, scalar_t x) -> scalar_t {
      return static_cast<scalar_t>(op.apply(static_cast<opmath>(g), static_cast<opmath>(x)));
    });
  }
}

void gelu_backward_kernel(TensorIterator& iter, bool tanh_approximation) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "gelu_backward", [&] {
    if (tanh_approximation) {
      activation_grad_impl<scalar_t>(iter, GeluTanhGradOp{});
    } else {
      activation_grad_impl<scalar_t>(iter, GeluErfGradOp{});
    }
  });
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
REGISTER_DISPATCH(gelu_backward_stub, &gelu_backward_kernel);
REGISTER_DISPATCH(silu_stub, &silu_kernel);
REGISTER_DISPATCH(mish_stub, &mish_kernel);
REGISTER_DISPATCH(softplus_stub, &softplus_kernel);
REGISTER_DISPATCH(leaky_relu_stub, &leaky_relu_kernel);
REGISTER_DISPATCH(hardsigmoid_stub, &hardsigmoid_kernel);
REGISTER_DISPATCH(hardswish_stub, &hardswish_kernel);

}  // namespace ember::at::native
