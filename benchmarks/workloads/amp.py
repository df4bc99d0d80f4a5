"""amp: bfloat16 autocast on the CPU vs float32, ember vs PyTorch's CPU autocast, in one process.

matmul 1024x1024 and conv2d 32x16x32x32 (k3, p1) each as float32, under
``autocast("cpu")`` (float32 inputs cast to bfloat16 by the AutocastCPU kernel, then the
bfloat16 kernel), and on bfloat16 tensors directly; the MLP and LeNet training steps of
workloads/nn.py with the forward under autocast. The float32 rows are the baseline the
bfloat16 rows are read against (an AVX2 CPU without native bf16 arithmetic gains nothing
from bfloat16 GEMM: both libraries convert to float32 and accumulate there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import nn as nn_workloads


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _mm(mode: str) -> dict[str, Any]:
    import ember.aten as ea

    r = np.random.default_rng(0)
    a = r.standard_normal((1024, 1024), dtype=np.float32)
    b = r.standard_normal((1024, 1024), dtype=np.float32)
    ea_a, ea_b = ea.from_numpy(a), ea.from_numpy(b)
    torch = _torch()
    ta = tb = None
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    fns: dict[str, Any] = {}
    if mode == "float32":
        fns["ember"] = lambda: ea.mm(ea_a, ea_b)
        fns["numpy"] = lambda: a @ b
        if torch is not None:
            fns["torch"] = lambda: torch.mm(ta, tb)
    elif mode == "autocast":

        def ember_ac() -> Any:
            with ea.autocast("cpu"):
                return ea.mm(ea_a, ea_b)

        fns["ember"] = ember_ac
        if torch is not None:

            def torch_ac() -> Any:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return torch.mm(ta, tb)

            fns["torch"] = torch_ac
    else:  # bfloat16 tensors
        ba, bb = ea_a.to(ea.bfloat16), ea_b.to(ea.bfloat16)
        fns["ember"] = lambda: ea.mm(ba, bb)
        if torch is not None:
            tba, tbb = ta.bfloat16(), tb.bfloat16()
            fns["torch"] = lambda: torch.mm(tba, tbb)
    return fns


def _conv(mode: str) -> dict[str, Any]:
    import ember.aten as ea

    r = np.random.default_rng(0)
    x = r.standard_normal((32, 16, 32, 32), dtype=np.float32)
    w = r.standard_normal((32, 16, 3, 3), dtype=np.float32) * 0.1
    bias = r.standard_normal(32, dtype=np.float32)
    ex, ew, eb = ea.from_numpy(x), ea.from_numpy(w), ea.from_numpy(bias)
    torch = _torch()
    fns: dict[str, Any] = {}
    if mode == "float32":
        fns["ember"] = lambda: ea.conv2d(ex, ew, eb, 1, 1)
        if torch is not None:
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
            fns["torch"] = lambda: torch.conv2d(tx, tw, tb, 1, 1)
    else:

        def ember_ac() -> Any:
            with ea.autocast("cpu"):
                return ea.conv2d(ex, ew, eb, 1, 1)

        fns["ember"] = ember_ac
        if torch is not None:
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)

            def torch_ac() -> Any:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return torch.conv2d(tx, tw, tb, 1, 1)

            fns["torch"] = torch_ac
    return fns


def _train_step_autocast(build: Any, x_shape: tuple[int, ...]) -> dict[str, Any]:
    import ember.aten as ea
    from ember import nn
    from ember.autograd import no_grad

    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    y = rng.standard_normal((x_shape[0], 10), dtype=np.float32)
    model = build(nn)
    ex, ey = ea.from_numpy(x), ea.from_numpy(y)
    params = list(model.parameters())

    def ember_step() -> None:
        with ea.autocast("cpu"):
            loss = ((model(ex).float() - ey) ** 2).mean()
        loss.backward()
        with no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.01)
                p.grad = None

    fns = {"ember": ember_step}
    torch = _torch()
    if torch is not None:
        tmodel = build(torch.nn)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tparams = list(tmodel.parameters())

        def torch_step() -> None:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = ((tmodel(tx).float() - ty) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in tparams:
                    p.add_(p.grad, alpha=-0.01)
                    p.grad = None

        fns["torch"] = torch_step
    return fns


WORKLOADS = [
    ("amp: matmul 1024x1024 float32", "call", lambda: _mm("float32")),
    ("amp: matmul 1024x1024 autocast(cpu, bfloat16)", "call", lambda: _mm("autocast")),
    ("amp: matmul 1024x1024 bfloat16 tensors", "call", lambda: _mm("bfloat16")),
    ("amp: conv2d 32x16x32x32, 32 out, k3 p1 float32", "call", lambda: _conv("float32")),
    ("amp: conv2d 32x16x32x32, 32 out, k3 p1 autocast(cpu, bfloat16)", "call", lambda: _conv("autocast")),
    ("amp: MLP 784-256-128-10 train step, batch 64, float32", "step", nn_workloads.mlp_train_step),
    (
        "amp: MLP 784-256-128-10 train step, batch 64, autocast(cpu, bfloat16)",
        "step",
        lambda: _train_step_autocast(nn_workloads._mlp, (64, 784)),
    ),
    ("amp: LeNet-5 train step, batch 32, float32", "step", nn_workloads.lenet_train_step),
    (
        "amp: LeNet-5 train step, batch 32, autocast(cpu, bfloat16)",
        "step",
        lambda: _train_step_autocast(nn_workloads._lenet, (32, 1, 28, 28)),
    ),
]
