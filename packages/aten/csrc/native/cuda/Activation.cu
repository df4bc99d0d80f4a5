// CUDA kernels of the activation functions (the stubs of Activation.h), with the
// dtypes and formulas of cpu/ActivationKernel.cpp (whose float32 SIMD paths compute
// the same functions). Their backward passes are composite (derivatives.yaml), so
// they run on these and the other elementwise kernels; gelu's has a kernel of its own, and
// relu's / threshold's is threshold_backward.
//
// relu / threshold / hardtanh take every numeric dtype; the floating-point
// activations share one kernel per dtype, the function being a run-time code.
#include <ember/aten/Dispatch.h>

#include "../Activation.h"
#include "../ScalarMath.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

namespace m = scalar_math;

// ---- relu, threshold, hardtanh: every numeric dtype ----
// mode 0: relu; 1: threshold (a <= p0 ? p1 : a); 2: hardtanh (clamp to [p0, p1], NaN passes).
template <typename scalar_t>
void relu_family_impl(TensorIterator& iter, int mode, const Scalar& s0, const Scalar& s1) {
  using opmath = opmath_t<scalar_t>;
  const opmath p0 = s0.to<opmath>();
  const opmath p1 = s1.to<opmath>();
  const scalar_t value = static_cast<scalar_t>(p1);
  gpu_kernel(iter, [mode, p0, p1, value] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    const opmath x = static_cast<opmath>(a);
    if (mode == 0) return x < opmath(0) ? scalar_t(0) : a;
    if (mode == 1) return x <= p0 ? value : a;
    opmath r = x < p0 ? p0 : x;
    return static_cast<scalar_t>(r > p1 ? p1 : r);
  });
}

void relu_kernel_cuda(TensorIterator& iter) {
  const Scalar zero(int64_t{0});
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "relu",
                                    [&] { relu_family_impl<scalar_t>(iter, 0, zero, zero); });
}

void threshold_kernel_cuda(TensorIterator& iter, const Scalar& threshold, const Scalar& value) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "threshold",
                                    [&] { relu_family_impl<scalar_t>(iter, 1, threshold, value); });
}

void hardtanh_kernel_cuda(TensorIterator& iter, const Scalar& min_val, const Scalar& max_val) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "hardtanh",
                                    [&] { relu_family_impl<scalar_t>(iter, 2, min_val, max_val); });
}

// threshold_backward: inputs (self, grad_output) -> self <= threshold ? 0 : grad_output
template <typename scalar_t>
void threshold_backward_impl(TensorIterator& iter, const Scalar& threshold) {
  using opmath = opmath_t<scalar_t>;
  const opmath th = threshold.to<opmath>();
  gpu_kernel(iter, [th] EMBER_GPU_LAMBDA(scalar_t x, scalar_t g) -> scalar_t {
    return static_cast<opmath>(x) <= th ? scalar_t(0) : g;
  });
}

void threshold_backward_kernel_cuda(TensorIterator& iter, const Scalar& threshold) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "threshold_backward",
                                    [&] { threshold_backward_impl<scalar_t>(iter, threshold); });
}

// ---- floating-point activations ----
enum class ActFn : int { Elu, GeluErf, GeluTanh, Silu, Mish, Softplus, LeakyRelu, Hardsigmoid, Hardswish };

// Up to three parameters, as doubles (converted to the compute type on the host).
template <typename T>
EMBER_HOST_DEVICE T apply_act(ActFn f, T x, T p0, T p1, T p2) {
  switch (f) {
    case ActFn::Elu:  // p0 = alpha * scale, p1 = scale, p2 = input_scale
      return x <= T(0) ? m::expm1(x * p2) * p0 : x * p1;
    case ActFn::GeluErf: {
      // x Phi(x) in double, with erfc (the CPU's scalar path)
      const double xd = static_cast<double>(x);
      return static_cast<T>(xd * 0.5 * ::erfc(-xd * 0.70710678118654752440));
    }
    case ActFn::GeluTanh: {
      // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
      const T k2 = static_cast<T>(2 * 0.79788456080286535588);
      const T inner = k2 * (x + static_cast<T>(0.044715) * x * x * x);
      return x / (T(1) + m::exp(-inner));
    }
    case ActFn::Silu:
      return x / (T(1) + m::exp(-x));
    case ActFn::Mish:
      return x * m::tanh(m::log1p(m::exp(x)));
    case ActFn::Softplus:  // p0 = beta, p1 = threshold
      return x * p0 > p1 ? x : m::log1p(m::exp(x * p0)) / p0;
    case ActFn::LeakyRelu:  // p0 = negative_slope
      return x > T(0) ? x : x * p0;
    case ActFn::Hardsigmoid:
    case ActFn::Hardswish: {
      T t = x + T(3);
      t = t < T(0) ? T(0) : t;
      t = t > T(6) ? T(6) : t;
      return f == ActFn::Hardsigmoid ? t / T(6) : x * t / T(6);
    }
  }
  return x;
}

template <typename scalar_t>
void act_impl(TensorIterator& iter, ActFn f, double d0, double d1, double d2) {
  using opmath = opmath_t<scalar_t>;
  const opmath p0 = static_cast<opmath>(d0), p1 = static_cast<opmath>(d1), p2 = static_cast<opmath>(d2);
  gpu_kernel(iter, [f, p0, p1, p2] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
    return static_cast<scalar_t>(apply_act<opmath>(f, static_cast<opmath>(a), p0, p1, p2));
  });
}

void act_kernel(TensorIterator& iter, const char* name, ActFn f, double p0 = 0, double p1 = 0, double p2 = 0) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), name, [&] { act_impl<scalar_t>(iter, f, p0, p1, p2); });
}

void elu_kernel_cuda(TensorIterator& iter, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  act_kernel(iter, "elu", ActFn::Elu, alpha.toDouble() * scale.toDouble(), scale.toDouble(), input_scale.toDouble());
}
void gelu_kernel_cuda(TensorIterator& iter, bool tanh_approximation) {
  act_kernel(iter, "gelu", tanh_approximation ? ActFn::GeluTanh : ActFn::GeluErf);
}
// grad * gelu'(x), the formulas of cpu/ActivationKernel.cpp's scalar path (erf: in double).
template <typename scalar_t>
void gelu_backward_impl(TensorIterator& iter, bool tanh_approximation) {
  using opmath = opmath_t<scalar_t>;
  gpu_kernel(iter, [tanh_approximation] EMBER_GPU_LAMBDA(scalar_t gs, scalar_t xs) -> scalar_t {
    if (!tanh_approximation) {
      const double x = static_cast<double>(xs);
      const double cdf = 0.5 * ::erfc(-x * 0.70710678118654752440);
      const double pdf = ::exp(-0.5 * x * x) * 0.39894228040143267794;
      return static_cast<scalar_t>(static_cast<double>(gs) * (cdf + x * pdf));
    }
    const opmath g = static_cast<opmath>(gs), x = static_cast<opmath>(xs);
    const opmath k2 = static_cast<opmath>(2 * 0.79788456080286535588), c = static_cast<opmath>(0.044715);
    const opmath xc = x > opmath(1e4) ? opmath(1e4) : (x < opmath(-1e4) ? opmath(-1e4) : x);
    const opmath s = opmath(1) / (opmath(1) + m::exp(-k2 * (x + c * x * x * x)));
    return static_cast<scalar_t>(g * (s + x * s * (opmath(1) - s) * k2 * (opmath(1) + opmath(3) * c * xc * xc)));
  });
}

void gelu_backward_kernel_cuda(TensorIterator& iter, bool tanh_approximation) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "gelu_backward",
                                         [&] { gelu_backward_impl<scalar_t>(iter, tanh_approximation); });
}
void silu_kernel_cuda(TensorIterator& iter) { act_kernel(iter, "silu", ActFn::Silu); }
void mish_kernel_cuda(TensorIterator& iter) { act_kernel(iter, "mish", ActFn::Mish); }
void softplus_kernel_cuda(TensorIterator& iter, const Scalar& beta, const Scalar& threshold) {
  act_kernel(iter, "softplus", ActFn::Softplus, beta.toDouble(), threshold.toDouble());
}
void leaky_relu_kernel_cuda(TensorIterator& iter, const Scalar& negative_slope) {
  act_kernel(iter, "leaky_relu", ActFn::LeakyRelu, negative_slope.toDouble());
}
void hardsigmoid_kernel_cuda(TensorIterator& iter) { act_kernel(iter, "hardsigmoid", ActFn::Hardsigmoid); }
void hardswish_kernel_cuda(TensorIterator& iter) { act_kernel(iter, "hardswish", ActFn::Hardswish); }

}  // namespace

REGISTER_CUDA_DISPATCH(relu_stub, &relu_kernel_cuda);
REGISTER_CUDA_DISPATCH(threshold_stub, &threshold_kernel_cuda);
REGISTER_CUDA_DISPATCH(threshold_backward_stub, &threshold_backward_kernel_cuda);
REGISTER_CUDA_DISPATCH(hardtanh_stub, &hardtanh_kernel_cuda);
REGISTER_CUDA_DISPATCH(elu_stub, &elu_kernel_cuda);
REGISTER_CUDA_DISPATCH(gelu_stub, &gelu_kernel_cuda);
REGISTER_CUDA_DISPATCH(gelu_backward_stub, &gelu_backward_kernel_cuda);
REGISTER_CUDA_DISPATCH(silu_stub, &silu_kernel_cuda);
REGISTER_CUDA_DISPATCH(mish_stub, &mish_kernel_cuda);
REGISTER_CUDA_DISPATCH(softplus_stub, &softplus_kernel_cuda);
REGISTER_CUDA_DISPATCH(leaky_relu_stub, &leaky_relu_kernel_cuda);
REGISTER_CUDA_DISPATCH(hardsigmoid_stub, &hardsigmoid_kernel_cuda);
REGISTER_CUDA_DISPATCH(hardswish_stub, &hardswish_kernel_cuda);

}  // namespace ember::at::native
