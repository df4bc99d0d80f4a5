// CPU pooling kernels (see ../Pooling.h for the layout, index and dtype rules).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

#include "../Pooling.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }  // a >= 0, b > 0

// Kernel offsets [lo, hi) whose element start + k * dil lies in [0, size).
inline void window_range(int64_t start, int64_t size, int64_t kernel, int64_t dil, int64_t& lo, int64_t& hi) {
  lo = start < 0 ? ceil_div(-start, dil) : 0;
  hi = start >= size ? 0 : std::min<int64_t>(kernel, (size - 1 - start) / dil + 1);
  if (hi < lo) hi = lo;
}

template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(work_per_plane, 1));
}

// ---- max pooling --------------------------------------------------------------------------

// The first element wins ties; a NaN wins over everything (later NaNs too), as PyTorch's.
template <typename T>
inline void take_max(T v, int64_t i, T& best, int64_t& best_i) {
  if (v > best || is_nan(v)) {
    best = v;
    best_i = i;
  }
}

// Output columns [lo, hi) of one row whose windows lie wholly inside [0, size): their
// start ow * stride - pad >= 0 and their last element start + (kernel - 1) dil < size.
inline void interior_columns(int64_t out, int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dil,
                             int64_t& lo, int64_t& hi) {
  lo = std::min(ceil_div(pad, stride), out);
  const int64_t last = size - 1 - (kernel - 1) * dil + pad;  // the largest start + pad that fits
  hi = last < 0 ? lo : std::max(lo, std::min(out, last / stride + 1));
}

template <typename T>
void max_pool_impl(const T* input, T* output, int64_t* indices, int64_t planes, const PoolGeometry& g) {
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t kW = g.kernel[2], sW = g.stride[2], pW = g.padding[2], dW = g.dilation[2];
  const int64_t in_n = g.input_numel(), out_n = g.output_numel();
  const T lowest = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  // Columns whose window is inside the row skip the clipping: their inner loop has a fixed
  // trip count (kW), no per-element bounds, and starts from the window's first element.
  int64_t ow_lo, ow_hi;
  interior_columns(oW, iW, kW, sW, pW, dW, ow_lo, ow_hi);
  parallel_for(0, planes, plane_grain(out_n * g.kernel[0] * g.kernel[1] * kW), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const T* in = input + p * in_n;
      T* out = output + p * out_n;
      int64_t* idx = indices + p * out_n;
      for (int64_t od = 0; od < oD; ++od) {
        const int64_t d0 = od * g.stride[0] - g.padding[0];
        int64_t kd0, kd1;
        window_range(d0, iD, g.kernel[0], g.dilation[0], kd0, kd1);
        for (int64_t oh = 0; oh < oH; ++oh, out += oW, idx += oW) {
          const int64_t h0 = oh * g.stride[1] - g.padding[1];
          int64_t kh0, kh1;
          window_range(h0, iH, g.kernel[1], g.dilation[1], kh0, kh1);
          // one column with its window clipped to the row (best_i stays -1 for an empty one)
          auto clipped = [&](int64_t ow) {
            const int64_t w0 = ow * sW - pW;
            int64_t kw0, kw1;
            window_range(w0, iW, kW, dW, kw0, kw1);
            T best = lowest;
            int64_t best_i = -1;
            for (int64_t kd = kd0; kd < kd1; ++kd) {
              const int64_t id = d0 + kd * g.dilation[0];
              for (int64_t kh = kh0; kh < kh1; ++kh) {
                const int64_t row = (id * iH + h0 + kh * g.dilation[1]) * iW;
                for (int64_t kw = kw0; kw < kw1; ++kw) {
                  const int64_t i = row + w0 + kw * dW;
                  if (best_i < 0 || in[i] > best || is_nan(in[i])) {
                    best = in[i];
                    best_i = i;
                  }
                }
              }
            }
            out[ow] = best;
            idx[ow] = best_i;
          };
          const bool rows_inside = kd1 > kd0 && kh1 > kh0;
          const int64_t lo = rows_inside ? ow_lo : oW, hi = rows_inside ? ow_hi : oW;
          for (int64_t ow = 0; ow < lo; ++ow) clipped(ow);
          if (lo < hi) {
            const int64_t first_row = ((d0 + kd0 * g.dilation[0]) * iH + h0 + kh0 * g.dilation[1]) * iW;
            for (int64_t ow = lo; ow < hi; ++ow) {
              const int64_t w0 = ow * sW - pW;
              int64_t best_i = first_row + w0;
              T best = in[best_i];
              for (int64_t kd = kd0; kd < kd1; ++kd) {
                const int64_t id = d0 + kd * g.dilation[0];
                for (int64_t kh = kh0; kh < kh1; ++kh) {
                  const int64_t row = (id * iH + h0 + kh * g.dilation[1]) * iW + w0;
                  const T* r = in + row;
                  for (int64_t kw = 0; kw < kW; ++kw) take_max(r[kw * dW], row + kw * dW, best, best_i);
                }
              }
              out[ow] = best;
              idx[ow] = best_i;
            }
          }
          for (int64_t ow = hi; ow < oW; ++ow) clipped(ow);
        }
      }
    }
  });
}

void max_pool_kernel(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                     const PoolGeometry& g) {
#define EMBER_MAX_POOL_CASE_                                                                                          \
  [&] {                                                                                                               \
    max_pool_impl<scalar_t>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), indices, planes, g); \
  }
  EMBER_DISPATCH_SWITCH(dtype, "max_pool",
                        EMBER_CASES_FLOAT_DOUBLE(EMBER_MAX_POOL_CASE_) EMBER_CASES_INTEGRAL(EMBER_MAX_POOL_CASE_));
#undef EMBER_MAX_POOL_CASE_
}

template <typename T>
void adaptive_max_pool_impl(const T* input, T* output, int64_t* indices, int64_t planes, const PoolGeometry& g) {
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t in_n = g.input_numel(), out_n = g.output_numel();
  parallel_for(0, planes, plane_grain(in_n), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const T* in = input + p * in_n;
      T* out = output + p * out_n;
      int64_t* idx = indices + p * out_n;
      for (int64_t od = 0; od < oD; ++od) {
        const int64_t d0 = od * iD / oD, d1 = ceil_div((od + 1) * iD, oD);
        for (int64_t oh = 0; oh < oH; ++oh) {
          const int64_t h0 = oh * iH / oH, h1 = ceil_div((oh + 1) * iH, oH);
          for (int64_t ow = 0; ow < oW; ++ow, ++out, ++idx) {
            const int64_t w0 = ow * iW / oW, w1 = ceil_div((ow + 1) * iW, oW);
            T best = -std::numeric_limits<T>::infinity();
            int64_t best_i = (d0 * iH + h0) * iW + w0;
            for (int64_t d = d0; d < d1; ++d) {
              for (int64_t h = h0; h < h1; ++h) {
                for (int64_t w = w0; w < w1; ++w) {
                  const int64_t i = (d * iH + h) * iW + w;
                  const T v = in[i];
                  if (v > best || std::isnan(v)) {
                    best = v;
                    best_i = i;
                  }
                }
              }
            }
            *out = best;
            *idx = best_i;
          }
        }
      }
    }
  });
}

void adaptive_max_pool_kernel(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                              const PoolGeometry& g) {
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_max_pool", [&] {
    adaptive_max_pool_impl<scalar_t>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), indices,
                                     planes, g);
  });
}

// ---- average pooling ---------------------------------------------------------------------

// One window of avg_pool along one dim: the clamped range [lo, hi) and the length the
// divisor counts with count_include_pad (the window clipped to the padded input).
struct AvgWindow {
  int64_t lo, hi, padded;
};
inline AvgWindow avg_window(int64_t o, int64_t size, int64_t k, int64_t s, int64_t p) {
  const int64_t start = o * s - p;
  const int64_t end = std::min(start + k, size + p);
  return {std::max<int64_t>(start, 0), std::min(end, size), end - start};
}

// The accumulator: float32 sums in float32 (as PyTorch's CPU kernel), int64 in int64.
template <typename T, typename F>
void avg_pool_walk(const PoolGeometry& g, int64_t planes, bool count_include_pad, int64_t divisor_override,
                   const F& f) {
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  parallel_for(0, planes, plane_grain(g.output_numel() * g.kernel[0] * g.kernel[1] * g.kernel[2]),
               [&](int64_t pb, int64_t pe) {
                 for (int64_t p = pb; p < pe; ++p) {
                   int64_t o = 0;
                   for (int64_t od = 0; od < oD; ++od) {
                     const AvgWindow wd = avg_window(od, g.input[0], g.kernel[0], g.stride[0], g.padding[0]);
                     for (int64_t oh = 0; oh < oH; ++oh) {
                       const AvgWindow wh = avg_window(oh, g.input[1], g.kernel[1], g.stride[1], g.padding[1]);
                       for (int64_t ow = 0; ow < oW; ++ow, ++o) {
                         const AvgWindow ww = avg_window(ow, g.input[2], g.kernel[2], g.stride[2], g.padding[2]);
                         int64_t divisor;
                         if (divisor_override != 0) {
                           divisor = divisor_override;
                         } else if (count_include_pad) {
                           divisor = wd.padded * wh.padded * ww.padded;
                         } else {
                           divisor = (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
                         }
                         f(p, o, wd, wh, ww, divisor);
                       }
                     }
                   }
                 }
               });
}

template <typename T>
void avg_pool_impl(const T* input, T* output, int64_t planes, const PoolGeometry& g, bool count_include_pad,
                   int64_t divisor_override) {
  const int64_t iH = g.input[1], iW = g.input[2], in_n = g.input_numel(), out_n = g.output_numel();
  avg_pool_walk<T>(
      g, planes, count_include_pad, divisor_override,
      [&](int64_t p, int64_t o, const AvgWindow& wd, const AvgWindow& wh, const AvgWindow& ww, int64_t divisor) {
        const T* in = input + p * in_n;
        T sum = 0;
        for (int64_t d = wd.lo; d < wd.hi; ++d) {
          for (int64_t h = wh.lo; h < wh.hi; ++h) {
            const T* row = in + (d * iH + h) * iW;
            for (int64_t w = ww.lo; w < ww.hi; ++w) sum += row[w];
          }
        }
        // an all-padding window (possible with ceil_mode) averages nothing: 0
        const bool empty = wd.lo >= wd.hi || wh.lo >= wh.hi || ww.lo >= ww.hi;
        output[p * out_n + o] = empty || divisor == 0 ? T(0) : static_cast<T>(sum / static_cast<T>(divisor));
      });
}

template <typename T>
void avg_pool_backward_impl(const T* grad_output, T* grad_input, int64_t planes, const PoolGeometry& g,
                            bool count_include_pad, int64_t divisor_override) {
  const int64_t iH = g.input[1], iW = g.input[2], in_n = g.input_numel(), out_n = g.output_numel();
  // each plane is zeroed by the first of its outputs' visits (o == 0), inside its own task
  avg_pool_walk<T>(
      g, planes, count_include_pad, divisor_override,
      [&](int64_t p, int64_t o, const AvgWindow& wd, const AvgWindow& wh, const AvgWindow& ww, int64_t divisor) {
        T* gi = grad_input + p * in_n;
        if (o == 0) std::memset(gi, 0, sizeof(T) * in_n);
        if (wd.lo >= wd.hi || wh.lo >= wh.hi || ww.lo >= ww.hi || divisor == 0) return;
        const T v = grad_output[p * out_n + o] / static_cast<T>(divisor);
        for (int64_t d = wd.lo; d < wd.hi; ++d) {
          for (int64_t h = wh.lo; h < wh.hi; ++h) {
            T* row = gi + (d * iH + h) * iW;
            for (int64_t w = ww.lo; w < ww.hi; ++w) row[w] += v;
          }
        }
      });
}

void avg_pool_kernel(ScalarType dtype, const void* input, void* output, int64_t planes, const PoolGeometry& g,
                     bool count_include_pad, int64_t divisor_override) {
#define EMBER_AVG_POOL_CASE_                                                                                \
  [&] {                                                                                                     \
    avg_pool_impl<scalar_t>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), planes, g, \
                            count_include_pad, divisor_override);                                           \
  }
  EMBER_DISPATCH_SWITCH(dtype, "avg_pool",
                        EMBER_CASES_FLOAT_DOUBLE(EMBER_AVG_POOL_CASE_)
                            EMBER_PRIVATE_CASE_TYPE(Long, int64_t, EMBER_AVG_POOL_CASE_));
#undef EMBER_AVG_POOL_CASE_
}

void avg_pool_backward_kernel(ScalarType dtype, const void* grad_output, void* grad_input, int64_t planes,
                              const PoolGeometry& g, bool count_include_pad, int64_t divisor_override) {
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "avg_pool_backward", [&] {
    avg_pool_backward_impl<scalar_t>(static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input),
                                     planes, g, count_include_pad, divisor_override);
  });
}

// ---- adaptive average pooling -------------------------------------------------------------

template <typename T, bool Backward>
void adaptive_avg_impl(const T* src, T* dst, int64_t planes, const PoolGeometry& g) {
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t in_n = g.input_numel(), out_n = g.output_numel();
  parallel_for(0, planes, plane_grain(in_n + out_n), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      // forward: src is the input plane, dst the output; backward: src is grad_output, dst grad_input
      const T* s = src + p * (Backward ? out_n : in_n);
      T* d_ = dst + p * (Backward ? in_n : out_n);
      if constexpr (Backward) std::memset(d_, 0, sizeof(T) * in_n);
      int64_t o = 0;
      for (int64_t od = 0; od < oD; ++od) {
        const int64_t d0 = od * iD / oD, d1 = ceil_div((od + 1) * iD, oD);
        for (int64_t oh = 0; oh < oH; ++oh) {
          const int64_t h0 = oh * iH / oH, h1 = ceil_div((oh + 1) * iH, oH);
          for (int64_t ow = 0; ow < oW; ++ow, ++o) {
            const int64_t w0 = ow * iW / oW, w1 = ceil_div((ow + 1) * iW, oW);
            const T area = static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
            if constexpr (Backward) {
              const T v = s[o] / area;
              for (int64_t d = d0; d < d1; ++d) {
                for (int64_t h = h0; h < h1; ++h) {
                  T* row = d_ + (d * iH + h) * iW;
                  for (int64_t w = w0; w < w1; ++w) row[w] += v;
                }
              }
            } else {
              T sum = 0;
              for (int64_t d = d0; d < d1; ++d) {
                for (int64_t h = h0; h < h1; ++h) {
                  const T* row = s + (d * iH + h) * iW;
                  for (int64_t w = w0; w < w1; ++w) sum += row[w];
                }
              }
              d_[o] = sum / area;
            }
          }
        }
      }
    }
  });
}

void adaptive_avg_pool_kernel(ScalarType dtype, const void* input, void* output, int64_t planes,
                              const PoolGeometry& g) {
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_avg_pool", [&] {
    adaptive_avg_impl<scalar_t, false>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), planes, g);
  });
}

void adaptive_avg_pool_backward_kernel(ScalarType dtype, const void* grad_output, void* grad_input, int64_t planes,
                                       const PoolGeometry& g) {
  EMBER_DISPATCH_FLOATING_TYPES(dtype, "adaptive_avg_pool_backward", [&] {
    adaptive_avg_impl<scalar_t, true>(static_cast<const scalar_t*>(grad_output), static_cast<scalar_t*>(grad_input),
                                      planes, g);
  });
}

// ---- index scatter (max pooling backward, max_unpool) ------------------------------------------

template <typename T>
bool pool_scatter_impl(const T* src, const int64_t* indices, T* dst, int64_t planes, int64_t src_n, int64_t dst_n,
                       bool accumulate, int64_t* bad_index) {
  std::atomic<bool> ok{true};
  std::atomic<int64_t> bad{0};
  parallel_for(0, planes, plane_grain(src_n + dst_n), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      T* d = dst + p * dst_n;
      std::memset(d, 0, sizeof(T) * dst_n);
      const T* s = src + p * src_n;
      const int64_t* ix = indices + p * src_n;
      for (int64_t i = 0; i < src_n; ++i) {
        const int64_t j = ix[i];
        if (EMBER_UNLIKELY(static_cast<uint64_t>(j) >= static_cast<uint64_t>(dst_n))) {
          if (accumulate && j == -1) continue;  // a max-pool window with no input element
          bad.store(j);
          ok.store(false);
          return;
        }
        if (accumulate) {
          d[j] += s[i];
        } else {
          d[j] = s[i];
        }
      }
    }
  });
  if (!ok.load()) *bad_index = bad.load();
  return ok.load();
}

bool pool_scatter_kernel(ScalarType dtype, const void* src, const int64_t* indices, void* dst, int64_t planes,
                         int64_t src_n, int64_t dst_n, bool accumulate, int64_t* bad_index) {
  return EMBER_DISPATCH_FLOATING_TYPES(dtype, "pool_scatter", [&] {
    return pool_scatter_impl<scalar_t>(static_cast<const scalar_t*>(src), indices, static_cast<scalar_t*>(dst), planes,
                                       src_n, dst_n, accumulate, bad_index);
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(max_pool_stub, &max_pool_kernel);
REGISTER_DISPATCH(avg_pool_stub, &avg_pool_kernel);
REGISTER_DISPATCH(avg_pool_backward_stub, &avg_pool_backward_kernel);
REGISTER_DISPATCH(adaptive_avg_pool_stub, &adaptive_avg_pool_kernel);
REGISTER_DISPATCH(adaptive_avg_pool_backward_stub, &adaptive_avg_pool_backward_kernel);
REGISTER_DISPATCH(adaptive_max_pool_stub, &adaptive_max_pool_kernel);
REGISTER_DISPATCH(pool_scatter_stub, &pool_scatter_kernel);

}  // namespace ember::at::native
