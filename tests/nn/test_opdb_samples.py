"""nn.functional calls that PyTorch's OpInfo samples make and ember refused or answered
differently (issue 18): a negative padding_idx of embedding_bag, a 0-d prelu weight, an
empty 1-d batch_norm input. NumPy references."""

from __future__ import annotations

import ember.aten as ea
import ember.nn as ember_nn
import numpy as np
import pytest
from ember.autograd import gradcheck
from ember.nn import functional as F


def _bags(weight: np.ndarray, idx: list[int], offsets: list[int], skip: int | None, mode: str) -> np.ndarray:
    ends = [*offsets[1:], len(idx)]
    out = []
    for b, e in zip(offsets, ends, strict=True):
        rows = [weight[i] for i in idx[b:e] if i != skip]
        if not rows:
            out.append(np.zeros(weight.shape[1]))
        elif mode == "sum":
            out.append(np.sum(rows, 0))
        elif mode == "mean":
            out.append(np.mean(rows, 0))
        else:
            out.append(np.max(rows, 0))
    return np.array(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [-1, -5, 4, 0, None])
def test_embedding_bag_negative_padding_idx_counts_from_the_end(mode: str, padding_idx: int | None) -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 5))
    idx, offsets = [4, 1, 1, 0, 4, 4], [0, 3]
    out = F.embedding_bag(ea.tensor(idx), ea.from_numpy(w), ea.tensor(offsets), mode=mode, padding_idx=padding_idx)
    skip = None if padding_idx is None else padding_idx % 5
    np.testing.assert_allclose(out.numpy(), _bags(w, idx, offsets, skip, mode), rtol=1e-12)


def test_embedding_bag_padding_idx_out_of_range() -> None:
    w = ea.ones(5, 3)
    for bad in (5, -6):
        with pytest.raises(AssertionError, match="padding_idx must be within the number of embeddings"):
            F.embedding_bag(ea.tensor([0, 1]), w, ea.tensor([0]), padding_idx=bad)


def test_embedding_bag_negative_padding_idx_gradient() -> None:
    w = ea.randn(5, 3, dtype=ea.float64).requires_grad_()
    idx, offs = ea.tensor([4, 1, 1, 0, 4, 4]), ea.tensor([0, 3])
    out = F.embedding_bag(idx, w, offs, mode="sum", padding_idx=-1)
    out.sum().backward()
    expected = np.zeros((5, 3))
    for i in (1, 1, 0):
        expected[i] += 1.0
    np.testing.assert_allclose(w.grad.numpy(), expected)  # the padding row (4) gets no gradient


@pytest.mark.parametrize("shape", [(), (5,), (5, 5), (5, 10, 5), (1, 0, 3)])
def test_prelu_with_a_zero_dim_weight(shape: tuple[int, ...]) -> None:
    x = ea.randn(*shape, dtype=ea.float64)
    w = ea.tensor(0.25, dtype=ea.float64)
    out = F.prelu(x, w)
    assert tuple(out.shape) == shape
    np.testing.assert_allclose(out.numpy(), np.where(x.numpy() > 0, x.numpy(), 0.25 * x.numpy()))
    assert tuple(F.prelu(ea.tensor(-1.0), ea.tensor([0.25])).shape) == ()  # one slope keeps a 0-d input 0-d
    if x.numel():
        assert gradcheck(F.prelu, (x.clone().requires_grad_(), w.clone().requires_grad_()))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(x, ea.ones(1, 1, dtype=ea.float64))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_empty_1d_input(training: bool) -> None:
    x = ea.randn(0)
    out = F.batch_norm(x, ea.zeros(0), ea.ones(0), training=training)
    assert tuple(out.shape) == (0,)
    # a non-empty 1-d input has no channel dim: PyTorch's IndexError
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.batch_norm(ea.randn(5), ea.zeros(5), ea.ones(5), training=False)


# ---- front ends op_db found missing: rrelu, pdist, max_unpool3d, linear_cross_entropy -----------


def test_rrelu_eval_is_leaky_relu_and_training_draws_slopes() -> None:
    x = np.random.default_rng(1).standard_normal((4, 5))
    t = ea.from_numpy(x)
    np.testing.assert_allclose(F.rrelu(t, 0.1, 0.3).numpy(), np.where(x >= 0, x, 0.2 * x), rtol=1e-12)
    y = F.rrelu(t, 0.1, 0.3, training=True).numpy()
    slope = y[x < 0] / x[x < 0]
    assert np.all((slope >= 0.1) & (slope <= 0.3)) and np.array_equal(y[x >= 0], x[x >= 0])
    assert len(np.unique(slope)) > 1  # one draw per element
    z = ea.from_numpy(x.copy())
    assert F.rrelu_(z) is z
    np.testing.assert_allclose(z.numpy(), np.where(x >= 0, x, (1 / 8 + 1 / 3) / 2 * x), rtol=1e-12)
    assert F.rrelu(ea.empty(0, 3)).shape == (0, 3)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(t, 0.5, 0.1, training=True)
    assert gradcheck(lambda a: F.rrelu(a, 0.1, 0.3), (ea.from_numpy(x).requires_grad_(),))


def test_pdist_against_scipy_distances() -> None:
    x = np.random.default_rng(2).standard_normal((5, 3))
    for p in (1.0, 2.0, 3.0):
        d = np.abs(x[:, None, :] - x[None, :, :])
        full = (d**p).sum(-1) ** (1 / p)
        want = full[np.triu_indices(5, 1)]
        np.testing.assert_allclose(F.pdist(ea.from_numpy(x), p).numpy(), want, rtol=1e-12)
    assert F.pdist(ea.zeros(1, 2)).shape == (0,) and F.pdist(ea.zeros(0, 2)).shape == (0,)
    assert gradcheck(F.pdist, (ea.from_numpy(x).requires_grad_(),))


def test_max_unpool3d_inverts_max_pool3d() -> None:
    x = ea.from_numpy(np.random.default_rng(3).standard_normal((2, 2, 4, 4, 4)))
    out, idx = F.max_pool3d(x, 2, return_indices=True)
    up = F.max_unpool3d(out, idx, 2)
    assert up.shape == (2, 2, 4, 4, 4)
    a, u = x.numpy(), up.numpy()
    np.testing.assert_array_equal(u[u != 0], a[u != 0])  # each max at its place, zeros elsewhere
    assert (u != 0).reshape(2, 2, -1).sum(-1).tolist() == [[8, 8], [8, 8]]
    assert F.max_unpool3d(out[0], idx[0], 2, output_size=(5, 5, 5)).shape == (2, 5, 5, 5)
    leaf = out.detach().requires_grad_()
    assert gradcheck(lambda v: F.max_unpool3d(v, idx, 2), (leaf,))
    bad = idx.clone()
    bad[1, 0, 1, 0, 1] = 64
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 64 \(output volumes are of size 4x4x4\)"):
        F.max_unpool3d(out, bad, 2)
    with pytest.raises(RuntimeError, match="should be a 4d or 5d Tensor, but got a tensor with 3 dimensions"):
        F.max_unpool3d(out[0, 0], idx[0, 0], 2)
    with pytest.raises(RuntimeError, match="elements in indices should be type int64"):
        F.max_unpool3d(out, idx.float(), 2)


def test_linear_cross_entropy_is_linear_then_cross_entropy() -> None:
    rng = np.random.default_rng(4)
    x, w, b = (ea.from_numpy(rng.standard_normal(s)) for s in ((6, 4), (5, 4), (5,)))
    target = ea.tensor([0, 4, 2, 2, 1, 3])
    for kw in ({}, {"reduction": "sum"}, {"reduction": "none", "label_smoothing": 0.1}, {"ignore_index": 2}):
        want = F.cross_entropy(F.linear(x, w, b), target, **kw)
        got = F.linear_cross_entropy(x, w, target, linear_bias=b, **kw)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    # K-dimensional: linear_weight (C, d1, in)
    w3 = ea.from_numpy(rng.standard_normal((3, 2, 4)))
    t2 = ea.tensor([[0, 2], [1, 1], [2, 0], [0, 0], [1, 2], [2, 1]])
    want = F.cross_entropy(F.linear(x, w3.reshape(6, 4)).reshape(6, 3, 2), t2)
    np.testing.assert_allclose(F.linear_cross_entropy(x, w3, t2).numpy(), want.numpy(), rtol=1e-12)
    assert gradcheck(lambda a, m: F.linear_cross_entropy(a, m, target), (x.requires_grad_(), w.requires_grad_()))
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(ea.zeros(1, 2, 4), w, target)
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        F.linear_cross_entropy(ea.zeros(6, 3), w, target)
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(5,\), got \(4,\)"):
        F.linear_cross_entropy(x, w, target, linear_bias=ea.zeros(4))


def test_rrelu_and_max_unpool3d_modules() -> None:
    m = ember_nn.RReLU(0.1, 0.3)
    x = ea.tensor([-1.0, 2.0])
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), [-0.2, 2.0], rtol=1e-6)
    assert "lower=0.1, upper=0.3" in repr(m)
    pool, unpool = ember_nn.MaxPool3d(2, return_indices=True), ember_nn.MaxUnpool3d(2)
    v = ea.from_numpy(np.random.default_rng(5).standard_normal((1, 1, 4, 4, 4)))
    assert unpool(*pool(v)).shape == (1, 1, 4, 4, 4)
    assert "kernel_size=(2, 2, 2)" in repr(unpool)
