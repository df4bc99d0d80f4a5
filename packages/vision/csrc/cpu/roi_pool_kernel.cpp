// vision::roi_pool and its backward on the CPU (Fast R-CNN's RoIPool): each output bin is
// the maximum of the input pixels it covers after rounding the box to whole pixels; the
// argmax (flat index into the plane, -1 for an empty bin) routes the gradient back.
#include <ember/aten/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../vision.h"

namespace ember::vision {
namespace {

template <typename T>
void roi_pool_forward(const T* in, const T* rois, T* out, int64_t* argmax, int64_t n, int64_t c, int64_t h, int64_t w,
                      int64_t k, T scale, int64_t ph, int64_t pw) {
  for (int64_t r = 0; r < k; ++r) {
    const int64_t b = static_cast<int64_t>(rois[r * 5]);
    EMBER_CHECK_INDEX(b >= 0 && b < n, "roi_pool: rois[", r, ", 0] = ", b,
                      " is not a batch index of input (batch size ", n, ")");
  }
  at::parallel_for(0, k * c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t rc = begin; rc < end; ++rc) {
      const int64_t r = rc / c, ch = rc % c;
      const T* roi = rois + r * 5;
      const int64_t b = static_cast<int64_t>(roi[0]);
      const int64_t x1 = static_cast<int64_t>(std::round(roi[1] * scale));
      const int64_t y1 = static_cast<int64_t>(std::round(roi[2] * scale));
      const int64_t x2 = static_cast<int64_t>(std::round(roi[3] * scale));
      const int64_t y2 = static_cast<int64_t>(std::round(roi[4] * scale));
      const int64_t roi_w = std::max<int64_t>(x2 - x1 + 1, 1), roi_h = std::max<int64_t>(y2 - y1 + 1, 1);
      const T bin_h = static_cast<T>(roi_h) / ph, bin_w = static_cast<T>(roi_w) / pw;
      const T* plane = in + (b * c + ch) * h * w;
      for (int64_t py = 0; py < ph; ++py) {
        int64_t hs = static_cast<int64_t>(std::floor(py * bin_h)) + y1;
        int64_t he = static_cast<int64_t>(std::ceil((py + 1) * bin_h)) + y1;
        hs = std::min(std::max<int64_t>(hs, 0), h);
        he = std::min(std::max<int64_t>(he, 0), h);
        for (int64_t px = 0; px < pw; ++px) {
          int64_t ws = static_cast<int64_t>(std::floor(px * bin_w)) + x1;
          int64_t we = static_cast<int64_t>(std::ceil((px + 1) * bin_w)) + x1;
          ws = std::min(std::max<int64_t>(ws, 0), w);
          we = std::min(std::max<int64_t>(we, 0), w);
          const bool empty = he <= hs || we <= ws;
          T best = empty ? T(0) : std::numeric_limits<T>::lowest();
          int64_t best_idx = -1;
          for (int64_t y = hs; y < he; ++y) {
            for (int64_t x = ws; x < we; ++x) {
              const int64_t idx = y * w + x;
              if (plane[idx] > best) {
                best = plane[idx];
                best_idx = idx;
              }
            }
          }
          out[rc * ph * pw + py * pw + px] = best;
          argmax[rc * ph * pw + py * pw + px] = best_idx;
        }
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> roi_pool_cpu(const at::Tensor& input_, const at::Tensor& rois_, double spatial_scale,
                                                int64_t ph, int64_t pw) {
  check_rois("roi_pool", input_, rois_);
  EMBER_CHECK_VALUE(ph > 0 && pw > 0, "roi_pool: output_size must be positive, got (", ph, ", ", pw, ")");
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  const int64_t k = rois.sizes()[0];
  at::Tensor out = at::zeros({k, c, ph, pw}, input.dtype());
  at::Tensor argmax = at::full({k, c, ph, pw}, at::Scalar(int64_t(-1)), at::ScalarType::Long);
  if (out.numel() == 0) return {out, argmax};
  if (input.dtype() == at::ScalarType::Float)
    roi_pool_forward<float>(input.data_ptr<float>(), rois.data_ptr<float>(), out.data_ptr<float>(),
                            argmax.data_ptr<int64_t>(), n, c, h, w, k, static_cast<float>(spatial_scale), ph, pw);
  else
    roi_pool_forward<double>(input.data_ptr<double>(), rois.data_ptr<double>(), out.data_ptr<double>(),
                             argmax.data_ptr<int64_t>(), n, c, h, w, k, spatial_scale, ph, pw);
  return {out, argmax};
}

template <typename T>
void roi_pool_backward(const T* grad, const T* rois, const int64_t* argmax, T* gin, int64_t c, int64_t h, int64_t w,
                       int64_t k, int64_t ph, int64_t pw) {
  for (int64_t r = 0; r < k; ++r) {
    const int64_t b = static_cast<int64_t>(rois[r * 5]);
    for (int64_t ch = 0; ch < c; ++ch) {
      T* plane = gin + (b * c + ch) * h * w;
      const int64_t base = (r * c + ch) * ph * pw;
      for (int64_t i = 0; i < ph * pw; ++i)
        if (argmax[base + i] >= 0) plane[argmax[base + i]] += grad[base + i];
    }
  }
}

at::Tensor roi_pool_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, const at::Tensor& argmax_,
                                 double /*spatial_scale*/, int64_t ph, int64_t pw, int64_t n, int64_t c, int64_t h,
                                 int64_t w) {
  check_floating("roi_pool_backward", "grad", grad_);
  check_same_dtype("roi_pool_backward", "rois", grad_, rois_);
  EMBER_CHECK_TYPE(argmax_.dtype() == at::ScalarType::Long, "roi_pool_backward: expected argmax to be int64, got ",
                   argmax_.toString());
  const int64_t k = rois_.sizes()[0];
  EMBER_CHECK_VALUE(grad_.dim() == 4 && grad_.sizes()[0] == k && grad_.sizes()[1] == c && grad_.sizes()[2] == ph &&
                        grad_.sizes()[3] == pw && argmax_.sizes() == grad_.sizes(),
                    "roi_pool_backward: expected grad and argmax of shape [", k, ", ", c, ", ", ph, ", ", pw, "], got ",
                    grad_.toString(), " and ", argmax_.toString());
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous(), argmax = argmax_.contiguous();
  at::Tensor gin = at::zeros({n, c, h, w}, grad.dtype());
  if (grad.numel() == 0) return gin;
  for (int64_t r = 0; r < k; ++r) {
    const double b =
        grad.dtype() == at::ScalarType::Float ? rois.data_ptr<float>()[r * 5] : rois.data_ptr<double>()[r * 5];
    EMBER_CHECK_INDEX(b >= 0 && b < n, "roi_pool_backward: rois[", r, ", 0] = ", b,
                      " is not a batch index (batch size ", n, ")");
  }
  if (grad.dtype() == at::ScalarType::Float)
    roi_pool_backward<float>(grad.data_ptr<float>(), rois.data_ptr<float>(), argmax.data_ptr<int64_t>(),
                             gin.data_ptr<float>(), c, h, w, k, ph, pw);
  else
    roi_pool_backward<double>(grad.data_ptr<double>(), rois.data_ptr<double>(), argmax.data_ptr<int64_t>(),
                              gin.data_ptr<double>(), c, h, w, k, ph, pw);
  return gin;
}

}  // namespace
}  // namespace ember::vision

EMBER_LIBRARY_IMPL(vision, CPU, m) {
  m.impl("roi_pool", &ember::vision::roi_pool_cpu, "roi_pool_cpu");
  m.impl("_roi_pool_backward", &ember::vision::roi_pool_backward_cpu, "roi_pool_backward_cpu");
}
