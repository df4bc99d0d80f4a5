"""CUDA results that a review of the never-run kernels found differing from the CPU
kernels' (csrc/native/cuda/Scan.cu, ...): each test pins the CPU behaviour on CUDA.

They need a GPU and are deselected without one.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

pytestmark = pytest.mark.cuda


def bits(t: Any) -> list[Any]:
    """The values with the sign of zeros made visible (np.signbit)."""
    a = np.asarray(t.cpu().to(ea.float64))
    return list(zip(a.ravel().tolist(), np.signbit(a).ravel().tolist(), strict=True))


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16])
@pytest.mark.parametrize("n", [1, 5, 300])  # thread per row (short rows) and block per row
def test_cumsum_and_logcumsumexp_of_negative_zero_give_positive_zero(dtype: Any, n: int) -> None:
    # CPU: the running sum starts at 0 (logcumsumexp at -inf), so a leading -0.0 gives +0.0
    a = np.zeros((2, n))
    a[:, 0] = -0.0
    x = ea.tensor(a.tolist(), dtype=dtype)
    assert bits(ea.cumsum(x, 1))[0] == (0.0, False)  # the CPU reference itself
    for fn in (lambda t: ea.cumsum(t, 1), lambda t: ea.logcumsumexp(t, 1)):
        assert bits(fn(x.cuda())) == bits(fn(x))
    # cumprod starts at 1: -0.0 stays -0.0 on both
    assert bits(ea.cumprod(x.cuda(), 1)) == bits(ea.cumprod(x, 1))


def test_cumsum_of_negative_zero_along_either_dim() -> None:
    # dim 0: the scanned dim outer, the other contiguous (a thread per column); dim 1: rows
    x = ea.tensor(np.full((4, 70), -0.0).tolist())
    for dim in (0, 1):
        assert bits(ea.cumsum(x.cuda(), dim)) == bits(ea.cumsum(x, dim))
        assert bits(ea.logcumsumexp(x.cuda(), dim)) == bits(ea.logcumsumexp(x, dim))
