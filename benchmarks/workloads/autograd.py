"""autograd: recording overhead of tiny ops and the engine's per-node cost (no NumPy equivalent)."""

from __future__ import annotations

from typing import Any


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def tiny_ops_backward() -> dict[str, Any]:
    """100 ops on 3-element tensors (mul / add / exp / neg / div chain), then backward."""
    import ember.aten as ea
    import ember.autograd  # noqa: F401  (fails clearly if the layer is missing)

    def chain(x: Any, w: Any) -> Any:
        y = x
        for _ in range(20):
            y = y * w
            y = y + 1.0
            y = y.exp()
            y = -y
            y = y / 3.0
        return y

    x = ea.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = ea.tensor([0.5, 0.25, 0.125], requires_grad=True)

    def ember_fn() -> None:
        chain(x, w).sum().backward()
        x.grad = None
        w.grad = None

    fns = {"ember": ember_fn}
    torch = _torch()
    if torch is not None:
        tx = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
        tw = torch.tensor([0.5, 0.25, 0.125], requires_grad=True)

        def torch_fn() -> None:
            chain(tx, tw).sum().backward()
            tx.grad = None
            tw.grad = None

        fns["torch"] = torch_fn
    return fns


def tiny_ops_forward_recorded() -> dict[str, Any]:
    """The same 100 ops, recorded but without backward: the Autograd kernels' share."""
    import ember.aten as ea

    x = ea.tensor([0.1, 0.2, 0.3], requires_grad=True)

    def chain(y: Any) -> Any:
        for _ in range(50):
            y = y * 0.5
            y = y + 1.0
        return y

    fns = {"ember": lambda: chain(x)}
    torch = _torch()
    if torch is not None:
        tx = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
        fns["torch"] = lambda: chain(tx)
    return fns


def mlp_step() -> dict[str, Any]:
    """Forward + backward of a 2-layer MLP-like expression on 64x64 (elementwise + reductions)."""
    import ember.aten as ea
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    w = ea.from_numpy(a.copy()).requires_grad_(True)
    bias = ea.from_numpy(b.copy()).requires_grad_(True)
    data = ea.from_numpy(a.copy())

    def step(w_: Any, b_: Any, d: Any) -> None:
        h = (d * w_.sum(0) + b_).tanh()
        (h * h).mean().backward()
        w_.grad = None
        b_.grad = None

    fns = {"ember": lambda: step(w, bias, data)}
    torch = _torch()
    if torch is not None:
        tw = torch.from_numpy(a.copy()).requires_grad_(True)
        tb = torch.from_numpy(b.copy()).requires_grad_(True)
        td = torch.from_numpy(a.copy())
        fns["torch"] = lambda: step(tw, tb, td)
    return fns


def mlp_training_step() -> dict[str, Any]:
    """One SGD step of a 2-layer MLP (batch 64, 256 -> 128 -> 10, relu, mean squared error)."""
    import ember.aten as ea
    import ember.autograd as ag
    import numpy as np

    rng = np.random.default_rng(0)
    arrays = {
        "x": rng.standard_normal((64, 256)).astype(np.float32),
        "y": rng.standard_normal((64, 10)).astype(np.float32),
        "w1": (rng.standard_normal((256, 128)) * 0.05).astype(np.float32),
        "b1": np.zeros(128, np.float32),
        "w2": (rng.standard_normal((128, 10)) * 0.05).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }

    def make(from_numpy: Any, no_grad: Any) -> Any:
        x, y = from_numpy(arrays["x"].copy()), from_numpy(arrays["y"].copy())
        params = [from_numpy(arrays[k].copy()).requires_grad_(True) for k in ("w1", "b1", "w2", "b2")]

        def step() -> None:
            w1, b1, w2, b2 = params
            h = (x @ w1 + b1).relu()
            loss = ((h @ w2 + b2 - y) ** 2).mean()
            loss.backward()
            with no_grad():
                for p in params:
                    p.sub_(p.grad, alpha=0.01)
                    p.grad = None

        return step

    fns = {"ember": make(ea.from_numpy, ag.no_grad)}
    torch = _torch()
    if torch is not None:
        fns["torch"] = make(torch.from_numpy, torch.no_grad)
    return fns


WORKLOADS = [
    ("autograd: 100 tiny ops + backward", "call", tiny_ops_backward),
    ("autograd: 100 tiny ops recorded (no backward)", "call", tiny_ops_forward_recorded),
    ("autograd: 64x64 elementwise step + backward", "call", mlp_step),
    ("autograd: MLP training step (64x256 -> 128 -> 10, SGD)", "call", mlp_training_step),
]
