"""ember.vision.ops (torchvision.ops): detection operators.

``deform_conv2d``, ``roi_align``, ``roi_pool`` and ``nms`` are compiled operators of the
``vision`` namespace (``ember.aten.ops.vision.*``: C++ CPU kernels, CUDA kernels when
built with nvcc, backward operators wired to the Autograd key); the box utilities and
the focal loss are written with ember's tensor operators.
"""

from __future__ import annotations

from .boxes import batched_nms, box_area, box_convert, box_iou, nms
from .deform_conv import DeformConv2d, deform_conv2d
from .focal_loss import sigmoid_focal_loss
from .roi_align import RoIAlign, roi_align
from .roi_pool import RoIPool, roi_pool

__all__ = [
    "DeformConv2d",
    "RoIAlign",
    "RoIPool",
    "batched_nms",
    "box_area",
    "box_convert",
    "box_iou",
    "deform_conv2d",
    "nms",
    "roi_align",
    "roi_pool",
    "sigmoid_focal_loss",
]
