// CPU kernels of batch / layer / group / RMS norm, float32 and float64, vectorised
// along contiguous runs with Vectorized<T>. Sums of a run are taken in T lanes and
// added into double accumulators run by run, so long reductions keep their precision.
// Results do not depend on the number of threads: the work is cut by sizes only.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../Normalization.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

namespace {

using vec::Vectorized;

// ---- runs ------------------------------------------------------------------------------

// Four vector accumulators: an add's latency is several cycles, so one or two chains would
// leave the adders idle on a row that sits in L1.
template <typename T>
double run_sum(const T* x, int64_t n) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  V a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 += V::loadu(x + i);
    a1 += V::loadu(x + i + W);
    a2 += V::loadu(x + i + 2 * W);
    a3 += V::loadu(x + i + 3 * W);
  }
  for (; i + 2 * W <= n; i += 2 * W) {
    a0 += V::loadu(x + i);
    a1 += V::loadu(x + i + W);
  }
  double s = static_cast<double>(((a0 + a2) + (a1 + a3)).reduce_add());
  for (; i < n; ++i) s += x[i];
  return s;
}

// sum of (x - m)^2
template <typename T>
double run_sq(const T* x, int64_t n, T m) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const V vm(m);
  V a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    const V d0 = V::loadu(x + i) - vm, d1 = V::loadu(x + i + W) - vm;
    const V d2 = V::loadu(x + i + 2 * W) - vm, d3 = V::loadu(x + i + 3 * W) - vm;
    a0 = vec::fmadd(d0, d0, a0);
    a1 = vec::fmadd(d1, d1, a1);
    a2 = vec::fmadd(d2, d2, a2);
    a3 = vec::fmadd(d3, d3, a3);
  }
  for (; i + 2 * W <= n; i += 2 * W) {
    const V d0 = V::loadu(x + i) - vm, d1 = V::loadu(x + i + W) - vm;
    a0 = vec::fmadd(d0, d0, a0);
    a1 = vec::fmadd(d1, d1, a1);
  }
  double s = static_cast<double>(((a0 + a2) + (a1 + a3)).reduce_add());
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(m);
    s += d * d;
  }
  return s;
}

// sum of g and of (x - m) * g
template <typename T>
void run_dot(const T* g, const T* x, int64_t n, T m, double& sg, double& dot) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const V vm(m);
  V a(T(0)), d(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V gv = V::loadu(g + i);
    a += gv;
    d = vec::fmadd(V::loadu(x + i) - vm, gv, d);
  }
  double s1 = static_cast<double>(a.reduce_add()), s2 = static_cast<double>(d.reduce_add());
  for (; i < n; ++i) {
    s1 += g[i];
    s2 += (static_cast<double>(x[i]) - static_cast<double>(m)) * static_cast<double>(g[i]);
  }
  sg += s1;
  dot += s2;
}

template <typename T>
void run_affine(T* out, const T* x, int64_t n, T a, T b) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const V va(a), vb(b);
  int64_t i = 0;
  for (; i + W <= n; i += W) vec::fmadd(V::loadu(x + i), va, vb).store(out + i);
  for (; i < n; ++i) out[i] = x[i] * a + b;
}

template <typename T>
void run_affine2(T* out, const T* g, const T* x, int64_t n, T A, T B, T K) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const V va(A), vb(B), vk(K);
  int64_t i = 0;
  for (; i + W <= n; i += W) vec::fmadd(V::loadu(g + i), va, vec::fmadd(V::loadu(x + i), vb, vk)).store(out + i);
  for (; i < n; ++i) out[i] = g[i] * A + x[i] * B + K;
}

// ---- channel layout [N, C, S] -----------------------------------------------------------

constexpr int64_t kCols = 64;  // columns per task when S == 1 ([N, C] inputs)

template <typename T>
void channel_mean_var_impl(const Tensor& xt, int64_t N, int64_t C, int64_t S, double* mean, double* var) {
  const T* x = xt.data_ptr<T>();
  const double n = static_cast<double>(N * S);
  if (S == 1) {
    // [N, C]: columns, a block of kCols at a time, walking down the rows
    const int64_t blocks = divup(C, kCols);
    parallel_for(0, blocks, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(N * kCols, 1)),
                 [&](int64_t b, int64_t e) {
                   double s[kCols];
                   for (int64_t blk = b; blk < e; ++blk) {
                     const int64_t c0 = blk * kCols, w = std::min(kCols, C - c0);
                     for (int64_t j = 0; j < w; ++j) s[j] = 0;
                     for (int64_t r = 0; r < N; ++r)
                       for (int64_t j = 0; j < w; ++j) s[j] += static_cast<double>(x[r * C + c0 + j]);
                     for (int64_t j = 0; j < w; ++j) mean[c0 + j] = s[j] / n;
                     for (int64_t j = 0; j < w; ++j) s[j] = 0;
                     for (int64_t r = 0; r < N; ++r)
                       for (int64_t j = 0; j < w; ++j) {
                         const double d = static_cast<double>(x[r * C + c0 + j]) - mean[c0 + j];
                         s[j] += d * d;
                       }
                     for (int64_t j = 0; j < w; ++j) var[c0 + j] = s[j] / n;
                   }
                 });
    return;
  }
  parallel_for(0, C, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(N * S, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0;
      for (int64_t i = 0; i < N; ++i) s += run_sum(x + (i * C + c) * S, S);
      const double m = s / n;
      double q = 0;
      for (int64_t i = 0; i < N; ++i) q += run_sq(x + (i * C + c) * S, S, static_cast<T>(m));
      mean[c] = m;
      var[c] = q / n;
    }
  });
}

void channel_mean_var_kernel(const Tensor& x, int64_t N, int64_t C, int64_t S, double* mean, double* var) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm",
                                [&] { channel_mean_var_impl<scalar_t>(x, N, C, S, mean, var); });
}

template <typename T>
void channel_affine_impl(const Tensor& ot, const Tensor& xt, int64_t N, int64_t C, int64_t S, const double* alpha,
                         const double* beta) {
  const T* x = xt.data_ptr<T>();
  T* out = ot.data_ptr<T>();
  if (S == 1) {
    std::vector<T> a(alpha, alpha + C), bb(beta, beta + C);
    parallel_for(0, N, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * C;
        T* orow = out + r * C;
        for (int64_t j = 0; j < C; ++j) orow[j] = xr[j] * a[j] + bb[j];
      }
    });
    return;
  }
  parallel_for(0, N * C, std::max<int64_t>(1, GRAIN_SIZE / S), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = p % C;
      run_affine(out + p * S, x + p * S, S, static_cast<T>(alpha[c]), static_cast<T>(beta[c]));
    }
  });
}

void channel_affine_kernel(const Tensor& out, const Tensor& x, int64_t N, int64_t C, int64_t S, const double* alpha,
                           const double* beta) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm",
                                [&] { channel_affine_impl<scalar_t>(out, x, N, C, S, alpha, beta); });
}

template <typename T>
void channel_backward_reduce_impl(const Tensor& gt, const Tensor& xt, int64_t N, int64_t C, int64_t S,
                                  const double* mean, double* sum_g, double* dot) {
  const T* g = gt.data_ptr<T>();
  const T* x = xt.data_ptr<T>();
  if (S == 1) {
    const int64_t blocks = divup(C, kCols);
    parallel_for(0, blocks, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(N * kCols, 1)),
                 [&](int64_t b, int64_t e) {
                   double s1[kCols], s2[kCols];
                   for (int64_t blk = b; blk < e; ++blk) {
                     const int64_t c0 = blk * kCols, w = std::min(kCols, C - c0);
                     for (int64_t j = 0; j < w; ++j) s1[j] = s2[j] = 0;
                     for (int64_t r = 0; r < N; ++r)
                       for (int64_t j = 0; j < w; ++j) {
                         const double gv = static_cast<double>(g[r * C + c0 + j]);
                         s1[j] += gv;
                         s2[j] += (static_cast<double>(x[r * C + c0 + j]) - mean[c0 + j]) * gv;
                       }
                     for (int64_t j = 0; j < w; ++j) {
                       sum_g[c0 + j] = s1[j];
                       dot[c0 + j] = s2[j];
                     }
                   }
                 });
    return;
  }
  parallel_for(0, C, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(N * S, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s1 = 0, s2 = 0;
      for (int64_t i = 0; i < N; ++i) {
        const int64_t off = (i * C + c) * S;
        run_dot(g + off, x + off, S, static_cast<T>(mean[c]), s1, s2);
      }
      sum_g[c] = s1;
      dot[c] = s2;
    }
  });
}

void channel_backward_reduce_kernel(const Tensor& g, const Tensor& x, int64_t N, int64_t C, int64_t S,
                                    const double* mean, double* sum_g, double* dot) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_backward",
                                [&] { channel_backward_reduce_impl<scalar_t>(g, x, N, C, S, mean, sum_g, dot); });
}

template <typename T>
void channel_affine2_impl(const Tensor& ot, const Tensor& gt, const Tensor& xt, int64_t N, int64_t C, int64_t S,
                          const double* A, const double* B, const double* K) {
  const T* g = gt.data_ptr<T>();
  const T* x = xt.data_ptr<T>();
  T* out = ot.data_ptr<T>();
  if (S == 1) {
    std::vector<T> a(A, A + C), bb(B, B + C), k(K, K + C);
    parallel_for(0, N, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        for (int64_t j = 0; j < C; ++j) out[r * C + j] = g[r * C + j] * a[j] + x[r * C + j] * bb[j] + k[j];
    });
    return;
  }
  parallel_for(0, N * C, std::max<int64_t>(1, GRAIN_SIZE / S), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = p % C;
      run_affine2(out + p * S, g + p * S, x + p * S, S, static_cast<T>(A[c]), static_cast<T>(B[c]),
                  static_cast<T>(K[c]));
    }
  });
}

void channel_affine2_kernel(const Tensor& out, const Tensor& g, const Tensor& x, int64_t N, int64_t C, int64_t S,
                            const double* A, const double* B, const double* K) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_backward",
                                [&] { channel_affine2_impl<scalar_t>(out, g, x, N, C, S, A, B, K); });
}

// ---- row layout [M, D] ----------------------------------------------------------------------

template <typename T>
void row_norm_impl(const Tensor& ot, const Tensor& mt, const Tensor& rt, const Tensor& xt, const Tensor& wt,
                   const Tensor& bt, int64_t M, int64_t D, double eps, bool rms) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const T* x = xt.data_ptr<T>();
  T* out = ot.defined() ? ot.data_ptr<T>() : nullptr;
  T* mean = mt.defined() ? mt.data_ptr<T>() : nullptr;
  T* rstd = rt.data_ptr<T>();
  const T* w = wt.defined() ? wt.data_ptr<T>() : nullptr;
  const T* b = bt.defined() ? bt.data_ptr<T>() : nullptr;
  parallel_for(0, M, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(D, 1)), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      const T* xr = x + r * D;
      double m = 0, var;
      if (rms) {
        var = run_sq(xr, D, T(0)) / static_cast<double>(D);
      } else {
        m = run_sum(xr, D) / static_cast<double>(D);
        var = run_sq(xr, D, static_cast<T>(m)) / static_cast<double>(D);
      }
      const double rs = 1.0 / std::sqrt(var + eps);
      if (mean) mean[r] = static_cast<T>(m);
      rstd[r] = static_cast<T>(rs);
      if (!out) continue;
      T* orow = out + r * D;
      // out = (x - m) * rs * w + b = x * (rs w) + (b - m rs w)
      const T a = static_cast<T>(rs), c = static_cast<T>(-m * rs);
      if (!w && !b) {
        run_affine(orow, xr, D, a, c);
        continue;
      }
      const V va(a), vc(c);
      int64_t i = 0;
      for (; i + W <= D; i += W) {
        V y = vec::fmadd(V::loadu(xr + i), va, vc);
        if (w) y = y * V::loadu(w + i);
        if (b) y = y + V::loadu(b + i);
        y.store(orow + i);
      }
      for (; i < D; ++i) {
        T y = xr[i] * a + c;
        if (w) y = y * w[i];
        if (b) y = y + b[i];
        orow[i] = y;
      }
    }
  });
}

void row_norm_kernel(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x, const Tensor& w,
                     const Tensor& b, int64_t M, int64_t D, double eps, bool rms) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), rms ? "rms_norm" : "layer_norm",
                                [&] { row_norm_impl<scalar_t>(out, mean, rstd, x, w, b, M, D, eps, rms); });
}

// Rows are cut into a number of chunks that depends on M only; each chunk keeps its own
// column partials of gw / gb, summed in chunk order at the end.
template <typename T>
void row_norm_backward_impl(const Tensor& git, const Tensor& gwt, const Tensor& gbt, const Tensor& gt, const Tensor& xt,
                            const Tensor& mt, const Tensor& rt, const Tensor& wt, int64_t M, int64_t D, bool rms) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const T* g = gt.data_ptr<T>();
  const T* x = xt.data_ptr<T>();
  const T* mean = mt.defined() ? mt.data_ptr<T>() : nullptr;
  const T* rstd = rt.data_ptr<T>();
  const T* w = wt.defined() ? wt.data_ptr<T>() : nullptr;
  T* gi = git.defined() ? git.data_ptr<T>() : nullptr;
  const bool want_gw = gwt.defined(), want_gb = gbt.defined();
  const int64_t nchunks = std::max<int64_t>(1, std::min<int64_t>(M, 32));
  const int64_t rows_per = divup(M, nchunks);
  std::vector<T> pw(want_gw ? nchunks * D : 0), pb(want_gb ? nchunks * D : 0);
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(rows_per * D, 1));
  parallel_for(0, nchunks, grain, [&](int64_t cb, int64_t ce) {
    std::vector<T> dx(gi ? D : 0);
    for (int64_t ch = cb; ch < ce; ++ch) {
      T* accw = want_gw ? pw.data() + ch * D : nullptr;
      T* accb = want_gb ? pb.data() + ch * D : nullptr;
      if (accw) std::fill(accw, accw + D, T(0));
      if (accb) std::fill(accb, accb + D, T(0));
      const int64_t r1 = std::min(M, (ch + 1) * rows_per);
      for (int64_t r = ch * rows_per; r < r1; ++r) {
        const T* gr = g + r * D;
        const T* xr = x + r * D;
        const T m = mean ? mean[r] : T(0);
        const T rs = rstd[r];
        const V vm(m), vr(rs);
        if (accw || accb) {
          int64_t i = 0;
          for (; i + W <= D; i += W) {
            const V gv = V::loadu(gr + i);
            if (accw) vec::fmadd(gv, (V::loadu(xr + i) - vm) * vr, V::loadu(accw + i)).store(accw + i);
            if (accb) (V::loadu(accb + i) + gv).store(accb + i);
          }
          for (; i < D; ++i) {
            if (accw) accw[i] += gr[i] * (xr[i] - m) * rs;
            if (accb) accb[i] += gr[i];
          }
        }
        if (!gi) continue;
        // dxhat = g * w; s1 = sum dxhat; s2 = sum dxhat * (x - m)
        T* d = dx.data();
        V a1(T(0)), a2(T(0));
        int64_t i = 0;
        for (; i + W <= D; i += W) {
          V dv = V::loadu(gr + i);
          if (w) dv = dv * V::loadu(w + i);
          dv.store(d + i);
          a1 += dv;
          a2 = vec::fmadd(dv, V::loadu(xr + i) - vm, a2);
        }
        double s1 = static_cast<double>(a1.reduce_add()), s2 = static_cast<double>(a2.reduce_add());
        for (; i < D; ++i) {
          d[i] = w ? gr[i] * w[i] : gr[i];
          s1 += d[i];
          s2 += static_cast<double>(d[i]) * (static_cast<double>(xr[i]) - static_cast<double>(m));
        }
        // gi = rs * (dxhat - s1 / D - (x - m) * rs^2 * s2 / D) = dxhat * rs + x * B + K
        const double rsd = static_cast<double>(rs), inv = 1.0 / static_cast<double>(D);
        const double B = -rsd * rsd * rsd * s2 * inv;
        const double K = (rms ? 0.0 : -rsd * s1 * inv) - static_cast<double>(m) * B;
        const V vb(static_cast<T>(B)), vk(static_cast<T>(K));
        T* out = gi + r * D;
        i = 0;
        for (; i + W <= D; i += W) vec::fmadd(V::loadu(d + i), vr, vec::fmadd(V::loadu(xr + i), vb, vk)).store(out + i);
        for (; i < D; ++i) out[i] = d[i] * rs + xr[i] * static_cast<T>(B) + static_cast<T>(K);
      }
    }
  });
  if (want_gw) {
    T* o = gwt.data_ptr<T>();
    for (int64_t i = 0; i < D; ++i) {
      double s = 0;
      for (int64_t ch = 0; ch < nchunks; ++ch) s += pw[ch * D + i];
      o[i] = static_cast<T>(s);
    }
  }
  if (want_gb) {
    T* o = gbt.data_ptr<T>();
    for (int64_t i = 0; i < D; ++i) {
      double s = 0;
      for (int64_t ch = 0; ch < nchunks; ++ch) s += pb[ch * D + i];
      o[i] = static_cast<T>(s);
    }
  }
}

void row_norm_backward_kernel(const Tensor& gi, const Tensor& gw, const Tensor& gb, const Tensor& g, const Tensor& x,
                              const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t M, int64_t D, bool rms) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), rms ? "rms_norm_backward" : "layer_norm_backward",
                                [&] { row_norm_backward_impl<scalar_t>(gi, gw, gb, g, x, mean, rstd, w, M, D, rms); });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(channel_mean_var_stub, &channel_mean_var_kernel);
REGISTER_DISPATCH(channel_affine_stub, &channel_affine_kernel);
REGISTER_DISPATCH(channel_backward_reduce_stub, &channel_backward_reduce_kernel);
REGISTER_DISPATCH(channel_affine2_stub, &channel_affine2_kernel);
REGISTER_DISPATCH(row_norm_stub, &row_norm_kernel);
REGISTER_DISPATCH(row_norm_backward_stub, &row_norm_backward_kernel);

}  // namespace ember::at::native
