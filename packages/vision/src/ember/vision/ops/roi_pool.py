"""roi_pool / RoIPool (Fast R-CNN), the kernel ember.aten.ops.vision.roi_pool."""

from __future__ import annotations

from typing import Any

import ember.nn as nn

from ._register import vision_ops
from ._utils import pair, rois_of


def roi_pool(input: Any, boxes: Any, output_size: int | tuple[int, int], spatial_scale: float = 1.0) -> Any:
    """Region-of-interest max pooling: ``input`` [N, C, H, W], ``boxes`` Tensor[K, 5] or a
    list of N Tensor[L, 4] -> [K, C, output_size...]. Box corners are rounded to whole
    pixels after scaling; an empty bin gives 0."""
    ph, pw = pair(output_size, "output_size", "roi_pool")
    rois = rois_of(boxes, input, "roi_pool")
    output, _argmax = vision_ops.roi_pool(input, rois, float(spatial_scale), ph, pw)
    return output


class RoIPool(nn.Module):
    """Module form of :func:`roi_pool`."""

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Any, rois: Any) -> Any:
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, spatial_scale={self.spatial_scale}"
