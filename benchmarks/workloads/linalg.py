"""Linear algebra: GEMM through OpenBLAS (64^2 is dispatch-bound, 1024^2 compute-bound)
and a batch of small matrices (the parallel-over-the-batch path)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _pair(n: int, seed: int, batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (n, n) if batch is None else (batch, n, n)
    return rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)


def _matmul(n: int) -> dict[str, Any]:
    import ember.aten as ea

    x, y = _pair(n, n)
    a, b = ea.from_numpy(x), ea.from_numpy(y)
    fns = {"ember": lambda: a @ b, "numpy": lambda: x @ y}
    torch = _torch()
    if torch is not None:
        ta, tb = torch.from_numpy(x), torch.from_numpy(y)
        fns["torch"] = lambda: ta @ tb
    return fns


def matmul_64() -> dict[str, Any]:
    return _matmul(64)


def matmul_1024() -> dict[str, Any]:
    return _matmul(1024)


def bmm_1000x32() -> dict[str, Any]:
    import ember.aten as ea

    x, y = _pair(32, 7, batch=1000)
    a, b = ea.from_numpy(x), ea.from_numpy(y)
    fns = {"ember": lambda: ea.bmm(a, b), "numpy": lambda: np.matmul(x, y)}
    torch = _torch()
    if torch is not None:
        ta, tb = torch.from_numpy(x), torch.from_numpy(y)
        fns["torch"] = lambda: torch.bmm(ta, tb)
    return fns


# GFLOP/s of a run: 2 n^3 (times the batch) floating-point operations per call
FLOPS = {
    "matmul 64x64 float32": 2 * 64**3,
    "matmul 1024x1024 float32": 2 * 1024**3,
    "bmm 1000 x (32x32) float32": 1000 * 2 * 32**3,
}

WORKLOADS = [
    ("matmul 64x64 float32", "call", matmul_64),
    ("matmul 1024x1024 float32", "call", matmul_1024),
    ("bmm 1000 x (32x32) float32", "call", bmm_1000x32),
]
