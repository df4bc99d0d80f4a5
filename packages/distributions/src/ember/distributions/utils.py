"""Shared helpers of the distributions (PyTorch's torch.distributions.utils)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from functools import update_wrapper
from typing import Any, Generic, TypeVar

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import enable_grad

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec"]

_T = TypeVar("_T")


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The arguments as tensors of one broadcast shape; numbers take the tensors' dtype and
    device (the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        bad = next(v for v in values if not isinstance(v, (Tensor, numbers.Number)))
        raise ValueError(f"Input arguments must all be instances of numbers.Number or Tensor, got {type(bad).__name__}")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        dtype, device = ea.get_default_dtype(), None
    else:
        dtype, device = like.dtype, like.device
    tensors = [v if isinstance(v, Tensor) else ea.tensor(v, dtype=dtype, device=device) for v in values]
    return tuple(ea.broadcast_tensors(*tensors))


def _finfo_eps(dtype: Any) -> float:
    return {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}.get(str(dtype).rsplit(".", 1)[-1], 2.0**-52)


def _finfo_tiny(dtype: Any) -> float:
    return {"float16": 2.0**-14, "bfloat16": 2.0**-126, "float32": 2.0**-126}.get(
        str(dtype).rsplit(".", 1)[-1], 2.0**-1022
    )


def clamp_probs(probs: Tensor) -> Tensor:
    """probs clamped into [eps, 1 - eps] (eps: the dtype's machine epsilon)."""
    eps = _finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) (binary) or softmax over the last dimension."""
    if is_binary:
        return ea.sigmoid(logits)
    return ea.softmax(logits, -1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) (binary) or log(p), with p clamped away from 0 and 1."""
    p = clamp_probs(probs)
    if is_binary:
        return ea.log(p) - ea.log1p(-p)
    return ea.log(p)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dimensions, row by row."""
    n = mat.shape[-1]
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if j - i <= diag:
                rows.append(i)
                cols.append(j)
    return mat[..., ea.tensor(rows), ea.tensor(cols)]


class lazy_property(Generic[_T]):
    """A property computed once per instance, then stored as a plain attribute (so that
    ``probs`` and ``logits`` can each be derived from the other on first use)."""

    def __init__(self, wrapped: Callable[[Any], _T]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with enable_grad():  # probs derived from logits stay differentiable even under no_grad
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
