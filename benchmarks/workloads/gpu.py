"""GPU workloads: ember on CUDA against PyTorch on CUDA (when installed with CUDA).

Each timed call ends with a synchronize, so the time is the GPU work plus the Python
and launch overhead of one call. Without a CUDA device the workloads report
"not run" (bench.py carries on); NumPy has no GPU column.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _need_cuda() -> Any:
    import ember.aten as ea

    if not ea.cuda.is_available():
        from ember.c10py import cuda

        raise RuntimeError(f"no CUDA device ({cuda.availability_error()})")
    return ea


def _torch_cuda() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def add_16m() -> dict[str, Any]:
    """a + b on two float32 CUDA tensors of 16M elements (memory bound: 192 MB moved)."""
    ea = _need_cuda()
    n = 1 << 24
    a, b = ea.rand(n, device="cuda"), ea.rand(n, device="cuda")

    def ember_add() -> None:
        a + b
        ea.cuda.synchronize()

    fns = {"ember": ember_add}
    torch = _torch_cuda()
    if torch is not None:
        ta, tb = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")

        def torch_add() -> None:
            ta + tb
            torch.cuda.synchronize()

        fns["torch"] = torch_add
    return fns


def _mlp(nn: Any) -> Any:
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def mlp_train_step() -> dict[str, Any]:
    """MLP 784-1024-1024-10, batch 512, on CUDA: forward, MSE, backward, SGD update."""
    ea = _need_cuda()
    from ember import nn
    from ember.autograd import no_grad

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 784), dtype=np.float32)
    y = rng.standard_normal((512, 10), dtype=np.float32)
    model = _mlp(nn).to("cuda")
    ex, ey = ea.from_numpy(x).cuda(), ea.from_numpy(y).cuda()
    params = list(model.parameters())

    def ember_step() -> None:
        loss = ((model(ex) - ey) ** 2).mean()
        loss.backward()
        with no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.01)
                p.grad = None
        ea.cuda.synchronize()

    fns = {"ember": ember_step}
    torch = _torch_cuda()
    if torch is not None:
        tmodel = _mlp(torch.nn)
        with torch.no_grad():
            for tp, p in zip(tmodel.parameters(), params, strict=True):
                tp.copy_(torch.from_numpy(p.detach().cpu().numpy().copy()))
        tmodel = tmodel.cuda()
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        tparams = list(tmodel.parameters())

        def torch_step() -> None:
            loss = ((tmodel(tx) - ty) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in tparams:
                    p.add_(p.grad, alpha=-0.01)
                    p.grad = None
            torch.cuda.synchronize()

        fns["torch"] = torch_step
    return fns


WORKLOADS = [
    ("gpu: add float32 16M (cuda)", "call", add_16m),
    ("gpu: MLP 784-1024-1024-10 train step, batch 512 (cuda)", "step", mlp_train_step),
]
