"""optim: one Adam step over 100 parameters totalling 10M float32 elements.

The same update three ways -- the single-tensor loop (a handful of aten calls per
parameter), foreach (aten's _foreach_* operators: a handful of calls per step) and fused
(one aten kernel per step) -- each against PyTorch's same setting, and a NumPy loop of
in-place array operations as the reference for the arithmetic alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N_PARAMS = 100
SHAPE = (100, 1000)  # 100 x 100k = 10M elements


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _arrays(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SHAPE, dtype=np.float32) for _ in range(N_PARAMS)]


def _numpy_adam() -> Any:
    params, grads = _arrays(0), _arrays(1)
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    tmp = np.empty(SHAPE, dtype=np.float32)
    state = {"t": 0}
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def step() -> None:
        state["t"] += 1
        t = state["t"]
        bc1, bc2_sqrt = 1 - b1**t, (1 - b2**t) ** 0.5
        for p, g, mi, vi in zip(params, grads, m, v, strict=True):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            np.multiply(g, g, out=tmp)
            np.multiply(tmp, 1 - b2, out=tmp)
            vi += tmp
            np.sqrt(vi, out=tmp)
            np.divide(tmp, bc2_sqrt, out=tmp)
            np.add(tmp, eps, out=tmp)
            np.divide(mi, tmp, out=tmp)
            np.multiply(tmp, -lr / bc1, out=tmp)
            p += tmp

    return step


def _adam(mode: str) -> dict[str, Any]:
    import ember.aten as ea
    from ember.optim import Adam

    kwargs = {"single": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}[mode]
    params = [ea.from_numpy(a).requires_grad_() for a in _arrays(0)]
    for p, g in zip(params, _arrays(1), strict=True):
        p.grad = ea.from_numpy(g)
    opt = Adam(params, lr=1e-3, **kwargs)
    opt.step()  # fails here (reported "not run") when this aten has no foreach/fused kernels
    fns = {"ember": opt.step, "numpy": _numpy_adam()}
    torch = _torch()
    if torch is not None:
        tparams = [torch.from_numpy(a).requires_grad_() for a in _arrays(0)]
        for p, g in zip(tparams, _arrays(1), strict=True):
            p.grad = torch.from_numpy(g)
        topt = torch.optim.Adam(tparams, lr=1e-3, **kwargs)
        fns["torch"] = topt.step
    return fns


def adam_single_tensor() -> dict[str, Any]:
    return _adam("single")


def adam_foreach() -> dict[str, Any]:
    return _adam("foreach")


def adam_fused() -> dict[str, Any]:
    return _adam("fused")


WORKLOADS = [
    ("optim: Adam step, 100 params / 10M elems, single-tensor", "step", adam_single_tensor),
    ("optim: Adam step, 100 params / 10M elems, foreach", "step", adam_foreach),
    ("optim: Adam step, 100 params / 10M elems, fused", "step", adam_fused),
]
