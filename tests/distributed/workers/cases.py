"""The table of collective cases: shared by the rank workers and the tests' NumPy references.

Every input is a deterministic function of (rank, case), so the test process rebuilds
every rank's input and computes the expected result of each rank with NumPy alone.
"""

from __future__ import annotations

import numpy as np

DTYPES = ["float32", "float64", "int64"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
LAYOUTS = ["contiguous", "strided"]  # strided: a transposed view, not contiguous
SHAPE = (4, 6)


def value(rank: int, dtype: str, shape: tuple[int, ...], salt: int) -> np.ndarray:
    rng = np.random.default_rng(7919 * rank + 104729 * salt + len(shape))
    if dtype == "int64":
        return rng.integers(-3, 4, size=shape).astype(np.int64)
    # values near 1 in magnitude keep PRODUCT over 4 ranks well inside float32's range
    return rng.uniform(0.5, 1.5, size=shape).astype(dtype) * rng.choice([-1, 1], size=shape).astype(dtype)


def salt(*parts: str) -> int:
    return sum((i + 1) * sum(map(ord, p)) for i, p in enumerate(parts))


def reduce_np(op: str, stacked: np.ndarray) -> np.ndarray:
    n = stacked.shape[0]
    if op == "SUM":
        return stacked.sum(axis=0)
    if op == "AVG":
        s = stacked.sum(axis=0)
        if s.dtype.kind == "i":
            return np.trunc(s / n).astype(s.dtype)  # integer AVG truncates toward zero, as NCCL
        return s / n
    if op == "PRODUCT":
        return stacked.prod(axis=0)
    if op == "MIN":
        return stacked.min(axis=0)
    if op == "MAX":
        return stacked.max(axis=0)
    raise ValueError(op)
