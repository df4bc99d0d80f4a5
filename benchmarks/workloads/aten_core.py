"""aten core: dispatch overhead and memory-bound elementwise/reduction kernels."""

from __future__ import annotations

from typing import Any

import numpy as np

N16M = 16 * 1024 * 1024


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def per_op_overhead() -> dict[str, Any]:
    import ember.aten as ea

    a, b = ea.tensor([1.0]), ea.tensor([2.0])
    x, y = np.array([1.0], dtype=np.float32), np.array([2.0], dtype=np.float32)
    fns = {"ember": lambda: a + b, "numpy": lambda: x + y}
    torch = _torch()
    if torch is not None:
        ta, tb = torch.tensor([1.0]), torch.tensor([2.0])
        fns["torch"] = lambda: ta + tb
    return fns


def _big(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(N16M, dtype=np.float32)


def add_16m() -> dict[str, Any]:
    import ember.aten as ea

    x, y = _big(0), _big(1)
    a, b = ea.from_numpy(x), ea.from_numpy(y)
    fns = {"ember": lambda: a + b, "numpy": lambda: x + y}
    torch = _torch()
    if torch is not None:
        ta, tb = torch.from_numpy(x), torch.from_numpy(y)
        fns["torch"] = lambda: ta + tb
    return fns


def exp_16m() -> dict[str, Any]:
    import ember.aten as ea

    x = _big(2)
    a = ea.from_numpy(x)
    fns = {"ember": lambda: ea.exp(a), "numpy": lambda: np.exp(x)}
    torch = _torch()
    if torch is not None:
        ta = torch.from_numpy(x)
        fns["torch"] = lambda: torch.exp(ta)
    return fns


def sum_16m() -> dict[str, Any]:
    import ember.aten as ea

    x = _big(3)
    a = ea.from_numpy(x)
    fns = {"ember": lambda: ea.sum(a), "numpy": lambda: np.sum(x)}
    torch = _torch()
    if torch is not None:
        ta = torch.from_numpy(x)
        fns["torch"] = lambda: torch.sum(ta)
    return fns


def transposed_add() -> dict[str, Any]:
    import ember.aten as ea

    x = _big(4).reshape(4096, 4096)
    y = _big(5).reshape(4096, 4096)
    a, b = ea.from_numpy(x), ea.from_numpy(y)
    at = a.t()
    xt = x.T
    fns = {"ember": lambda: at + b, "numpy": lambda: xt + y}
    torch = _torch()
    if torch is not None:
        ta, tb = torch.from_numpy(x), torch.from_numpy(y)
        tt = ta.t()
        fns["torch"] = lambda: tt + tb
    return fns


WORKLOADS = [
    ("a + b, 1 element (per-op overhead)", "call", per_op_overhead),
    ("add, 16M float32", "call", add_16m),
    ("exp, 16M float32", "call", exp_16m),
    ("sum, 16M float32", "call", sum_16m),
    ("add, 4096x4096 transposed + contiguous", "call", transposed_add),
]
