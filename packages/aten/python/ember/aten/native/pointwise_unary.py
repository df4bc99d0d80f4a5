"""Composite kernels of the unary pointwise family (see csrc/native/UnaryOps.cpp for the rest)."""

from __future__ import annotations

from typing import Any

from ember.aten._dtypes import bool as _bool


def positive(self: Any) -> Any:
    """positive(input) -> Tensor: `input` itself; bool tensors are rejected as by unary `+`."""
    if self.dtype == _bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self
