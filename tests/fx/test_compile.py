"""ember.fx.compile: guards and recapture, the cache limit, Modules, mutation and aliasing."""

from __future__ import annotations

import warnings

import ember.aten as ea
import ember.autograd as autograd
import ember.fx as fx
import ember.nn as nn
import numpy as np
import pytest

BACKENDS = ["replay", "fused", "interpreter"]


def f(x, y):
    return (x * y + 1.0).tanh()


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_match_eager(backend) -> None:
    cf = fx.compile(f, backend=backend)
    for _ in range(4):
        x, y = ea.randn(3, 4), ea.randn(4)
        np.testing.assert_allclose(cf(x, y).numpy(), f(x, y).numpy(), rtol=1e-6, atol=1e-7)
    assert cf.captures == 1


def test_warm_up_then_capture_then_replay() -> None:
    calls = []

    def g(x):
        calls.append(1)  # Python side effects run only when fn itself runs
        return x + 1

    cg = fx.compile(g)
    for _ in range(5):
        cg(ea.ones(2))
    assert len(calls) == 2  # warm-up + capture; replays do not run Python
    assert cg.captures == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda x: ea.ones(3, 5),  # shape
        lambda x: x.double(),  # dtype
        lambda x: x.t().contiguous().t(),  # strides
        lambda x: x.detach().requires_grad_(True),  # requires_grad
    ],
    ids=["shape", "dtype", "stride", "requires_grad"],
)
def test_guard_miss_recaptures(change) -> None:
    def g(x):
        return x * 2.0

    cg = fx.compile(g, backend="replay")
    x = ea.ones(4, 3)
    cg(x), cg(x), cg(x)
    assert cg.captures == 1
    x2 = change(x)
    cg(x2)  # warm-up for the new key
    out = cg(x2)
    assert cg.captures == 2
    assert out.dtype == x2.dtype and tuple(out.shape) == tuple(x2.shape)
    np.testing.assert_array_equal(cg(x2).detach().numpy(), (x2 * 2.0).detach().numpy())


def test_grad_mode_is_guarded() -> None:
    cg = fx.compile(lambda x: x * 3.0, backend="replay")
    x = ea.ones(2, requires_grad=True)
    with autograd.no_grad():
        cg(x), cg(x)
        assert not cg(x).requires_grad
    cg(x), cg(x)
    assert cg.captures == 2
    out = cg(x)  # grad mode on, output has history: run with autograd
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_python_scalars_are_guarded_by_value() -> None:
    cg = fx.compile(lambda x, k: x * k, backend="replay")
    x = ea.ones(2)
    for k in (2.0, 2.0, 2.0, 5.0, 5.0, 5.0):
        np.testing.assert_array_equal(cg(x, k).numpy(), [k, k])
    assert cg.captures == 2


def test_recompile_limit_warns_and_runs_eagerly() -> None:
    cg = fx.compile(lambda x: x + 1, backend="replay", recompile_limit=2)
    for n in (1, 2):
        cg(ea.ones(n)), cg(ea.ones(n))
    assert cg.captures == 2
    with pytest.warns(RuntimeWarning, match="recompile_limit=2"):
        out = cg(ea.ones(7))
    np.testing.assert_array_equal(out.numpy(), np.full(7, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cg(ea.ones(8))  # warned once only
    assert cg.captures == 2


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match=r"unknown backend 'tvm'"):
        fx.compile(f, backend="tvm")
    with pytest.raises(TypeError, match=r"expected a function or an ember\.nn\.Module"):
        fx.compile(3)


def test_module_compiled_in_place() -> None:
    ea.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    ref = [p.detach().clone() for p in m.parameters()]
    assert fx.compile(m, backend="replay") is m
    assert isinstance(m.forward, fx.CompiledFunction)
    x = ea.randn(3, 4)
    with autograd.no_grad():
        outs = [m(x) for _ in range(3)]
    assert m.forward.captures == 1
    w1, b1, w2, b2 = ref
    expect = ((x @ w1.t() + b1).relu() @ w2.t() + b2).numpy()
    for o in outs:
        np.testing.assert_allclose(o.numpy(), expect, rtol=1e-6, atol=1e-6)


def test_module_train_eval_is_guarded() -> None:
    m = nn.Sequential(nn.Dropout(0.5))
    fx.compile(m, backend="replay")
    x = ea.ones(1000)
    with autograd.no_grad():
        m.eval()
        m(x), m(x)
        np.testing.assert_array_equal(m(x).numpy(), x.numpy())
        m.train()
        m(x), m(x)
        y = m(x).numpy()
    assert m.forward.captures == 2
    assert set(np.unique(y)) <= {0.0, 2.0} and (y == 0).any()


# ---- mutation and aliasing ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["replay", "fused"])
def test_inplace_on_inputs_and_views(backend) -> None:
    def g(x, y):
        x.mul_(2.0)  # in place on an input
        v = y[1:]  # a view of an input ...
        v.add_(x[1:])  # ... written through
        return y, v, x + 1.0  # outputs aliasing inputs, and a new one

    cg = fx.compile(g, backend=backend)
    for i in range(4):
        xa, ya = ea.arange(4.0) + i, ea.ones(4)
        xb, yb = xa.clone(), ya.clone()
        ra = g(xa, ya)
        rb = cg(xb, yb)
        assert rb[0] is yb
        np.testing.assert_array_equal(xb.numpy(), xa.numpy())
        np.testing.assert_array_equal(yb.numpy(), ya.numpy())
        for a, b in zip(ra, rb, strict=True):
            np.testing.assert_array_equal(b.numpy(), a.numpy())
        rb[1].fill_(7.0)  # the returned view still aliases the input
        assert yb.numpy()[1:].tolist() == [7.0, 7.0, 7.0]


def test_version_counter_bumped_by_replayed_inplace() -> None:
    cg = fx.compile(lambda x: x.add_(1.0), backend="replay")
    x = ea.zeros(2)
    for _ in range(3):
        cg(x)
    v0 = x._version
    cg(x)
    assert x._version == v0 + 1
    np.testing.assert_array_equal(x.numpy(), [4.0, 4.0])


def test_lifted_tensor_replaced_is_a_guard_miss() -> None:
    m = nn.Linear(2, 2)
    cg = fx.compile(lambda x: m(x), backend="replay")
    x = ea.ones(1, 2)
    with autograd.no_grad():
        cg(x), cg(x)
        m.weight.data = ea.zeros(3, 2)  # new shapes for the bound parameters
        m.bias.data = ea.zeros(3)
        cg(x), cg(x)
        assert tuple(cg(x).shape) == (1, 3)
    assert cg.captures == 2
