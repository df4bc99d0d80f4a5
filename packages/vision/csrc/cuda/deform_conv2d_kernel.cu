// vision::deform_conv2d and its backward on CUDA, written directly (no im2col buffer for
// the forward): one thread per output element sums over its group's channels and kernel
// taps. The backward: grad_columns (weight^T @ grad per tap) scattered into grad_input
// with atomicAdd; grad_offset / grad_mask per (offset group, tap, pixel); grad_weight per
// weight element; grad_bias per output channel. Same sampling as cpu/deform_conv2d_kernel.cpp.
#include "cuda_utils.cuh"

namespace ember::vision::cuda {
namespace {

struct Shape {
  int64_t n, c_in, h, w, c_out, kh, kw, h_out, w_out, groups, offset_groups;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  bool use_mask;
};

template <typename T>
__device__ T sample(const T* plane, int64_t h, int64_t w, T y, T x) {
  if (y <= -1 || y >= h || x <= -1 || x >= w) return 0;
  const int64_t yl = static_cast<int64_t>(floor(y)), xl = static_cast<int64_t>(floor(x));
  const int64_t yh = yl + 1, xh = xl + 1;
  const T ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
  const T v1 = (yl >= 0 && xl >= 0) ? plane[yl * w + xl] : T(0);
  const T v2 = (yl >= 0 && xh <= w - 1) ? plane[yl * w + xh] : T(0);
  const T v3 = (yh <= h - 1 && xl >= 0) ? plane[yh * w + xl] : T(0);
  const T v4 = (yh <= h - 1 && xh <= w - 1) ? plane[yh * w + xh] : T(0);
  return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
}

template <typename T>
__device__ T sample_grad(const T* plane, int64_t h, int64_t w, T y, T x, bool y_direction) {
  if (y <= -1 || y >= h || x <= -1 || x >= w) return 0;
  const int64_t yl = static_cast<int64_t>(floor(y)), xl = static_cast<int64_t>(floor(x));
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

// Position and mask of tap k of output pixel l, offset group g, image b.
template <typename T>
__device__ void tap(const Shape& s, const T* offset, const T* mask, int64_t b, int64_t g, int64_t k, int64_t l, T& y,
                    T& x, T& m) {
  const int64_t L = s.h_out * s.w_out, K = s.kh * s.kw;
  const int64_t oy = l / s.w_out, ox = l % s.w_out, i = k / s.kw, j = k % s.kw;
  const T* off = offset + ((b * s.offset_groups + g) * 2 * K + 2 * k) * L;
  y = static_cast<T>(oy * s.stride_h - s.pad_h + i * s.dil_h) + off[l];
  x = static_cast<T>(ox * s.stride_w - s.pad_w + j * s.dil_w) + off[L + l];
  m = s.use_mask ? mask[((b * s.offset_groups + g) * K + k) * L + l] : T(1);
}

template <typename T>
__global__ void forward_kernel(Shape s, const T* in, const T* weight, const T* offset, const T* mask, const T* bias,
                               T* out, int64_t total) {
  const int64_t L = s.h_out * s.w_out, K = s.kh * s.kw;
  const int64_t cg_in = s.c_in / s.groups, cg_out = s.c_out / s.groups, c_per_og = s.c_in / s.offset_groups;
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t l = idx % L, oc = (idx / L) % s.c_out, b = idx / (L * s.c_out);
    const int64_t grp = oc / cg_out;
    T acc = bias[oc];
    for (int64_t cl = 0; cl < cg_in; ++cl) {
      const int64_t c = grp * cg_in + cl;
      const T* plane = in + (b * s.c_in + c) * s.h * s.w;
      for (int64_t k = 0; k < K; ++k) {
        T y, x, m;
        tap(s, offset, mask, b, c / c_per_og, k, l, y, x, m);
        acc += weight[(oc * cg_in + cl) * K + k] * m * sample(plane, s.h, s.w, y, x);
      }
    }
    out[idx] = acc;
  }
}

// grad_columns[b, c, k, l] = sum over the group's output channels of weight * grad; its
// share of each of the four neighbours goes to grad_input.
template <typename T>
__global__ void grad_input_kernel(Shape s, const T* grad, const T* weight, const T* offset, const T* mask,
                                  T* grad_columns, T* grad_in, int64_t total) {
  const int64_t L = s.h_out * s.w_out, K = s.kh * s.kw;
  const int64_t cg_in = s.c_in / s.groups, cg_out = s.c_out / s.groups, c_per_og = s.c_in / s.offset_groups;
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t l = idx % L, k = (idx / L) % K, c = (idx / (L * K)) % s.c_in, b = idx / (L * K * s.c_in);
    const int64_t grp = c / cg_in, cl = c % cg_in;
    T gc = 0;
    for (int64_t o = 0; o < cg_out; ++o) {
      const int64_t oc = grp * cg_out + o;
      gc += weight[(oc * cg_in + cl) * K + k] * grad[(b * s.c_out + oc) * L + l];
    }
    grad_columns[idx] = gc;
    T y, x, m;
    tap(s, offset, mask, b, c / c_per_og, k, l, y, x, m);
    if (y <= -1 || y >= s.h || x <= -1 || x >= s.w) continue;
    const int64_t yl = static_cast<int64_t>(floor(y)), xl = static_cast<int64_t>(floor(x));
    const T ly = y - yl, lx = x - xl, gv = gc * m;
    T* plane = grad_in + (b * s.c_in + c) * s.h * s.w;
    for (int dy = 0; dy < 2; ++dy) {
      const int64_t yy = yl + dy;
      if (yy < 0 || yy >= s.h) continue;
      for (int dx = 0; dx < 2; ++dx) {
        const int64_t xx = xl + dx;
        if (xx < 0 || xx >= s.w) continue;
        atomicAdd(plane + yy * s.w + xx, gv * (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx));
      }
    }
  }
}

template <typename T>
__global__ void grad_offset_mask_kernel(Shape s, const T* in, const T* offset, const T* mask, const T* grad_columns,
                                        T* grad_offset, T* grad_mask, int64_t total) {
  const int64_t L = s.h_out * s.w_out, K = s.kh * s.kw, c_per_og = s.c_in / s.offset_groups;
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t l = idx % L, k = (idx / L) % K, g = (idx / (L * K)) % s.offset_groups;
    const int64_t b = idx / (L * K * s.offset_groups);
    T y, x, m;
    tap(s, offset, mask, b, g, k, l, y, x, m);
    T acc_y = 0, acc_x = 0, acc_m = 0;
    for (int64_t c = g * c_per_og; c < (g + 1) * c_per_og; ++c) {
      const T* plane = in + (b * s.c_in + c) * s.h * s.w;
      const T gc = grad_columns[((b * s.c_in + c) * K + k) * L + l];
      acc_y += gc * m * sample_grad(plane, s.h, s.w, y, x, true);
      acc_x += gc * m * sample_grad(plane, s.h, s.w, y, x, false);
      if (s.use_mask) acc_m += gc * sample(plane, s.h, s.w, y, x);
    }
    T* off = grad_offset + ((b * s.offset_groups + g) * 2 * K + 2 * k) * L;
    off[l] = acc_y;
    off[L + l] = acc_x;
    if (s.use_mask) grad_mask[((b * s.offset_groups + g) * K + k) * L + l] = acc_m;
  }
}

template <typename T>
__global__ void grad_weight_kernel(Shape s, const T* grad, const T* in, const T* offset, const T* mask, T* grad_weight,
                                   int64_t total) {
  const int64_t L = s.h_out * s.w_out, K = s.kh * s.kw;
  const int64_t cg_in = s.c_in / s.groups, cg_out = s.c_out / s.groups, c_per_og = s.c_in / s.offset_groups;
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t k = idx % K, cl = (idx / K) % cg_in, oc = idx / (K * cg_in);
    const int64_t c = (oc / cg_out) * cg_in + cl;
    T acc = 0;
    for (int64_t b = 0; b < s.n; ++b) {
      const T* plane = in + (b * s.c_in + c) * s.h * s.w;
      for (int64_t l = 0; l < L; ++l) {
        T y, x, m;
        tap(s, offset, mask, b, c / c_per_og, k, l, y, x, m);
        acc += grad[(b * s.c_out + oc) * L + l] * m * sample(plane, s.h, s.w, y, x);
      }
    }
    grad_weight[idx] = acc;
  }
}

template <typename T>
__global__ void grad_bias_kernel(Shape s, const T* grad, T* grad_bias) {
  const int64_t L = s.h_out * s.w_out;
  EMBER_VISION_KERNEL_LOOP(oc, s.c_out) {
    T acc = 0;
    for (int64_t b = 0; b < s.n; ++b)
      for (int64_t l = 0; l < L; ++l) acc += grad[(b * s.c_out + oc) * L + l];
    grad_bias[oc] = acc;
  }
}

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
void launch_forward(const Shape& s, const at::Tensor& in, const at::Tensor& weight, const at::Tensor& offset,
                    const at::Tensor& mask, const at::Tensor& bias, at::Tensor& out) {
  const int64_t total = out.numel();
  forward_kernel<T><<<blocks_for(total), kThreads, 0, stream_of(in)>>>(
      s, in.data_ptr<T>(), weight.data_ptr<T>(), offset.data_ptr<T>(), s.use_mask ? mask.data_ptr<T>() : nullptr,
      bias.data_ptr<T>(), out.data_ptr<T>(), total);
  check_launch("deform_conv2d");
}

template <typename T>
void launch_backward(const Shape& s, const at::Tensor& grad, const at::Tensor& in, const at::Tensor& weight,
                     const at::Tensor& offset, const at::Tensor& mask, at::Tensor& gi, at::Tensor& gw, at::Tensor& go,
                     at::Tensor& gm, at::Tensor& gb) {
  const cudaStream_t stream = stream_of(in);
  const int64_t K = s.kh * s.kw, L = s.h_out * s.w_out;
  const T* mask_p = s.use_mask ? mask.data_ptr<T>() : nullptr;
  at::Tensor columns = at::empty({s.n * s.c_in * K * L}, in.dtype(), in.device());
  const int64_t n_cols = columns.numel();
  grad_input_kernel<T><<<blocks_for(n_cols), kThreads, 0, stream>>>(s, grad.data_ptr<T>(), weight.data_ptr<T>(),
                                                                    offset.data_ptr<T>(), mask_p, columns.data_ptr<T>(),
                                                                    gi.data_ptr<T>(), n_cols);
  const int64_t n_off = s.n * s.offset_groups * K * L;
  grad_offset_mask_kernel<T><<<blocks_for(n_off), kThreads, 0, stream>>>(
      s, in.data_ptr<T>(), offset.data_ptr<T>(), mask_p, columns.data_ptr<T>(), go.data_ptr<T>(),
      s.use_mask ? gm.data_ptr<T>() : nullptr, n_off);
  const int64_t n_w = gw.numel();
  grad_weight_kernel<T><<<blocks_for(n_w), kThreads, 0, stream>>>(s, grad.data_ptr<T>(), in.data_ptr<T>(),
                                                                  offset.data_ptr<T>(), mask_p, gw.data_ptr<T>(), n_w);
  grad_bias_kernel<T><<<blocks_for(s.c_out), kThreads, 0, stream>>>(s, grad.data_ptr<T>(), gb.data_ptr<T>());
  check_launch("deform_conv2d_backward");
}

at::Tensor deform_conv2d_cuda(const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
                              const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w,
                              int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                              int64_t offset_groups, bool use_mask) {
  const DeformConvArgs a{stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask};
  check_deform_conv2d(input_, weight_, offset_, mask_, bias_, a);
  check_cuda("deform_conv2d", input_);
  ember::c10::DeviceGuard guard(input_.device());
  const at::Tensor input = input_.contiguous(), weight = weight_.contiguous(), offset = offset_.contiguous();
  const at::Tensor mask = mask_.contiguous(), bias = bias_.contiguous();
  const Shape s = make_shape(input, weight, a);
  at::Tensor out = at::empty({s.n, s.c_out, s.h_out, s.w_out}, input.dtype(), input.device());
  if (out.numel() == 0) return out;
  if (input.dtype() == at::ScalarType::Float)
    launch_forward<float>(s, input, weight, offset, mask, bias, out);
  else
    launch_forward<double>(s, input, weight, offset, mask, bias, out);
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_cuda(
    const at::Tensor& grad_, const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
    const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
    int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  const DeformConvArgs a{stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups, use_mask};
  check_deform_conv2d(input_, weight_, offset_, mask_, bias_, a);
  check_cuda("deform_conv2d_backward", input_);
  check_same_dtype("deform_conv2d_backward", "grad", input_, grad_);
  check_same_device("deform_conv2d_backward", "grad", input_, grad_);
  const Shape s = make_shape(input_, weight_, a);
  EMBER_CHECK_VALUE(grad_.dim() == 4 && grad_.sizes()[0] == s.n && grad_.sizes()[1] == s.c_out &&
                        grad_.sizes()[2] == s.h_out && grad_.sizes()[3] == s.w_out,
                    "deform_conv2d_backward: expected grad of shape [", s.n, ", ", s.c_out, ", ", s.h_out, ", ",
                    s.w_out, "], got ", grad_.toString());
  ember::c10::DeviceGuard guard(input_.device());
  const at::Tensor grad = grad_.contiguous(), input = input_.contiguous(), weight = weight_.contiguous();
  const at::Tensor offset = offset_.contiguous(), mask = mask_.contiguous();
  const auto dt = input.dtype();
  const auto dev = input.device();
  at::Tensor gi = at::zeros(input.sizes(), dt, dev), gw = at::zeros(weight.sizes(), dt, dev);
  at::Tensor go = at::zeros(offset.sizes(), dt, dev), gm = at::zeros(mask.sizes(), dt, dev);
  at::Tensor gb = at::zeros(bias_.sizes(), dt, dev);
  if (grad.numel() == 0) return {gi, gw, go, gm, gb};
  if (dt == at::ScalarType::Float)
    launch_backward<float>(s, grad, input, weight, offset, mask, gi, gw, go, gm, gb);
  else
    launch_backward<double>(s, grad, input, weight, offset, mask, gi, gw, go, gm, gb);
  return {gi, gw, go, gm, gb};
}

}  // namespace
}  // namespace ember::vision::cuda

EMBER_LIBRARY_IMPL(vision, CUDA, m) {
  m.impl("deform_conv2d", &ember::vision::cuda::deform_conv2d_cuda, "deform_conv2d_cuda");
  m.impl("_deform_conv2d_backward", &ember::vision::cuda::deform_conv2d_backward_cuda, "deform_conv2d_backward_cuda");
}
