"""nn kernels: convolution (im2col + GEMM) forward and forward + backward, max pooling;
softmax, layer_norm and cross_entropy forward and forward + backward.

ember's forward + backward goes through ember.autograd (ConvolutionBackward0 ->
convolution_backward); PyTorch's through its own autograd. NumPy has no convolution, so
its column stays empty; for softmax / layer_norm / cross_entropy its column is the same
computation written with NumPy ufuncs (the backward by hand). On a loaded machine the
multi-threaded columns mostly measure scheduling: compare with OMP_NUM_THREADS=1 too.
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


# -- softmax / layer_norm / cross_entropy: forward, and forward + backward (ember.autograd,
# PyTorch's autograd; NumPy with the backward written out by hand), float32

ROWS, COLS = 1024, 1024  # softmax / layer_norm: 1024 rows of 1024
N_CE, C_CE = 1024, 1000  # cross_entropy: 1024 samples, 1000 classes


def _rows() -> np.ndarray:
    return np.random.default_rng(2).standard_normal((ROWS, COLS), dtype=np.float32)


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _fwd_bwd(ember_loss: Any, torch_loss: Any, arrays: list[np.ndarray], grads: list[bool]) -> dict[str, Any]:
    """{ember, torch} callables running loss(*inputs).backward() (the loss a scalar)."""
    import ember.aten as ea
    import ember.autograd  # noqa: F401

    e_in = [ea.from_numpy(a).requires_grad_(g) for a, g in zip(arrays, grads, strict=True)]

    def ember_fn() -> None:
        for t in e_in:
            t.grad = None
        ember_loss(*e_in).backward()

    fns: dict[str, Any] = {"ember": ember_fn}
    torch = _torch()
    if torch is not None:
        t_in = [torch.from_numpy(a).requires_grad_(g) for a, g in zip(arrays, grads, strict=True)]

        def torch_fn() -> None:
            for t in t_in:
                t.grad = None
            torch_loss(*t_in).backward()

        fns["torch"] = torch_fn
    return fns


def softmax_forward() -> dict[str, Any]:
    import ember.aten as ea

    x = _rows()
    ex = ea.from_numpy(x)
    fns = {"ember": lambda: ea.softmax(ex, 1), "numpy": lambda: _np_softmax(x)}
    torch = _torch()
    if torch is not None:
        tx = torch.from_numpy(x)
        fns["torch"] = lambda: torch.softmax(tx, 1)
    return fns


def softmax_forward_backward() -> dict[str, Any]:
    x = _rows()
    go = np.random.default_rng(3).standard_normal(x.shape, dtype=np.float32)

    def numpy_fn() -> np.ndarray:
        y = _np_softmax(x)
        return y * (go - (go * y).sum(axis=1, keepdims=True))

    import ember.aten as ea

    ego = ea.from_numpy(go)
    torch = _torch()
    tgo = torch.from_numpy(go) if torch is not None else None
    fns = _fwd_bwd(lambda a: (a.softmax(1) * ego).sum(), lambda a: (a.softmax(1) * tgo).sum(), [x], [True])
    fns["numpy"] = numpy_fn
    return fns


def layer_norm_forward() -> dict[str, Any]:
    import ember.aten as ea

    x = _rows()
    w = np.random.default_rng(4).standard_normal(COLS, dtype=np.float32)
    b = np.random.default_rng(5).standard_normal(COLS, dtype=np.float32)

    def numpy_fn() -> np.ndarray:
        mean = x.mean(axis=1, keepdims=True)
        xc = x - mean
        rstd = 1.0 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5)
        return xc * rstd * w + b

    ex, ew, eb = ea.from_numpy(x), ea.from_numpy(w), ea.from_numpy(b)
    fns = {"ember": lambda: ea.layer_norm(ex, [COLS], ew, eb), "numpy": numpy_fn}
    torch = _torch()
    if torch is not None:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        fns["torch"] = lambda: torch.nn.functional.layer_norm(tx, [COLS], tw, tb)
    return fns


def layer_norm_forward_backward() -> dict[str, Any]:
    import ember.aten as ea

    x = _rows()
    w = np.random.default_rng(4).standard_normal(COLS, dtype=np.float32)
    b = np.random.default_rng(5).standard_normal(COLS, dtype=np.float32)
    go = np.random.default_rng(3).standard_normal(x.shape, dtype=np.float32)
    ego = ea.from_numpy(go)

    def numpy_fn() -> tuple[np.ndarray, ...]:
        mean = x.mean(axis=1, keepdims=True)
        xc = x - mean
        rstd = 1.0 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5)
        xhat = xc * rstd
        _ = xhat * w + b
        gxhat = go * w
        gx = rstd * (gxhat - gxhat.mean(axis=1, keepdims=True) - xhat * (gxhat * xhat).mean(axis=1, keepdims=True))
        return gx, (go * xhat).sum(axis=0), go.sum(axis=0)

    torch = _torch()
    tgo = torch.from_numpy(go) if torch is not None else None
    fns = _fwd_bwd(
        lambda a, wa, ba: (ea.layer_norm(a, [COLS], wa, ba) * ego).sum(),
        lambda a, wa, ba: (torch.nn.functional.layer_norm(a, [COLS], wa, ba) * tgo).sum(),
        [x, w, b],
        [True, True, True],
    )
    fns["numpy"] = numpy_fn
    return fns


def _ce_data() -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(6)
    return r.standard_normal((N_CE, C_CE), dtype=np.float32), r.integers(0, C_CE, N_CE)


def _np_log_softmax(x: np.ndarray) -> np.ndarray:
    m = x - x.max(axis=1, keepdims=True)
    return m - np.log(np.exp(m).sum(axis=1, keepdims=True))


def cross_entropy_forward() -> dict[str, Any]:
    import ember.aten as ea

    x, t = _ce_data()
    ex, et = ea.from_numpy(x), ea.from_numpy(t)
    rows = np.arange(N_CE)
    fns = {
        "ember": lambda: ea.nn.cross_entropy_loss(ex, et),
        "numpy": lambda: -_np_log_softmax(x)[rows, t].mean(),
    }
    torch = _torch()
    if torch is not None:
        tx, tt = torch.from_numpy(x), torch.from_numpy(t)
        fns["torch"] = lambda: torch.nn.functional.cross_entropy(tx, tt)
    return fns


def cross_entropy_forward_backward() -> dict[str, Any]:
    import ember.aten as ea

    x, t = _ce_data()
    et = ea.from_numpy(t)
    rows = np.arange(N_CE)

    def numpy_fn() -> np.ndarray:
        lp = _np_log_softmax(x)
        _ = -lp[rows, t].mean()
        g = np.exp(lp)
        g[rows, t] -= 1.0
        return g / N_CE

    torch = _torch()
    tt = torch.from_numpy(t) if torch is not None else None
    fns = _fwd_bwd(
        lambda a: ea.nn.cross_entropy_loss(a, et),
        lambda a: torch.nn.functional.cross_entropy(a, tt),
        [x],
        [True],
    )
    fns["numpy"] = numpy_fn
    return fns


WORKLOADS = [
    ("conv2d 32x16x32x32, 32 out, k3 p1 (forward)", "call", conv2d_forward),
    ("conv2d 32x16x32x32, 32 out, k3 p1 (forward + backward)", "call", conv2d_forward_backward),
    ("max_pool2d 32x32x64x64, k2 s2", "call", max_pool2d),
    ("softmax 1024x1024 dim 1 (forward)", "call", softmax_forward),
    ("softmax 1024x1024 dim 1 (forward + backward)", "call", softmax_forward_backward),
    ("layer_norm 1024x1024, affine (forward)", "call", layer_norm_forward),
    ("layer_norm 1024x1024, affine (forward + backward)", "call", layer_norm_forward_backward),
    ("cross_entropy 1024x1000, class indices (forward)", "call", cross_entropy_forward),
    ("cross_entropy 1024x1000, class indices (forward + backward)", "call", cross_entropy_forward_backward),
]
