// CPU kernels of convolution's matrix pieces (see ../Im2Col.h): im2col, col2im and the
// single-threaded small GEMM. float32 / float64 only: float16 / bfloat16 convolutions
// run in float32 (../Convolution.cpp converts once per call).
#include <algorithm>
#include <cstring>

#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../Im2Col.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

inline int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The window positions [lo, hi) along one dim whose element ow * stride + offset lies in
// [0, size); the others read padding.
inline void valid_range(int64_t size, int64_t count, int64_t stride, int64_t offset, int64_t& lo, int64_t& hi) {
  if (stride == 1) {  // the common case, without divisions
    lo = std::min(std::max<int64_t>(-offset, 0), count);
    hi = std::min(std::max(size - offset, lo), count);
    return;
  }
  lo = offset >= 0 ? 0 : floor_div(-offset + stride - 1, stride);
  hi = floor_div(size - 1 - offset, stride) + 1;
  lo = std::min(std::max<int64_t>(lo, 0), count);
  hi = std::min(std::max(hi, lo), count);
}

// One row of columns, (c, kd, kh, kw), from one image.
template <typename T>
void im2col_row(const T* image, T* row, const ConvGeometry& g, int64_t kd, int64_t kh, int64_t kw) {
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t sW = g.stride[2];
  const int64_t off_w = kw * g.dilation[2] - g.padding[2];
  int64_t lo, hi;
  valid_range(iW, oW, sW, off_w, lo, hi);
  for (int64_t od = 0; od < oD; ++od) {
    const int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
    for (int64_t oh = 0; oh < oH; ++oh, row += oW) {
      const int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
      if (id < 0 || id >= iD || ih < 0 || ih >= iH) {
        std::memset(row, 0, sizeof(T) * oW);
        continue;
      }
      const T* src = image + (id * iH + ih) * iW + off_w;  // src[ow * sW] is element (id, ih, ow * sW + off_w)
      if (lo > 0) std::memset(row, 0, sizeof(T) * lo);
      if (sW == 1) {
        std::memcpy(row + lo, src + lo, sizeof(T) * (hi - lo));
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * sW];
      }
      if (hi < oW) std::memset(row + hi, 0, sizeof(T) * (oW - hi));
    }
  }
}

// Adds one row of columns back into its image (the inverse walk of im2col_row).
template <typename T>
void col2im_row(const T* row, T* image, const ConvGeometry& g, int64_t kd, int64_t kh, int64_t kw) {
  const int64_t iD = g.input[0], iH = g.input[1], iW = g.input[2];
  const int64_t oD = g.output[0], oH = g.output[1], oW = g.output[2];
  const int64_t sW = g.stride[2];
  const int64_t off_w = kw * g.dilation[2] - g.padding[2];
  int64_t lo, hi;
  valid_range(iW, oW, sW, off_w, lo, hi);
  if (lo >= hi) return;
  for (int64_t od = 0; od < oD; ++od) {
    const int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
    for (int64_t oh = 0; oh < oH; ++oh, row += oW) {
      const int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
      if (id < 0 || id >= iD || ih < 0 || ih >= iH) continue;
      T* dst = image + (id * iH + ih) * iW + off_w;
      if (sW == 1) {
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += row[ow];
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sW] += row[ow];
      }
    }
  }
}

template <typename T>
void im2col_impl(const T* image, int64_t image_stride, T* columns, ColumnsLayout layout, int64_t batch,
                 int64_t channels, const ConvGeometry& g) {
  const int64_t kn = g.kernel_numel(), on = g.output_numel(), in = g.input_numel();
  const int64_t kH = g.kernel[1], kW = g.kernel[2];
  const int64_t rows = batch * channels * kn;
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(on, 1));
  parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    // row r = (((n * channels + c) * kD + kd) * kH + kh) * kW + kw, counted up (no divisions per row)
    int64_t n = begin / (channels * kn), c = (begin / kn) % channels, k = begin % kn;
    int64_t kd = k / (kH * kW), kh = (k / kW) % kH, kw = k % kW;
    for (int64_t r = begin; r < end; ++r) {
      im2col_row(image + n * image_stride + c * in,
                 columns + n * layout.image_offset + (c * kn + (kd * kH + kh) * kW + kw) * layout.row_stride, g, kd, kh,
                 kw);
      if (++kw == kW) {
        kw = 0;
        if (++kh == kH) {
          kh = 0;
          if (++kd == g.kernel[0]) {
            kd = 0;
            if (++c == channels) {
              c = 0;
              ++n;
            }
          }
        }
      }
    }
  });
}

template <typename T>
void col2im_impl(const T* columns, ColumnsLayout layout, T* image, int64_t image_stride, int64_t batch,
                 int64_t channels, const ConvGeometry& g) {
  const int64_t kn = g.kernel_numel(), on = g.output_numel(), in = g.input_numel();
  const int64_t kH = g.kernel[1], kW = g.kernel[2];
  // one task per image plane: the rows of channel c only write plane c, so no races
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(kn * on, 1));
  parallel_for(0, batch * channels, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / channels, c = p % channels;
      T* plane = image + n * image_stride + c * in;
      std::memset(plane, 0, sizeof(T) * in);
      const T* rows = columns + n * layout.image_offset + c * kn * layout.row_stride;
      for (int64_t k = 0; k < kn; ++k) {
        col2im_row(rows + k * layout.row_stride, plane, g, k / (kH * kW), (k / kW) % kH, k % kW);
      }
    }
  });
}

void im2col_kernel(ScalarType dtype, const void* image, int64_t image_stride, void* columns, ColumnsLayout layout,
                   int64_t batch, int64_t channels, const ConvGeometry& g) {
  if (dtype == ScalarType::Double) {
    im2col_impl(static_cast<const double*>(image), image_stride, static_cast<double*>(columns), layout, batch, channels,
                g);
  } else {
    EMBER_CHECK(dtype == ScalarType::Float, "im2col: not implemented for dtype ", c10::toPythonName(dtype));
    im2col_impl(static_cast<const float*>(image), image_stride, static_cast<float*>(columns), layout, batch, channels,
                g);
  }
}

void col2im_kernel(ScalarType dtype, const void* columns, ColumnsLayout layout, void* image, int64_t image_stride,
                   int64_t batch, int64_t channels, const ConvGeometry& g) {
  if (dtype == ScalarType::Double) {
    col2im_impl(static_cast<const double*>(columns), layout, static_cast<double*>(image), image_stride, batch, channels,
                g);
  } else {
    EMBER_CHECK(dtype == ScalarType::Float, "col2im: not implemented for dtype ", c10::toPythonName(dtype));
    col2im_impl(static_cast<const float*>(columns), layout, static_cast<float*>(image), image_stride, batch, channels,
                g);
  }
}

// ---- small GEMM ---------------------------------------------------------------------------

// c (m x n) (+)= op(a) b in register blocks: R rows of c by NV vectors of columns (up to 16
// floats with AVX2) stay in registers while p runs over k, each step one row of b (NV loads)
// against R broadcasts of op(a). c[i, j] = c0 + a[i, 0] b[0, j] + a[i, 1] b[1, j] + ... in that
// order, one fused multiply-add at a time (c0 = c when accumulating, else 0), whatever the
// block, so a product's bits do not depend on its size or its place in c. A partial block
// (its last vector `tail` lanes wide) loads and stores only those lanes.
template <int R, int NV, bool partial, bool ta, typename T>
inline void gemm_block(int64_t i, int64_t j, int tail, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                       T* c, int64_t ldc, bool accumulate) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  auto load = [&](const T* p, int v) { return partial && v == NV - 1 ? V::loadu(p, tail) : V::loadu(p); };
  V acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = accumulate ? load(c + (i + r) * ldc + j + v * W, v) : V(T(0));
  }
  for (int64_t p = 0; p < k; ++p) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load(b + p * ldb + j + v * W, v);
    for (int r = 0; r < R; ++r) {
      const V av(ta ? a[p * lda + i + r] : a[(i + r) * lda + p]);
      for (int v = 0; v < NV; ++v) acc[r][v] = vec::fmadd(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) {
      T* cr = c + (i + r) * ldc + j + v * W;
      if (partial && v == NV - 1) {
        acc[r][v].store(cr, tail);
      } else {
        acc[r][v].store(cr);
      }
    }
  }
}

// The register blocks serve products up to this many columns (Blas.cpp's small products,
// at most 64 on every side); wider ones take the axpy rows below.
constexpr int64_t kBlockedMaxColumns = 256;

template <int NV, bool partial, bool ta, typename T>
void gemm_columns(int64_t m, int64_t j, int tail, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                  int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) gemm_block<4, NV, partial, ta>(i, j, tail, k, a, lda, b, ldb, c, ldc, accumulate);
  for (; i + 2 <= m; i += 2) gemm_block<2, NV, partial, ta>(i, j, tail, k, a, lda, b, ldb, c, ldc, accumulate);
  for (; i < m; ++i) gemm_block<1, NV, partial, ta>(i, j, tail, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <bool ta, typename T>
void gemm_blocked(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
                  bool accumulate) {
  constexpr int64_t W = Vectorized<T>::size();
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) gemm_columns<2, false, ta>(m, j, 0, k, a, lda, b, ldb, c, ldc, accumulate);
  if (j + W <= n) {
    gemm_columns<1, false, ta>(m, j, 0, k, a, lda, b, ldb, c, ldc, accumulate);
    j += W;
  }
  if (j < n) gemm_columns<1, true, ta>(m, j, static_cast<int>(n - j), k, a, lda, b, ldb, c, ldc, accumulate);
}

// y[0:n] += a * x[0:n]
template <typename T>
inline void axpy(T* y, T a, const T* x, int64_t n) {
  using V = Vectorized<T>;
  int64_t j = 0;
  const V va(a);
  for (; j + V::size() <= n; j += V::size()) vec::fmadd(va, V::loadu(x + j), V::loadu(y + j)).store(y + j);
  for (; j < n; ++j) y[j] += a * x[j];
}

template <typename T>
inline T dot(const T* x, const T* y, int64_t n) {
  using V = Vectorized<T>;
  V acc0(T(0)), acc1(T(0));
  int64_t j = 0;
  for (; j + 2 * V::size() <= n; j += 2 * V::size()) {
    acc0 = vec::fmadd(V::loadu(x + j), V::loadu(y + j), acc0);
    acc1 = vec::fmadd(V::loadu(x + j + V::size()), V::loadu(y + j + V::size()), acc1);
  }
  T s = (acc0 + acc1).reduce_add();
  for (; j < n; ++j) s += x[j] * y[j];
  return s;
}

template <typename T>
void small_gemm_impl(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                     int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  if (!tb && n <= kBlockedMaxColumns) {
    if (ta) {
      gemm_blocked<true>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    } else {
      gemm_blocked<false>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    }
    return;
  }
  if (!tb) {
    // wide rows (a convolution's spatial positions): a block's k rows of b lie a whole row
    // apart, often a multiple of 4 KiB, and evict each other from L1; rows of c as
    // combinations of rows of b (contiguous axpys) stream instead, in the same order of sums
    for (int64_t i = 0; i < m; ++i) {
      T* ci = c + i * ldc;
      if (!accumulate) std::memset(ci, 0, sizeof(T) * n);
      for (int64_t p = 0; p < k; ++p) axpy(ci, ta ? a[p * lda + i] : a[i * lda + p], b + p * ldb, n);
    }
    return;
  }
  // b transposed: c[i, j] = op(a)[i, :] . b[j, :]
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) {
      T s;
      if (!ta) {
        s = dot(a + i * lda, b + j * ldb, k);
      } else {
        s = T(0);
        for (int64_t p = 0; p < k; ++p) s += a[p * lda + i] * b[j * ldb + p];
      }
      ci[j] = accumulate ? ci[j] + s : s;
    }
  }
}

void small_gemm_kernel(ScalarType dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                       const void* b, int64_t ldb, void* c, int64_t ldc, bool accumulate) {
  if (dtype == ScalarType::Double) {
    small_gemm_impl(ta, tb, m, n, k, static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
                    static_cast<double*>(c), ldc, accumulate);
  } else {
    small_gemm_impl(ta, tb, m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
                    static_cast<float*>(c), ldc, accumulate);
  }
}

// ---- channel sums (the bias gradient) ------------------------------------------------------

template <typename T>
T row_sum(const T* x, int64_t n) {
  using V = Vectorized<T>;
  V acc0(T(0)), acc1(T(0)), acc2(T(0)), acc3(T(0));
  int64_t j = 0;
  for (; j + 4 * V::size() <= n; j += 4 * V::size()) {
    acc0 += V::loadu(x + j);
    acc1 += V::loadu(x + j + V::size());
    acc2 += V::loadu(x + j + 2 * V::size());
    acc3 += V::loadu(x + j + 3 * V::size());
  }
  for (; j + V::size() <= n; j += V::size()) acc0 += V::loadu(x + j);
  T s = ((acc0 + acc1) + (acc2 + acc3)).reduce_add();
  for (; j < n; ++j) s += x[j];
  return s;
}

template <typename T>
void channel_sum_impl(const T* x, T* sums, int64_t N, int64_t C, int64_t S) {
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(N * S, 1));
  parallel_for(0, C, grain, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double acc = 0;
      for (int64_t n = 0; n < N; ++n) acc += row_sum(x + (n * C + c) * S, S);
      sums[c] = static_cast<T>(acc);
    }
  });
}

void channel_sum_kernel(ScalarType dtype, const void* x, void* sums, int64_t N, int64_t C, int64_t S) {
  if (dtype == ScalarType::Double) {
    channel_sum_impl(static_cast<const double*>(x), static_cast<double*>(sums), N, C, S);
  } else {
    channel_sum_impl(static_cast<const float*>(x), static_cast<float*>(sums), N, C, S);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(im2col_stub, &im2col_kernel);
REGISTER_DISPATCH(col2im_stub, &col2im_kernel);
REGISTER_DISPATCH(small_gemm_stub, &small_gemm_kernel);
REGISTER_DISPATCH(channel_sum_stub, &channel_sum_kernel);

}  // namespace ember::at::native
