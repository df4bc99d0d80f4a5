"""ember.autograd.functional: jacobian, hessian, vjp, jvp (double backward), hvp, vhp."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import functional as F
from helpers import close, rand, t


def test_jacobian_single() -> None:
    x = rand(3)
    j = F.jacobian(lambda a: a * a, x)
    assert tuple(j.shape) == (3, 3)
    assert close(j, np.diag(2 * x.numpy()))
    assert not j.requires_grad


def test_jacobian_tuples() -> None:
    x, y = rand(2), rand(3, seed=1)
    jac = F.jacobian(lambda a, b: (a.sum() * b, a * 2), (x, y))
    assert isinstance(jac, tuple) and len(jac) == 2
    (j00, j01), (j10, j11) = jac
    assert tuple(j00.shape) == (3, 2) and tuple(j01.shape) == (3, 3)
    assert close(j00, np.outer(y.numpy(), np.ones(2)))
    assert close(j01, np.eye(3) * x.numpy().sum())
    assert close(j10, 2 * np.eye(2)) and close(j11, np.zeros((2, 3)))


def test_jacobian_strict() -> None:
    x = rand(2)
    with pytest.raises(RuntimeError, match="independent of input 0"):
        F.jacobian(lambda a: ea.ones(2, dtype=ea.float64).requires_grad_() * 1, x, strict=True)


def test_hessian() -> None:
    x = rand(3)
    h = F.hessian(lambda a: (a * a * a).sum(), x)
    assert tuple(h.shape) == (3, 3)
    assert close(h, np.diag(6 * x.numpy()))
    a, b = rand(2), rand(2, seed=1)
    hh = F.hessian(lambda p, q: (p * q).sum(), (a, b))
    assert close(hh[0][1], np.eye(2)) and close(hh[0][0], np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda p: p * 2, x)


def test_vjp() -> None:
    x = rand(3)
    v = t([1.0, 2.0, 3.0])
    out, g = F.vjp(lambda a: a.exp(), x, v)
    assert close(out, x.exp())
    assert close(g, x.exp() * v)
    out, g = F.vjp(lambda a: (a * a).sum(), x)
    assert close(g, 2 * x)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="v has invalid size"):
        F.vjp(lambda a: a * 2, x, t([1.0, 2.0]))


def test_jvp_by_double_backward() -> None:
    x = rand(3)
    v = t([1.0, 0.0, 2.0])
    _, jv = F.jvp(lambda a: a * a, x, v)
    assert close(jv, 2 * x * v)
    a, b = rand(2), rand(2, seed=1)
    _, jv = F.jvp(lambda p, q: p * q, (a, b), (t([1.0, 1.0]), t([0.0, 1.0])))
    assert close(jv, b * 1 + a * t([0.0, 1.0]))


def test_hvp_vhp() -> None:
    x = rand(3)
    v = t([1.0, 2.0, 3.0])
    f = lambda a: (a * a * a).sum()  # noqa: E731
    _, hv = F.hvp(f, x, v)
    _, vh = F.vhp(f, x, v)
    assert close(hv, 6 * x * v) and close(vh, hv)


def test_create_graph_keeps_results_differentiable() -> None:
    x = rand(2, requires_grad=True)
    j = F.jacobian(lambda a: a * a, x, create_graph=True)
    assert j.requires_grad
    j.sum().backward()
    assert close(x.grad, 2 * ea.ones(2, dtype=ea.float64))
