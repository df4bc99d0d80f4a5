// CPU kernels of softmax / log_softmax and their backward, float32 and float64.
//
// Row layout (inner == 1, the softmax dim is the last one): one row at a time,
// vectorised along it -- max, then exp(x - max) summed (stored for softmax), then a
// scale (softmax) or (x - max) - log(sum) (log_softmax). Parallel over rows.
// Column layout (inner > 1): blocks of kColBlock adjacent inner positions, vectorised
// across them, walking the softmax dim with a stride of `inner`; parallel over
// (outer, block) pairs.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../CrossEntropy.h"
#include "../SoftMax.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

namespace {

using vec::Vectorized;

constexpr int64_t kColBlock = 256;

// exp of each lane: the polynomial for float, libm for double.
inline Vectorized<float> vexp(Vectorized<float> x) { return vec::exp(x); }
inline Vectorized<double> vexp(Vectorized<double> x) {
  return vec::map(x, [](double v) { return std::exp(v); });
}

// NaN-propagating lane max written with vector selects (blends, no lane loop).
template <typename T>
inline Vectorized<T> vmax(Vectorized<T> a, Vectorized<T> b) {
  auto r = a.v > b.v ? a.v : b.v;  // b is NaN: b
  return Vectorized<T>::make(a.v != a.v ? a.v : r);
}

template <typename T>
inline T smax(T a, T b) {
  return (a != a || a > b) ? a : b;
}

template <typename T>
T row_max(const T* x, int64_t n) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  T m = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  if (n >= W) {
    V vm = V::loadu(x);
    for (i = W; i + W <= n; i += W) vm = vmax(vm, V::loadu(x + i));
    for (int l = 0; l < W; ++l) m = smax(m, vm[l]);
  }
  for (; i < n; ++i) m = smax(m, x[i]);
  return m;
}

// sum of exp(x - m); stores the exps into y when y != nullptr.
template <typename T>
T row_sum_exp(const T* x, T* y, int64_t n, T m) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const V vm(m);
  V acc(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V e = vexp(V::loadu(x + i) - vm);
    if (y) e.store(y + i);
    acc += e;
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    V e = vexp(V::loadu(x + i, rest) - vm);
    if (y) e.store(y + i, rest);
    // lanes past `rest` were loaded as 0 and hold exp(-m): keep them out of the sum
    for (int l = 0; l < rest; ++l) acc.v[l] += e.v[l];
  }
  return acc.reduce_add();
}

template <typename T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const T m = row_max(x, n);
  if (log) {
    // (x - max) - log(sum), as PyTorch: max + log(sum) first would round away the low
    // bits of log(sum) when |max| is large
    const T s = row_sum_exp<T>(x, nullptr, n, m);
    const T ls = std::log(s);
    const V vm(m), vls(ls);
    int64_t i = 0;
    for (; i + W <= n; i += W) ((V::loadu(x + i) - vm) - vls).store(y + i);
    for (; i < n; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const T s = row_sum_exp<T>(x, y, n, m);
    const T r = T(1) / s;
    const V vr(r);
    int64_t i = 0;
    for (; i + W <= n; i += W) (V::loadu(y + i) * vr).store(y + i);
    for (; i < n; ++i) y[i] *= r;
  }
}

// Columns [0, w) of a [D, inner] slab (row stride `inner`), w <= kColBlock.
template <typename T>
void softmax_cols(const T* x, T* y, int64_t D, int64_t inner, int64_t w, bool log) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  alignas(64) T mx[kColBlock];
  alignas(64) T sm[kColBlock];
  const int64_t wv = w / W * W;
  for (int64_t j = 0; j < w; ++j) {
    mx[j] = -std::numeric_limits<T>::infinity();
    sm[j] = T(0);
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* xr = x + d * inner;
    int64_t j = 0;
    for (; j < wv; j += W) vmax(V::loadu(mx + j), V::loadu(xr + j)).store(mx + j);
    for (; j < w; ++j) mx[j] = smax(mx[j], xr[j]);
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* xr = x + d * inner;
    T* yr = y + d * inner;
    int64_t j = 0;
    for (; j < wv; j += W) {
      V e = vexp(V::loadu(xr + j) - V::loadu(mx + j));
      if (!log) e.store(yr + j);
      (V::loadu(sm + j) + e).store(sm + j);
    }
    for (; j < w; ++j) {
      const T e = std::exp(xr[j] - mx[j]);
      if (!log) yr[j] = e;
      sm[j] += e;
    }
  }
  if (log) {
    for (int64_t j = 0; j < w; ++j) sm[j] = std::log(sm[j]);
  } else {
    for (int64_t j = 0; j < w; ++j) sm[j] = T(1) / sm[j];
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* xr = x + d * inner;
    T* yr = y + d * inner;
    int64_t j = 0;
    if (log) {
      for (; j < wv; j += W) ((V::loadu(xr + j) - V::loadu(mx + j)) - V::loadu(sm + j)).store(yr + j);
      for (; j < w; ++j) yr[j] = (xr[j] - mx[j]) - sm[j];
    } else {
      for (; j < wv; j += W) (V::loadu(yr + j) * V::loadu(sm + j)).store(yr + j);
      for (; j < w; ++j) yr[j] *= sm[j];
    }
  }
}

template <typename T>
void softmax_impl(const Tensor& out, const Tensor& self, int64_t outer, int64_t D, int64_t inner, bool log) {
  const T* x = self.data_ptr<T>();
  T* y = out.data_ptr<T>();
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) softmax_row(x + o * D, y + o * D, D, log);
    });
    return;
  }
  const int64_t blocks = divup(inner, kColBlock);
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D * std::min(inner, kColBlock), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, j0 = (t % blocks) * kColBlock;
      const int64_t off = o * D * inner + j0;
      softmax_cols(x + off, y + off, D, inner, std::min(kColBlock, inner - j0), log);
    }
  });
}

void softmax_kernel(const Tensor& out, const Tensor& self, int64_t outer, int64_t D, int64_t inner, bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), log ? "log_softmax" : "softmax",
                                [&] { softmax_impl<scalar_t>(out, self, outer, D, inner, log); });
}

// ---- backward ------------------------------------------------------------------------

template <typename T>
void softmax_backward_row(T* gi, const T* g, const T* y, int64_t n, bool log) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  V acc(T(0));
  int64_t i = 0;
  if (log) {
    for (; i + W <= n; i += W) acc += V::loadu(g + i);
  } else {
    for (; i + W <= n; i += W) acc = vec::fmadd(V::loadu(g + i), V::loadu(y + i), acc);
  }
  T s = acc.reduce_add();
  for (; i < n; ++i) s += log ? g[i] : g[i] * y[i];
  const V vs(s);
  i = 0;
  if (log) {
    for (; i + W <= n; i += W) (V::loadu(g + i) - vexp(V::loadu(y + i)) * vs).store(gi + i);
    for (; i < n; ++i) gi[i] = g[i] - std::exp(y[i]) * s;
  } else {
    for (; i + W <= n; i += W) (V::loadu(y + i) * (V::loadu(g + i) - vs)).store(gi + i);
    for (; i < n; ++i) gi[i] = y[i] * (g[i] - s);
  }
}

template <typename T>
void softmax_backward_cols(T* gi, const T* g, const T* y, int64_t D, int64_t inner, int64_t w, bool log) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  alignas(64) T sm[kColBlock];
  const int64_t wv = w / W * W;
  for (int64_t j = 0; j < w; ++j) sm[j] = T(0);
  for (int64_t d = 0; d < D; ++d) {
    const T* gr = g + d * inner;
    const T* yr = y + d * inner;
    int64_t j = 0;
    if (log) {
      for (; j < wv; j += W) (V::loadu(sm + j) + V::loadu(gr + j)).store(sm + j);
      for (; j < w; ++j) sm[j] += gr[j];
    } else {
      for (; j < wv; j += W) vec::fmadd(V::loadu(gr + j), V::loadu(yr + j), V::loadu(sm + j)).store(sm + j);
      for (; j < w; ++j) sm[j] += gr[j] * yr[j];
    }
  }
  for (int64_t d = 0; d < D; ++d) {
    const T* gr = g + d * inner;
    const T* yr = y + d * inner;
    T* out = gi + d * inner;
    int64_t j = 0;
    if (log) {
      for (; j < wv; j += W) (V::loadu(gr + j) - vexp(V::loadu(yr + j)) * V::loadu(sm + j)).store(out + j);
      for (; j < w; ++j) out[j] = gr[j] - std::exp(yr[j]) * sm[j];
    } else {
      for (; j < wv; j += W) (V::loadu(yr + j) * (V::loadu(gr + j) - V::loadu(sm + j))).store(out + j);
      for (; j < w; ++j) out[j] = yr[j] * (gr[j] - sm[j]);
    }
  }
}

template <typename T>
void softmax_backward_impl(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output, int64_t outer,
                           int64_t D, int64_t inner, bool log) {
  T* gi = grad_input.data_ptr<T>();
  const T* g = grad_output.data_ptr<T>();
  const T* y = output.data_ptr<T>();
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1));
    parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) softmax_backward_row(gi + o * D, g + o * D, y + o * D, D, log);
    });
    return;
  }
  const int64_t blocks = divup(inner, kColBlock);
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D * std::min(inner, kColBlock), 1));
  parallel_for(0, outer * blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, j0 = (t % blocks) * kColBlock;
      const int64_t off = o * D * inner + j0;
      softmax_backward_cols(gi + off, g + off, y + off, D, inner, std::min(kColBlock, inner - j0), log);
    }
  });
}

void softmax_backward_kernel(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output, int64_t outer,
                             int64_t D, int64_t inner, bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(output.dtype(), log ? "log_softmax_backward" : "softmax_backward", [&] {
    softmax_backward_impl<scalar_t>(grad_input, grad_output, output, outer, D, inner, log);
  });
}

// ---- cross_entropy: log_softmax + nll_loss fused over rows (see ../SoftMax.h) --------------

template <typename T>
void cross_entropy_impl(const CrossEntropyRows& r, T* stats, double* nll, double* smooth) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const T* x = static_cast<const T*>(r.x);
  const T* w = static_cast<const T*>(r.weight);
  const int64_t C = r.C;
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(C, 1));
  parallel_for(0, r.N, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T* xr = x + i * C;
      // log_softmax's arithmetic (softmax_row), so logp is bit for bit the unfused one
      const T m = row_max(xr, C);
      const T ls = std::log(row_sum_exp<T>(xr, nullptr, C, m));
      stats[2 * i] = m;
      stats[2 * i + 1] = ls;
      const int64_t t = r.target[i];
      if (t == r.ignore_index) {
        nll[i] = 0;
        if (smooth != nullptr) smooth[i] = 0;
        continue;
      }
      const T lp = (xr[t] - m) - ls;
      nll[i] = -(w != nullptr ? static_cast<double>(w[t]) : 1.0) * static_cast<double>(lp);
      if (smooth == nullptr) continue;
      const V vm(m), vls(ls);
      V acc(T(0));
      int64_t c = 0;
      for (; c + W <= C; c += W) {
        const V l = (V::loadu(xr + c) - vm) - vls;
        acc = w != nullptr ? acc + l * V::loadu(w + c) : acc + l;
      }
      T s = acc.reduce_add();
      for (; c < C; ++c) s += w != nullptr ? ((xr[c] - m) - ls) * w[c] : (xr[c] - m) - ls;
      smooth[i] = -static_cast<double>(s);
    }
  });
}

template <typename T>
void cross_entropy_backward_impl(const CrossEntropyRows& r, const T* stats, const double* coef, const double* tgt,
                                 const double* uni, T* grad) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const T* x = static_cast<const T*>(r.x);
  const T* w = static_cast<const T*>(r.weight);
  const int64_t C = r.C;
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(C, 1));
  parallel_for(0, r.N, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T* xr = x + i * C;
      T* gr = grad + i * C;
      const T m = stats[2 * i], ls = stats[2 * i + 1];
      const T k = static_cast<T>(coef[i]), u = static_cast<T>(uni[i]);
      const V vm(m), vls(ls), vk(k), vu(u);
      int64_t c = 0;
      // p = exp(logp) with logp as log_softmax stores it, then p * k (- u w): the unfused
      // chain's exp(logp) * (sum of nll's gradient) term, rounded the same way
      if (u == T(0)) {
        for (; c + W <= C; c += W) (vexp((V::loadu(xr + c) - vm) - vls) * vk).store(gr + c);
        for (; c < C; ++c) gr[c] = std::exp((xr[c] - m) - ls) * k;
      } else if (w != nullptr) {
        for (; c + W <= C; c += W) {
          (vexp((V::loadu(xr + c) - vm) - vls) * vk - vu * V::loadu(w + c)).store(gr + c);
        }
        for (; c < C; ++c) gr[c] = std::exp((xr[c] - m) - ls) * k - u * w[c];
      } else {
        for (; c + W <= C; c += W) (vexp((V::loadu(xr + c) - vm) - vls) * vk - vu).store(gr + c);
        for (; c < C; ++c) gr[c] = std::exp((xr[c] - m) - ls) * k - u;
      }
      const int64_t t = r.target[i];
      if (t != r.ignore_index) gr[t] -= static_cast<T>(tgt[i]);
    }
  });
}

void cross_entropy_kernel(ScalarType dtype, const CrossEntropyRows& rows, void* stats, double* nll, double* smooth) {
  if (dtype == ScalarType::Double) {
    cross_entropy_impl<double>(rows, static_cast<double*>(stats), nll, smooth);
  } else {
    cross_entropy_impl<float>(rows, static_cast<float*>(stats), nll, smooth);
  }
}

void cross_entropy_backward_kernel(ScalarType dtype, const CrossEntropyRows& rows, const void* stats,
                                   const double* coef, const double* tgt, const double* uni, void* grad) {
  if (dtype == ScalarType::Double) {
    cross_entropy_backward_impl<double>(rows, static_cast<const double*>(stats), coef, tgt, uni,
                                        static_cast<double*>(grad));
  } else {
    cross_entropy_backward_impl<float>(rows, static_cast<const float*>(stats), coef, tgt, uni,
                                       static_cast<float*>(grad));
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(softmax_stub, &softmax_kernel);
REGISTER_DISPATCH(softmax_backward_stub, &softmax_backward_kernel);
REGISTER_DISPATCH(cross_entropy_stub, &cross_entropy_kernel);
REGISTER_DISPATCH(cross_entropy_backward_stub, &cross_entropy_backward_kernel);

}  // namespace ember::at::native
