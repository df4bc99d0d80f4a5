"""Shape helpers shared by several distributions."""

from __future__ import annotations

from typing import Any

from ember.aten import Size, Tensor


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """value summed over its ``dim`` rightmost dimensions (none when dim == 0)."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.dim() - dim], -1).sum(-1)


def as_size(shape: Any) -> Size:
    return shape if isinstance(shape, Size) else Size(shape)
