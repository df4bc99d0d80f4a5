#pragma once
// im2col / col2im: convolution's data movement, which turns it into matrix products
// (and nn.functional.unfold / fold, the same two kernels as operators).
//
// Spatial dims are always three here, (D, H, W): a 1-d or 2-d problem has leading
// size-1 dims with kernel 1, stride 1, padding 0 and dilation 1, so one kernel serves
// conv1d/2d/3d. For one image, contiguous:
//
//   image    (C, iD, iH, iW)
//   columns  (C, kD, kH, kW, oD, oH, oW)   rows (c, kd, kh, kw), columns (od, oh, ow)
//
//   columns[c, kd, kh, kw, od, oh, ow] = image[c, od*sD - pD + kd*dD, oh*sH - pH + kh*dH, ow*sW - pW + kw*dW]
//
// (0 where the index falls outside the image); col2im adds every column element back to
// the image element it came from. The window count o is not derived from i here: a
// transposed convolution with output_padding has an image larger than its windows reach.

#include <string>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct ConvGeometry {
  int64_t input[3] = {1, 1, 1};   // image spatial size
  int64_t output[3] = {1, 1, 1};  // sliding-window positions per dim
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t padding[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};

  int64_t input_numel() const { return input[0] * input[1] * input[2]; }
  int64_t output_numel() const { return output[0] * output[1] * output[2]; }
  int64_t kernel_numel() const { return kernel[0] * kernel[1] * kernel[2]; }
  // columns == image (1x1 kernel, stride 1, no padding): im2col can be skipped.
  bool is_identity() const {
    for (int i = 0; i < 3; ++i) {
      if (kernel[i] != 1 || stride[i] != 1 || padding[i] != 0 || input[i] != output[i]) return false;
    }
    return true;
  }
};

// Where the columns of image n are: its row r (c, kd, kh, kw) starts at
// columns + n * image_offset + r * row_stride (elements).
//   one image after another (unfold's layout):  image_offset = rows * positions, row_stride = positions
//   images side by side (one GEMM for a batch): image_offset = positions, row_stride = batch * positions
struct ColumnsLayout {
  int64_t image_offset;
  int64_t row_stride;
};

// `batch` images of `channels` channels, image n at image + n * image_stride (contiguous
// within one image). float32 / float64 only; parallel over rows (im2col) or channel
// planes (col2im, which overwrites the images).
using im2col_fn = void (*)(ScalarType dtype, const void* image, int64_t image_stride, void* columns,
                           ColumnsLayout layout, int64_t batch, int64_t channels, const ConvGeometry& g);
using col2im_fn = void (*)(ScalarType dtype, const void* columns, ColumnsLayout layout, void* image,
                           int64_t image_stride, int64_t batch, int64_t channels, const ConvGeometry& g);
DECLARE_DISPATCH(im2col_fn, im2col_stub);
DECLARE_DISPATCH(col2im_fn, col2im_stub);

// c (m x n) = op(a) op(b) (+ c when accumulate), row-major, single-threaded: the
// products too small for BLAS, which the convolution runs inside parallel_for over
// images and groups (BLAS must not be called there). float32 / float64.
using small_gemm_fn = void (*)(ScalarType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                               const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                               bool accumulate);
DECLARE_DISPATCH(small_gemm_fn, small_gemm_stub);

// sums[c] = sum over n and s of x[n, c, s] for a contiguous (N, C, S) x: a convolution's
// bias gradient. float32 / float64 (sums in the dtype, vectorised, per row then over
// rows in double); parallel over channels.
using channel_sum_fn = void (*)(ScalarType dtype, const void* x, void* sums, int64_t N, int64_t C, int64_t S);
DECLARE_DISPATCH(channel_sum_fn, channel_sum_stub);

// ---- helpers shared by the convolution, unfold/fold and pooling operators ---------------

// float16 / bfloat16 kernels run in float32 (one conversion each way per call).
inline ScalarType nn_compute_type(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

// NotImplementedError "op: not implemented for dtype int64" unless t is a floating type.
inline void check_floating(const char* op, const Tensor& t) {
  EMBER_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(t.dtype()), op, ": not implemented for dtype ",
                              c10::toPythonName(t.dtype()));
}

// The layout a result should have for this input (PyTorch's suggest_memory_format):
// channels-last when the input is laid out that way and not also plainly contiguous.
inline MemoryFormat suggest_memory_format(const Tensor& t) {
  if (t.dim() == 4 && !t.is_contiguous() && t.is_contiguous(MemoryFormat::ChannelsLast)) {
    return MemoryFormat::ChannelsLast;
  }
  if (t.dim() == 5 && !t.is_contiguous() && t.is_contiguous(MemoryFormat::ChannelsLast3d)) {
    return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

// "(5 x 5)": sizes as PyTorch's convolution and pooling messages print them.
inline std::string sizes_x(IntArrayRef v, const char* sep = " x ") {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s + ")";
}

}  // namespace ember::at::native
