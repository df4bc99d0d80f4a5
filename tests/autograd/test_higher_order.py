"""Higher-order gradients: create_graph=True records the backward pass."""

from __future__ import annotations

import ember.autograd as ag
import pytest
from helpers import close, rand, t


def test_second_derivative_of_cube() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = (x * x * x).sum()
    (g,) = ag.grad(y, x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert close(g, 3 * x.detach() * x.detach())
    (gg,) = ag.grad(g.sum(), x)
    assert close(gg, 6 * x.detach())


def test_third_derivative() -> None:
    x = t([0.7], requires_grad=True)
    y = x.exp().sin()
    (g1,) = ag.grad(y, x, create_graph=True)
    (g2,) = ag.grad(g1, x, create_graph=True)
    (g3,) = ag.grad(g2, x)
    import math

    v = 0.7
    e = math.exp(v)
    # d3/dx3 sin(e^x) = -e^3x cos(e^x) - 3 e^2x sin(e^x) + e^x cos(e^x)
    expected = -(e**3) * math.cos(e) - 3 * e**2 * math.sin(e) + e * math.cos(e)
    assert abs(g3.item() - expected) < 1e-9


def test_backward_create_graph_accumulates_differentiable_grad() -> None:
    x = t([1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x * x * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    assert close(x.grad, 6 * x.detach())


def test_gradgradcheck_of_composite_expression() -> None:
    a = rand(2, 3, requires_grad=True)
    b = rand(3, requires_grad=True, seed=1)
    assert ag.gradgradcheck(lambda p, q: (p * q).exp().sum(1) / (q * q + 1).sum(), (a, b))


def test_double_backward_through_views_and_broadcast() -> None:
    a = rand(3, 1, requires_grad=True)
    b = rand(4, requires_grad=True, seed=2)

    def f(p, q):  # type: ignore[no-untyped-def]
        s = p * q  # broadcast
        return s.transpose(0, 1)[1:].exp()

    assert ag.gradgradcheck(f, (a, b))


def test_hessian_vector_product_by_hand() -> None:
    x = rand(3, requires_grad=True)
    v = rand(3, seed=5)
    y = (x.sin() * x).sum()
    (g,) = ag.grad(y, x, create_graph=True)
    (hv,) = ag.grad((g * v).sum(), x)
    xs = x.detach()
    # H = diag(2 cos x - x sin x)
    assert close(hv, (2 * xs.cos() - xs * xs.sin()) * v)
