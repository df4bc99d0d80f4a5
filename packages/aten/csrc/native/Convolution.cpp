// convolution / convolution_backward: conv1d/2d/3d, transposed, strided, padded,
// dilated and grouped, as im2col + GEMM (PyTorch's slow_conv path, which its other
// backends must agree with).
//
// Every convolution has a "big" side, the image im2col reads, and a "small" side, one
// value per window position (see Im2Col.h):
//
//   convolution        big = input,        small = output
//   transposed         big = output,       small = input
//
// and the weight, contiguous, is in both cases a stack of per-group matrices
// W[g] (Ms x Cb * kernel_numel) with Ms = weight.size(0) / groups, Cb = weight.size(1):
// (out_channels, in_channels / groups, k...) for a convolution, (in_channels,
// out_channels / groups, k...) for a transposed one. Three products then cover
// everything, per image n and group g:
//
//   big_to_small   small[n, g] = W[g] @ im2col(big[n, g])          conv forward, transposed grad_input
//   small_to_big   big[n, g] = col2im(W[g]^T @ small[n, g])        conv grad_input, transposed forward
//   weight_grad    gW[g] = sum_n small[n, g] @ im2col(big[n, g])^T   grad_weight of both
//
// Threads and BLAS: the products run image by image, each on the image's own memory (no
// layout copies), through gemm_cpu (Blas.h: matmul's thread policy). With at least as many
// images as threads the images are split over the threads, each thread with its own
// columns buffer, im2col and single-threaded products -- one parallel region per call,
// and the columns still in the core's cache when the GEMM reads them. A few large images
// go one at a time instead, im2col / col2im in parallel and each product on OpenBLAS's
// threads (see image_slots). The forward bias is the GEMM's starting value (beta 1); the
// weight gradient accumulates in the GEMM too (one sum per thread, added at the end).
// Thin images (fewer than kThinPositions output positions: ResNet's last stages, 4x4 and
// 2x2) make per-image products of a few columns each, which BLAS runs far below its speed and
// which re-read the whole weight per image; their batch is one product instead, the images
// side by side in one columns matrix (ColumnsLayout's batch layout, Im2Col.h) and the small
// side gathered into (channels, N * L) rows (see whole_batch).
// Weight matrices with very few rows or columns (depthwise convolutions, tiny channel
// counts) suit BLAS badly: their products run per image and group with small_gemm_stub,
// in parallel, over chunks of images whose columns stay within kColumnsBudget elements.
#include <algorithm>
#include <cstring>
#include <tuple>

#include <ember/aten/Parallel.h>

#include "Blas.h"
#include "ConvDirect.h"
#include "Convolution.h"
#include "ConvolutionInteger.h"
#include "Im2Col.h"

namespace ember::at::native {

DEFINE_DISPATCH(direct_conv_stub);
DEFINE_DISPATCH(direct_conv_weight_stub);

namespace {

constexpr int64_t kColumnsBudget = int64_t(1) << 23;  // im2col buffer per chunk, in elements
constexpr int64_t kThinPositions = 256;               // below: one product for the whole batch
constexpr int64_t kTransposedSum = int64_t(1) << 16;  // weight_grad: largest weight summed transposed, in elements

// ---- arguments --------------------------------------------------------------------------------

const char* cpp_type_name(ScalarType t) {  // the names PyTorch's type messages use
  switch (t) {
    case ScalarType::Float:
      return "float";
    case ScalarType::Double:
      return "double";
    case ScalarType::Half:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Long:
      return "long int";
    case ScalarType::Int:
      return "int";
    case ScalarType::Short:
      return "short int";
    case ScalarType::Char:
      return "signed char";
    case ScalarType::Byte:
      return "unsigned char";
    case ScalarType::Bool:
      return "bool";
    default:
      return c10::toPythonName(t);
  }
}

DimVector expand_param(IntArrayRef v, const char* name, int64_t dim) {
  if (v.size() == 1) return DimVector(dim, v[0]);
  EMBER_CHECK(static_cast<int64_t>(v.size()) == dim, "expected ", name, " to be a single integer value or a list of ",
              dim, " values to match the convolution dimensions, but got ", name, "=", shape_str(v));
  return DimVector(v);
}

}  // namespace

// PyTorch's checks, in its order, and the output shape.
ConvShape check_convolution(const Tensor& input, const Tensor& weight, const Tensor* bias, IntArrayRef stride,
                            IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                            int64_t groups) {
  EMBER_CHECK(input.dtype() == weight.dtype(), "Input type (", cpp_type_name(input.dtype()), ") and weight type (",
              cpp_type_name(weight.dtype()), ") should be the same");
  EMBER_CHECK(bias == nullptr || bias->dtype() == input.dtype(), "Input type (", cpp_type_name(input.dtype()),
              ") and bias type (", cpp_type_name(bias ? bias->dtype() : input.dtype()), ") should be the same");
  EMBER_CHECK(input.device() == weight.device() && (bias == nullptr || bias->device() == input.device()),
              "convolution: expected input, weight and bias on the same device");
  const int64_t k = weight.dim();
  EMBER_CHECK(k >= 3, "weight should have at least three dimensions");
  const int64_t dim = k - 2;
  EMBER_CHECK(dim <= 3, "convolution: only 1-d, 2-d and 3-d convolutions are supported, but the weight has ", dim,
              " spatial dimensions");
  ConvShape s;
  s.dim = dim;
  s.stride = expand_param(stride, "stride", dim);
  s.padding = expand_param(padding, "padding", dim);
  s.dilation = expand_param(dilation, "dilation", dim);
  s.output_padding = expand_param(output_padding, "output_padding", dim);
  s.transposed = transposed;
  s.groups = groups;
  for (int64_t v : s.stride) EMBER_CHECK(v > 0, "non-positive stride is not supported");
  for (int64_t v : s.padding) EMBER_CHECK(v >= 0, "negative padding is not supported");
  for (int64_t v : s.output_padding) EMBER_CHECK(v >= 0, "negative output_padding is not supported");
  for (int64_t v : s.dilation) EMBER_CHECK(v > 0, "non-positive dilation is not supported");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");

  const IntArrayRef ws = weight.sizes();
  EMBER_CHECK(input.dim() == k, "Expected ", k, "-dimensional input for ", k, "-dimensional weight ", shape_str(ws),
              ", but got ", input.dim(), "-dimensional input of size ", shape_str(input.sizes()), " instead");
  EMBER_CHECK(ws[0] >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", shape_str(ws), " instead");
  EMBER_CHECK(ws[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size ", shape_str(ws), " instead");
  DimVector in_sp(input.sizes().begin() + 2, input.sizes().end());
  DimVector kernel(ws.begin() + 2, ws.end());
  DimVector out_sp(dim);
  int64_t out_channels;
  if (!transposed) {
    EMBER_CHECK(input.size(1) == ws[1] * groups, "Given groups=", groups, ", weight of size ", shape_str(ws),
                ", expected input", shape_str(input.sizes()), " to have ", ws[1] * groups, " channels, but got ",
                input.size(1), " channels instead");
    EMBER_CHECK(bias == nullptr || (bias->dim() == 1 && bias->size(0) == ws[0]), "Given weight of size ", shape_str(ws),
                ", expected bias to be 1-dimensional with ", ws[0], " elements, but got bias of size ",
                shape_str(bias ? bias->sizes() : IntArrayRef()), " instead");
    DimVector padded(dim), extent(dim);
    bool fits = true;
    for (int64_t d = 0; d < dim; ++d) {
      padded[d] = in_sp[d] + 2 * s.padding[d];
      extent[d] = s.dilation[d] * (kernel[d] - 1) + 1;
      fits &= padded[d] >= extent[d];
    }
    EMBER_CHECK(fits, "Calculated padded input size per channel: ", sizes_x(padded), ". Kernel size: ", sizes_x(extent),
                ". Kernel size can't be greater than actual input size");
    for (int64_t d = 0; d < dim; ++d) out_sp[d] = (padded[d] - extent[d]) / s.stride[d] + 1;
    out_channels = ws[0];
  } else {
    EMBER_CHECK(input.size(1) == ws[0], "Given transposed=1, weight of size ", shape_str(ws), ", expected input",
                shape_str(input.sizes()), " to have ", ws[0], " channels, but got ", input.size(1),
                " channels instead");
    EMBER_CHECK(bias == nullptr || (bias->dim() == 1 && bias->size(0) == ws[1] * groups),
                "Given transposed=1, weight of size ", shape_str(ws), ", expected bias to be 1-dimensional with ",
                ws[1] * groups, " elements, but got bias of size ", shape_str(bias ? bias->sizes() : IntArrayRef()),
                " instead");
    bool op_ok = true;
    for (int64_t d = 0; d < dim; ++d) {
      op_ok &= s.output_padding[d] < s.stride[d] || s.output_padding[d] < s.dilation[d];
    }
    if (!op_ok) {
      // PyTorch's wording names the dims; a 1-d problem is reported as 2-d with height 1
      static const char* names3[] = {"depth", "height", "width"};
      const int64_t shown = std::max<int64_t>(dim, 2);
      auto value = [&](const DimVector& v, int64_t i, int64_t fill) {
        return i < shown - dim ? fill : v[i - (shown - dim)];
      };
      std::string msg = "output padding must be smaller than either stride or dilation, but got";
      const char* const* names = names3 + (3 - shown);
      for (int64_t i = 0; i < shown; ++i)
        msg += std::string(" output_padding_") + names[i] + ": " + std::to_string(value(s.output_padding, i, 0));
      for (int64_t i = 0; i < shown; ++i)
        msg += std::string(" stride_") + names[i] + ": " + std::to_string(value(s.stride, i, 1));
      for (int64_t i = 0; i < shown; ++i)
        msg += std::string(" dilation_") + names[i] + ": " + std::to_string(value(s.dilation, i, 1));
      EMBER_CHECK(false, msg);
    }
    bool positive = true;
    for (int64_t d = 0; d < dim; ++d) {
      out_sp[d] =
          (in_sp[d] - 1) * s.stride[d] - 2 * s.padding[d] + s.dilation[d] * (kernel[d] - 1) + s.output_padding[d] + 1;
      positive &= out_sp[d] > 0;
    }
    EMBER_CHECK(positive, "Given input size per channel: ", sizes_x(in_sp),
                ". Calculated output size per channel: ", sizes_x(out_sp), ". Output size is too small");
    out_channels = ws[1] * groups;
  }
  // Integer convolutions run on the CPU only (ConvolutionInteger.cpp), as PyTorch's slow path.
  EMBER_CHECK_NOT_IMPLEMENTED(
      c10::isFloatingType(input.dtype()) || (input.is_cpu() && c10::isIntegralType(input.dtype(), false)),
      "convolution: not implemented for dtype ", c10::toPythonName(input.dtype()),
      input.is_cpu() ? "" : " on this device (integer convolutions run on the CPU only)");

  s.output_sizes = DimVector{input.size(0), out_channels};
  for (int64_t v : out_sp) s.output_sizes.push_back(v);
  const DimVector& big = transposed ? out_sp : in_sp;
  const DimVector& small = transposed ? in_sp : out_sp;
  ConvGeometry& g = s.geometry;
  for (int64_t d = 0; d < dim; ++d) {
    const int64_t i = 3 - dim + d;
    g.input[i] = big[d];
    g.output[i] = small[d];
    g.kernel[i] = kernel[d];
    g.stride[i] = s.stride[d];
    g.padding[i] = s.padding[d];
    g.dilation[i] = s.dilation[d];
  }
  s.Ms = ws[0] / groups;
  s.Cb = ws[1];
  return s;
}

namespace {

// ---- products ---------------------------------------------------------------------------------

// One problem: the sizes of the contiguous operands.
struct ConvProblem {
  ScalarType dtype;
  const ConvGeometry* g;
  int64_t N, groups, Ms, Cb;
  int64_t Kg() const { return Cb * g->kernel_numel(); }  // columns of one group's weight matrix
  int64_t L() const { return g->output_numel(); }        // small-side positions per image
  int64_t In() const { return g->input_numel(); }        // big-side positions per image
  int64_t big_image() const { return groups * Cb * In(); }
  int64_t small_image() const { return groups * Ms * L(); }
  int64_t cols_image() const { return groups * Kg() * L(); }
  // The BLAS path's columns of one image: rows of ld_cols() elements, L() of them used. A
  // row stride of a multiple of 1 KiB maps the rows a GEMM packs together onto the same
  // few cache sets (32x32 images: 4 KiB rows); a cache line more spreads them.
  int64_t ld_cols() const {
    const int64_t bytes = L() * static_cast<int64_t>(c10::elementSize(dtype));
    return bytes >= 1024 && bytes % 1024 == 0 ? L() + 64 / static_cast<int64_t>(c10::elementSize(dtype)) : L();
  }
  int64_t padded_cols_image() const { return groups * Kg() * ld_cols(); }
  int64_t image_work() const { return groups * Ms * Kg() * L(); }  // multiply-adds of one image's products
  // Images per chunk of the small-product path: their columns stay within kColumnsBudget.
  int64_t chunk() const {
    return std::max<int64_t>(1, std::min<int64_t>(N, kColumnsBudget / std::max<int64_t>(cols_image(), 1)));
  }
  // BLAS path: one GEMM per image and group. Weight matrices with very few rows or columns
  // (depthwise, tiny channel counts) are a poor fit for BLAS: those products run per image
  // and group with small_gemm, in parallel.
  bool batched_blas() const { return Ms >= 4 && Kg() >= 4; }
  // BLAS path, thin images: one product per group over all N images (N * L columns), when
  // the whole batch's columns and small side fit the budget.
  bool whole_batch() const {
    return batched_blas() && N > 1 && L() < kThinPositions &&
           N * std::max(cols_image(), small_image()) <= kColumnsBudget;
  }
};

int64_t product_grain(int64_t work) { return std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(work, 1)); }

template <typename T>
T* data_of(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// How the BLAS path spreads one call's images over the threads. With at least as many
// images as threads, the images are split into `slots` contiguous ranges that run in
// parallel, each with its own columns buffer and single-threaded products: one parallel
// region per call, and an image's columns are still in its core's cache when the GEMM
// reads them. Otherwise (one thread, fewer images than threads, a few large images, or
// columns too large to give every thread a buffer) the images go one at a time: im2col /
// col2im in parallel, the product split over the threads (gemm_cpu's policy).
int64_t image_slots(const ConvProblem& p) {
  const int64_t threads = get_num_threads();
  if (threads <= 1 || p.N < threads || in_parallel_region()) return 1;
  if (threads * p.padded_cols_image() > kColumnsBudget) return 1;
  // a few large images: gemm_cpu's panels share each product evenly, N / threads may not
  if (p.N < 2 * threads && p.image_work() > kBlasSerialWork) return 1;
  return threads;
}

// body(slot, n_begin, n_end) for each slot's images, in parallel when slots > 1.
template <typename F>
void for_each_image_range(int64_t slots, int64_t N, const F& body) {
  if (slots == 1) {
    body(int64_t{0}, int64_t{0}, N);
    return;
  }
  parallel_for(0, slots, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) body(s, N * s / slots, N * (s + 1) / slots);
  });
}

// rows[c, :] = bias[c] for c < C (S positions each): the output a GEMM with beta 1 adds to.
template <typename T>
void fill_bias(T* rows, const T* bias, int64_t C, int64_t S) {
  for (int64_t c = 0; c < C; ++c) std::fill(rows + c * S, rows + (c + 1) * S, bias[c]);
}

// out[n, c, :] += bias[c]
template <typename T>
void add_bias(T* out, const T* bias, int64_t N, int64_t C, int64_t S) {
  parallel_for(0, N * C, product_grain(S), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T v = bias[r % C];
      T* row = out + r * S;
      for (int64_t i = 0; i < S; ++i) row[i] += v;
    }
  });
}

// The small side in the whole-batch layout: rows[c, n * L + l] = small[n, c, l] (C channels).
template <typename T>
void gather_small(const T* small, T* rows, int64_t N, int64_t C, int64_t L) {
  parallel_for(0, C, product_grain(N * L), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      for (int64_t n = 0; n < N; ++n) std::copy_n(small + (n * C + c) * L, L, rows + (c * N + n) * L);
    }
  });
}

// ... and back: small[n, c, l] = rows[c, n * L + l] (+ bias[c]).
template <typename T>
void scatter_small(const T* rows, const T* bias, T* small, int64_t N, int64_t C, int64_t L) {
  parallel_for(0, N * C, product_grain(L), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / C, c = r % C;
      const T* src = rows + (c * N + n) * L;
      T* dst = small + r * L;
      if (bias == nullptr) {
        std::copy_n(src, L, dst);
      } else {
        for (int64_t i = 0; i < L; ++i) dst[i] = src[i] + bias[c];
      }
    }
  });
}

// Whole-batch columns: im2col of every image, side by side (G * Kg rows of N * L).
template <typename T>
Tensor batch_columns(const ConvProblem& p, const T* big) {
  const int64_t NL = p.N * p.L();
  Tensor cols = empty({p.groups * p.Kg() * NL}, p.dtype);
  im2col_stub(DeviceType::CPU, p.dtype, big, p.big_image(), cols.data_ptr(), ColumnsLayout{p.L(), NL}, p.N,
              p.groups * p.Cb, *p.g);
  return cols;
}

// big = col2im(W^T @ rows) for whole-batch rows (G * Ms, N * L); cols is scratch of G * Kg * N * L.
template <typename T>
void batch_small_to_big(const ConvProblem& p, const T* rows, const T* w, T* cols, T* big) {
  const int64_t Kg = p.Kg(), Ms = p.Ms, NL = p.N * p.L();
  for (int64_t grp = 0; grp < p.groups; ++grp) {
    gemm_cpu(true, false, Kg, NL, Ms, T(1), w + grp * Ms * Kg, Kg, rows + grp * Ms * NL, NL, T(0), cols + grp * Kg * NL,
             NL);
  }
  col2im_stub(DeviceType::CPU, p.dtype, cols, ColumnsLayout{p.L(), NL}, big, p.big_image(), p.N, p.groups * p.Cb, *p.g);
}

// small[n] = W @ im2col(big[n]) (+ bias, one value per small-side channel) for every image.
template <typename T>
void big_to_small(const ConvProblem& p, const T* big, const T* w, const T* bias, T* small) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms, G = p.groups;
  const bool identity = p.g->is_identity();  // 1x1 kernel, stride 1, no padding: columns == image
  if (Kg == 0) {
    parallel_for(0, p.N, product_grain(p.small_image()), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        T* out = small + n * p.small_image();
        if (bias != nullptr) {
          fill_bias(out, bias, G * Ms, L);
        } else {
          std::fill(out, out + p.small_image(), T(0));
        }
      }
    });
    return;
  }
  if (p.whole_batch()) {
    const int64_t NL = p.N * L;
    const Tensor cols = batch_columns<T>(p, big);
    Tensor rows = empty({G * Ms * NL}, p.dtype);
    for (int64_t grp = 0; grp < G; ++grp) {
      gemm_cpu(false, false, Ms, NL, Kg, T(1), w + grp * Ms * Kg, Kg, data_of<const T>(cols) + grp * Kg * NL, NL, T(0),
               data_of<T>(rows) + grp * Ms * NL, NL);
    }
    scatter_small(data_of<const T>(rows), bias, small, p.N, G * Ms, L);
    return;
  }
  if (p.batched_blas()) {
    const int64_t slots = image_slots(p), ld = identity ? L : p.ld_cols(), image_cols = G * Kg * ld;
    Tensor cols = identity ? Tensor() : empty({slots * image_cols}, p.dtype);
    for_each_image_range(slots, p.N, [&](int64_t slot, int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        const T* col = big + n * p.big_image();
        if (!identity) {
          T* buf = data_of<T>(cols) + slot * image_cols;
          im2col_stub(DeviceType::CPU, p.dtype, col, p.big_image(), buf, ColumnsLayout{image_cols, ld}, 1, G * p.Cb,
                      *p.g);
          col = buf;
        }
        T* out = small + n * p.small_image();
        if (bias != nullptr) fill_bias(out, bias, G * Ms, L);  // the GEMM adds to it (beta 1)
        for (int64_t grp = 0; grp < G; ++grp) {
          gemm_cpu(false, false, Ms, L, Kg, T(1), w + grp * Ms * Kg, Kg, col + grp * Kg * ld, ld,
                   bias != nullptr ? T(1) : T(0), out + grp * Ms * L, L);
        }
      }
    });
    return;
  }
  // small products, per image and group, in parallel
  const int64_t chunk = p.chunk();
  Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype);
  for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.N - n0);
    const T* col = identity ? big + n0 * p.big_image() : static_cast<const T*>(cols.data_ptr());
    if (!identity) {
      im2col_stub(DeviceType::CPU, p.dtype, big + n0 * p.big_image(), p.big_image(), cols.data_ptr(),
                  ColumnsLayout{p.cols_image(), L}, nb, G * p.Cb, *p.g);
    }
    T* out = small + n0 * p.small_image();
    parallel_for(0, nb * G, product_grain(Ms * L * Kg), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t n = i / G, grp = i % G;
        small_gemm_stub(DeviceType::CPU, p.dtype, false, false, Ms, L, Kg, w + grp * Ms * Kg, Kg,
                        col + n * p.cols_image() + grp * Kg * L, L, out + n * p.small_image() + grp * Ms * L, L, false);
      }
    });
  }
  if (bias != nullptr) add_bias(small, bias, p.N, G * Ms, L);
}

// big[n] = col2im(W^T @ small[n]) (+ bias, one value per big-side channel) for every image.
template <typename T>
void small_to_big(const ConvProblem& p, const T* small, const T* w, const T* bias, T* big) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms, G = p.groups, In = p.In();
  if (Kg == 0) return;  // no big-side channels
  const bool identity = p.g->is_identity();
  if (p.whole_batch()) {
    const int64_t NL = p.N * L;
    Tensor rows = empty({G * Ms * NL}, p.dtype), cols = empty({G * Kg * NL}, p.dtype);
    gather_small(small, data_of<T>(rows), p.N, G * Ms, L);
    batch_small_to_big(p, data_of<const T>(rows), w, data_of<T>(cols), big);
    if (bias != nullptr) add_bias(big, bias, p.N, G * p.Cb, In);
    return;
  }
  if (p.batched_blas()) {
    const int64_t slots = image_slots(p), ld = identity ? L : p.ld_cols(), image_cols = G * Kg * ld;
    Tensor cols = identity ? Tensor() : empty({slots * image_cols}, p.dtype);
    for_each_image_range(slots, p.N, [&](int64_t slot, int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        T* image = big + n * p.big_image();
        T* col = identity ? image : data_of<T>(cols) + slot * image_cols;
        const bool fused_bias = identity && bias != nullptr;  // the GEMM adds to the bias (beta 1)
        if (fused_bias) fill_bias(image, bias, G * p.Cb, In);
        for (int64_t grp = 0; grp < G; ++grp) {
          gemm_cpu(true, false, Kg, L, Ms, T(1), w + grp * Ms * Kg, Kg, small + n * p.small_image() + grp * Ms * L, L,
                   fused_bias ? T(1) : T(0), col + grp * Kg * ld, ld);
        }
        if (!identity) {
          col2im_stub(DeviceType::CPU, p.dtype, col, ColumnsLayout{image_cols, ld}, image, p.big_image(), 1, G * p.Cb,
                      *p.g);
          if (bias != nullptr) {
            for (int64_t c = 0; c < G * p.Cb; ++c) {
              T* row = image + c * In;
              for (int64_t i = 0; i < In; ++i) row[i] += bias[c];
            }
          }
        }
      }
    });
    return;
  }
  const int64_t chunk = p.chunk();
  Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype);
  for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.N - n0);
    // with a 1x1 kernel, stride 1 and no padding the columns are the image itself
    T* col = identity ? big + n0 * p.big_image() : static_cast<T*>(cols.data_ptr());
    const T* in = small + n0 * p.small_image();
    parallel_for(0, nb * G, product_grain(Ms * L * Kg), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t n = i / G, grp = i % G;
        small_gemm_stub(DeviceType::CPU, p.dtype, true, false, Kg, L, Ms, w + grp * Ms * Kg, Kg,
                        in + n * p.small_image() + grp * Ms * L, L, col + n * p.cols_image() + grp * Kg * L, L, false);
      }
    });
    if (!identity) {
      col2im_stub(DeviceType::CPU, p.dtype, col, ColumnsLayout{p.cols_image(), L}, big + n0 * p.big_image(),
                  p.big_image(), nb, G * p.Cb, *p.g);
    }
  }
  if (bias != nullptr) add_bias(big, bias, p.N, G * p.Cb, In);
}

// gw[g] = sum_n small[n, g] @ im2col(big[n, g])^T. With big_grad (a convolution's grad_input,
// BLAS path only) the same pass also computes big_grad[n] = col2im(W^T @ small[n]): each
// image's grad_output feeds both products while it is in cache, in one parallel region.
template <typename T>
void weight_grad(const ConvProblem& p, const T* big, const T* small, T* gw, const T* w = nullptr,
                 T* big_grad = nullptr) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms, G = p.groups;
  const int64_t wsize = G * Ms * Kg;
  if (Kg == 0 || Ms == 0 || L == 0 || p.N == 0) {
    std::fill(gw, gw + wsize, T(0));
    return;
  }
  const bool identity = p.g->is_identity();
  if (p.whole_batch()) {
    // gw[g] = rows[g] @ columns[g]^T, one product with N * L terms per entry
    const int64_t NL = p.N * L;
    Tensor cols = batch_columns<T>(p, big), rows = empty({G * Ms * NL}, p.dtype);
    gather_small(small, data_of<T>(rows), p.N, G * Ms, L);
    for (int64_t grp = 0; grp < G; ++grp) {
      gemm_cpu(false, true, Ms, Kg, NL, T(1), data_of<const T>(rows) + grp * Ms * NL, NL,
               data_of<const T>(cols) + grp * Kg * NL, NL, T(0), gw + grp * Ms * Kg, Kg);
    }
    if (big_grad != nullptr) batch_small_to_big(p, data_of<const T>(rows), w, data_of<T>(cols), big_grad);
    return;
  }
  if (p.batched_blas()) {
    // Each slot accumulates its images' products with the GEMM's beta, so no per-image
    // temporary. While the weight is small (kTransposedSum elements) the slot sums are
    // gW[g]^T = im2col(big[n, g]) @ small[n, g]^T (Kg x Ms), whose operands OpenBLAS packs
    // faster, and gw is their transposed sum; a larger weight is summed in gw's own layout,
    // gW[g] = small[n, g] @ im2col(big[n, g])^T, with slot 0 writing gw itself: the strided
    // transpose of a weight past L2 costs more than the products of a thin image. Either
    // way gw is the sum of the slots in slot order.
    const int64_t slots = image_slots(p), ld = identity ? L : p.ld_cols(), image_cols = G * Kg * ld;
    const bool transposed_sums = wsize <= kTransposedSum;
    Tensor cols = identity ? Tensor() : empty({slots * image_cols}, p.dtype);
    Tensor sums =
        transposed_sums || slots > 1 ? empty({(transposed_sums ? slots : slots - 1) * wsize}, p.dtype) : Tensor();
    auto slot_sum = [&](int64_t slot) -> T* {
      if (transposed_sums) return data_of<T>(sums) + slot * wsize;
      return slot == 0 ? gw : data_of<T>(sums) + (slot - 1) * wsize;
    };
    for_each_image_range(slots, p.N, [&](int64_t slot, int64_t n0, int64_t n1) {
      T* acc = slot_sum(slot);
      if (n0 == n1) std::fill(acc, acc + wsize, T(0));
      for (int64_t n = n0; n < n1; ++n) {
        const T* col = big + n * p.big_image();
        if (!identity) {
          T* buf = data_of<T>(cols) + slot * image_cols;
          im2col_stub(DeviceType::CPU, p.dtype, col, p.big_image(), buf, ColumnsLayout{image_cols, ld}, 1, G * p.Cb,
                      *p.g);
          col = buf;
        }
        const T* sn = small + n * p.small_image();
        const T beta = n == n0 ? T(0) : T(1);
        for (int64_t grp = 0; grp < G; ++grp) {
          if (transposed_sums) {
            gemm_cpu(false, true, Kg, Ms, L, T(1), col + grp * Kg * ld, ld, sn + grp * Ms * L, L, beta,
                     acc + grp * Kg * Ms, Ms);
          } else {
            gemm_cpu(false, true, Ms, Kg, L, T(1), sn + grp * Ms * L, L, col + grp * Kg * ld, ld, beta,
                     acc + grp * Ms * Kg, Kg);
          }
        }
        if (big_grad != nullptr) {  // the columns buffer is free again
          T* image = big_grad + n * p.big_image();
          T* out = identity ? image : data_of<T>(cols) + slot * image_cols;
          for (int64_t grp = 0; grp < G; ++grp) {
            gemm_cpu(true, false, Kg, L, Ms, T(1), w + grp * Ms * Kg, Kg, sn + grp * Ms * L, L, T(0),
                     out + grp * Kg * ld, ld);
          }
          if (!identity) {
            col2im_stub(DeviceType::CPU, p.dtype, out, ColumnsLayout{image_cols, ld}, image, p.big_image(), 1, G * p.Cb,
                        *p.g);
          }
        }
      }
    });
    if (transposed_sums) {
      const T* acc = data_of<T>(sums);
      for (int64_t grp = 0; grp < G; ++grp) {
        for (int64_t m = 0; m < Ms; ++m) {
          for (int64_t k = 0; k < Kg; ++k) {
            T v = T(0);
            for (int64_t s = 0; s < slots; ++s) v += acc[s * wsize + (grp * Kg + k) * Ms + m];
            gw[(grp * Ms + m) * Kg + k] = v;
          }
        }
      }
    } else if (slots > 1) {
      const T* acc = data_of<T>(sums);
      parallel_for(0, wsize, GRAIN_SIZE, [&](int64_t b, int64_t e) {
        for (int64_t s = 0; s + 1 < slots; ++s) {
          for (int64_t i = b; i < e; ++i) gw[i] += acc[s * wsize + i];
        }
      });
    }
    return;
  }
  // small products: groups in parallel (each accumulates its own gw[g], no races)
  std::fill(gw, gw + wsize, T(0));
  const int64_t chunk = p.chunk();
  Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype);
  for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.N - n0);
    const T* col = identity ? big + n0 * p.big_image() : static_cast<const T*>(cols.data_ptr());
    if (!identity) {
      im2col_stub(DeviceType::CPU, p.dtype, big + n0 * p.big_image(), p.big_image(), cols.data_ptr(),
                  ColumnsLayout{p.cols_image(), L}, nb, G * p.Cb, *p.g);
    }
    const T* gout = small + n0 * p.small_image();
    parallel_for(0, G, product_grain(nb * Ms * L * Kg), [&](int64_t b, int64_t e) {
      for (int64_t grp = b; grp < e; ++grp) {
        for (int64_t n = 0; n < nb; ++n) {
          small_gemm_stub(DeviceType::CPU, p.dtype, false, true, Ms, Kg, L, gout + n * p.small_image() + grp * Ms * L,
                          L, col + n * p.cols_image() + grp * Kg * L, L, gw + grp * Ms * Kg, Kg, true);
        }
      }
    });
  }
}

// The direct kernel (ConvDirect.h) for a 2-d, stride-1, undilated, ungrouped convolution:
// big_to_small of `big` (N, C, H, W) into `small` (N, K, oH, oW). With flip (a convolution's
// grad_input) `big` is grad_output, `small` grad_input and the padding k - 1 - p. Returns
// false when it does not apply (the caller takes the im2col path).
bool try_direct_conv(const ConvShape& s, ScalarType ct, const Tensor& big, const Tensor& w, const void* bias,
                     const Tensor& small, bool flip) {
  const ConvGeometry& g = s.geometry;
  if (s.dim != 2 || s.transposed || s.groups != 1 || big.size(0) == 0) return false;
  if (g.is_identity()) return false;  // 1x1, unpadded: the GEMM reads the image in place
  for (int i = 1; i < 3; ++i) {
    if (g.stride[i] != 1 || g.dilation[i] != 1) return false;
    if (flip && g.padding[i] > g.kernel[i] - 1) return false;
  }
  DirectConvArgs a;
  a.N = big.size(0);
  a.C = big.size(1);
  a.H = big.size(2);
  a.W = big.size(3);
  a.K = small.size(1);
  a.kH = g.kernel[1];
  a.kW = g.kernel[2];
  a.pH = flip ? g.kernel[1] - 1 - g.padding[1] : g.padding[1];
  a.pW = flip ? g.kernel[2] - 1 - g.padding[2] : g.padding[2];
  a.oH = small.size(2);
  a.oW = small.size(3);
  if (a.oH != a.H + 2 * a.pH - a.kH + 1 || a.oW != a.W + 2 * a.pW - a.kW + 1) return false;
  a.input = big.data_ptr();
  a.weight = w.data_ptr();
  a.bias = bias;
  a.output = small.data_ptr();
  a.flip_weight = flip;
  return direct_conv_stub(DeviceType::CPU, ct, a);
}

// The direct weight gradient (ConvDirect.h) of the same convolutions as try_direct_conv:
// gw (K, C, kH, kW) from x (N, C, H, W) and grad_output (N, K, oH, oW). Returns false when
// it does not apply (the caller takes the im2col path).
bool try_direct_conv_weight(const ConvShape& s, ScalarType ct, const Tensor& x, const Tensor& go, const Tensor& gw) {
  const ConvGeometry& g = s.geometry;
  if (s.dim != 2 || s.transposed || s.groups != 1 || x.size(0) == 0) return false;
  if (g.is_identity()) return false;  // 1x1, unpadded: the GEMM reads the image in place
  for (int i = 1; i < 3; ++i) {
    if (g.stride[i] != 1 || g.dilation[i] != 1) return false;
  }
  DirectConvWeightArgs a;
  a.N = x.size(0);
  a.C = x.size(1);
  a.H = x.size(2);
  a.W = x.size(3);
  a.K = go.size(1);
  a.kH = g.kernel[1];
  a.kW = g.kernel[2];
  a.pH = g.padding[1];
  a.pW = g.padding[2];
  a.oH = go.size(2);
  a.oW = go.size(3);
  if (a.oH != a.H + 2 * a.pH - a.kH + 1 || a.oW != a.W + 2 * a.pW - a.kW + 1) return false;
  a.input = x.data_ptr();
  a.grad_output = go.data_ptr();
  a.grad_weight = gw.data_ptr();
  return direct_conv_weight_stub(DeviceType::CPU, ct, a);
}

template <typename F>
void dispatch_float_double(ScalarType t, const F& f) {
  if (t == ScalarType::Double) {
    f(double{});
  } else {
    f(float{});
  }
}

}  // namespace

// A result in the dtype and memory format the caller expects.
Tensor conv_result(Tensor t, ScalarType dtype, MemoryFormat fmt) {
  t = t.to(dtype);
  return fmt == MemoryFormat::Contiguous ? t : t.contiguous(fmt);
}

MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight) {
  const MemoryFormat f = suggest_memory_format(input);
  return f != MemoryFormat::Contiguous ? f : suggest_memory_format(weight);
}

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  const Tensor* b = bias.has_value() && bias->defined() ? &*bias : nullptr;
  const ConvShape s =
      check_convolution(input, weight, b, stride, padding, dilation, transposed, output_padding, groups);
  if (!c10::isFloatingType(input.dtype())) return convolution_integer(s, input, weight, b);
  const ScalarType ct = nn_compute_type(input.dtype());
  const Tensor x = input.to(ct).contiguous();
  const Tensor w = weight.to(ct).contiguous();
  Tensor out = empty(s.output_sizes, ct, input.device());
  if (out.numel() > 0) {
    const ConvProblem p{ct, &s.geometry, input.size(0), groups, s.Ms, s.Cb};
    const Tensor bc = b != nullptr ? b->to(ct).contiguous() : Tensor();
    if (try_direct_conv(s, ct, x, w, bc.defined() ? bc.data_ptr() : nullptr, out, false)) {
      return conv_result(out, input.dtype(), conv_memory_format(input, weight));
    }
    dispatch_float_double(ct, [&](auto tag) {
      using T = decltype(tag);
      const T* bp = bc.defined() ? data_of<const T>(bc) : nullptr;
      if (!transposed) {
        big_to_small<T>(p, data_of<const T>(x), data_of<const T>(w), bp, data_of<T>(out));
      } else {
        small_to_big<T>(p, data_of<const T>(x), data_of<const T>(w), bp, data_of<T>(out));
      }
    });
  }
  return conv_result(out, input.dtype(), conv_memory_format(input, weight));
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight,
                                                        const std::optional<c10::DimVector>& bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        const std::vector<bool>& output_mask) {
  EMBER_CHECK(output_mask.size() == 3, "convolution_backward: output_mask must have 3 elements, but got ",
              output_mask.size());
  const ConvShape s =
      check_convolution(input, weight, nullptr, stride, padding, dilation, transposed, output_padding, groups);
  check_floating("convolution_backward", input);  // integer convolutions have no gradient
  EMBER_CHECK(grad_output.dtype() == input.dtype(), "convolution_backward: expected grad_output of dtype ",
              c10::toPythonName(input.dtype()), ", but got ", c10::toPythonName(grad_output.dtype()));
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(s.output_sizes), "convolution_backward: expected grad_output of size ",
              shape_str(s.output_sizes), " (the convolution's output), but got ", shape_str(grad_output.sizes()));
  const int64_t C_out = s.output_sizes[1];
  EMBER_CHECK(!output_mask[2] || !bias_sizes.has_value() || (bias_sizes->size() == 1 && (*bias_sizes)[0] == C_out),
              "convolution_backward: bias_sizes ", shape_str(bias_sizes ? IntArrayRef(*bias_sizes) : IntArrayRef()),
              " do not match the ", C_out, " output channels");
  const ScalarType ct = nn_compute_type(input.dtype());
  const Tensor go = grad_output.to(ct).contiguous();
  const ConvProblem p{ct, &s.geometry, input.size(0), groups, s.Ms, s.Cb};
  Tensor gi, gw, gb;
  dispatch_float_double(ct, [&](auto tag) {
    using T = decltype(tag);
    const T* gop = static_cast<const T*>(go.data_ptr());
    // grad_input by the direct kernel where it applies (stride 1: a convolution of grad_output
    // with the flipped kernel); otherwise both gradients of a convolution in one pass over the
    // images (see weight_grad)
    bool direct = false;
    if (output_mask[0] && !transposed && input.numel() > 0) {
      const Tensor w = weight.to(ct).contiguous();
      Tensor g = empty(input.sizes(), ct, input.device());
      direct = try_direct_conv(s, ct, go, w, nullptr, g, true);
      if (direct) gi = conv_result(g, input.dtype(), suggest_memory_format(input));
    }
    // grad_weight by the direct kernel where it applies (stride 1, rows of at least
    // kDirectWeightMinWidth): no columns matrix
    bool direct_w = false;
    if (output_mask[1] && !transposed && input.numel() > 0 && weight.numel() > 0) {
      const Tensor x = input.to(ct).contiguous();
      Tensor g = empty(weight.sizes(), ct, weight.device());
      direct_w = try_direct_conv_weight(s, ct, x, go, g);
      if (direct_w) gw = conv_result(g, weight.dtype(), suggest_memory_format(weight));
    }
    const bool fused = !direct && !direct_w && output_mask[0] && output_mask[1] && !transposed && p.batched_blas() &&
                       p.N > 0 && p.L() > 0;
    if (fused) {
      const Tensor w = weight.to(ct).contiguous();
      const Tensor x = input.to(ct).contiguous();
      gi = empty(input.sizes(), ct, input.device());
      gw = empty(weight.sizes(), ct, weight.device());
      weight_grad<T>(p, data_of<const T>(x), gop, data_of<T>(gw), data_of<const T>(w), data_of<T>(gi));
      gi = conv_result(gi, input.dtype(), suggest_memory_format(input));
      gw = conv_result(gw, weight.dtype(), suggest_memory_format(weight));
    }
    if (output_mask[0] && !fused && !direct) {
      const Tensor w = weight.to(ct).contiguous();
      gi = empty(input.sizes(), ct, input.device());
      if (gi.numel() > 0) {
        if (!transposed) {
          small_to_big<T>(p, gop, data_of<const T>(w), nullptr, data_of<T>(gi));
        } else {
          big_to_small<T>(p, gop, data_of<const T>(w), nullptr, data_of<T>(gi));
        }
      }
      gi = conv_result(gi, input.dtype(), suggest_memory_format(input));
    }
    if (output_mask[1] && !fused && !direct_w) {
      const Tensor x = input.to(ct).contiguous();
      gw = empty(weight.sizes(), ct, weight.device());
      if (gw.numel() > 0) {
        const T* xp = static_cast<const T*>(x.data_ptr());
        if (!transposed) {
          weight_grad<T>(p, xp, gop, static_cast<T*>(gw.data_ptr()));
        } else {
          weight_grad<T>(p, gop, xp, static_cast<T*>(gw.data_ptr()));
        }
      }
      gw = conv_result(gw, weight.dtype(), suggest_memory_format(weight));
    }
    if (output_mask[2]) {
      gb = empty({C_out}, ct, grad_output.device());
      const int64_t N = go.size(0);
      const int64_t S = N * C_out == 0 ? 0 : go.numel() / (N * C_out);
      if (C_out > 0) channel_sum_stub(DeviceType::CPU, ct, gop, gb.data_ptr(), N, C_out, S);
      gb = gb.to(input.dtype());
    }
  });
  return {gi, gw, gb};
}

}  // namespace ember::at::native
