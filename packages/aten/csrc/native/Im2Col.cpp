// im2col / col2im operators (nn.functional.unfold / fold) over the kernels of
// cpu/Im2ColKernel.cpp, which the convolution uses too (see Im2Col.h for the layouts).
#include "Im2Col.h"

#include <ember/c10/DeviceGuard.h>

namespace ember::at::native {

DEFINE_DISPATCH(im2col_stub);
DEFINE_DISPATCH(col2im_stub);
DEFINE_DISPATCH(small_gemm_stub);
DEFINE_DISPATCH(channel_sum_stub);

namespace {

// int[2] arguments of im2col / col2im: PyTorch's "It is expected kernel_size equals to 2".
void check_pair(IntArrayRef v, const char* name) {
  EMBER_CHECK(v.size() == 2, "It is expected ", name, " equals to 2, but got size ", v.size());
}

void check_unfold_params(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0,
              "kernel size should be greater than zero, but got kernel_height: ", kernel_size[0],
              " kernel_width: ", kernel_size[1]);
  EMBER_CHECK(stride[0] > 0 && stride[1] > 0, "stride should be greater than zero, but got stride_height: ", stride[0],
              " stride_width: ", stride[1]);
  EMBER_CHECK(dilation[0] > 0 && dilation[1] > 0,
              "dilation should be greater than zero, but got dilation_height: ", dilation[0],
              " dilation_width: ", dilation[1]);
  EMBER_CHECK(padding[0] >= 0 && padding[1] >= 0, "padding should be non-negative, but got pad_height: ", padding[0],
              " pad_width: ", padding[1]);
}

// Number of sliding blocks along one dim; may be < 1, which the caller reports. (C++
// division, as PyTorch's, so the numbers in the messages are the same.)
int64_t blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (size + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

ConvGeometry geometry_2d(int64_t H, int64_t W, int64_t oh, int64_t ow, IntArrayRef kernel_size, IntArrayRef dilation,
                         IntArrayRef padding, IntArrayRef stride) {
  ConvGeometry g;
  g.input[1] = H, g.input[2] = W;
  g.output[1] = oh, g.output[2] = ow;
  for (int i = 0; i < 2; ++i) {
    g.kernel[i + 1] = kernel_size[i];
    g.dilation[i + 1] = dilation[i];
    g.padding[i + 1] = padding[i];
    g.stride[i + 1] = stride[i];
  }
  return g;
}

std::string pair_str(IntArrayRef v) { return sizes_x(v, ", "); }

}  // namespace

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  check_pair(kernel_size, "kernel_size");
  check_pair(dilation, "dilation");
  check_pair(padding, "padding");
  check_pair(stride, "stride");
  check_unfold_params(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  bool ok = nd == 3 || nd == 4;
  for (int64_t d = nd - 3; ok && d < nd; ++d) ok = self.size(d) != 0;
  EMBER_CHECK(ok,
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
              "input, but got: ",
              shape_str(self.sizes()));
  check_floating("im2col", self);
  const int64_t H = self.size(nd - 2), W = self.size(nd - 1), C = self.size(nd - 3);
  const int64_t oh = blocks(H, kernel_size[0], dilation[0], padding[0], stride[0]);
  const int64_t ow = blocks(W, kernel_size[1], dilation[1], padding[1], stride[1]);
  EMBER_CHECK(oh >= 1 && ow >= 1, "Given input with spatial size ", pair_str({H, W}),
              ", kernel_size=", pair_str(kernel_size), ", dilation=", pair_str(dilation),
              ", padding=", pair_str(padding), ", calculated shape of the array of sliding blocks as ",
              pair_str({oh, ow}), ", but its components must be at least one.");
  const ScalarType ct = nn_compute_type(self.dtype());
  c10::DeviceGuard guard(self.device());
  const Tensor x = (nd == 3 ? self.unsqueeze(0) : self).to(ct).contiguous();
  const int64_t N = x.size(0), kn = kernel_size[0] * kernel_size[1];
  Tensor out = empty({N, C * kn, oh * ow}, ct, self.device());
  if (out.numel() > 0) {
    const ConvGeometry g = geometry_2d(H, W, oh, ow, kernel_size, dilation, padding, stride);
    im2col_stub(self.device().type, ct, x.data_ptr(), C * H * W, out.data_ptr(),
                ColumnsLayout{C * kn * oh * ow, oh * ow}, N, C, g);
  }
  out = out.to(self.dtype());
  return nd == 3 ? out.squeeze(0) : out;
}

Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  check_pair(output_size, "output_size");
  check_pair(kernel_size, "kernel_size");
  check_pair(dilation, "dilation");
  check_pair(padding, "padding");
  check_pair(stride, "stride");
  check_unfold_params(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  bool ok = nd == 2 || nd == 3;
  for (int64_t d = nd - 2; ok && d < nd; ++d) ok = self.size(d) != 0;
  EMBER_CHECK(ok,
              "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
              "for input, but got: ",
              shape_str(self.sizes()));
  const int64_t kn = kernel_size[0] * kernel_size[1];
  const int64_t rows = self.size(nd - 2), L = self.size(nd - 1);
  EMBER_CHECK(rows % kn == 0, "Expected size of input's dimension ", nd - 2,
              " to be divisible by the product of kernel_size, but got input.size(", nd - 2, ")=", rows,
              " and kernel_size=", pair_str(kernel_size), ".");
  const int64_t H = output_size[0], W = output_size[1];
  const int64_t oh = blocks(H, kernel_size[0], dilation[0], padding[0], stride[0]);
  const int64_t ow = blocks(W, kernel_size[1], dilation[1], padding[1], stride[1]);
  EMBER_CHECK(oh * ow == L, "Given output_size=", pair_str(output_size), ", kernel_size=", pair_str(kernel_size),
              ", dilation=", pair_str(dilation), ", padding=", pair_str(padding), ", stride=", pair_str(stride),
              ", expected size of input's dimension ", nd - 1, " to match the calculated number of sliding blocks ", oh,
              " * ", ow, " = ", oh * ow, ", but got input.size(", nd - 1, ")=", L, ".");
  EMBER_CHECK(oh >= 1 && ow >= 1, "Given output_size=", pair_str(output_size), ", kernel_size=", pair_str(kernel_size),
              ", dilation=", pair_str(dilation), ", padding=", pair_str(padding), ", stride=", pair_str(stride),
              ", calculated shape of the array of sliding blocks as ", pair_str({oh, ow}),
              ", but its components must be at least one.");
  check_floating("col2im", self);
  const ScalarType ct = nn_compute_type(self.dtype());
  c10::DeviceGuard guard(self.device());
  const Tensor cols = (nd == 2 ? self.unsqueeze(0) : self).to(ct).contiguous();
  const int64_t N = cols.size(0), C = rows / kn;
  Tensor out = empty({N, C, H, W}, ct, self.device());
  if (out.numel() > 0) {
    const ConvGeometry g = geometry_2d(H, W, oh, ow, kernel_size, dilation, padding, stride);
    col2im_stub(self.device().type, ct, cols.data_ptr(), ColumnsLayout{rows * L, L}, out.data_ptr(), C * H * W, N, C,
                g);
  }
  out = out.to(self.dtype());
  return nd == 2 ? out.squeeze(0) : out;
}

}  // namespace ember::at::native
