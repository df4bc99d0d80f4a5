"""Gradients that differed from PyTorch's on its OpInfo samples (issue 18): index_fill's
fill value when the index repeats a position, and native_group_norm's mean / rstd outputs
(differentiable in PyTorch). Finite differences and closed forms as references."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
from ember.autograd import gradcheck, gradgradcheck


def test_index_fill_value_gradient_counts_each_filled_position_once() -> None:
    x = ea.randn(4, 3, dtype=ea.float64, requires_grad=True)
    value = ea.tensor(2.0, dtype=ea.float64, requires_grad=True)
    idx = ea.tensor([1, 1, 3, 1])
    out = x.index_fill(0, idx, value)
    g = ea.arange(12, dtype=ea.float64).reshape(4, 3)
    out.backward(g)
    # positions 1 and 3 are filled (1 three times, still one position)
    assert value.grad.item() == g[1].sum().item() + g[3].sum().item()
    expected = g.numpy().copy()
    expected[[1, 3]] = 0
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    assert gradcheck(lambda a, v: a.index_fill(1, ea.tensor([0, 2, 0]), v), (x, value))


def _group_norm(x: ea.Tensor, w: ea.Tensor, b: ea.Tensor) -> tuple[ea.Tensor, ea.Tensor, ea.Tensor]:
    n, c = x.shape[0], x.shape[1]
    return ea.native_group_norm(x, w, b, n, c, x.shape[2] * x.shape[3], 2, 1e-5)


def test_native_group_norm_mean_and_rstd_are_differentiable() -> None:
    x = ea.randn(2, 4, 3, 2, dtype=ea.float64, requires_grad=True)
    w = ea.randn(4, dtype=ea.float64, requires_grad=True)
    b = ea.randn(4, dtype=ea.float64, requires_grad=True)
    out, mean, rstd = _group_norm(x, w, b)
    assert out.requires_grad and mean.requires_grad and rstd.requires_grad
    # d(sum of the group means)/dx = 1/M for every element (M = 2 channels * 6)
    mean.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(x.shape, 1 / 12))
    assert w.grad is None or float(w.grad.abs().sum()) == 0.0
    for pick in (0, 1, 2):
        assert gradcheck(lambda a, ww, bb, p=pick: _group_norm(a, ww, bb)[p], (x, w, b))
    assert gradcheck(lambda a, ww, bb: sum(t.sum() for t in _group_norm(a, ww, bb)), (x, w, b))
    assert gradgradcheck(lambda a: _group_norm(a, w, b)[2], (x,))
