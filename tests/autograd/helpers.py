"""Small helpers shared by the autograd tests."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np


def t(data: Any, requires_grad: bool = False, dtype: Any = None) -> Any:
    return ea.tensor(data, dtype=dtype or ea.float64, requires_grad=requires_grad)


def rand(*shape: int, requires_grad: bool = False, seed: int = 0, low: float = -1.0, high: float = 1.0) -> Any:
    a = np.random.default_rng(seed).uniform(low, high, size=shape)
    x = ea.from_numpy(a).clone()
    return x.requires_grad_(requires_grad)


def close(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Asserts that a and b have one shape and equal values within tol (a bare ``close(x, y)``
    is a check, not a value to forget to assert); returns True, so ``assert close(x, y)``
    reads the same."""
    a = a.detach().numpy() if isinstance(a, ea.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, ea.Tensor) else np.asarray(b)
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a, b, atol=tol, rtol=tol)
    return True
