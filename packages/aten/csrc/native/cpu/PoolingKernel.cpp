// CPU pooling kernels (see ../Pooling.h for the layout, index and dtype rules).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

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

// ---- max pooling of float / double, vectorized over output columns -------------------------
//
// One vector holds N consecutive output columns of one output row; every window element
// (kd, kh, kw) is one vector of inputs (lane i: column (ow + i) * sW - pW + kw * dW) that
// is compared and selected into the running max and its index, with no branch on the data:
//   take = v > best | v is NaN;  best = take ? v : best;  index = take ? candidate : index.
// The running max starts at -inf with the index of the window's first element inside the
// input, so the result is exactly the scalar kernel's (first max wins, a NaN wins and a
// later NaN takes its index, an all -inf window points at its first element).
// The lanes read a row "left-padded by pW": the row itself when no lane can read outside
// it, otherwise a copy with -inf around it (an -inf is never taken, so padding needs no
// masks and columns at the edges, the tail block and rows narrower than N run the same
// code). Stride 1 loads the lanes directly, stride 2 deinterleaves two loads, other
// strides gather lane by lane.
template <typename T>
struct MaxPoolLanes {
  using Vec = vec::Vectorized<T>;
  using V = typename Vec::V;
  static constexpr int N = Vec::size();
  // a lane's index: int32 for float (checked to fit), so that index and value vectors
  // have the same lanes and one comparison mask selects both
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef I VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  typedef int64_t VL __attribute__((vector_size(N * 8)));

  static V load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
  }
  static VI iota(I step) {
    VI r;
    for (int i = 0; i < N; ++i) r[i] = static_cast<I>(i) * step;
    return r;
  }
  // lanes i of the even (odd = 0) or odd (odd = 1) elements of a ++ b
  static V deinterleave(V a, V b, int odd) {
    return odd ? __builtin_shuffle(a, b, iota(2) + static_cast<I>(1)) : __builtin_shuffle(a, b, iota(2));
  }
  // r[c + i * s] in lane i; kS is s when it is 1 or 2, 0 for any other s
  template <int kS>
  static V lanes(const T* r, int64_t c, int64_t s) {
    if constexpr (kS == 1) {
      return load(r + c);
    } else if constexpr (kS == 2) {
      const T* q = r + (c & ~int64_t(1));
      return deinterleave(load(q), load(q + N), static_cast<int>(c & 1));
    } else {
      V v;
      for (int i = 0; i < N; ++i) v[i] = r[c + i * s];
      return v;
    }
  }
};

// false when some output column's window holds no input element (then the scalar kernel
// runs, giving such windows -inf and index -1).
template <typename T>
bool max_pool_first_columns(const PoolGeometry& g, std::vector<typename MaxPoolLanes<T>::I>& first_col) {
  const int64_t oW = g.output[2], kW = g.kernel[2], sW = g.stride[2], pW = g.padding[2], dW = g.dilation[2];
  for (int64_t ow = 0; ow < oW; ++ow) {
    int64_t lo, hi;
    window_range(ow * sW - pW, g.input[2], kW, dW, lo, hi);
    if (lo >= hi) return false;
    first_col[ow] = static_cast<typename MaxPoolLanes<T>::I>(ow * sW - pW + lo * dW);
  }
  return true;
}

template <typename T, int kS>
void max_pool_lanes_impl(const T* input, T* output, int64_t* indices, int64_t planes, const PoolGeometry& g,
                         const std::vector<typename MaxPoolLanes<T>::I>& first_col) {
  using L = MaxPoolLanes<T>;
  using V = typename L::V;
  using VI = typename L::VI;
  using I = typename L::I;
  constexpr int N = L::N;
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t kW = g.kernel[2], sW = g.stride[2], pW = g.padding[2], dW = g.dilation[2];
  const int64_t in_n = g.input_numel(), out_n = g.output_numel();
  const int64_t padded_w = ceil_div(oW, N) * N;
  // columns of the left-padded row that the blocks read (stride 2 reads one past its last lane)
  const int64_t span = (padded_w - 1) * sW + (kW - 1) * dW + 1 + (kS == 2 ? 1 : 0);
  const bool direct = pW == 0 && span <= iW;
  const int64_t row_len = std::max(span, pW + iW);
  const int64_t max_rows = g.kernel[0] * g.kernel[1];
  const VI lane_col = L::iota(static_cast<I>(sW));
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(0, planes, plane_grain(out_n * max_rows * kW), [&](int64_t pb, int64_t pe) {
    std::vector<T> staged(direct ? 0 : max_rows * row_len, neg_inf);
    std::vector<const T*> rows(max_rows);
    std::vector<I> row_base(max_rows);  // the flat index of the row's padded column 0
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
          if (kd1 <= kd0 || kh1 <= kh0) {  // a window wholly in the padding: as the scalar kernel
            std::fill(out, out + oW, neg_inf);
            std::fill(idx, idx + oW, int64_t(-1));
            continue;
          }
          int64_t n_rows = 0;
          for (int64_t kd = kd0; kd < kd1; ++kd) {
            for (int64_t kh = kh0; kh < kh1; ++kh, ++n_rows) {
              const int64_t row = ((d0 + kd * g.dilation[0]) * iH + h0 + kh * g.dilation[1]) * iW;
              row_base[n_rows] = static_cast<I>(row - pW);
              if (direct) {
                rows[n_rows] = in + row;
              } else {
                T* s = staged.data() + n_rows * row_len;
                std::memcpy(s + pW, in + row, sizeof(T) * iW);  // the -inf around it is never written
                rows[n_rows] = s;
              }
            }
          }
          const I first = row_base[0] + static_cast<I>(pW);
          for (int64_t ow0 = 0; ow0 < oW; ow0 += N) {
            V best = neg_inf - V{};
            VI best_i = L::iota(0) + first;
            VI first_cols;
            std::memcpy(&first_cols, first_col.data() + ow0, sizeof(VI));
            best_i += first_cols;
            const int64_t c0 = ow0 * sW;
            const VI cols = lane_col + static_cast<I>(c0);
            for (int64_t j = 0; j < n_rows; ++j) {
              const T* r = rows[j];
              const VI base = cols + row_base[j];
              for (int64_t kw = 0; kw < kW; ++kw) {
                const V v = L::template lanes<kS>(r, c0 + kw * dW, sW);
                const VI take = (v > best) | (v != v);
                best = take ? v : best;
                best_i = take ? base + static_cast<I>(kw * dW) : best_i;
              }
            }
            const typename L::VL wide = __builtin_convertvector(best_i, typename L::VL);
            const int64_t n = std::min<int64_t>(N, oW - ow0);
            std::memcpy(out + ow0, &best, sizeof(T) * n);
            std::memcpy(idx + ow0, &wide, sizeof(int64_t) * n);
          }
        }
      }
    }
  });
}

template <typename T>
void max_pool_floating(const T* input, T* output, int64_t* indices, int64_t planes, const PoolGeometry& g) {
  using I = typename MaxPoolLanes<T>::I;
  std::vector<I> first_col(ceil_div(g.output[2], MaxPoolLanes<T>::N) * MaxPoolLanes<T>::N, 0);
  // (half the range: the lanes past the last column compute indices a little beyond the plane)
  const bool fits = g.input_numel() <= std::numeric_limits<I>::max() / 2;
  if (!fits || !max_pool_first_columns<T>(g, first_col)) {
    max_pool_impl<T>(input, output, indices, planes, g);
  } else if (g.stride[2] == 1) {
    max_pool_lanes_impl<T, 1>(input, output, indices, planes, g, first_col);
  } else if (g.stride[2] == 2) {
    max_pool_lanes_impl<T, 2>(input, output, indices, planes, g, first_col);
  } else {
    max_pool_lanes_impl<T, 0>(input, output, indices, planes, g, first_col);
  }
}

void max_pool_kernel(ScalarType dtype, const void* input, void* output, int64_t* indices, int64_t planes,
                     const PoolGeometry& g) {
#define EMBER_MAX_POOL_CASE_                                                                                          \
  [&] {                                                                                                               \
    max_pool_impl<scalar_t>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), indices, planes, g); \
  }
#define EMBER_MAX_POOL_FLOATING_CASE_                                                                                 \
  [&] {                                                                                                               \
    max_pool_floating<scalar_t>(static_cast<const scalar_t*>(input), static_cast<scalar_t*>(output), indices, planes, \
                                g);                                                                                   \
  }
  EMBER_DISPATCH_SWITCH(dtype, "max_pool",
                        EMBER_CASES_FLOAT_DOUBLE(EMBER_MAX_POOL_FLOATING_CASE_)
                            EMBER_CASES_INTEGRAL(EMBER_MAX_POOL_CASE_));
#undef EMBER_MAX_POOL_FLOATING_CASE_
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
