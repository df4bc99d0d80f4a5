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


# -- elementwise core (csrc/native/cuda/Loops.cuh, Copy.cu)


def _pair(ea: Any, torch: Any, make: Any) -> dict[str, Any]:
    """{backend: callable} for the ember expression make(ea_module) and, with PyTorch, make(torch)."""
    fns = {}
    for name, mod in (("ember", ea), ("torch", torch)):
        if mod is None:
            continue
        fn = make(mod)

        def run(fn: Any = fn, mod: Any = mod) -> None:
            fn()
            mod.cuda.synchronize()

        fns[name] = run
    return fns


def add_transposed_16m() -> dict[str, Any]:
    """a + b.t() on 4096 x 4096 float32 CUDA tensors: the strided (offset calculator) path."""
    ea = _need_cuda()

    def make(mod: Any) -> Any:
        a, b = mod.rand(4096, 4096, device="cuda"), mod.rand(4096, 4096, device="cuda")
        return lambda: a + b.t()

    return _pair(ea, _torch_cuda(), make)


def gelu_half_16m() -> dict[str, Any]:
    """gelu (tanh) of a float16 CUDA tensor of 16M elements (half loads, float math)."""
    ea = _need_cuda()

    def make(mod: Any) -> Any:
        x = mod.rand(1 << 24, device="cuda").half()
        gelu = mod.nn.gelu if mod is ea else mod.nn.functional.gelu
        return lambda: gelu(x, approximate="tanh")

    return _pair(ea, _torch_cuda(), make)


def to_half_16m() -> dict[str, Any]:
    """float32 -> float16 conversion of a 16M-element CUDA tensor (copy_'s converting kernel)."""
    ea = _need_cuda()

    def make(mod: Any) -> Any:
        x = mod.rand(1 << 24, device="cuda")
        return lambda: x.to(mod.float16)

    return _pair(ea, _torch_cuda(), make)


def h2d_pinned_64mb() -> dict[str, Any]:
    """64 MB host -> device copy from pinned memory (cudaMemcpyAsync, non_blocking)."""
    ea = _need_cuda()

    def make(mod: Any) -> Any:
        host = mod.rand(1 << 24).pin_memory()
        dev = mod.empty(1 << 24, device="cuda")
        return lambda: dev.copy_(host, non_blocking=True)

    return _pair(ea, _torch_cuda(), make)


WORKLOADS = [
    ("gpu: add float32 16M (cuda)", "call", add_16m),
    ("gpu: MLP 784-1024-1024-10 train step, batch 512 (cuda)", "step", mlp_train_step),
    # -- elementwise core
    ("gpu: add float32 4096x4096 + transposed (cuda)", "call", add_transposed_16m),
    ("gpu: gelu tanh float16 16M (cuda)", "call", gelu_half_16m),
    ("gpu: float32 -> float16 copy 16M (cuda)", "call", to_half_16m),
    ("gpu: host -> device 64 MB from pinned memory (cuda)", "call", h2d_pinned_64mb),
]
