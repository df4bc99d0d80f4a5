"""sigmoid_focal_loss (RetinaNet's focal loss)."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.nn.functional as F


def sigmoid_focal_loss(
    inputs: Any, targets: Any, alpha: float = 0.25, gamma: float = 2, reduction: str = "none"
) -> Any:
    """``-alpha_t (1 - p_t)^gamma log(p_t)`` with ``p = sigmoid(inputs)``, elementwise over
    logits ``inputs`` and binary ``targets`` of one shape; ``alpha < 0`` disables the class
    weighting. ``reduction``: 'none' | 'mean' | 'sum'."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'"
        )
    if tuple(inputs.shape) != tuple(targets.shape):
        raise ValueError(
            f"sigmoid_focal_loss: inputs {list(inputs.shape)} and targets {list(targets.shape)} must have one shape"
        )
    p = ea.sigmoid(inputs)
    ce = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
