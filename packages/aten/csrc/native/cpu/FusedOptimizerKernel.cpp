// CPU kernels of the fused optimizer steps (FusedOptimizers.h), in PyTorch's update
// order (its FusedAdamKernel / FusedSGDKernel): the arithmetic is written once over a
// type V that is either one opmath_t value (the tail, and half/bfloat16 throughout) or
// a Vectorized<T> of float/double lanes.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../FusedOptimizers.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

template <typename T>
using Vec = vec::Vectorized<T>;

template <typename T>
inline T sqrt_(T x) {
  return std::sqrt(x);
}
template <typename T>
inline Vec<T> sqrt_(Vec<T> x) {
  return vec::sqrt(x);
}
// NaN-propagating, as PyTorch's vectorised maximum
template <typename T>
inline T max_(T a, T b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename T>
inline Vec<T> max_(Vec<T> a, Vec<T> b) {
  return vec::maximum(a, b);
}

// Walks [begin, end) of the call's index space tensor by tensor: span(t, lo, hi).
template <typename F>
void for_each_span(const std::vector<int64_t>& off, const F& span) {
  parallel_for(0, off.back(), GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    size_t t = static_cast<size_t>(std::upper_bound(off.begin(), off.end(), begin) - off.begin()) - 1;
    while (begin < end) {
      const int64_t stop = std::min(end, off[t + 1]);
      if (stop > begin) {
        span(t, begin - off[t], stop - off[t]);
        begin = stop;
      }
      ++t;
    }
  });
}

// ---- Adam / AdamW ------------------------------------------------------------------------------

template <typename S>
struct AdamConsts {
  S beta2, one_minus_beta2, lerp_w, one_minus_lerp_w, wd, decay, step_size, bc2_sqrt, eps, inv_scale;
};

// One element (or one vector of them). g arrives as the stored gradient.
template <typename V, typename S>
inline void adam_math(V& p, V& g, V& m, V& v, V* mx, const AdamConsts<S>& c, const FusedAdamArgs& a, bool small_lerp) {
  if (a.maximize) g = V(S(0)) - g;
  if (a.weight_decay != 0) {
    if (a.adamw) {
      p = p * V(c.decay);
    } else {
      g = g + p * V(c.wd);
    }
  }
  // exp_avg.lerp_(grad, 1 - beta1), with lerp's two formulas as PyTorch
  m = small_lerp ? m + V(c.lerp_w) * (g - m) : g - (g - m) * V(c.one_minus_lerp_w);
  v = v * V(c.beta2) + V(c.one_minus_beta2) * g * g;
  V second = v;
  if (mx != nullptr) {
    *mx = max_(*mx, v);
    second = *mx;
  }
  const V denom = sqrt_(second) / V(c.bc2_sqrt) + V(c.eps);
  p = p - V(c.step_size) * m / denom;
}

template <typename scalar_t>
void adam_span(const FusedAdamArgs& a, size_t t, int64_t lo, int64_t hi) {
  using opm = opmath_t<scalar_t>;
  auto* param = reinterpret_cast<scalar_t*>(a.ptrs[t][0]);
  auto* grad = reinterpret_cast<scalar_t*>(a.ptrs[t][1]);
  auto* exp_avg = reinterpret_cast<scalar_t*>(a.ptrs[t][2]);
  auto* exp_avg_sq = reinterpret_cast<scalar_t*>(a.ptrs[t][3]);
  auto* max_sq = reinterpret_cast<scalar_t*>(a.ptrs[t][4]);
  const double lerp_w = 1 - a.beta1;
  const bool small_lerp = std::abs(lerp_w) < 0.5;
  const AdamConsts<opm> c{opm(a.beta2),        opm(1 - a.beta2),
                          opm(lerp_w),         opm(1 - opm(lerp_w)),
                          opm(a.weight_decay), opm(1 - a.lr * a.weight_decay),
                          opm(a.step_size[t]), opm(a.bias_correction2_sqrt[t]),
                          opm(a.eps),          opm(a.grad_scale)};
  int64_t i = lo;
  if constexpr (std::is_same_v<scalar_t, opm>) {
    using V = Vec<scalar_t>;
    constexpr int64_t W = V::size();
    for (; i + W <= hi; i += W) {
      V p = V::loadu(param + i), g = V::loadu(grad + i), m = V::loadu(exp_avg + i), v = V::loadu(exp_avg_sq + i);
      V mx;
      if (a.has_grad_scale) {
        g = g / V(c.inv_scale);
        g.store(grad + i);
      }
      if (max_sq != nullptr) mx = V::loadu(max_sq + i);
      adam_math<V, opm>(p, g, m, v, max_sq != nullptr ? &mx : nullptr, c, a, small_lerp);
      p.store(param + i);
      m.store(exp_avg + i);
      v.store(exp_avg_sq + i);
      if (max_sq != nullptr) mx.store(max_sq + i);
    }
  }
  for (; i < hi; ++i) {
    opm p = param[i], g = grad[i], m = exp_avg[i], v = exp_avg_sq[i], mx = 0;
    if (a.has_grad_scale) {
      g = g / c.inv_scale;
      grad[i] = static_cast<scalar_t>(g);
    }
    if (max_sq != nullptr) mx = max_sq[i];
    adam_math<opm, opm>(p, g, m, v, max_sq != nullptr ? &mx : nullptr, c, a, small_lerp);
    param[i] = static_cast<scalar_t>(p);
    exp_avg[i] = static_cast<scalar_t>(m);
    exp_avg_sq[i] = static_cast<scalar_t>(v);
    if (max_sq != nullptr) max_sq[i] = static_cast<scalar_t>(mx);
  }
}

void fused_adam_kernel(ScalarType dtype, const FusedAdamArgs& a) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, a.adamw ? "_fused_adamw_" : "_fused_adam_", [&] {
    for_each_span(a.offsets, [&](size_t t, int64_t lo, int64_t hi) { adam_span<scalar_t>(a, t, lo, hi); });
  });
}

// ---- SGD ---------------------------------------------------------------------------------------

template <typename S>
struct SgdConsts {
  S wd, momentum, one_minus_dampening, lr, inv_scale;
};

template <typename V, typename S>
inline void sgd_math(V& p, V& g, V* buf, const SgdConsts<S>& c, const FusedSgdArgs& a) {
  if (a.maximize) g = V(S(0)) - g;
  if (a.weight_decay != 0) g = g + p * V(c.wd);
  if (buf != nullptr) {
    *buf = a.is_first_step ? g : *buf * V(c.momentum) + V(c.one_minus_dampening) * g;
    g = a.nesterov ? g + *buf * V(c.momentum) : *buf;
  }
  p = p - g * V(c.lr);
}

template <typename scalar_t>
void sgd_span(const FusedSgdArgs& a, size_t t, int64_t lo, int64_t hi) {
  using opm = opmath_t<scalar_t>;
  auto* param = reinterpret_cast<scalar_t*>(a.ptrs[t][0]);
  auto* grad = reinterpret_cast<scalar_t*>(a.ptrs[t][1]);
  auto* bufp = reinterpret_cast<scalar_t*>(a.ptrs[t][2]);
  const SgdConsts<opm> c{opm(a.weight_decay), opm(a.momentum), opm(1 - a.dampening), opm(a.lr), opm(a.grad_scale)};
  int64_t i = lo;
  if constexpr (std::is_same_v<scalar_t, opm>) {
    using V = Vec<scalar_t>;
    constexpr int64_t W = V::size();
    for (; i + W <= hi; i += W) {
      V p = V::loadu(param + i), g = V::loadu(grad + i), b;
      if (a.has_grad_scale) {
        g = g / V(c.inv_scale);
        g.store(grad + i);
      }
      if (bufp != nullptr && !a.is_first_step) b = V::loadu(bufp + i);
      sgd_math<V, opm>(p, g, bufp != nullptr ? &b : nullptr, c, a);
      p.store(param + i);
      if (bufp != nullptr) b.store(bufp + i);
    }
  }
  for (; i < hi; ++i) {
    opm p = param[i], g = grad[i], b = 0;
    if (a.has_grad_scale) {
      g = g / c.inv_scale;
      grad[i] = static_cast<scalar_t>(g);
    }
    if (bufp != nullptr && !a.is_first_step) b = bufp[i];
    sgd_math<opm, opm>(p, g, bufp != nullptr ? &b : nullptr, c, a);
    param[i] = static_cast<scalar_t>(p);
    if (bufp != nullptr) bufp[i] = static_cast<scalar_t>(b);
  }
}

void fused_sgd_kernel(ScalarType dtype, const FusedSgdArgs& a) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "_fused_sgd_", [&] {
    for_each_span(a.offsets, [&](size_t t, int64_t lo, int64_t hi) { sgd_span<scalar_t>(a, t, lo, hi); });
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(fused_adam_stub, &fused_adam_kernel);
REGISTER_DISPATCH(fused_sgd_stub, &fused_sgd_kernel);

}  // namespace ember::at::native
