#pragma once
// Scalar math that compiles for the CPU and for CUDA host and device code: one name per
// function for float and double (gpu_kernel lambdas are __host__ __device__, so the
// std:: overloads will not do), and the special functions ember computes itself
// (digamma, erfinv). The CPU kernels (cpu/*.cpp) and the CUDA kernels (cuda/*.cu) both
// call these, so the two devices follow one formula.
#include <cmath>
#include <cstdint>
#include <limits>

#include "HostDevice.h"

namespace ember::at::native::scalar_math {
EMBER_FORMULAS_BEGIN

#define EMBER_CUDA_MATH_UNARY_(name, f32, f64)                      \
  EMBER_HOST_DEVICE inline float name(float x) { return ::f32(x); } \
  EMBER_HOST_DEVICE inline double name(double x) { return ::f64(x); }
#define EMBER_CUDA_MATH_BINARY_(name, f32, f64)                                 \
  EMBER_HOST_DEVICE inline float name(float x, float y) { return ::f32(x, y); } \
  EMBER_HOST_DEVICE inline double name(double x, double y) { return ::f64(x, y); }

EMBER_CUDA_MATH_UNARY_(exp, expf, exp)
EMBER_CUDA_MATH_UNARY_(exp2, exp2f, exp2)
EMBER_CUDA_MATH_UNARY_(expm1, expm1f, expm1)
EMBER_CUDA_MATH_UNARY_(log, logf, log)
EMBER_CUDA_MATH_UNARY_(log2, log2f, log2)
EMBER_CUDA_MATH_UNARY_(log10, log10f, log10)
EMBER_CUDA_MATH_UNARY_(log1p, log1pf, log1p)
EMBER_CUDA_MATH_UNARY_(sqrt, sqrtf, sqrt)
EMBER_CUDA_MATH_UNARY_(sin, sinf, sin)
EMBER_CUDA_MATH_UNARY_(cos, cosf, cos)
EMBER_CUDA_MATH_UNARY_(tan, tanf, tan)
EMBER_CUDA_MATH_UNARY_(asin, asinf, asin)
EMBER_CUDA_MATH_UNARY_(acos, acosf, acos)
EMBER_CUDA_MATH_UNARY_(atan, atanf, atan)
EMBER_CUDA_MATH_UNARY_(sinh, sinhf, sinh)
EMBER_CUDA_MATH_UNARY_(cosh, coshf, cosh)
EMBER_CUDA_MATH_UNARY_(tanh, tanhf, tanh)
EMBER_CUDA_MATH_UNARY_(asinh, asinhf, asinh)
EMBER_CUDA_MATH_UNARY_(acosh, acoshf, acosh)
EMBER_CUDA_MATH_UNARY_(atanh, atanhf, atanh)
EMBER_CUDA_MATH_UNARY_(erf, erff, erf)
EMBER_CUDA_MATH_UNARY_(erfc, erfcf, erfc)
EMBER_CUDA_MATH_UNARY_(lgamma, lgammaf, lgamma)
EMBER_CUDA_MATH_UNARY_(floor, floorf, floor)
EMBER_CUDA_MATH_UNARY_(ceil, ceilf, ceil)
EMBER_CUDA_MATH_UNARY_(trunc, truncf, trunc)
EMBER_CUDA_MATH_UNARY_(nearbyint, nearbyintf, nearbyint)  // round half to even
EMBER_CUDA_MATH_UNARY_(fabs, fabsf, fabs)
EMBER_CUDA_MATH_BINARY_(pow, powf, pow)
EMBER_CUDA_MATH_BINARY_(fmod, fmodf, fmod)
EMBER_CUDA_MATH_BINARY_(atan2, atan2f, atan2)
EMBER_CUDA_MATH_BINARY_(hypot, hypotf, hypot)
EMBER_CUDA_MATH_BINARY_(copysign, copysignf, copysign)
EMBER_CUDA_MATH_BINARY_(fmax, fmaxf, fmax)
EMBER_CUDA_MATH_BINARY_(fmin, fminf, fmin)
EMBER_CUDA_MATH_BINARY_(nextafter, nextafterf, nextafter)
#undef EMBER_CUDA_MATH_UNARY_
#undef EMBER_CUDA_MATH_BINARY_

template <typename T>
EMBER_HOST_DEVICE inline bool isnan(T x) {
  return x != x;
}
template <typename T>
EMBER_HOST_DEVICE inline bool isinf(T x) {
  return x == std::numeric_limits<T>::infinity() || x == -std::numeric_limits<T>::infinity();
}
template <typename T>
EMBER_HOST_DEVICE inline bool isfinite(T x) {
  return !isnan(x) && !isinf(x);
}
EMBER_HOST_DEVICE inline double inf() { return std::numeric_limits<double>::infinity(); }
EMBER_HOST_DEVICE inline double qnan() { return std::numeric_limits<double>::quiet_NaN(); }

// digamma: psi(0) = -inf with the sign of -x; poles at negative integers are NaN;
// negative x by reflection psi(x) = psi(1 - x) - pi / tan(pi x); positive x climbs
// to x >= 10 with psi(x) = psi(x + 1) - 1/x, then the asymptotic series.
EMBER_HOST_DEVICE inline double digamma_double(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (isnan(x)) return x;
  if (x == 0) return ::copysign(inf(), -x);
  double result = 0;
  if (x < 0) {
    if (x == ::trunc(x)) return qnan();
    const double r = x - ::nearbyint(x);  // tan(pi x) has period 1: reduce exactly
    result = -kPi / ::tan(kPi * r);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == inf()) return x;
  // psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x^2k)
  const double z = 1 / (x * x);
  const double poly =
      -1.0 / 12 +
      z * (1.0 / 120 + z * (-1.0 / 252 + z * (1.0 / 240 + z * (-1.0 / 132 + z * (691.0 / 32760 + z * (-1.0 / 12))))));
  return result + ::log(x) - 0.5 / x + z * poly;
}

// erfinv: M. Giles' single-precision approximation as the first guess, then two
// Newton steps on erf(x) = y (on erfc for |y| > 0.5, where 1 - |y| is exact).
EMBER_HOST_DEVICE inline double erfinv_double(double y) {
  if (isnan(y) || y == 0) return y;  // keeps -0.0
  const double ay = ::fabs(y);
  if (ay >= 1) return ay == 1 ? ::copysign(inf(), y) : qnan();
  double w = -::log((1.0 - ay) * (1.0 + ay));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = ::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * ay;
  constexpr double k2OverSqrtPi = 1.12837916709551257390;
  for (int i = 0; i < 2; ++i) {
    const double f = ay <= 0.5 ? ::erf(x) - ay : (1.0 - ay) - ::erfc(x);
    x -= f / (k2OverSqrtPi * ::exp(-x * x));
  }
  return ::copysign(x, y);
}

EMBER_FORMULAS_END
}  // namespace ember::at::native::scalar_math
