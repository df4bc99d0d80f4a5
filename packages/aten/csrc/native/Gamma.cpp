// _standard_gamma: draws of Gamma(alpha, 1), the source of ember.distributions' Gamma,
// Beta, Dirichlet (and Chi2) samples; _standard_gamma_grad: d sample / d alpha holding
// the sample's CDF value fixed, the implicit reparameterisation gradient that makes
// Gamma.rsample differentiable in its concentration (as PyTorch's derivatives.yaml
// entry `self: grad * _standard_gamma_grad(self, result)`).
//
// Both compute in double on the host and write the result in self's dtype on self's
// device (a CUDA input is copied over and back, as multinomial does).
//
// The draw (Marsaglia & Tsang, "A simple method for generating gamma variables", 2000)
// is a rejection loop, so an element needs a variable number of uniforms. Element i
// owns the Philox counter offset + i (one reserved block per element) and takes attempt
// j's normal from subsequence 2j and its uniform from subsequence 2j + 1; alpha < 1 is
// boosted (Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha)) with U from subsequence 2^62.
// The value of element i therefore depends only on (seed, offset + i, alpha_i).
#include <cmath>
#include <limits>

#include "Distributions.h"

namespace ember::at::native {

namespace {

double uniform_double(const PhiloxBlock& b, int pair) {
  // U(h, l) of the stream layout: 53 random bits in [0, 1)
  const uint64_t bits = (static_cast<uint64_t>(b.x[2 * pair]) << 32 | b.x[2 * pair + 1]) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

double standard_gamma_one(double alpha, uint64_t seed, uint64_t counter) {
  double boost = 1.0;
  if (alpha < 1.0) {
    const double u = uniform_double(philox4x32_10(seed, counter, uint64_t{1} << 62), 0);
    boost = std::pow(1.0 - u, 1.0 / alpha);  // 1 - u is in (0, 1]
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (uint64_t j = 0;; ++j) {
    const PhiloxBlock nb = philox4x32_10(seed, counter, 2 * j);
    double z, unused;
    dist::box_muller_d(uniform_double(nb, 0), uniform_double(nb, 1), z, unused);
    const double t = 1.0 + c * z;
    if (t <= 0.0) continue;
    const double v = t * t * t;
    const double u = 1.0 - uniform_double(philox4x32_10(seed, counter, 2 * j + 1), 0);  // (0, 1]
    if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return boost * d * v;
  }
}

// The regularised incomplete gamma functions P(a, x) (lower) and Q(a, x) = 1 - P: the
// series of P for x < a + 1, the continued fraction (modified Lentz) of Q otherwise.
double gamma_p_series(double a, double x) {
  if (x <= 0.0) return 0.0;
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-17) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

double gamma_q_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int n = 1; n < 100000; ++n) {
    const double an = -n * (n - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

// dx/dalpha at fixed P(alpha, x): -(dP/dalpha) / (dP/dx), dP/dx being the density. dP/dalpha
// is a central difference of whichever of P and Q is computed directly (the smaller tail,
// so no cancellation); h = 1e-5 alpha leaves ~1e-10 relative error in double.
double standard_gamma_grad_one(double alpha, double x) {
  if (!(x > 0.0)) return 0.0;
  const double h = 1e-5 * alpha;
  double dp;
  if (x < alpha + 1.0) {
    dp = (gamma_p_series(alpha + h, x) - gamma_p_series(alpha - h, x)) / (2.0 * h);
  } else {
    dp = -(gamma_q_fraction(alpha + h, x) - gamma_q_fraction(alpha - h, x)) / (2.0 * h);
  }
  const double log_density = (alpha - 1.0) * std::log(x) - x - std::lgamma(alpha);
  return -dp * std::exp(-log_density);
}

Tensor host_double_contiguous(const Tensor& t) {
  const Tensor c = t.is_cpu() ? t : t.to(Device(DeviceType::CPU));
  return c.to(ScalarType::Double).contiguous();
}

// out (double, on the host) in self's dtype and on self's device
Tensor to_like(const Tensor& out, const Tensor& self) {
  Tensor r = out.to(self.dtype());
  return self.is_cpu() ? r : r.to(self.device());
}

void check_floating_input(const Tensor& self, const char* op) {
  EMBER_CHECK(isFloatingType(self.dtype()), op, ": expected a floating-point tensor, got ",
              c10::toPythonName(self.dtype()));
}

}  // namespace

Tensor _standard_gamma(const Tensor& self, const std::optional<Generator>& generator) {
  check_floating_input(self, "_standard_gamma");
  Generator gen = get_generator_or_default(generator, self.device());
  const Tensor alpha = host_double_contiguous(self);
  const double* a = alpha.data_ptr<double>();
  const int64_t n = alpha.numel();
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(a[i] > 0.0 && std::isfinite(a[i]),
                "_standard_gamma: every alpha (concentration) must be positive and finite, got ", a[i],
                " at flat index ", i);
  }
  Tensor out = at::empty(alpha.sizes(), ScalarType::Double, Device(DeviceType::CPU));
  if (n == 0) return to_like(out, self);
  const auto [seed, offset] = gen.philox_reserve(static_cast<uint64_t>(n));
  double* o = out.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) o[i] = standard_gamma_one(a[i], seed, offset + static_cast<uint64_t>(i));
  return to_like(out, self);
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  check_floating_input(self, "_standard_gamma_grad");
  EMBER_CHECK(self.sizes() == output.sizes(), "_standard_gamma_grad: self (alpha) has shape ", self.sizes(),
              " but output has shape ", output.sizes());
  const Tensor alpha = host_double_contiguous(self);
  const Tensor x = host_double_contiguous(output);
  const double* a = alpha.data_ptr<double>();
  const double* xs = x.data_ptr<double>();
  Tensor out = at::empty(alpha.sizes(), ScalarType::Double, Device(DeviceType::CPU));
  double* o = out.data_ptr<double>();
  for (int64_t i = 0; i < alpha.numel(); ++i) o[i] = standard_gamma_grad_one(a[i], xs[i]);
  return to_like(out, self);
}

}  // namespace ember::at::native
