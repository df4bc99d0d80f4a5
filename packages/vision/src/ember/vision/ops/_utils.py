"""Argument helpers shared by the ops (torchvision.ops._utils)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.aten as ea


def pair(value: Any, name: str, op: str) -> tuple[int, int]:
    """An int or a pair of ints as (h, w)."""
    if isinstance(value, int):
        return value, value
    if isinstance(value, Sequence) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return int(value[0]), int(value[1])
    raise TypeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")


def _is_tensor(x: Any) -> bool:
    return isinstance(x, ea.Tensor)


def convert_boxes_to_roi_format(boxes: Sequence[Any]) -> Any:
    """A list of per-image Tensor[L, 4] boxes -> Tensor[K, 5] rois (batch index, x1, y1, x2, y2)."""
    rows = []
    for i, b in enumerate(boxes):
        rows.append(ea.cat([ea.full((b.shape[0], 1), float(i), dtype=b.dtype, device=b.device), b], dim=1))
    return ea.cat(rows, dim=0)


def check_roi_boxes_shape(boxes: Any, op: str) -> None:
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if not _is_tensor(b) or b.dim() != 2 or b.shape[1] != 4:
                shape = list(b.shape) if _is_tensor(b) else type(b).__name__
                raise ValueError(f"{op}: the boxes of each image must be a Tensor[L, 4], got {shape}")
    elif _is_tensor(boxes):
        if boxes.dim() != 2 or boxes.shape[1] != 5:
            raise ValueError(
                f"{op}: boxes must be a Tensor[K, 5] (batch index, x1, y1, x2, y2), got {list(boxes.shape)}"
            )
    else:
        raise TypeError(f"{op}: boxes must be a Tensor[K, 5] or a list of Tensor[L, 4], got {type(boxes).__name__}")


def rois_of(boxes: Any, input: Any, op: str) -> Any:
    check_roi_boxes_shape(boxes, op)
    if not isinstance(boxes, ea.Tensor):
        if len(boxes) == 0:
            return ea.zeros((0, 5), dtype=input.dtype, device=input.device)
        boxes = convert_boxes_to_roi_format(boxes)
    return boxes
