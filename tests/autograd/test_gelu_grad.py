"""gelu's gradient is the fused gelu_backward kernel; its own gradient (gelu_double_backward)
is checked against finite differences for both approximations, over points in each piece of
the kernel's Phi (|x| < 1/sqrt(2), up to 2.5, the tail) and for create_graph chains."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import grad, gradcheck, gradgradcheck

X = [-6.0, -2.7, -1.3, -0.75, -0.2, 0.0, 0.3, 0.9, 2.2, 3.1, 7.0]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_first_and_second_derivatives(approximate: str) -> None:
    x = ea.tensor(X, dtype=ea.float64).requires_grad_(True)

    def fn(t: object) -> object:
        return ea.nn.gelu(t, approximate=approximate)

    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-7, rtol=1e-5)
    assert gradgradcheck(fn, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_gradients_in_both_inputs(approximate: str) -> None:
    r = np.random.default_rng(0)
    g = ea.from_numpy(r.standard_normal(len(X))).requires_grad_(True)
    x = ea.tensor(X, dtype=ea.float64).requires_grad_(True)

    def fn(gg: object, xx: object) -> object:
        return ea.nn.gelu_backward(gg, xx, approximate=approximate)

    assert gradcheck(fn, (g, x), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_gelu_grad_is_the_fused_kernel() -> None:
    x = ea.tensor(X, dtype=ea.float32).requires_grad_(True)
    g = ea.from_numpy(np.linspace(-1, 1, len(X)).astype(np.float32))
    (gx,) = grad(ea.nn.gelu(x), (x,), g)
    np.testing.assert_array_equal(gx.numpy(), ea.nn.gelu_backward(g, x.detach()).numpy())
