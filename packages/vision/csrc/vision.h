#pragma once
// Shared by ember-vision's kernels: the argument checks every op runs before its CPU or
// CUDA kernel, so that both backends reject bad input with the same message.
#include <ember/aten/library.h>

#include <string>

namespace ember::vision {

namespace at = ember::at;

inline bool is_float_or_double(const at::Tensor& t) {
  return t.dtype() == at::ScalarType::Float || t.dtype() == at::ScalarType::Double;
}

inline void check_floating(const char* op, const char* name, const at::Tensor& t) {
  EMBER_CHECK_TYPE(is_float_or_double(t), op, ": expected ", name, " to be float32 or float64, got ", t.toString());
}

inline void check_dim(const char* op, const char* name, const at::Tensor& t, int64_t dim) {
  EMBER_CHECK_VALUE(t.dim() == dim, op, ": expected ", name, " to be ", dim, "-dimensional, got ", t.toString());
}

inline void check_same_dtype(const char* op, const char* name, const at::Tensor& a, const at::Tensor& b) {
  EMBER_CHECK_TYPE(a.dtype() == b.dtype(), op, ": expected ", name, " to have the dtype of input (", a.toString(),
                   "), got ", b.toString());
}

inline void check_same_device(const char* op, const char* name, const at::Tensor& a, const at::Tensor& b) {
  EMBER_CHECK_VALUE(a.device() == b.device(), op, ": expected ", name, " on the device of input (", a.toString(),
                    "), got ", b.toString());
}

// rois: [K, 5] rows (batch index, x1, y1, x2, y2), the format of torchvision's roi ops.
inline void check_rois(const char* op, const at::Tensor& input, const at::Tensor& rois) {
  check_dim(op, "input", input, 4);
  check_floating(op, "input", input);
  EMBER_CHECK_VALUE(rois.dim() == 2 && rois.sizes()[1] == 5, op,
                    ": expected rois of shape [K, 5] (batch index, x1, y1, x2, y2), got ", rois.toString());
  check_same_dtype(op, "rois", input, rois);
  check_same_device(op, "rois", input, rois);
}

struct DeformConvArgs {
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups;
  bool use_mask;
};

// The output size of a (deformable) convolution along one dimension.
inline int64_t conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - (dil * (k - 1) + 1)) / stride + 1;
}

inline void check_deform_conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
                                const at::Tensor& mask, const at::Tensor& bias, const DeformConvArgs& a) {
  const char* op = "deform_conv2d";
  check_dim(op, "input", input, 4);
  check_floating(op, "input", input);
  check_dim(op, "weight", weight, 4);
  check_dim(op, "offset", offset, 4);
  check_dim(op, "bias", bias, 1);
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor*>{"weight", &weight},
                                {"offset", &offset},
                                {"mask", &mask},
                                {"bias", &bias}}) {
    check_same_dtype(op, name, input, *t);
    check_same_device(op, name, input, *t);
  }
  EMBER_CHECK_VALUE(a.stride_h > 0 && a.stride_w > 0, op, ": stride must be positive, got (", a.stride_h, ", ",
                    a.stride_w, ")");
  EMBER_CHECK_VALUE(a.pad_h >= 0 && a.pad_w >= 0, op, ": padding must be non-negative, got (", a.pad_h, ", ", a.pad_w,
                    ")");
  EMBER_CHECK_VALUE(a.dil_h > 0 && a.dil_w > 0, op, ": dilation must be positive, got (", a.dil_h, ", ", a.dil_w, ")");
  EMBER_CHECK_VALUE(a.groups > 0 && a.offset_groups > 0, op, ": groups and offset_groups must be positive, got ",
                    a.groups, " and ", a.offset_groups);
  const int64_t n = input.sizes()[0], c_in = input.sizes()[1], h = input.sizes()[2], w = input.sizes()[3];
  const int64_t c_out = weight.sizes()[0], kh = weight.sizes()[2], kw = weight.sizes()[3];
  EMBER_CHECK_VALUE(c_in % a.groups == 0 && c_out % a.groups == 0, op, ": in_channels (", c_in, ") and out_channels (",
                    c_out, ") must be divisible by groups (", a.groups, ")");
  EMBER_CHECK_VALUE(weight.sizes()[1] * a.groups == c_in, op, ": weight ", weight.toString(), " expects ",
                    weight.sizes()[1] * a.groups, " input channels for groups=", a.groups, ", got input ",
                    input.toString());
  EMBER_CHECK_VALUE(c_in % a.offset_groups == 0, op, ": in_channels (", c_in, ") must be divisible by offset_groups (",
                    a.offset_groups, ")");
  const int64_t h_out = conv_out_size(h, kh, a.stride_h, a.pad_h, a.dil_h);
  const int64_t w_out = conv_out_size(w, kw, a.stride_w, a.pad_w, a.dil_w);
  EMBER_CHECK_VALUE(h_out > 0 && w_out > 0, op, ": the output would be empty (", h_out, " x ", w_out, ") for input ",
                    input.toString(), " and weight ", weight.toString());
  EMBER_CHECK_VALUE(offset.sizes()[0] == n && offset.sizes()[1] == 2 * a.offset_groups * kh * kw &&
                        offset.sizes()[2] == h_out && offset.sizes()[3] == w_out,
                    op, ": expected offset of shape [", n, ", ", 2 * a.offset_groups * kh * kw, ", ", h_out, ", ",
                    w_out, "] (2 * offset_groups * kernel_h * kernel_w channels), got ", offset.toString());
  if (a.use_mask) {
    check_dim(op, "mask", mask, 4);
    EMBER_CHECK_VALUE(mask.sizes()[0] == n && mask.sizes()[1] == a.offset_groups * kh * kw &&
                          mask.sizes()[2] == h_out && mask.sizes()[3] == w_out,
                      op, ": expected mask of shape [", n, ", ", a.offset_groups * kh * kw, ", ", h_out, ", ", w_out,
                      "] (offset_groups * kernel_h * kernel_w channels), got ", mask.toString());
  }
  EMBER_CHECK_VALUE(bias.sizes()[0] == c_out, op, ": expected bias of shape [", c_out, "], got ", bias.toString());
}

}  // namespace ember::vision
