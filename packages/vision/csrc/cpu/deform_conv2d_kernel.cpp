// vision::deform_conv2d and its backward on the CPU (Deformable ConvNets v1/v2).
//
// Per image, as a convolution by im2col: every kernel tap (i, j) of every input channel
// is sampled bilinearly at its regular position plus a learned offset, scaled by the
// mask (v2), into `columns` [C_in * kh * kw, H_out * W_out]; the output of each group is
// then weight[group] @ columns[group]. The backward runs the same sampling to get the
// gradients of input (scattered to the four neighbours of each sample), offset (the
// derivative of the bilinear interpolation along y and x), mask and weight.
#include <ember/aten/Parallel.h>

#include <cmath>
#include <vector>

#include "../vision.h"

namespace ember::vision {
namespace {

// Layout of one problem, in elements; every tensor is contiguous NCHW.
struct Shape {
  int64_t n, c_in, h, w, c_out, kh, kw, h_out, w_out;
  int64_t groups, offset_groups;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  bool use_mask;
  int64_t taps() const { return kh * kw; }
  int64_t plane_out() const { return h_out * w_out; }
};

Shape make_shape(const at::Tensor& input, const at::Tensor& weight, const DeformConvArgs& a) {
  Shape s;
  s.n = input.sizes()[0];
  s.c_in = input.sizes()[1];
  s.h = input.sizes()[2];
  s.w = input.sizes()[3];
  s.c_out = weight.sizes()[0];
  s.kh = weight.sizes()[2];
  s.kw = weight.sizes()[3];
  s.h_out = conv_out_size(s.h, s.kh, a.stride_h, a.pad_h, a.dil_h);
  s.w_out = conv_out_size(s.w, s.kw, a.stride_w, a.pad_w, a.dil_w);
  s.groups = a.groups;
  s.offset_groups = a.offset_groups;
  s.stride_h = a.stride_h;
  s.stride_w = a.stride_w;
  s.pad_h = a.pad_h;
  s.pad_w = a.pad_w;
  s.dil_h = a.dil_h;
  s.dil_w = a.dil_w;
  s.use_mask = a.use_mask;
  return s;
}

template <typename T>
T sample(const T* plane, int64_t h, int64_t w, T y, T x) {
  if (y <= -1 || y >= h || x <= -1 || x >= w) return 0;
  const int64_t yl = static_cast<int64_t>(std::floor(y)), xl = static_cast<int64_t>(std::floor(x));
  const int64_t yh = yl + 1, xh = xl + 1;
  const T ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
  const T v1 = (yl >= 0 && xl >= 0) ? plane[yl * w + xl] : T(0);
  const T v2 = (yl >= 0 && xh <= w - 1) ? plane[yl * w + xh] : T(0);
  const T v3 = (yh <= h - 1 && xl >= 0) ? plane[yh * w + xl] : T(0);
  const T v4 = (yh <= h - 1 && xh <= w - 1) ? plane[yh * w + xh] : T(0);
  return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
}

// d sample / d y (y_direction) or d sample / d x.
template <typename T>
T sample_grad(const T* plane, int64_t h, int64_t w, T y, T x, bool y_direction) {
  if (y <= -1 || y >= h || x <= -1 || x >= w) return 0;
  const int64_t yl = static_cast<int64_t>(std::floor(y)), xl = static_cast<int64_t>(std::floor(x));
  const int64_t yh = yl + 1, xh = xl + 1;
  const bool vyl = yl >= 0 && yl < h, vyh = yh >= 0 && yh < h, vxl = xl >= 0 && xl < w, vxh = xh >= 0 && xh < w;
  const T v_ll = (vyl && vxl) ? plane[yl * w + xl] : T(0);
  const T v_lh = (vyl && vxh) ? plane[yl * w + xh] : T(0);
  const T v_hl = (vyh && vxl) ? plane[yh * w + xl] : T(0);
  const T v_hh = (vyh && vxh) ? plane[yh * w + xh] : T(0);
  if (y_direction) {
    const T dx = x - xl;
    return dx * (v_hh - v_lh) + (1 - dx) * (v_hl - v_ll);
  }
  const T dy = y - yl;
  return dy * (v_hh - v_hl) + (1 - dy) * (v_lh - v_ll);
}

// The sampling position of tap k of output pixel l for offset group g of image n.
template <typename T>
void tap_position(const Shape& s, const T* offset_n, int64_t g, int64_t k, int64_t l, T& y, T& x) {
  const int64_t oy = l / s.w_out, ox = l % s.w_out, i = k / s.kw, j = k % s.kw;
  const int64_t L = s.plane_out();
  const T* off = offset_n + (g * 2 * s.taps() + 2 * k) * L;
  y = static_cast<T>(oy * s.stride_h - s.pad_h + i * s.dil_h) + off[l];
  x = static_cast<T>(ox * s.stride_w - s.pad_w + j * s.dil_w) + off[L + l];
}

template <typename T>
T tap_mask(const Shape& s, const T* mask_n, int64_t g, int64_t k, int64_t l) {
  return s.use_mask ? mask_n[(g * s.taps() + k) * s.plane_out() + l] : T(1);
}

// columns[(c * taps + k) * L + l] = mask * input sampled at tap k of output pixel l.
template <typename T>
void deformable_im2col(const Shape& s, const T* in_n, const T* offset_n, const T* mask_n, T* columns) {
  const int64_t L = s.plane_out(), K = s.taps(), c_per_og = s.c_in / s.offset_groups;
  at::parallel_for(0, s.c_in * K, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ck = begin; ck < end; ++ck) {
      const int64_t c = ck / K, k = ck % K, g = c / c_per_og;
      const T* plane = in_n + c * s.h * s.w;
      T* col = columns + ck * L;
      for (int64_t l = 0; l < L; ++l) {
        T y, x;
        tap_position(s, offset_n, g, k, l, y, x);
        col[l] = tap_mask(s, mask_n, g, k, l) * sample(plane, s.h, s.w, y, x);
      }
    }
  });
}

// C[M, N] += A[M, K] @ B[K, N] (row-major), rows of C in parallel.
template <typename T>
void gemm_nn(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, T* C) {
  at::parallel_for(0, M, 1, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      T* c = C + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const T a = A[m * lda + k];
        const T* b = B + k * N;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  });
}

// C[K, N] = A[M, K]^T @ B[M, N].
template <typename T>
void gemm_tn(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, T* C) {
  at::parallel_for(0, K, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      T* c = C + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] = 0;
      for (int64_t m = 0; m < M; ++m) {
        const T a = A[m * lda + k];
        const T* b = B + m * N;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  });
}

// C[M, K] += A[M, N] @ B[K, N]^T.
template <typename T>
void gemm_nt(int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C, int64_t ldc) {
  at::parallel_for(0, M, 1, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      const T* a = A + m * N;
      for (int64_t k = 0; k < K; ++k) {
        const T* b = B + k * N;
        T acc = 0;
        for (int64_t j = 0; j < N; ++j) acc += a[j] * b[j];
        C[m * ldc + k] += acc;
      }
    }
  });
}

template <typename T>
void forward(const Shape& s, const T* in, const T* weight, const T* offset, const T* mask, const T* bias, T* out) {
  const int64_t L = s.plane_out(), K = s.taps();
  const int64_t cg_in = s.c_in / s.groups, cg_out = s.c_out / s.groups, rows = cg_in * K;
  std::vector<T> columns(s.c_in * K * L);
  for (int64_t n = 0; n < s.n; ++n) {
    deformable_im2col(s, in + n * s.c_in * s.h * s.w, offset + n * 2 * s.offset_groups * K * L,
                      s.use_mask ? mask + n * s.offset_groups * K * L : nullptr, columns.data());
    T* out_n = out + n * s.c_out * L;
    for (int64_t oc = 0; oc < s.c_out; ++oc)
      for (int64_t l = 0; l < L; ++l) out_n[oc * L + l] = bias[oc];
    for (int64_t grp = 0; grp < s.groups; ++grp)
      gemm_nn<T>(cg_out, L, rows, weight + grp * cg_out * rows, rows, columns.data() + grp * rows * L,
                 out_n + grp * cg_out * L);
  }
}

template <typename T>
void backward(const Shape& s, const T* grad, const T* in, const T* weight, const T* offset, const T* mask, T* grad_in,
              T* grad_weight, T* grad_offset, T* grad_mask, T* grad_bias) {
  const int64_t L = s.plane_out(), K = s.taps(), hw = s.h * s.w;
  const int64_t cg_in = s.c_in / s.groups, cg_out = s.c_out / s.groups, rows = cg_in * K;
  const int64_t c_per_og = s.c_in / s.offset_groups;
  std::vector<T> columns(s.c_in * K * L), grad_columns(s.c_in * K * L);
  for (int64_t n = 0; n < s.n; ++n) {
    const T* in_n = in + n * s.c_in * hw;
    const T* off_n = offset + n * 2 * s.offset_groups * K * L;
    const T* mask_n = s.use_mask ? mask + n * s.offset_groups * K * L : nullptr;
    const T* grad_n = grad + n * s.c_out * L;
    // grad_columns = weight^T @ grad, per group
    for (int64_t grp = 0; grp < s.groups; ++grp)
      gemm_tn<T>(cg_out, L, rows, weight + grp * cg_out * rows, rows, grad_n + grp * cg_out * L,
                 grad_columns.data() + grp * rows * L);
    // grad_input: each channel's plane receives only its own taps, so channels run in parallel
    T* gin_n = grad_in + n * s.c_in * hw;
    at::parallel_for(0, s.c_in, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t g = c / c_per_og;
        T* gplane = gin_n + c * hw;
        for (int64_t k = 0; k < K; ++k) {
          const T* gcol = grad_columns.data() + (c * K + k) * L;
          for (int64_t l = 0; l < L; ++l) {
            T y, x;
            tap_position(s, off_n, g, k, l, y, x);
            if (y <= -1 || y >= s.h || x <= -1 || x >= s.w) continue;
            const T gv = gcol[l] * tap_mask(s, mask_n, g, k, l);
            const int64_t yl = static_cast<int64_t>(std::floor(y)), xl = static_cast<int64_t>(std::floor(x));
            const T ly = y - yl, lx = x - xl;
            for (int64_t dy = 0; dy < 2; ++dy) {
              const int64_t yy = yl + dy;
              if (yy < 0 || yy >= s.h) continue;
              const T wy = dy ? ly : 1 - ly;
              for (int64_t dx = 0; dx < 2; ++dx) {
                const int64_t xx = xl + dx;
                if (xx < 0 || xx >= s.w) continue;
                gplane[yy * s.w + xx] += gv * wy * (dx ? lx : 1 - lx);
              }
            }
          }
        }
      }
    });
    // grad_offset and grad_mask: one (offset group, tap) per task, summed over its channels
    T* goff_n = grad_offset + n * 2 * s.offset_groups * K * L;
    T* gmask_n = s.use_mask ? grad_mask + n * s.offset_groups * K * L : nullptr;
    at::parallel_for(0, s.offset_groups * K, 1, [&](int64_t begin, int64_t end) {
      for (int64_t gk = begin; gk < end; ++gk) {
        const int64_t g = gk / K, k = gk % K;
        T* goy = goff_n + (g * 2 * K + 2 * k) * L;
        T* gox = goy + L;
        for (int64_t l = 0; l < L; ++l) {
          T y, x;
          tap_position(s, off_n, g, k, l, y, x);
          const T m = tap_mask(s, mask_n, g, k, l);
          T acc_y = 0, acc_x = 0, acc_m = 0;
          for (int64_t c = g * c_per_og; c < (g + 1) * c_per_og; ++c) {
            const T* plane = in_n + c * hw;
            const T gc = grad_columns[(c * K + k) * L + l];
            acc_y += gc * m * sample_grad(plane, s.h, s.w, y, x, true);
            acc_x += gc * m * sample_grad(plane, s.h, s.w, y, x, false);
            if (s.use_mask) acc_m += gc * sample(plane, s.h, s.w, y, x);
          }
          goy[l] = acc_y;
          gox[l] = acc_x;
          if (s.use_mask) gmask_n[(g * K + k) * L + l] = acc_m;
        }
      }
    });
    // grad_weight += grad @ columns^T, grad_bias += the sum of grad over pixels
    deformable_im2col(s, in_n, off_n, mask_n, columns.data());
    for (int64_t grp = 0; grp < s.groups; ++grp)
      gemm_nt<T>(cg_out, L, rows, grad_n + grp * cg_out * L, columns.data() + grp * rows * L,
                 grad_weight + grp * cg_out * rows, rows);
    for (int64_t oc = 0; oc < s.c_out; ++oc) {
      T acc = 0;
      for (int64_t l = 0; l < L; ++l) acc += grad_n[oc * L + l];
      grad_bias[oc] += acc;
    }
  }
}

DeformConvArgs make_args(int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w,
                         int64_t groups, int64_t offset_groups, bool use_mask) {
  return {stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask};
}

at::Tensor deform_conv2d_cpu(const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
                             const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                             int64_t offset_groups, bool use_mask) {
  const DeformConvArgs a = make_args(stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask);
  check_deform_conv2d(input_, weight_, offset_, mask_, bias_, a);
  const at::Tensor input = input_.contiguous(), weight = weight_.contiguous(), offset = offset_.contiguous();
  const at::Tensor mask = mask_.contiguous(), bias = bias_.contiguous();
  const Shape s = make_shape(input, weight, a);
  at::Tensor out = at::empty({s.n, s.c_out, s.h_out, s.w_out}, input.dtype());
  if (out.numel() == 0) return out;
  if (input.dtype() == at::ScalarType::Float)
    forward<float>(s, input.data_ptr<float>(), weight.data_ptr<float>(), offset.data_ptr<float>(),
                   use_mask ? mask.data_ptr<float>() : nullptr, bias.data_ptr<float>(), out.data_ptr<float>());
  else
    forward<double>(s, input.data_ptr<double>(), weight.data_ptr<double>(), offset.data_ptr<double>(),
                    use_mask ? mask.data_ptr<double>() : nullptr, bias.data_ptr<double>(), out.data_ptr<double>());
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_cpu(
    const at::Tensor& grad_, const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
    const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
    int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  const DeformConvArgs a = make_args(stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask);
  check_deform_conv2d(input_, weight_, offset_, mask_, bias_, a);
  const Shape s = make_shape(input_, weight_, a);
  check_same_dtype("deform_conv2d_backward", "grad", input_, grad_);
  EMBER_CHECK_VALUE(grad_.dim() == 4 && grad_.sizes()[0] == s.n && grad_.sizes()[1] == s.c_out &&
                        grad_.sizes()[2] == s.h_out && grad_.sizes()[3] == s.w_out,
                    "deform_conv2d_backward: expected grad of shape [", s.n, ", ", s.c_out, ", ", s.h_out, ", ",
                    s.w_out, "], got ", grad_.toString());
  const at::Tensor grad = grad_.contiguous(), input = input_.contiguous(), weight = weight_.contiguous();
  const at::Tensor offset = offset_.contiguous(), mask = mask_.contiguous();
  const auto dt = input.dtype();
  at::Tensor gi = at::zeros(input.sizes(), dt), gw = at::zeros(weight.sizes(), dt), go = at::zeros(offset.sizes(), dt);
  at::Tensor gm = at::zeros(mask.sizes(), dt), gb = at::zeros(bias_.sizes(), dt);
  if (grad.numel() == 0) return {gi, gw, go, gm, gb};
  if (dt == at::ScalarType::Float)
    backward<float>(s, grad.data_ptr<float>(), input.data_ptr<float>(), weight.data_ptr<float>(),
                    offset.data_ptr<float>(), use_mask ? mask.data_ptr<float>() : nullptr, gi.data_ptr<float>(),
                    gw.data_ptr<float>(), go.data_ptr<float>(), use_mask ? gm.data_ptr<float>() : nullptr,
                    gb.data_ptr<float>());
  else
    backward<double>(s, grad.data_ptr<double>(), input.data_ptr<double>(), weight.data_ptr<double>(),
                     offset.data_ptr<double>(), use_mask ? mask.data_ptr<double>() : nullptr, gi.data_ptr<double>(),
                     gw.data_ptr<double>(), go.data_ptr<double>(), use_mask ? gm.data_ptr<double>() : nullptr,
                     gb.data_ptr<double>());
  return {gi, gw, go, gm, gb};
}

}  // namespace
}  // namespace ember::vision

EMBER_LIBRARY_IMPL(vision, CPU, m) {
  m.impl("deform_conv2d", &ember::vision::deform_conv2d_cpu, "deform_conv2d_cpu");
  m.impl("_deform_conv2d_backward", &ember::vision::deform_conv2d_backward_cpu, "deform_conv2d_backward_cpu");
}
