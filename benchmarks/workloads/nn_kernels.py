"""nn kernels: convolution (im2col + GEMM) forward and forward + backward, max pooling.

ember's forward + backward goes through ember.autograd (ConvolutionBackward0 ->
convolution_backward); PyTorch's through its own autograd. NumPy has no convolution, so
its column stays empty.
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


def _conv_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.random.default_rng(0)
    x = r.standard_normal((32, 16, 32, 32), dtype=np.float32)
    w = r.standard_normal((32, 16, 3, 3), dtype=np.float32) * 0.1
    b = r.standard_normal(32, dtype=np.float32)
    return x, w, b


def conv2d_forward() -> dict[str, Any]:
    import ember.aten as ea

    x, w, b = _conv_data()
    ex, ew, eb = ea.from_numpy(x), ea.from_numpy(w), ea.from_numpy(b)
    fns = {"ember": lambda: ea.conv2d(ex, ew, eb, 1, 1)}
    torch = _torch()
    if torch is not None:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        fns["torch"] = lambda: torch.conv2d(tx, tw, tb, 1, 1)
    return fns


def conv2d_forward_backward() -> dict[str, Any]:
    import ember.aten as ea
    import ember.autograd  # noqa: F401  (fails clearly if the layer is missing)

    x, w, b = _conv_data()
    ex = ea.from_numpy(x).requires_grad_(True)
    ew = ea.from_numpy(w).requires_grad_(True)
    eb = ea.from_numpy(b).requires_grad_(True)

    def ember_fn() -> None:
        ex.grad = ew.grad = eb.grad = None
        ea.conv2d(ex, ew, eb, 1, 1).sum().backward()

    fns = {"ember": ember_fn}
    torch = _torch()
    if torch is not None:
        tx = torch.from_numpy(x).requires_grad_(True)
        tw = torch.from_numpy(w).requires_grad_(True)
        tb = torch.from_numpy(b).requires_grad_(True)

        def torch_fn() -> None:
            tx.grad = tw.grad = tb.grad = None
            torch.conv2d(tx, tw, tb, 1, 1).sum().backward()

        fns["torch"] = torch_fn
    return fns


def max_pool2d() -> dict[str, Any]:
    import ember.aten as ea

    x = np.random.default_rng(1).standard_normal((32, 32, 64, 64), dtype=np.float32)
    ex = ea.from_numpy(x)
    fns = {"ember": lambda: ea.max_pool2d(ex, 2, 2)}
    torch = _torch()
    if torch is not None:
        tx = torch.from_numpy(x)
        fns["torch"] = lambda: torch.max_pool2d(tx, 2, 2)
    return fns


WORKLOADS = [
    ("conv2d 32x16x32x32, 32 out, k3 p1 (forward)", "call", conv2d_forward),
    ("conv2d 32x16x32x32, 32 out, k3 p1 (forward + backward)", "call", conv2d_forward_backward),
    ("max_pool2d 32x32x64x64, k2 s2", "call", max_pool2d),
]
