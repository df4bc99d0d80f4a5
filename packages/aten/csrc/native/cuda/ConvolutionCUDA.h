#pragma once
// convolution / convolution_backward on CUDA: the CPU kernel's plan (Convolution.cpp:
// big / small sides, per-group weight matrices W[g] of Ms x Kg) with im2col / col2im
// kernels (Im2Col.cu) and cuBLAS products (CUDABlas.h), in the input's dtype (float16 /
// bfloat16 accumulate in float32 inside cuBLAS). Columns are laid out image after image
// (ColumnsLayout{cols_image, L}), so one strided-batched GEMM covers a chunk of images
// for a group (or every group of one image, when groups outnumber the images), with no
// layout copies:
//
//   big_to_small   small[n, g] (Ms x L)  = W[g] @ col[n, g] (Kg x L)
//   small_to_big   col[n, g]   (Kg x L)  = W[g]^T @ small[n, g], then col2im
//   weight_grad    gW[g]       (Ms x Kg) += small[n, g] @ col[n, g]^T, image by image
//                  (float16 / bfloat16: summed in a float32 buffer, rounded once)
//   bias           out[n] (C x S) += bias (C x 1) @ ones (1 x S); its gradient two
//                  products with ones vectors (float32 sums for the half types).
//
// float32 products may use TF32 when ember.aten.backends.cudnn.allow_tf32 is set (the
// default, as PyTorch's cuDNN convolutions). Host code only; everything runs on the
// current stream of the input's device.
//
// Every function that calls a GEMM is a template over the BLAS (`Blas::gemm_strided_batched`,
// CUDABlas.h's signature): ConvolutionCUDA.cpp instantiates them with cuBLAS (cuda::blas::CuBLAS),
// the test-only module ember_aten_testing with its host emulation of cuBLAS, so tests check
// every call planned here (operand order, transposes, leading dimensions, batch strides) on
// CPU tensors.
#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <ember/c10/DeviceGuard.h>

#include "../Blas.h"
#include "../Convolution.h"
#include "CUDABlas.h"

namespace ember::at::native::cuda_conv {

constexpr int64_t kColumnsBudget = int64_t(1) << 25;  // elements of the im2col buffer per chunk

// The sizes of one problem over contiguous operands (as ConvProblem in Convolution.cpp).
struct Problem {
  ScalarType dtype;
  const ConvGeometry* g;
  int64_t N, G, Ms, Cb;
  bool tf32;
  int64_t Kg() const { return Cb * g->kernel_numel(); }
  int64_t L() const { return g->output_numel(); }
  int64_t big_image() const { return G * Cb * g->input_numel(); }
  int64_t small_image() const { return G * Ms * L(); }
  int64_t cols_image() const { return G * Kg() * L(); }
  int64_t chunk() const {
    return std::max<int64_t>(1, std::min<int64_t>(N, kColumnsBudget / std::max<int64_t>(cols_image(), 1)));
  }
};

// base + offset elements of `dtype`
inline const void* at(const void* base, int64_t offset, ScalarType dtype) {
  return static_cast<const char*>(base) + offset * static_cast<int64_t>(c10::elementSize(dtype));
}
inline void* at(void* base, int64_t offset, ScalarType dtype) {
  return static_cast<char*>(base) + offset * static_cast<int64_t>(c10::elementSize(dtype));
}

// For images [n0, n0 + nb) and every group: C[n, g] = op(A[g]) B[n, g] (+ beta C[n, g]), with
// A[g] = w + g * a_group (shared by the images), B / C at b_image / c_image per image and
// b_group / c_group per group. One strided-batched GEMM per group, or per image when
// there are more groups than images.
template <typename Blas>
void per_image_and_group(const Problem& p, bool trans_a, int64_t m, int64_t n, int64_t k, const void* w, int64_t lda,
                         int64_t a_group, const void* b, int64_t ldb, int64_t b_image, int64_t b_group, void* c,
                         int64_t ldc, int64_t c_image, int64_t c_group, int64_t nb) {
  if (p.G <= nb) {
    for (int64_t grp = 0; grp < p.G; ++grp) {
      Blas::gemm_strided_batched(p.dtype, trans_a, false, m, n, k, 1.0, at(w, grp * a_group, p.dtype), lda, 0,
                                 at(b, grp * b_group, p.dtype), ldb, b_image, 0.0, at(c, grp * c_group, p.dtype), ldc,
                                 c_image, nb, p.tf32);
    }
  } else {
    for (int64_t img = 0; img < nb; ++img) {
      Blas::gemm_strided_batched(p.dtype, trans_a, false, m, n, k, 1.0, w, lda, a_group, at(b, img * b_image, p.dtype),
                                 ldb, b_group, 0.0, at(c, img * c_image, p.dtype), ldc, c_group, p.G, p.tf32);
    }
  }
}

// small[n] = W @ im2col(big[n]) for every image.
template <typename Blas>
void big_to_small(const Problem& p, const Tensor& big, const Tensor& w, const Tensor& small) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms;
  if (Kg == 0) {
    small.zero_();
    return;
  }
  const bool identity = p.g->is_identity();
  const int64_t chunk = p.chunk();
  Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype, big.device());
  for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.N - n0);
    const void* image = at(big.data_ptr(), n0 * p.big_image(), p.dtype);
    const void* col = image;  // a 1x1 kernel, stride 1, no padding: the columns are the image
    if (!identity) {
      im2col_stub(big.device().type, p.dtype, image, p.big_image(), cols.data_ptr(), ColumnsLayout{p.cols_image(), L},
                  nb, p.G * p.Cb, *p.g);
      col = cols.data_ptr();
    }
    per_image_and_group<Blas>(p, false, Ms, L, Kg, w.data_ptr(), Kg, Ms * Kg, col, L, p.cols_image(), Kg * L,
                              at(small.data_ptr(), n0 * p.small_image(), p.dtype), L, p.small_image(), Ms * L, nb);
  }
}

// big[n] = col2im(W^T @ small[n]) for every image.
template <typename Blas>
void small_to_big(const Problem& p, const Tensor& small, const Tensor& w, const Tensor& big) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms;
  if (Kg == 0) return;  // no big-side channels
  if (Ms == 0) {
    big.zero_();
    return;
  }
  const bool identity = p.g->is_identity();
  const int64_t chunk = p.chunk();
  Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype, big.device());
  for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.N - n0);
    void* image = at(big.data_ptr(), n0 * p.big_image(), p.dtype);
    void* col = identity ? image : cols.data_ptr();
    per_image_and_group<Blas>(p, true, Kg, L, Ms, w.data_ptr(), Kg, Ms * Kg,
                              at(small.data_ptr(), n0 * p.small_image(), p.dtype), L, p.small_image(), Ms * L, col, L,
                              p.cols_image(), Kg * L, nb);
    if (!identity) {
      col2im_stub(big.device().type, p.dtype, col, ColumnsLayout{p.cols_image(), L}, image, p.big_image(), nb,
                  p.G * p.Cb, *p.g);
    }
  }
}

// float16 / bfloat16: a sum over many products (images, positions) is kept in float32
// (cuBLAS writes a float32 C) and rounded once, as the CPU kernel does.
inline bool is_reduced(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

// gw[g] = sum_n small[n, g] @ im2col(big[n, g])^T
template <typename Blas>
void weight_grad(const Problem& p, const Tensor& big, const Tensor& small, const Tensor& gw) {
  const int64_t Kg = p.Kg(), L = p.L(), Ms = p.Ms;
  const bool reduced = is_reduced(p.dtype);
  // the sum over images accumulates in acc: gw itself, or a float32 buffer for half types
  const Tensor acc = reduced ? zeros(gw.sizes(), ScalarType::Float, gw.device()) : gw;
  if (!reduced) gw.zero_();
  if (Kg > 0 && Ms > 0 && L > 0 && p.N > 0) {
    const bool identity = p.g->is_identity();
    const int64_t chunk = p.chunk();
    Tensor cols = identity ? Tensor() : empty({chunk * p.cols_image()}, p.dtype, big.device());
    for (int64_t n0 = 0; n0 < p.N; n0 += chunk) {
      const int64_t nb = std::min(chunk, p.N - n0);
      const void* image = at(big.data_ptr(), n0 * p.big_image(), p.dtype);
      const void* col = image;
      if (!identity) {
        im2col_stub(big.device().type, p.dtype, image, p.big_image(), cols.data_ptr(), ColumnsLayout{p.cols_image(), L},
                    nb, p.G * p.Cb, *p.g);
        col = cols.data_ptr();
      }
      // image by image (the sum over images accumulates in acc), every group in one call
      for (int64_t img = 0; img < nb; ++img) {
        Blas::gemm_strided_batched(p.dtype, false, true, Ms, Kg, L, 1.0,
                                   at(small.data_ptr(), (n0 + img) * p.small_image(), p.dtype), L, Ms * L,
                                   at(col, img * p.cols_image(), p.dtype), L, Kg * L, 1.0, acc.data_ptr(), Kg, Ms * Kg,
                                   p.G, p.tf32, acc.dtype());
      }
    }
  }
  if (reduced) gw.copy_(acc);
}

// out (N, C, S) += bias[c], as N products bias (C x 1) @ ones (1 x S) accumulated into out
// (never TF32: a product with ones must not round its operand)
template <typename Blas>
void add_bias(const Tensor& out, const Tensor& bias) {
  const int64_t N = out.size(0), C = out.size(1), S = out.numel() / std::max<int64_t>(N * C, 1);
  if (out.numel() == 0) return;
  const Tensor ones = full({S}, Scalar(1.0), out.dtype(), out.device());
  Blas::gemm_strided_batched(out.dtype(), false, false, C, S, 1, 1.0, bias.data_ptr(), 1, 0, ones.data_ptr(), S, 0, 1.0,
                             out.data_ptr(), S, C * S, N, /*tf32=*/false);
}

// gb[c] = sum over images and positions of g (N, C, S): per_image (N*C) = g @ ones(S),
// then gb = per_image^T (C x N) @ ones(N) (never TF32; float16 / bfloat16 sum in float32)
template <typename Blas>
Tensor bias_grad(const Tensor& g, int64_t C) {
  const ScalarType st = is_reduced(g.dtype()) ? ScalarType::Float : g.dtype();
  Tensor gb = empty({C}, st, g.device());
  const int64_t N = g.size(0), S = N * C == 0 ? 0 : g.numel() / (N * C);
  if (C > 0 && (N == 0 || S == 0)) gb.zero_();
  if (C > 0 && N > 0 && S > 0) {
    const Tensor ones_s = full({S}, Scalar(1.0), g.dtype(), g.device());
    const Tensor ones_n = full({N}, Scalar(1.0), st, g.device());
    Tensor per_image = empty({N * C}, st, g.device());
    Blas::gemm_strided_batched(g.dtype(), false, false, N * C, 1, S, 1.0, g.data_ptr(), S, 0, ones_s.data_ptr(), 1, 0,
                               0.0, per_image.data_ptr(), 1, 0, 1, false, st);
    Blas::gemm_strided_batched(st, true, false, C, 1, N, 1.0, per_image.data_ptr(), C, 0, ones_n.data_ptr(), 1, 0, 0.0,
                               gb.data_ptr(), 1, 0, 1, false);
  }
  return st == g.dtype() ? gb : gb.to(g.dtype());
}

inline void check_cuda_dtype(const Tensor& t) {
  const ScalarType d = t.dtype();
  EMBER_CHECK_NOT_IMPLEMENTED(
      d == ScalarType::Float || d == ScalarType::Double || d == ScalarType::Half || d == ScalarType::BFloat16,
      "convolution: not implemented for dtype ", c10::toPythonName(d), " on CUDA");
}

template <typename Blas>
Tensor convolution_run(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                       int64_t groups) {
  const Tensor* b = bias.has_value() && bias->defined() ? &*bias : nullptr;
  const ConvShape s =
      check_convolution(input, weight, b, stride, padding, dilation, transposed, output_padding, groups);
  check_cuda_dtype(input);
  c10::DeviceGuard guard(input.device());
  const ScalarType dt = input.dtype();
  const Tensor x = input.contiguous();
  const Tensor w = weight.contiguous();
  Tensor out = empty(s.output_sizes, dt, input.device());
  if (out.numel() > 0) {
    const Problem p{dt, &s.geometry, input.size(0), groups, s.Ms, s.Cb, cudnn_allow_tf32()};
    if (!transposed) {
      big_to_small<Blas>(p, x, w, out);
    } else {
      small_to_big<Blas>(p, x, w, out);
    }
    if (b != nullptr) add_bias<Blas>(out, b->contiguous());
  }
  return conv_result(out, dt, conv_memory_format(input, weight));
}

template <typename Blas>
std::tuple<Tensor, Tensor, Tensor> convolution_backward_run(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    const std::optional<c10::DimVector>& bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, const std::vector<bool>& output_mask) {
  EMBER_CHECK(output_mask.size() == 3, "convolution_backward: output_mask must have 3 elements, but got ",
              output_mask.size());
  const ConvShape s =
      check_convolution(input, weight, nullptr, stride, padding, dilation, transposed, output_padding, groups);
  EMBER_CHECK(grad_output.dtype() == input.dtype(), "convolution_backward: expected grad_output of dtype ",
              c10::toPythonName(input.dtype()), ", but got ", c10::toPythonName(grad_output.dtype()));
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(s.output_sizes), "convolution_backward: expected grad_output of size ",
              shape_str(s.output_sizes), " (the convolution's output), but got ", shape_str(grad_output.sizes()));
  check_same_device("convolution_backward", grad_output, input);
  const int64_t C_out = s.output_sizes[1];
  EMBER_CHECK(!output_mask[2] || !bias_sizes.has_value() || (bias_sizes->size() == 1 && (*bias_sizes)[0] == C_out),
              "convolution_backward: bias_sizes ", shape_str(bias_sizes ? IntArrayRef(*bias_sizes) : IntArrayRef()),
              " do not match the ", C_out, " output channels");
  check_cuda_dtype(input);
  c10::DeviceGuard guard(input.device());
  const ScalarType dt = input.dtype();
  const Tensor go = grad_output.contiguous();
  const Problem p{dt, &s.geometry, input.size(0), groups, s.Ms, s.Cb, cudnn_allow_tf32()};
  Tensor gi, gw, gb;
  if (output_mask[0]) {
    const Tensor w = weight.contiguous();
    gi = empty(input.sizes(), dt, input.device());
    if (gi.numel() > 0) {
      if (!transposed) {
        small_to_big<Blas>(p, go, w, gi);
      } else {
        big_to_small<Blas>(p, go, w, gi);
      }
    }
    gi = conv_result(gi, dt, suggest_memory_format(input));
  }
  if (output_mask[1]) {
    const Tensor x = input.contiguous();
    gw = empty(weight.sizes(), dt, weight.device());
    if (gw.numel() > 0) {
      if (!transposed) {
        weight_grad<Blas>(p, x, go, gw);
      } else {
        weight_grad<Blas>(p, go, x, gw);
      }
    }
    gw = conv_result(gw, dt, suggest_memory_format(weight));
  }
  if (output_mask[2]) gb = bias_grad<Blas>(go, C_out);
  return {gi, gw, gb};
}

}  // namespace ember::at::native::cuda_conv
