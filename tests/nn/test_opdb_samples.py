"""nn.functional calls that PyTorch's OpInfo samples make and ember refused or answered
differently (issue 18): a negative padding_idx of embedding_bag, a 0-d prelu weight, an
empty 1-d batch_norm input. NumPy references."""

from __future__ import annotations

import ember.aten as ea
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
