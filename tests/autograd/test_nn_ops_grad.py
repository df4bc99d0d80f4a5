"""Gradients of the softmax, normalization, loss, embedding and dropout operators over every
OpInfo sample (test_gradcheck takes the first few of each op): class probabilities and
label_smoothing in cross_entropy, ignore_index, pos_weight, every reduction, ctc_loss's
blank / zero_infinity cases, embedding_bag's modes; second derivatives where PyTorch has them."""

from __future__ import annotations

import warnings
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import grad, gradcheck, gradgradcheck
from opinfo import op_db
from test_gradcheck import _requires_grad_outputs, grad_samples

NN_KINDS = {"softmax", "norm", "loss", "ctc", "embedding"}
NN_OPS = [op for op in op_db if op.kind in NN_KINDS and ea.float64 in op.dtypes]
# PyTorch has no double backward for ctc_loss; embedding_bag's max mode is piecewise linear
GRADGRAD_OPS = [op for op in NN_OPS if op.kind in {"softmax", "norm", "loss"}]


@pytest.mark.parametrize("op", NN_OPS, ids=[op.name for op in NN_OPS])
def test_gradcheck_every_sample(op: Any) -> None:
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for what, leaves, fn, has_float_output in grad_samples(op, 100):
            if not has_float_output or not any(_requires_grad_outputs(fn(*leaves))):
                continue
            assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3), what
            checked += 1
    assert checked >= 2, f"{op.name}: only {checked} samples gradchecked"


@pytest.mark.parametrize("op", GRADGRAD_OPS, ids=[op.name for op in GRADGRAD_OPS])
def test_gradgradcheck_every_sample(op: Any) -> None:
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for what, leaves, fn, has_float_output in grad_samples(op, 100, max_numel=24):
            if not has_float_output or not any(_requires_grad_outputs(fn(*leaves))):
                continue
            assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3), what
            checked += 1
    assert checked >= 1, f"{op.name}: no sample gradgradchecked"


def _t(a: Any, rg: bool = True) -> Any:
    return ea.tensor(np.asarray(a), dtype=ea.float64, requires_grad=rg)


def test_cross_entropy_of_confident_logits_has_finite_gradients() -> None:
    x = _t([[1e4, -1e4, 0.0], [-500.0, 800.0, 0.0]])
    loss = ea.nn.cross_entropy_loss(x, ea.tensor([1, 0]), label_smoothing=0.1)
    (g,) = grad(loss, [x])
    assert np.isfinite(g.numpy()).all()
    # d/dx of the mean: (softmax - smoothed one-hot) / N, with softmax one-hot here
    soft = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    smoothed = np.full((2, 3), 0.1 / 3) + 0.9 * np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(g.numpy(), (soft - smoothed) / 2, atol=1e-12)


# cross_entropy with class indices on (N, C) / (C) CPU float inputs runs the fused kernels
# (_cross_entropy_loss_forward / _backward); the unfused chain is log_softmax + nll_loss (and
# the smoothing term), differentiated through its parts


def _unfused_cross_entropy(x: Any, t: Any, w: Any, reduction: int, ii: int, ls: float) -> Any:
    logp = ea._log_softmax(x, x.dim() - 1, False)
    nll = ea.nn.nll_loss(logp, t, w, reduction, ii)
    if ls == 0.0:
        return nll
    c = x.size(-1)
    keep = (t != ii).to(x.dtype)
    smooth = -(logp * (1.0 if w is None else w)).sum(-1) * keep
    if reduction == 1:
        denom = keep.sum() if w is None else (w.gather(0, t.masked_fill(t == ii, 0).reshape(-1)) * keep).sum()
        smooth = smooth.sum() / denom
    elif reduction == 2:
        smooth = smooth.sum()
    return nll * (1 - ls) + smooth * (ls / c)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_fused_cross_entropy_gradients_match_the_unfused_chain(reduction: int, weighted: bool, ls: float) -> None:
    r = np.random.default_rng(reduction)
    x = _t(r.uniform(-3, 3, size=(9, 5)))
    t = ea.tensor(np.where(np.arange(9) % 4 == 0, -100, r.integers(0, 5, size=9)))
    w = ea.tensor(r.uniform(0.3, 2.0, size=5)) if weighted else None
    fused = ea.nn.cross_entropy_loss(x, t, w, reduction, -100, ls)
    ref = _unfused_cross_entropy(x, t, w, reduction, -100, ls)
    np.testing.assert_allclose(fused.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    go = ea.tensor(r.uniform(0.5, 1.5, size=tuple(fused.shape)))
    (g1,) = grad(fused, [x], go, create_graph=True)
    (g2,) = grad(ref, [x], go, create_graph=True)
    np.testing.assert_allclose(g1.detach().numpy(), g2.detach().numpy(), rtol=1e-12, atol=1e-12)
    # second derivatives: of <g, v> with respect to x
    v = ea.tensor(r.uniform(-1, 1, size=(9, 5)))
    (h1,) = grad((g1 * v).sum(), [x])
    (h2,) = grad((g2 * v).sum(), [x])
    np.testing.assert_allclose(h1.numpy(), h2.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_fused_cross_entropy_gradgradcheck(reduction: int) -> None:
    r = np.random.default_rng(7)
    x = _t(r.uniform(-2, 2, size=(4, 3)))
    t = ea.tensor([2, -100, 0, 1])
    w = ea.tensor(r.uniform(0.3, 2.0, size=3))
    fn = lambda a: ea.nn.cross_entropy_loss(a, t, w, reduction, -100, 0.2)  # noqa: E731
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))
    x1 = _t(r.uniform(-2, 2, size=(4,)))
    fn1 = lambda a: ea.nn.cross_entropy_loss(a, ea.tensor(3), None, reduction, -100, 0.1)  # noqa: E731
    assert gradcheck(fn1, (x1,)) and gradgradcheck(fn1, (x1,))


def test_bce_with_logits_at_plus_minus_100_has_finite_gradients() -> None:
    x = _t([100.0, -100.0, 100.0, -100.0])
    y = _t([1.0, 0.0, 0.0, 1.0], rg=False)
    (g,) = grad(ea.binary_cross_entropy_with_logits(x, y, reduction=2), [x])
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 1.0, -1.0], atol=1e-12)


def test_softmax_of_huge_inputs_has_finite_gradients() -> None:
    x = _t([[1e4, -1e4, 0.0, 1e4]])
    go = _t([[1.0, 2.0, 3.0, 4.0]], rg=False)
    (gs,) = grad(ea.softmax(x, 1), [x], go)
    (gl,) = grad(ea.log_softmax(x, 1), [x], go)
    np.testing.assert_allclose(gs.numpy(), [[-0.75, 0.0, 0.0, 0.75]], atol=1e-12)
    np.testing.assert_allclose(gl.numpy(), [[1.0 - 5.0, 2.0, 3.0, 4.0 - 5.0]], atol=1e-12)


def test_running_statistics_may_not_require_grad() -> None:
    x = _t(np.ones((4, 3)))
    rm = _t(np.zeros(3))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'running_mean'"):
        ea.native_batch_norm(x, None, None, rm, _t(np.ones(3), rg=False), False, 0.1, 1e-5)
