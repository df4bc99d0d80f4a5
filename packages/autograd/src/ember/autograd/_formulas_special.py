"""Backward helpers of torch.special's formulas in derivatives.yaml (section "special
functions"), written with differentiable operators so that they differentiate again."""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea

__all__ = ["i1_backward", "i1e_backward", "sinc_backward"]

_TINY = 1e-30  # below it x is 0 for the 1/x terms, whose limits are written out


def _safe(x: Any) -> tuple[Any, Any]:
    tiny = x.abs() <= _TINY
    return tiny, ea.where(tiny, ea.ones_like(x), x)


def i1_backward(grad: Any, x: Any, result: Any) -> Any:
    """d/dx I1(x) = I0(x) - I1(x) / x (1/2 at 0)."""
    tiny, safe = _safe(x)
    d = ea.i0(safe) - ea.special.i1(safe) / safe
    return grad * ea.where(tiny, ea.full_like(x, 0.5), d)


def i1e_backward(grad: Any, x: Any, result: Any) -> Any:
    """d/dx e^-|x| I1(x) = i0e(x) - i1e(x) (sgn(x) + 1/x) (1/2 at 0)."""
    tiny, safe = _safe(x)
    d = ea.special.i0e(safe) - ea.special.i1e(safe) * (safe.sgn() + 1.0 / safe)
    return grad * ea.where(tiny, ea.full_like(x, 0.5), d)


def sinc_backward(grad: Any, x: Any) -> Any:
    """d/dx sin(pi x) / (pi x) = (cos(pi x) - sinc(x)) / x (0 at 0)."""
    tiny, safe = _safe(x)
    d = ((math.pi * safe).cos() - ea.sinc(safe)) / safe
    return grad * ea.where(tiny, ea.zeros_like(x), d)
