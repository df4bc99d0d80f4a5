// ember-vision's operators: the schemas of namespace `vision` (ember.aten.ops.vision.*),
// declared once here; the kernels live in cpu/ and cuda/ and register themselves for
// their dispatch key. The derivatives (the *_backward operators below, wired to the
// Autograd key) are registered from Python in ember/vision/ops/_register.py.
#include "vision.h"

EMBER_LIBRARY(vision, m) {
  m.def(
      "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, int stride_h, "
      "int stride_w, int pad_h, int pad_w, int dilation_h, int dilation_w, int groups, int offset_groups, "
      "bool use_mask) -> Tensor");
  m.def(
      "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
      "int stride_h, int stride_w, int pad_h, int pad_w, int dilation_h, int dilation_w, int groups, "
      "int offset_groups, bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)");
  m.def(
      "roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
      "int sampling_ratio, bool aligned) -> Tensor");
  m.def(
      "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
      "int batch_size, int channels, int height, int width, int sampling_ratio, bool aligned) -> Tensor");
  m.def(
      "roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width) -> "
      "(Tensor, Tensor)");
  m.def(
      "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, int pooled_height, "
      "int pooled_width, int batch_size, int channels, int height, int width) -> Tensor");
  m.def("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor");
}

EMBER_EXTENSION_MODULE(_C)
