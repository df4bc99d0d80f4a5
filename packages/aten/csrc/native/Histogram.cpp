// bincount and histc. Counts are gathered per fixed-size chunk (in parallel) and the
// chunk histograms are added in chunk order, so results do not depend on the
// number of threads.
#include <cmath>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

#include "Histogram.h"
#include "ReduceOps.h"

namespace ember::at::native {

namespace {

constexpr int64_t kHistChunk = 1 << 16;

template <typename scalar_t>
int64_t max_value(const scalar_t* x, int64_t n) {
  int64_t m = -1;
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(x[i] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    m = std::max<int64_t>(m, static_cast<int64_t>(x[i]));
  }
  return m;
}

}  // namespace

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  const bool has_w = check_bincount_args(self, weights, minlength);
  const Tensor x = self.contiguous();
  const int64_t n = x.numel();
  int64_t len = 0;
  EMBER_DISPATCH_INTEGRAL_TYPES(x.dtype(), "bincount", [&] {
    len = std::max(max_value(static_cast<const scalar_t*>(x.data_ptr()), n) + 1, minlength);
  });
  if (!has_w) {
    Tensor out = zeros({len}, ScalarType::Long, self.device());
    int64_t* o = out.data_ptr<int64_t>();
    EMBER_DISPATCH_INTEGRAL_TYPES(x.dtype(), "bincount", [&] {
      const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
      for (int64_t i = 0; i < n; ++i) ++o[static_cast<int64_t>(p[i])];
    });
    return out;
  }
  const ScalarType wt = bincount_weight_dtype(*weights);
  const Tensor w = weights->to(wt).contiguous();
  Tensor out = zeros({len}, wt, self.device());
  EMBER_DISPATCH_FLOATING_TYPES(wt, "bincount", [&] {
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    const scalar_t* wp = static_cast<const scalar_t*>(w.data_ptr());
    EMBER_DISPATCH_INTEGRAL_TYPES(x.dtype(), "bincount", [&] {
      using index_t = scalar_t;
      const index_t* p = static_cast<const index_t*>(x.data_ptr());
      for (int64_t i = 0; i < n; ++i) o[static_cast<int64_t>(p[i])] += wp[i];
    });
  });
  return out;
}

Tensor histc_out(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, const Tensor& out) {
  double lo = min.toDouble(), hi = max.toDouble();
  check_histc_args(self, bins, lo, hi, out);
  const Tensor x = self.contiguous();
  const int64_t n = x.numel();
  auto o = prepare_output(out, {bins}, self.dtype(), self.dtype(), self);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(x.dtype(), "histc", [&] {
    using T = opmath_t<scalar_t>;
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    if (lo == hi && n > 0) {  // the data's range; a NaN makes it NaN (PyTorch's min()/max()), refused below
      bool any = false;
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(static_cast<T>(p[i]));
        if (v != v) {
          lo = hi = v;
          break;
        }
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
      }
    }
    widen_histc_range(lo, hi);
    const T tlo = static_cast<T>(lo), thi = static_cast<T>(hi);
    const int64_t nchunks = std::max<int64_t>(1, divup(n, kHistChunk));
    std::vector<int64_t> counts(static_cast<size_t>(nchunks * bins), 0);
    parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t* h = counts.data() + c * bins;
        const int64_t e = std::min(n, (c + 1) * kHistChunk);
        for (int64_t i = c * kHistChunk; i < e; ++i) {
          const int64_t b = histc_bin(static_cast<T>(p[i]), tlo, thi, bins);
          if (b >= 0) ++h[b];
        }
      }
    });
    scalar_t* r = static_cast<scalar_t*>(o.buffer.data_ptr());
    for (int64_t b = 0; b < bins; ++b) {
      int64_t total = 0;
      for (int64_t c = 0; c < nchunks; ++c) total += counts[c * bins + b];
      r[b] = static_cast<scalar_t>(static_cast<T>(total));
    }
  });
  o.finish();
  return o.result;
}

}  // namespace ember::at::native
