"""Shared by the model builders."""

from __future__ import annotations

from typing import Any


def check_weights(weights: Any, name: str) -> None:
    """ember downloads nothing: pretrained weights come from a state_dict the user loads."""
    if weights is not None:
        raise ValueError(
            f"{name}: weights={weights!r} is not supported (no downloads); build the model with weights=None "
            "and load a saved state_dict with load_state_dict (a torchvision state_dict loads as is)"
        )


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """The nearest multiple of ``divisor`` to v, at most 10% below it (MobileNet's channel rule)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v
