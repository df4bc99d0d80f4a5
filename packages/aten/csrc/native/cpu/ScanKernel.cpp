// CPU kernels of the scans. A row (the scanned dim) is scanned in order; when the
// scanned dim is outer and the innermost other dim is contiguous, blocks of
// kCols adjacent columns are scanned together (vectorised across the columns).
// Rows / column blocks run in parallel.
//
// cumsum/cumprod accumulate in double for float (as PyTorch on CPU), float for
// half/bfloat16, wrapping int64 for integers. logcumsumexp adds in log space
// (max + log1p(exp(min - max))). cummax/cummin follow PyTorch: a NaN, or a value
// >= (<=) the running extreme, becomes the new extreme (ties take the later index).
#include <cmath>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/native/cpu/Reduce.h>

#include "../Scan.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

constexpr int64_t kCols = 64;

template <typename T>
constexpr bool is_reduced_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;
template <typename T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_v<T>;

// bool data is 0/1 bytes: the uint8 kernels compute the same scans.
inline ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

template <typename Op>
void run_scan(const ScanPlan& p, const Op& op) {
  using in_t = typename Op::input_t;
  using out_t = typename Op::out_t;
  if (p.rows == 0 || p.n == 0) return;
  const in_t* in = static_cast<const in_t*>(p.in);
  out_t* out = static_cast<out_t*>(p.out);
  const IntArrayRef bs(p.batch_sizes), bin(p.batch_in_strides), bout(p.batch_out_strides);
  const bool columns = !bs.empty() && bin[0] == 1 && bout[0] == 1 && p.in_stride != 1;
  if (columns) {
    const int64_t M = bs[0];
    const int64_t nblk = divup(M, kCols);
    const int64_t items = (p.rows / M) * nblk;
    const IntArrayRef bs1 = bs.slice(1), bin1 = bin.slice(1), bout1 = bout.slice(1);
    parallel_for(0, items, std::max<int64_t>(1, GRAIN_SIZE / (p.n * kCols)), [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t c0 = (it % nblk) * kCols;
        IndexWalker w(bs1, bin1, bout1, it / nblk);
        op.cols(in + w.off0() + c0, p.n, p.in_stride, std::min(kCols, M - c0), out + w.off1() + c0, p.out_stride,
                p.indices ? p.indices + w.off1() + c0 : nullptr);
      }
    });
    return;
  }
  parallel_for(0, p.rows, std::max<int64_t>(1, GRAIN_SIZE / p.n), [&](int64_t b, int64_t e) {
    IndexWalker w(bs, bin, bout, b);
    for (int64_t r = b; r < e; ++r, w.next()) {
      op.row(in + w.off0(), p.n, p.in_stride, out + w.off1(), p.out_stride, p.indices ? p.indices + w.off1() : nullptr);
    }
  });
}

// ---- cumsum / cumprod ----------------------------------------------------------

template <typename scalar_t, bool kProd>
struct CumOps {
  static constexpr bool kFloat = is_floating_v<scalar_t>;
  using input_t = scalar_t;
  using out_t = std::conditional_t<kFloat, scalar_t, int64_t>;
  using acc_t = std::conditional_t<kFloat, std::conditional_t<is_reduced_v<scalar_t>, float, double>, uint64_t>;

  static acc_t conv(scalar_t v) {
    if constexpr (is_reduced_v<scalar_t>)
      return static_cast<float>(v);
    else if constexpr (kFloat)
      return static_cast<double>(v);
    else
      return static_cast<acc_t>(static_cast<int64_t>(v));
  }
  static out_t proj(acc_t a) {
    if constexpr (is_reduced_v<scalar_t>)
      return scalar_t(a);
    else if constexpr (kFloat)
      return static_cast<scalar_t>(a);
    else
      return static_cast<int64_t>(a);
  }
  static acc_t apply(acc_t a, acc_t x) {
    if constexpr (kProd)
      return a * x;
    else
      return a + x;
  }
  void row(const scalar_t* x, int64_t n, int64_t s, out_t* y, int64_t os, int64_t*) const {
    acc_t a = kProd ? acc_t(1) : acc_t(0);
    for (int64_t i = 0; i < n; ++i) {
      a = apply(a, conv(x[i * s]));
      y[i * os] = proj(a);
    }
  }
  void cols(const scalar_t* x, int64_t n, int64_t s, int64_t m, out_t* y, int64_t os, int64_t*) const {
    acc_t a[kCols];
    for (int64_t j = 0; j < m; ++j) a[j] = kProd ? acc_t(1) : acc_t(0);
    for (int64_t i = 0; i < n; ++i) {
      const scalar_t* xr = x + i * s;
      out_t* yr = y + i * os;
      for (int64_t j = 0; j < m; ++j) {
        a[j] = apply(a[j], conv(xr[j]));
        yr[j] = proj(a[j]);
      }
    }
  }
};

void cumsum_kernel(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cumsum",
                                    [&] { run_scan(p, CumOps<scalar_t, false>{}); });
}
void cumprod_kernel(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cumprod",
                                    [&] { run_scan(p, CumOps<scalar_t, true>{}); });
}

// ---- logcumsumexp ----------------------------------------------------------------

template <typename T>
inline T log_add_exp(T a, T b) {
  if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  const T mx = a > b ? a : b;
  const T mn = a > b ? b : a;
  if (std::isinf(mx)) return mx;  // both -inf, or one +inf
  return mx + std::log1p(std::exp(mn - mx));
}

template <typename scalar_t>
struct LogCumSumExpOps {
  using input_t = scalar_t;
  using out_t = scalar_t;
  using acc_t = std::conditional_t<is_reduced_v<scalar_t>, float, double>;
  static acc_t conv(scalar_t v) {
    return static_cast<acc_t>(static_cast<std::conditional_t<is_reduced_v<scalar_t>, float, scalar_t>>(v));
  }
  static out_t proj(acc_t a) {
    if constexpr (is_reduced_v<scalar_t>)
      return scalar_t(a);
    else
      return static_cast<scalar_t>(a);
  }
  void row(const scalar_t* x, int64_t n, int64_t s, out_t* y, int64_t os, int64_t*) const {
    acc_t a = -std::numeric_limits<acc_t>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      a = log_add_exp(a, conv(x[i * s]));
      y[i * os] = proj(a);
    }
  }
  void cols(const scalar_t* x, int64_t n, int64_t s, int64_t m, out_t* y, int64_t os, int64_t*) const {
    acc_t a[kCols];
    for (int64_t j = 0; j < m; ++j) a[j] = -std::numeric_limits<acc_t>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        a[j] = log_add_exp(a[j], conv(x[i * s + j]));
        y[i * os + j] = proj(a[j]);
      }
    }
  }
};

void logcumsumexp_kernel(const ScanPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "logcumsumexp", [&] { run_scan(p, LogCumSumExpOps<scalar_t>{}); });
}

// ---- cummax / cummin -----------------------------------------------------------------

template <typename scalar_t, bool kMax>
struct CumExtremeOps {
  using input_t = scalar_t;
  using out_t = scalar_t;
  using val_t = std::conditional_t<is_reduced_v<scalar_t>, float, scalar_t>;
  static bool take(val_t x, val_t v) {
    const bool ge = kMax ? (x >= v) : (x <= v);
    if constexpr (is_floating_v<scalar_t>)
      return x != x || (v == v && ge);
    else
      return ge;
  }
  void row(const scalar_t* x, int64_t n, int64_t s, out_t* y, int64_t os, int64_t* ind) const {
    scalar_t best = x[0];
    int64_t idx = 0;
    for (int64_t i = 0; i < n; ++i) {
      const scalar_t xi = x[i * s];
      if (take(static_cast<val_t>(xi), static_cast<val_t>(best))) {
        best = xi;
        idx = i;
      }
      y[i * os] = best;
      ind[i * os] = idx;
    }
  }
  void cols(const scalar_t* x, int64_t n, int64_t s, int64_t m, out_t* y, int64_t os, int64_t* ind) const {
    scalar_t best[kCols];
    int64_t idx[kCols];
    for (int64_t j = 0; j < m; ++j) {
      best[j] = x[j];
      idx[j] = 0;
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        const scalar_t xi = x[i * s + j];
        if (take(static_cast<val_t>(xi), static_cast<val_t>(best[j]))) {
          best[j] = xi;
          idx[j] = i;
        }
        y[i * os + j] = best[j];
        ind[i * os + j] = idx[j];
      }
    }
  }
};

void cummax_kernel(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cummax",
                                    [&] { run_scan(p, CumExtremeOps<scalar_t, true>{}); });
}
void cummin_kernel(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cummin",
                                    [&] { run_scan(p, CumExtremeOps<scalar_t, false>{}); });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(cumsum_stub, &cumsum_kernel);
REGISTER_DISPATCH(cumprod_stub, &cumprod_kernel);
REGISTER_DISPATCH(logcumsumexp_stub, &logcumsumexp_kernel);
REGISTER_DISPATCH(cummax_stub, &cummax_kernel);
REGISTER_DISPATCH(cummin_stub, &cummin_kernel);

}  // namespace ember::at::native
