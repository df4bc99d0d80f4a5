"""nn: Module call overhead (nn.Linear on a tiny input) and whole training steps (MLP, LeNet).

The same model is built in ember and (when installed) in PyTorch, with identical weights
copied over, and stepped with plain SGD written here (no optimizer layer needed):
forward, loss, backward, parameter update, grads reset. NumPy has no equivalent.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def linear_call() -> dict[str, Any]:
    """nn.Linear(16, 16) on a (1, 16) input: Module.__call__ + F.linear dispatch overhead."""
    import ember.aten as ea
    from ember import nn

    lin = nn.Linear(16, 16)
    x = ea.randn(1, 16)
    fns = {"ember": lambda: lin(x)}
    torch = _torch()
    if torch is not None:
        tlin = torch.nn.Linear(16, 16)
        tx = torch.randn(1, 16)
        fns["torch"] = lambda: tlin(tx)
    return fns


def linear_call_no_grad() -> dict[str, Any]:
    """The same call with parameters not requiring grad (no autograd recording)."""
    import ember.aten as ea
    from ember import nn

    lin = nn.Linear(16, 16).requires_grad_(False)
    x = ea.randn(1, 16)
    fns = {"ember": lambda: lin(x)}
    torch = _torch()
    if torch is not None:
        tlin = torch.nn.Linear(16, 16).requires_grad_(False)
        tx = torch.randn(1, 16)
        fns["torch"] = lambda: tlin(tx)
    return fns


def _mlp(nn: Any) -> Any:
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def _lenet(nn: Any) -> Any:
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120),
        nn.ReLU(),
        nn.Linear(120, 84),
        nn.ReLU(),
        nn.Linear(84, 10),
    )


def _train_step_pair(build: Any, x_shape: tuple[int, ...]) -> dict[str, Any]:
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
        loss = ((model(ex) - ey) ** 2).mean()
        loss.backward()
        with no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.01)
                p.grad = None

    fns = {"ember": ember_step}
    torch = _torch()
    if torch is not None:
        tmodel = build(torch.nn)
        with torch.no_grad():
            for tp, p in zip(tmodel.parameters(), params, strict=True):
                tp.copy_(torch.from_numpy(p.detach().numpy().copy()))
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tparams = list(tmodel.parameters())

        def torch_step() -> None:
            loss = ((tmodel(tx) - ty) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in tparams:
                    p.add_(p.grad, alpha=-0.01)
                    p.grad = None

        fns["torch"] = torch_step
    return fns


def mlp_train_step() -> dict[str, Any]:
    """MLP 784-256-128-10, batch 64: forward, MSE, backward, SGD update."""
    return _train_step_pair(_mlp, (64, 784))


def lenet_train_step() -> dict[str, Any]:
    """LeNet-5 on (32, 1, 28, 28): forward, MSE, backward, SGD update."""
    return _train_step_pair(_lenet, (32, 1, 28, 28))


WORKLOADS = [
    ("nn: Linear(16, 16) call, (1, 16) input", "call", linear_call),
    ("nn: Linear(16, 16) call, no grad", "call", linear_call_no_grad),
    ("nn: MLP 784-256-128-10 train step, batch 64", "step", mlp_train_step),
    ("nn: LeNet-5 train step, batch 32", "step", lenet_train_step),
]
