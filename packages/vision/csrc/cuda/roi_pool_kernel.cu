// vision::roi_pool and its backward on CUDA: one thread per output bin; the backward adds
// each bin's gradient at its argmax (atomicAdd: bins of overlapping boxes share pixels).
#include <cfloat>

#include "cuda_utils.cuh"

namespace ember::vision::cuda {
namespace {

// The lowest finite value of T (std::numeric_limits is not usable in device code without
// --expt-relaxed-constexpr).
template <typename T>
struct Lowest;
template <>
struct Lowest<float> {
  static constexpr float value = -FLT_MAX;
};
template <>
struct Lowest<double> {
  static constexpr double value = -DBL_MAX;
};

template <typename T>
__global__ void forward_kernel(const T* in, const T* rois, T* out, int64_t* argmax, int64_t total, int64_t c, int64_t h,
                               int64_t w, T scale, int64_t ph, int64_t pw) {
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t px = idx % pw, py = (idx / pw) % ph, ch = (idx / (pw * ph)) % c, r = idx / (pw * ph * c);
    const T* roi = rois + r * 5;
    const int64_t b = static_cast<int64_t>(roi[0]);
    const int64_t x1 = static_cast<int64_t>(round(roi[1] * scale)), y1 = static_cast<int64_t>(round(roi[2] * scale));
    const int64_t x2 = static_cast<int64_t>(round(roi[3] * scale)), y2 = static_cast<int64_t>(round(roi[4] * scale));
    const int64_t rw = max(x2 - x1 + 1, int64_t(1)), rh = max(y2 - y1 + 1, int64_t(1));
    const T bin_h = static_cast<T>(rh) / ph, bin_w = static_cast<T>(rw) / pw;
    int64_t hs = static_cast<int64_t>(floor(py * bin_h)) + y1, he = static_cast<int64_t>(ceil((py + 1) * bin_h)) + y1;
    int64_t ws = static_cast<int64_t>(floor(px * bin_w)) + x1, we = static_cast<int64_t>(ceil((px + 1) * bin_w)) + x1;
    hs = min(max(hs, int64_t(0)), h);
    he = min(max(he, int64_t(0)), h);
    ws = min(max(ws, int64_t(0)), w);
    we = min(max(we, int64_t(0)), w);
    const bool empty = he <= hs || we <= ws;
    T best = empty ? T(0) : Lowest<T>::value;
    int64_t best_idx = -1;
    const T* plane = in + (b * c + ch) * h * w;
    for (int64_t y = hs; y < he; ++y)
      for (int64_t x = ws; x < we; ++x)
        if (plane[y * w + x] > best) {
          best = plane[y * w + x];
          best_idx = y * w + x;
        }
    out[idx] = best;
    argmax[idx] = best_idx;
  }
}

template <typename T>
__global__ void backward_kernel(const T* grad, const T* rois, const int64_t* argmax, T* gin, int64_t total, int64_t c,
                                int64_t h, int64_t w, int64_t ph, int64_t pw) {
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t ch = (idx / (pw * ph)) % c, r = idx / (pw * ph * c);
    const int64_t b = static_cast<int64_t>(rois[r * 5]);
    if (argmax[idx] >= 0) atomicAdd(gin + (b * c + ch) * h * w + argmax[idx], grad[idx]);
  }
}

void check_batch_indices(const char* op, const at::Tensor& rois, int64_t n) {
  const at::Tensor cpu = rois.to(at::Device(at::DeviceType::CPU)).to(at::ScalarType::Double).contiguous();
  const double* p = cpu.data_ptr<double>();
  for (int64_t r = 0; r < cpu.sizes()[0]; ++r) {
    const int64_t b = static_cast<int64_t>(p[r * 5]);
    EMBER_CHECK_INDEX(b >= 0 && b < n, op, ": rois[", r, ", 0] = ", b, " is not a batch index of input (batch size ", n,
                      ")");
  }
}

std::tuple<at::Tensor, at::Tensor> roi_pool_cuda(const at::Tensor& input_, const at::Tensor& rois_, double scale,
                                                 int64_t ph, int64_t pw) {
  check_rois("roi_pool", input_, rois_);
  check_cuda("roi_pool", input_);
  EMBER_CHECK_VALUE(ph > 0 && pw > 0, "roi_pool: output_size must be positive, got (", ph, ", ", pw, ")");
  ember::c10::DeviceGuard guard(input_.device());
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  check_batch_indices("roi_pool", rois, n);
  at::Tensor out = at::zeros({rois.sizes()[0], c, ph, pw}, input.dtype(), input.device());
  at::Tensor argmax =
      at::full({rois.sizes()[0], c, ph, pw}, at::Scalar(int64_t(-1)), at::ScalarType::Long, input.device());
  const int64_t total = out.numel();
  if (total == 0) return {out, argmax};
  if (input.dtype() == at::ScalarType::Float)
    forward_kernel<float><<<blocks_for(total), kThreads, 0, stream_of(input)>>>(
        input.data_ptr<float>(), rois.data_ptr<float>(), out.data_ptr<float>(), argmax.data_ptr<int64_t>(), total, c, h,
        w, static_cast<float>(scale), ph, pw);
  else
    forward_kernel<double><<<blocks_for(total), kThreads, 0, stream_of(input)>>>(
        input.data_ptr<double>(), rois.data_ptr<double>(), out.data_ptr<double>(), argmax.data_ptr<int64_t>(), total, c,
        h, w, scale, ph, pw);
  check_launch("roi_pool");
  return {out, argmax};
}

at::Tensor roi_pool_backward_cuda(const at::Tensor& grad_, const at::Tensor& rois_, const at::Tensor& argmax_,
                                  double /*scale*/, int64_t ph, int64_t pw, int64_t n, int64_t c, int64_t h,
                                  int64_t w) {
  check_floating("roi_pool_backward", "grad", grad_);
  check_cuda("roi_pool_backward", grad_);
  check_same_dtype("roi_pool_backward", "rois", grad_, rois_);
  EMBER_CHECK_TYPE(argmax_.dtype() == at::ScalarType::Long, "roi_pool_backward: expected argmax to be int64, got ",
                   argmax_.toString());
  EMBER_CHECK_VALUE(argmax_.sizes() == grad_.sizes() && grad_.numel() == rois_.sizes()[0] * c * ph * pw,
                    "roi_pool_backward: expected grad and argmax of shape [", rois_.sizes()[0], ", ", c, ", ", ph, ", ",
                    pw, "], got ", grad_.toString(), " and ", argmax_.toString());
  ember::c10::DeviceGuard guard(grad_.device());
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous(), argmax = argmax_.contiguous();
  check_batch_indices("roi_pool_backward", rois, n);
  at::Tensor gin = at::zeros({n, c, h, w}, grad.dtype(), grad.device());
  const int64_t total = grad.numel();
  if (total == 0) return gin;
  if (grad.dtype() == at::ScalarType::Float)
    backward_kernel<float><<<blocks_for(total), kThreads, 0, stream_of(grad)>>>(
        grad.data_ptr<float>(), rois.data_ptr<float>(), argmax.data_ptr<int64_t>(), gin.data_ptr<float>(), total, c, h,
        w, ph, pw);
  else
    backward_kernel<double><<<blocks_for(total), kThreads, 0, stream_of(grad)>>>(
        grad.data_ptr<double>(), rois.data_ptr<double>(), argmax.data_ptr<int64_t>(), gin.data_ptr<double>(), total, c,
        h, w, ph, pw);
  check_launch("roi_pool_backward");
  return gin;
}

}  // namespace
}  // namespace ember::vision::cuda

EMBER_LIBRARY_IMPL(vision, CUDA, m) {
  m.impl("roi_pool", &ember::vision::cuda::roi_pool_cuda, "roi_pool_cuda");
  m.impl("_roi_pool_backward", &ember::vision::cuda::roi_pool_backward_cuda, "roi_pool_backward_cuda");
}
