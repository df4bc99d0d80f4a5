// vision::roi_align and its backward on the CPU (Mask R-CNN's RoIAlign): each output bin
// averages grid_h x grid_w bilinear samples of the input inside the box.
#include <ember/aten/Parallel.h>

#include <algorithm>
#include <cmath>

#include "../vision.h"

namespace ember::vision {
namespace {

// The four neighbours and weights of the sample at (y, x); all weights zero when the
// sample lies more than one pixel outside the feature map (torchvision's convention).
template <typename T>
struct Bilinear {
  int64_t y_low = 0, y_high = 0, x_low = 0, x_high = 0;
  T w1 = 0, w2 = 0, w3 = 0, w4 = 0;
  bool valid = false;
};

template <typename T>
Bilinear<T> bilinear(int64_t height, int64_t width, T y, T x) {
  Bilinear<T> b;
  if (y < -1.0 || y > height || x < -1.0 || x > width) return b;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  b.y_low = static_cast<int64_t>(y);
  b.x_low = static_cast<int64_t>(x);
  if (b.y_low >= height - 1) {
    b.y_high = b.y_low = height - 1;
    y = static_cast<T>(b.y_low);
  } else {
    b.y_high = b.y_low + 1;
  }
  if (b.x_low >= width - 1) {
    b.x_high = b.x_low = width - 1;
    x = static_cast<T>(b.x_low);
  } else {
    b.x_high = b.x_low + 1;
  }
  const T ly = y - b.y_low, lx = x - b.x_low, hy = 1 - ly, hx = 1 - lx;
  b.w1 = hy * hx;
  b.w2 = hy * lx;
  b.w3 = ly * hx;
  b.w4 = ly * lx;
  b.valid = true;
  return b;
}

// One box's geometry, shared by the forward and the backward.
template <typename T>
struct RoiGeometry {
  int64_t batch;
  T x1, y1, bin_h, bin_w;
  int64_t grid_h, grid_w;
  T count;
};

template <typename T>
RoiGeometry<T> roi_geometry(const T* roi, T spatial_scale, int64_t ph, int64_t pw, int64_t sampling_ratio,
                            bool aligned) {
  RoiGeometry<T> g;
  g.batch = static_cast<int64_t>(roi[0]);
  const T offset = aligned ? T(0.5) : T(0);
  g.x1 = roi[1] * spatial_scale - offset;
  g.y1 = roi[2] * spatial_scale - offset;
  T roi_w = roi[3] * spatial_scale - offset - g.x1;
  T roi_h = roi[4] * spatial_scale - offset - g.y1;
  if (!aligned) {  // the legacy behaviour: boxes at least one pixel wide
    roi_w = std::max(roi_w, T(1));
    roi_h = std::max(roi_h, T(1));
  }
  g.bin_h = roi_h / ph;
  g.bin_w = roi_w / pw;
  // sampling_ratio <= 0: adaptive, about one sample per input pixel of the bin
  g.grid_h = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / ph));
  g.grid_w = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / pw));
  g.count = static_cast<T>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  return g;
}

template <typename T>
void check_batch_index(const char* op, int64_t b, int64_t n, int64_t k) {
  EMBER_CHECK_INDEX(b >= 0 && b < n, op, ": rois[", k, ", 0] = ", b, " is not a batch index of input (batch size ", n,
                    ")");
}

template <typename T>
void roi_align_forward(const T* in, const T* rois, T* out, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
                       T scale, int64_t ph, int64_t pw, int64_t sampling_ratio, bool aligned) {
  for (int64_t r = 0; r < k; ++r) check_batch_index<T>("roi_align", static_cast<int64_t>(rois[r * 5]), n, r);
  at::parallel_for(0, k * c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t rc = begin; rc < end; ++rc) {
      const int64_t r = rc / c, ch = rc % c;
      const RoiGeometry<T> g = roi_geometry(rois + r * 5, scale, ph, pw, sampling_ratio, aligned);
      const T* plane = in + (g.batch * c + ch) * h * w;
      T* o = out + rc * ph * pw;
      for (int64_t py = 0; py < ph; ++py) {
        for (int64_t px = 0; px < pw; ++px) {
          T sum = 0;
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            const T y = g.y1 + py * g.bin_h + (iy + T(0.5)) * g.bin_h / g.grid_h;
            for (int64_t ix = 0; ix < g.grid_w; ++ix) {
              const T x = g.x1 + px * g.bin_w + (ix + T(0.5)) * g.bin_w / g.grid_w;
              const Bilinear<T> b = bilinear<T>(h, w, y, x);
              if (!b.valid) continue;
              sum += b.w1 * plane[b.y_low * w + b.x_low] + b.w2 * plane[b.y_low * w + b.x_high] +
                     b.w3 * plane[b.y_high * w + b.x_low] + b.w4 * plane[b.y_high * w + b.x_high];
            }
          }
          o[py * pw + px] = sum / g.count;
        }
      }
    }
  });
}

// Serial: boxes overlap, so their gradients land on the same input pixels.
template <typename T>
void roi_align_backward(const T* grad, const T* rois, T* gin, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
                        T scale, int64_t ph, int64_t pw, int64_t sampling_ratio, bool aligned) {
  for (int64_t r = 0; r < k; ++r) {
    check_batch_index<T>("roi_align_backward", static_cast<int64_t>(rois[r * 5]), n, r);
    const RoiGeometry<T> g = roi_geometry(rois + r * 5, scale, ph, pw, sampling_ratio, aligned);
    for (int64_t ch = 0; ch < c; ++ch) {
      T* plane = gin + (g.batch * c + ch) * h * w;
      const T* go = grad + (r * c + ch) * ph * pw;
      for (int64_t py = 0; py < ph; ++py) {
        for (int64_t px = 0; px < pw; ++px) {
          const T gv = go[py * pw + px] / g.count;
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            const T y = g.y1 + py * g.bin_h + (iy + T(0.5)) * g.bin_h / g.grid_h;
            for (int64_t ix = 0; ix < g.grid_w; ++ix) {
              const T x = g.x1 + px * g.bin_w + (ix + T(0.5)) * g.bin_w / g.grid_w;
              const Bilinear<T> b = bilinear<T>(h, w, y, x);
              if (!b.valid) continue;
              plane[b.y_low * w + b.x_low] += gv * b.w1;
              plane[b.y_low * w + b.x_high] += gv * b.w2;
              plane[b.y_high * w + b.x_low] += gv * b.w3;
              plane[b.y_high * w + b.x_high] += gv * b.w4;
            }
          }
        }
      }
    }
  }
}

void check_pooled(const char* op, int64_t ph, int64_t pw) {
  EMBER_CHECK_VALUE(ph > 0 && pw > 0, op, ": output_size must be positive, got (", ph, ", ", pw, ")");
}

at::Tensor roi_align_cpu(const at::Tensor& input_, const at::Tensor& rois_, double spatial_scale, int64_t ph,
                         int64_t pw, int64_t sampling_ratio, bool aligned) {
  check_rois("roi_align", input_, rois_);
  check_pooled("roi_align", ph, pw);
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  const int64_t k = rois.sizes()[0];
  at::Tensor out = at::zeros({k, c, ph, pw}, input.dtype());
  if (out.numel() == 0) return out;
  if (input.dtype() == at::ScalarType::Float)
    roi_align_forward<float>(input.data_ptr<float>(), rois.data_ptr<float>(), out.data_ptr<float>(), n, c, h, w, k,
                             static_cast<float>(spatial_scale), ph, pw, sampling_ratio, aligned);
  else
    roi_align_forward<double>(input.data_ptr<double>(), rois.data_ptr<double>(), out.data_ptr<double>(), n, c, h, w, k,
                              spatial_scale, ph, pw, sampling_ratio, aligned);
  return out;
}

at::Tensor roi_align_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, double spatial_scale, int64_t ph,
                                  int64_t pw, int64_t n, int64_t c, int64_t h, int64_t w, int64_t sampling_ratio,
                                  bool aligned) {
  check_floating("roi_align_backward", "grad", grad_);
  check_same_dtype("roi_align_backward", "rois", grad_, rois_);
  const int64_t k = rois_.sizes()[0];
  EMBER_CHECK_VALUE(grad_.dim() == 4 && grad_.sizes()[0] == k && grad_.sizes()[1] == c && grad_.sizes()[2] == ph &&
                        grad_.sizes()[3] == pw,
                    "roi_align_backward: expected grad of shape [", k, ", ", c, ", ", ph, ", ", pw, "], got ",
                    grad_.toString());
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous();
  at::Tensor gin = at::zeros({n, c, h, w}, grad.dtype());
  if (grad.numel() == 0) return gin;
  if (grad.dtype() == at::ScalarType::Float)
    roi_align_backward<float>(grad.data_ptr<float>(), rois.data_ptr<float>(), gin.data_ptr<float>(), n, c, h, w, k,
                              static_cast<float>(spatial_scale), ph, pw, sampling_ratio, aligned);
  else
    roi_align_backward<double>(grad.data_ptr<double>(), rois.data_ptr<double>(), gin.data_ptr<double>(), n, c, h, w, k,
                               spatial_scale, ph, pw, sampling_ratio, aligned);
  return gin;
}

}  // namespace
}  // namespace ember::vision

EMBER_LIBRARY_IMPL(vision, CPU, m) {
  m.impl("roi_align", &ember::vision::roi_align_cpu, "roi_align_cpu");
  m.impl("_roi_align_backward", &ember::vision::roi_align_backward_cpu, "roi_align_backward_cpu");
}
