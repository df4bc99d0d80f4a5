"""roi_align / RoIAlign (Mask R-CNN), the kernel ember.aten.ops.vision.roi_align."""

from __future__ import annotations

from typing import Any

import ember.nn as nn

from ._register import vision_ops
from ._utils import pair, rois_of


def roi_align(
    input: Any,
    boxes: Any,
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Any:
    """Region-of-interest align: ``input`` [N, C, H, W], ``boxes`` Tensor[K, 5] (batch index,
    x1, y1, x2, y2) or a list of N Tensor[L, 4] -> [K, C, output_size...].

    Each output bin averages ``sampling_ratio``² bilinear samples (``-1``: adaptive,
    ``ceil(box size / output size)`` per side); ``aligned=True`` shifts the box by half a
    pixel so that its corners sit on pixel centres::

        roi_align(features, [ember.aten.tensor([[0.0, 0.0, 8.0, 8.0]])], output_size=2)
    """
    ph, pw = pair(output_size, "output_size", "roi_align")
    rois = rois_of(boxes, input, "roi_align")
    return vision_ops.roi_align(input, rois, float(spatial_scale), ph, pw, int(sampling_ratio), bool(aligned))


class RoIAlign(nn.Module):
    """Module form of :func:`roi_align`."""

    def __init__(
        self, output_size: int | tuple[int, int], spatial_scale: float, sampling_ratio: int, aligned: bool = False
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input: Any, rois: Any) -> Any:
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
            f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned}"
        )
