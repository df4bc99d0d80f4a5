// vision::roi_align and its backward on CUDA: one thread per output bin (forward) or per
// gradient element (backward, atomicAdd: boxes overlap). Same sampling as cpu/roi_align_kernel.cpp.
#include "cuda_utils.cuh"

namespace ember::vision::cuda {
namespace {

template <typename T>
__device__ bool bilinear(int64_t h, int64_t w, T y, T x, int64_t& y0, int64_t& y1, int64_t& x0, int64_t& x1, T& w1,
                         T& w2, T& w3, T& w4) {
  if (y < -1.0 || y > h || x < -1.0 || x > w) return false;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  y0 = static_cast<int64_t>(y);
  x0 = static_cast<int64_t>(x);
  if (y0 >= h - 1) {
    y1 = y0 = h - 1;
    y = static_cast<T>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x1 = x0 = w - 1;
    x = static_cast<T>(x0);
  } else {
    x1 = x0 + 1;
  }
  const T ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  w1 = hy * hx;
  w2 = hy * lx;
  w3 = ly * hx;
  w4 = ly * lx;
  return true;
}

template <typename T>
struct Geometry {
  int64_t batch, grid_h, grid_w;
  T x1, y1, bin_h, bin_w, count;
};

template <typename T>
__device__ Geometry<T> geometry(const T* roi, T scale, int64_t ph, int64_t pw, int64_t ratio, bool aligned) {
  Geometry<T> g;
  g.batch = static_cast<int64_t>(roi[0]);
  const T off = aligned ? T(0.5) : T(0);
  g.x1 = roi[1] * scale - off;
  g.y1 = roi[2] * scale - off;
  T rw = roi[3] * scale - off - g.x1, rh = roi[4] * scale - off - g.y1;
  if (!aligned) {
    rw = max(rw, T(1));
    rh = max(rh, T(1));
  }
  g.bin_h = rh / ph;
  g.bin_w = rw / pw;
  g.grid_h = ratio > 0 ? ratio : static_cast<int64_t>(ceil(rh / ph));
  g.grid_w = ratio > 0 ? ratio : static_cast<int64_t>(ceil(rw / pw));
  g.count = static_cast<T>(max(g.grid_h * g.grid_w, int64_t(1)));
  return g;
}

template <typename T>
__global__ void forward_kernel(const T* in, const T* rois, T* out, int64_t total, int64_t c, int64_t h, int64_t w,
                               T scale, int64_t ph, int64_t pw, int64_t ratio, bool aligned) {
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t px = idx % pw, py = (idx / pw) % ph, ch = (idx / (pw * ph)) % c, r = idx / (pw * ph * c);
    const Geometry<T> g = geometry(rois + r * 5, scale, ph, pw, ratio, aligned);
    const T* plane = in + (g.batch * c + ch) * h * w;
    T sum = 0;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const T y = g.y1 + py * g.bin_h + (iy + T(0.5)) * g.bin_h / g.grid_h;
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const T x = g.x1 + px * g.bin_w + (ix + T(0.5)) * g.bin_w / g.grid_w;
        int64_t y0, y1, x0, x1;
        T w1, w2, w3, w4;
        if (!bilinear(h, w, y, x, y0, y1, x0, x1, w1, w2, w3, w4)) continue;
        sum += w1 * plane[y0 * w + x0] + w2 * plane[y0 * w + x1] + w3 * plane[y1 * w + x0] + w4 * plane[y1 * w + x1];
      }
    }
    out[idx] = sum / g.count;
  }
}

template <typename T>
__global__ void backward_kernel(const T* grad, const T* rois, T* gin, int64_t total, int64_t c, int64_t h, int64_t w,
                                T scale, int64_t ph, int64_t pw, int64_t ratio, bool aligned) {
  EMBER_VISION_KERNEL_LOOP(idx, total) {
    const int64_t px = idx % pw, py = (idx / pw) % ph, ch = (idx / (pw * ph)) % c, r = idx / (pw * ph * c);
    const Geometry<T> g = geometry(rois + r * 5, scale, ph, pw, ratio, aligned);
    T* plane = gin + (g.batch * c + ch) * h * w;
    const T gv = grad[idx] / g.count;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const T y = g.y1 + py * g.bin_h + (iy + T(0.5)) * g.bin_h / g.grid_h;
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const T x = g.x1 + px * g.bin_w + (ix + T(0.5)) * g.bin_w / g.grid_w;
        int64_t y0, y1, x0, x1;
        T w1, w2, w3, w4;
        if (!bilinear(h, w, y, x, y0, y1, x0, x1, w1, w2, w3, w4)) continue;
        atomicAdd(plane + y0 * w + x0, gv * w1);
        atomicAdd(plane + y0 * w + x1, gv * w2);
        atomicAdd(plane + y1 * w + x0, gv * w3);
        atomicAdd(plane + y1 * w + x1, gv * w4);
      }
    }
  }
}

// The batch indices are checked on the host (a copy of column 0): a bad index must raise,
// not read out of bounds on the device.
void check_batch_indices(const char* op, const at::Tensor& rois, int64_t n) {
  const at::Tensor cpu = rois.to(at::Device(at::DeviceType::CPU)).to(at::ScalarType::Double).contiguous();
  const double* p = cpu.data_ptr<double>();
  for (int64_t r = 0; r < cpu.sizes()[0]; ++r) {
    const int64_t b = static_cast<int64_t>(p[r * 5]);
    EMBER_CHECK_INDEX(b >= 0 && b < n, op, ": rois[", r, ", 0] = ", b, " is not a batch index of input (batch size ", n,
                      ")");
  }
}

at::Tensor roi_align_cuda(const at::Tensor& input_, const at::Tensor& rois_, double scale, int64_t ph, int64_t pw,
                          int64_t ratio, bool aligned) {
  check_rois("roi_align", input_, rois_);
  check_cuda("roi_align", input_);
  EMBER_CHECK_VALUE(ph > 0 && pw > 0, "roi_align: output_size must be positive, got (", ph, ", ", pw, ")");
  ember::c10::DeviceGuard guard(input_.device());
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  check_batch_indices("roi_align", rois, n);
  at::Tensor out = at::zeros({rois.sizes()[0], c, ph, pw}, input.dtype(), input.device());
  const int64_t total = out.numel();
  if (total == 0) return out;
  if (input.dtype() == at::ScalarType::Float)
    forward_kernel<float><<<blocks_for(total), kThreads, 0, stream_of(input)>>>(
        input.data_ptr<float>(), rois.data_ptr<float>(), out.data_ptr<float>(), total, c, h, w,
        static_cast<float>(scale), ph, pw, ratio, aligned);
  else
    forward_kernel<double><<<blocks_for(total), kThreads, 0, stream_of(input)>>>(
        input.data_ptr<double>(), rois.data_ptr<double>(), out.data_ptr<double>(), total, c, h, w, scale, ph, pw, ratio,
        aligned);
  check_launch("roi_align");
  return out;
}

at::Tensor roi_align_backward_cuda(const at::Tensor& grad_, const at::Tensor& rois_, double scale, int64_t ph,
                                   int64_t pw, int64_t n, int64_t c, int64_t h, int64_t w, int64_t ratio,
                                   bool aligned) {
  check_floating("roi_align_backward", "grad", grad_);
  check_cuda("roi_align_backward", grad_);
  check_same_dtype("roi_align_backward", "rois", grad_, rois_);
  ember::c10::DeviceGuard guard(grad_.device());
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous();
  EMBER_CHECK_VALUE(grad.numel() == rois.sizes()[0] * c * ph * pw, "roi_align_backward: expected grad of shape [",
                    rois.sizes()[0], ", ", c, ", ", ph, ", ", pw, "], got ", grad.toString());
  at::Tensor gin = at::zeros({n, c, h, w}, grad.dtype(), grad.device());
  const int64_t total = grad.numel();
  if (total == 0) return gin;
  if (grad.dtype() == at::ScalarType::Float)
    backward_kernel<float><<<blocks_for(total), kThreads, 0, stream_of(grad)>>>(
        grad.data_ptr<float>(), rois.data_ptr<float>(), gin.data_ptr<float>(), total, c, h, w,
        static_cast<float>(scale), ph, pw, ratio, aligned);
  else
    backward_kernel<double><<<blocks_for(total), kThreads, 0, stream_of(grad)>>>(
        grad.data_ptr<double>(), rois.data_ptr<double>(), gin.data_ptr<double>(), total, c, h, w, scale, ph, pw, ratio,
        aligned);
  check_launch("roi_align_backward");
  return gin;
}

}  // namespace
}  // namespace ember::vision::cuda

EMBER_LIBRARY_IMPL(vision, CUDA, m) {
  m.impl("roi_align", &ember::vision::cuda::roi_align_cuda, "roi_align_cuda");
  m.impl("_roi_align_backward", &ember::vision::cuda::roi_align_backward_cuda, "roi_align_backward_cuda");
}
