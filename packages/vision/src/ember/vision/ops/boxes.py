"""Box utilities: nms (the kernel ember.aten.ops.vision.nms), batched_nms, box_area,
box_iou, box_convert. Boxes are Tensor[N, 4] in (x1, y1, x2, y2) unless said otherwise."""

from __future__ import annotations

from typing import Any

import ember.aten as ea

from ._register import vision_ops


def nms(boxes: Any, scores: Any, iou_threshold: float) -> Any:
    """Greedy non-maximum suppression: the indices (int64) of the boxes kept, by decreasing
    score; a box is dropped when its IoU with a kept, higher-scoring box exceeds
    ``iou_threshold``."""
    return vision_ops.nms(boxes, scores, float(iou_threshold))


def batched_nms(boxes: Any, scores: Any, idxs: Any, iou_threshold: float) -> Any:
    """:func:`nms` within each category ``idxs`` (Tensor[N], int64): boxes of different
    categories never suppress each other. The kept indices, by decreasing score."""
    if idxs.dim() != 1 or idxs.shape[0] != boxes.shape[0]:
        raise ValueError(
            f"batched_nms: expected idxs of shape [{boxes.shape[0]}] (one category per box), got {list(idxs.shape)}"
        )
    if boxes.numel() == 0:
        return ea.empty((0,), dtype=ea.int64, device=boxes.device)
    # Shift each category's boxes by its own offset so that they cannot overlap another's:
    # one nms call then does every category at once.
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _check_boxes(boxes: Any, op: str) -> None:
    if not isinstance(boxes, ea.Tensor):
        raise TypeError(f"{op}: boxes must be a Tensor[N, 4], got {type(boxes).__name__}")
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise ValueError(f"{op}: expected boxes of shape [N, 4], got {list(boxes.shape)}")


def box_area(boxes: Any) -> Any:
    """The area of each (x1, y1, x2, y2) box: Tensor[N]."""
    _check_boxes(boxes, "box_area")
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1: Any, boxes2: Any) -> tuple[Any, Any]:
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = ea.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = ea.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2[None, :] - inter


def box_iou(boxes1: Any, boxes2: Any) -> Any:
    """Pairwise intersection over union: Tensor[N, 4], Tensor[M, 4] -> Tensor[N, M]."""
    _check_boxes(boxes1, "box_iou")
    _check_boxes(boxes2, "box_iou")
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


_FORMATS = ("xyxy", "xywh", "cxcywh")


def box_convert(boxes: Any, in_fmt: str, out_fmt: str) -> Any:
    """Converts boxes between 'xyxy' (corners), 'xywh' (corner, size) and 'cxcywh' (centre, size)."""
    for fmt in (in_fmt, out_fmt):
        if fmt not in _FORMATS:
            raise ValueError(f"box_convert: unsupported box format {fmt!r}; expected one of {', '.join(_FORMATS)}")
    _check_boxes(boxes, "box_convert")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    # (a, b, c, d) is now xyxy
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return ea.stack([a, b, c, d], dim=-1)
