"""The fused optimizer steps _fused_adam_, _fused_adamw_ and _fused_sgd_ against the
algorithms of PyTorch's documentation written out in NumPy (float64), over several steps
of parameters of mixed shapes and layouts, for each combination of their options;
grad_scale / found_inf (AMP) semantics; argument checks."""

from __future__ import annotations

import itertools
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.core import TOLERANCES, assert_close, tensor_from, to_reference

SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 5), (37000,)]
STEPS = 4


def _param_arrays(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, size=s) for s in SHAPES]


def _tensors(arrays: list[np.ndarray], dtype: Any, transposed: bool = False) -> list[Any]:
    out = []
    for a in arrays:
        t = tensor_from(a, dtype)
        if transposed and t.dim() >= 2:  # a parameter stored transposed (not contiguous, still dense)
            t = t.transpose(-1, -2).clone(memory_format=ea.contiguous_format).transpose(-1, -2)
        out.append(t)
    return out


def _values(ts: list[Any]) -> list[np.ndarray]:
    return [to_reference(t) for t in ts]


def _tol(dtype: Any) -> tuple[float, float]:
    atol, rtol = TOLERANCES[dtype]
    return atol * 10, rtol * 10


# ---- Adam / AdamW ----------------------------------------------------------------------------------


def adam_reference(
    p: np.ndarray,
    g: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    vmax: np.ndarray,
    step: int,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    weight_decay: float,
    eps: float,
    amsgrad: bool,
    maximize: bool,
    adamw: bool,
) -> tuple[np.ndarray, ...]:
    """One step of torch.optim.Adam / AdamW as its documentation writes it."""
    if maximize:
        g = -g
    if weight_decay != 0:
        if adamw:
            p = p - lr * weight_decay * p
        else:
            g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**step)
    if amsgrad:
        vmax = np.maximum(vmax, v)
        v_hat = vmax / (1 - beta2**step)
    else:
        v_hat = v / (1 - beta2**step)
    p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p, m, v, vmax


ADAM_OPTIONS = list(itertools.product([False, True], [False, True], [0.0, 0.1], [False, True]))


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16], ids=str)
@pytest.mark.parametrize(("adamw", "amsgrad", "weight_decay", "maximize"), ADAM_OPTIONS)
def test_adam(adamw: bool, amsgrad: bool, weight_decay: float, maximize: bool, dtype: Any) -> None:
    hp = {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "weight_decay": weight_decay, "eps": 1e-6}
    params = _tensors(_param_arrays(0), dtype, transposed=adamw)
    exp_avgs = [ea.zeros_like(p) for p in params]
    exp_avg_sqs = [ea.zeros_like(p) for p in params]
    maxs = [ea.zeros_like(p) for p in params] if amsgrad else []
    steps = [ea.tensor(0.0) for _ in params]
    ref_p = _values(params)
    ref_m = [np.zeros_like(a) for a in ref_p]
    ref_v = [np.zeros_like(a) for a in ref_p]
    ref_max = [np.zeros_like(a) for a in ref_p]
    fn = ea._fused_adamw_ if adamw else ea._fused_adam_
    for step in range(1, STEPS + 1):
        grads = _tensors(_param_arrays(step), dtype)
        ref_g = _values(grads)
        ea._foreach_add_(steps, 1)  # the caller counts the steps, as PyTorch's Adam does
        lr = hp["lr"] if step % 2 else ea.tensor(hp["lr"], dtype=ea.float64)  # float and .tensor_lr
        r = fn(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            maxs,
            steps,
            lr=lr,
            beta1=hp["beta1"],
            beta2=hp["beta2"],
            weight_decay=weight_decay,
            eps=hp["eps"],
            amsgrad=amsgrad,
            maximize=maximize,
        )
        assert r is None
        for i in range(len(params)):
            ref_p[i], ref_m[i], ref_v[i], ref_max[i] = adam_reference(
                ref_p[i],
                ref_g[i],
                ref_m[i],
                ref_v[i],
                ref_max[i],
                step,
                amsgrad=amsgrad,
                maximize=maximize,
                adamw=adamw,
                **hp,
            )
        # compare against the reference fed with the rounded state (low-precision dtypes round each step)
        atol, rtol = _tol(dtype)
        for name, got, exp in [
            ("param", params, ref_p),
            ("exp_avg", exp_avgs, ref_m),
            ("exp_avg_sq", exp_avg_sqs, ref_v),
        ]:
            for i, (g, e) in enumerate(zip(got, exp, strict=True)):
                assert g.dtype == dtype and g.shape == e.shape
                assert_close(g, e, dtype, atol=atol, rtol=rtol, msg=f"step {step} {name}[{i}]")
        if amsgrad:
            for i, (g, e) in enumerate(zip(maxs, ref_max, strict=True)):
                assert_close(g, e, dtype, atol=atol, rtol=rtol, msg=f"step {step} max_exp_avg_sq[{i}]")
        if dtype in (ea.float16, ea.bfloat16):
            ref_p, ref_m, ref_v = _values(params), _values(exp_avgs), _values(exp_avg_sqs)
            if amsgrad:
                ref_max = _values(maxs)
    assert [s.item() for s in steps] == [float(STEPS)] * len(steps)  # the kernel does not count


@pytest.mark.parametrize("dtype", [ea.float32, ea.bfloat16], ids=str)
def test_every_cpu_capability(dtype: Any, capability: str) -> None:
    # the kernels are compiled once per capability (vector widths differ): each is checked
    test_adam(True, True, 0.1, True, dtype)
    test_adam(False, False, 0.1, False, dtype)
    test_sgd(0.9, 0.1, False, 0.05, True, dtype)
    test_sgd(0.9, 0.0, True, 0.0, False, dtype)


def test_adam_writes_through_non_dense_views() -> None:
    base = ea.zeros(4, 6)
    p = base[:, ::2]  # a strided view: the kernel works on a copy and writes it back
    g = ea.ones(4, 3)
    m, v = ea.zeros(4, 3), ea.zeros(4, 3)
    ea._fused_adam_(
        [p],
        [g],
        [m],
        [v],
        [],
        [ea.tensor(1.0)],
        lr=0.1,
        beta1=0.9,
        beta2=0.999,
        weight_decay=0.0,
        eps=1e-8,
        amsgrad=False,
        maximize=False,
    )
    exp = np.zeros((4, 6))
    exp[:, ::2] = -0.1  # the first step of Adam moves by lr against the gradient's sign
    np.testing.assert_allclose(base.numpy(), exp, rtol=1e-6)
    np.testing.assert_allclose(m.numpy(), np.full((4, 3), 0.1), rtol=1e-6)


def test_adam_grad_scale_and_found_inf() -> None:
    kw: dict[str, Any] = {
        "lr": 0.1,
        "beta1": 0.9,
        "beta2": 0.999,
        "weight_decay": 0.0,
        "eps": 1e-8,
        "amsgrad": False,
        "maximize": False,
    }
    p, g = [ea.ones(3)], [ea.full((3,), 4.0)]
    m, v = [ea.zeros(3)], [ea.zeros(3)]
    steps = [ea.tensor(1.0)]
    # found_inf == 1: nothing is touched (not even the gradients' unscaling)
    ea._fused_adam_(p, g, m, v, [], steps, grad_scale=ea.tensor(2.0), found_inf=ea.tensor(1.0), **kw)
    assert p[0].tolist() == [1.0] * 3 and g[0].tolist() == [4.0] * 3 and m[0].tolist() == [0.0] * 3
    versions = [t._version for t in (p[0], g[0], m[0], v[0])]
    ea._fused_adam_(p, g, m, v, [], steps, grad_scale=ea.tensor(2.0), found_inf=ea.tensor(0.0), **kw)
    assert g[0].tolist() == [2.0] * 3  # unscaled in place
    np.testing.assert_allclose(m[0].numpy(), np.full(3, 0.2), rtol=1e-6)
    np.testing.assert_allclose(v[0].numpy(), np.full(3, 0.004), rtol=1e-6)
    np.testing.assert_allclose(p[0].numpy(), np.full(3, 0.9), rtol=1e-6)
    assert [t._version for t in (p[0], g[0], m[0], v[0])] == [x + 1 for x in versions]


# ---- SGD ---------------------------------------------------------------------------------------------


def sgd_reference(
    p: np.ndarray,
    g: np.ndarray,
    buf: np.ndarray | None,
    first: bool,
    *,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    maximize: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """One step of torch.optim.SGD as its documentation writes it."""
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * p
    if momentum != 0:
        buf = g if first else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return p - lr * g, buf


SGD_OPTIONS = [
    # momentum, dampening, nesterov, weight_decay, maximize
    (0.0, 0.0, False, 0.0, False),
    (0.0, 0.0, False, 0.05, True),
    (0.9, 0.0, False, 0.0, False),
    (0.9, 0.1, False, 0.05, False),
    (0.9, 0.0, True, 0.05, False),
    (0.5, 0.0, True, 0.0, True),
]


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16], ids=str)
@pytest.mark.parametrize(("momentum", "dampening", "nesterov", "weight_decay", "maximize"), SGD_OPTIONS)
def test_sgd(
    momentum: float, dampening: float, nesterov: bool, weight_decay: float, maximize: bool, dtype: Any
) -> None:
    hp = {
        "lr": 0.1,
        "momentum": momentum,
        "dampening": dampening,
        "weight_decay": weight_decay,
        "nesterov": nesterov,
        "maximize": maximize,
    }
    params = _tensors(_param_arrays(0), dtype, transposed=nesterov)
    bufs = [ea.empty_like(p) for p in params] if momentum else []  # as PyTorch: empty_like on the first step
    ref_p = _values(params)
    ref_b: list[Any] = [None] * len(params)
    for step in range(1, STEPS + 1):
        grads = _tensors(_param_arrays(step), dtype)
        ref_g = _values(grads)
        lr = hp["lr"] if step % 2 else ea.tensor(hp["lr"])
        args = {k: v for k, v in hp.items() if k != "lr"}
        r = ea._fused_sgd_(params, grads, bufs, lr=lr, is_first_step=step == 1, **args)
        assert r is None
        for i in range(len(params)):
            ref_p[i], ref_b[i] = sgd_reference(ref_p[i], ref_g[i], ref_b[i], step == 1, **hp)
        atol, rtol = _tol(dtype)
        for i, (g, e) in enumerate(zip(params, ref_p, strict=True)):
            assert_close(g, e, dtype, atol=atol, rtol=rtol, msg=f"step {step} param[{i}]")
        for i, (g, e) in enumerate(zip(bufs, ref_b if momentum else [], strict=True)):
            assert_close(g, e, dtype, atol=atol, rtol=rtol, msg=f"step {step} momentum_buffer[{i}]")
        if dtype in (ea.float16, ea.bfloat16):
            ref_p = _values(params)
            ref_b = _values(bufs) if momentum else ref_b


def test_sgd_grad_scale_and_found_inf() -> None:
    kw: dict[str, Any] = {
        "weight_decay": 0.0,
        "momentum": 0.0,
        "lr": 0.5,
        "dampening": 0.0,
        "nesterov": False,
        "maximize": False,
        "is_first_step": True,
    }
    p, g = [ea.ones(2)], [ea.full((2,), 8.0)]
    ea._fused_sgd_(p, g, [], grad_scale=ea.tensor(4.0), found_inf=ea.tensor(1.0), **kw)
    assert p[0].tolist() == [1.0, 1.0] and g[0].tolist() == [8.0, 8.0]
    ea._fused_sgd_(p, g, [], grad_scale=ea.tensor(4.0), found_inf=ea.tensor(0.0), **kw)
    assert g[0].tolist() == [2.0, 2.0] and p[0].tolist() == [0.0, 0.0]


# ---- argument checks -------------------------------------------------------------------------------


def _adam_call(
    params: list[Any],
    grads: list[Any],
    m: list[Any],
    v: list[Any],
    mx: list[Any],
    steps: list[Any],
    amsgrad: bool = False,
) -> None:
    ea._fused_adam_(
        params,
        grads,
        m,
        v,
        mx,
        steps,
        lr=0.1,
        beta1=0.9,
        beta2=0.999,
        weight_decay=0.0,
        eps=1e-8,
        amsgrad=amsgrad,
        maximize=False,
    )


def test_errors() -> None:
    p = [ea.ones(3), ea.ones(2)]
    z = [ea.zeros(3), ea.zeros(2)]
    s = [ea.tensor(1.0), ea.tensor(1.0)]
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 1$"):
        _adam_call(p, z[:1], z, z, [], s)
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 1$"):
        _adam_call(p, z, z, z, [], s[:1])
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 0$"):
        _adam_call(p, z, z, z, [], s, amsgrad=True)
    with pytest.raises(RuntimeError, match="_fused_adam_: max_exp_avg_sqs must be empty without amsgrad"):
        _adam_call(p, z, z, z, z, s)
    with pytest.raises(
        RuntimeError, match=r"_fused_adam_: expected grads\[1\] to have the parameter's dtype float32, got float64"
    ):
        _adam_call(p, [z[0], ea.zeros(2, dtype=ea.float64)], z, z, [], s)
    with pytest.raises(
        RuntimeError, match=r"_fused_adam_: expected exp_avgs\[0\] to have the parameter's shape \[3\], got \[4\]"
    ):
        _adam_call(p, z, [ea.zeros(4), z[1]], z, [], s)
    with pytest.raises(RuntimeError, match="_fused_adamw_: not implemented for dtype int64"):
        i = [ea.ones(2, dtype=ea.int64)]
        ea._fused_adamw_(
            i,
            i,
            i,
            i,
            [],
            [ea.tensor(1.0)],
            lr=0.1,
            beta1=0.9,
            beta2=0.999,
            weight_decay=0.0,
            eps=1e-8,
            amsgrad=False,
            maximize=False,
        )
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 1$"):
        ea._fused_sgd_(
            p,
            z[:1],
            [],
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=True,
        )
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 0$"):
        ea._fused_sgd_(
            p,
            z,
            [],
            weight_decay=0.0,
            momentum=0.9,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=True,
        )
    with pytest.raises(RuntimeError, match="_fused_sgd_: momentum_buffer_list must be empty when momentum is 0"):
        ea._fused_sgd_(
            p,
            z,
            z,
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=True,
        )
    # nothing was written by the refused calls
    assert p[0].tolist() == [1.0] * 3 and z[0].tolist() == [0.0] * 3
