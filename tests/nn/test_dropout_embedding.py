"""Dropout layers (train/eval, statistics, channel-wise) and Embedding / EmbeddingBag."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def test_dropout_train_eval() -> None:
    ea.manual_seed(0)
    d = nn.Dropout(0.3)
    assert repr(d) == "Dropout(p=0.3, inplace=False)"
    x = ea.ones(200, 200, dtype=ea.float64)
    out = _np(d(x))
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.7)
    d.eval()
    np.testing.assert_array_equal(_np(d(x)), _np(x))
    with pytest.raises(ValueError, match=r"dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    assert float(nn.Dropout(1.0)(x).abs().sum()) == 0.0
    np.testing.assert_array_equal(_np(nn.Dropout(0.0)(x)), _np(x))


def test_dropout_gradient_uses_mask() -> None:
    x = ea.ones(50, 50, requires_grad=True)
    y = F.dropout(x, 0.5, True)
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), _np(y))  # d(mask * x / (1-p)) / dx = mask / (1-p)


def test_dropout_inplace_and_seeded() -> None:
    ea.manual_seed(5)
    a = _np(F.dropout(ea.ones(100), 0.5))
    ea.manual_seed(5)
    b = _np(F.dropout(ea.ones(100), 0.5))
    np.testing.assert_array_equal(a, b)
    x = ea.ones(100)
    out = nn.Dropout(0.5, inplace=True)(x)
    assert out.data_ptr() == x.data_ptr() and float((x == 0).float().sum()) > 0


@pytest.mark.parametrize(
    ("fn", "shape"),
    # (dropout2d has no unbatched form: a 3-d input is (N, C, L), as in PyTorch)
    [(F.dropout1d, (12, 5)), (F.dropout3d, (12, 2, 2, 2))],
    ids=["dropout1d", "dropout3d"],
)
def test_channel_dropout_inplace_on_an_unbatched_input(fn, shape) -> None:
    """In place on (C, ...): the very input comes back, its shape kept, whole channels zeroed
    or scaled by 1/(1-p) -- written through a batched view (there is no unsqueeze_)."""
    ea.manual_seed(3)
    x = ea.ones(*shape, dtype=ea.float64)
    out = fn(x, 0.5, training=True, inplace=True)
    assert out is x and tuple(x.shape) == shape
    per_channel = _np(x).reshape(shape[0], -1)
    zeroed = (per_channel == 0).all(-1)
    assert np.all(zeroed | (per_channel == 2.0).all(-1))
    assert 0 < zeroed.sum() < shape[0]
    # and out of place, the same draws for the same seed, the input untouched
    ea.manual_seed(3)
    y = ea.ones(*shape, dtype=ea.float64)
    np.testing.assert_array_equal(_np(fn(y, 0.5, training=True)), per_channel.reshape(shape))
    np.testing.assert_array_equal(_np(y), np.ones(shape))


def test_dropout2d_zeros_whole_channels() -> None:
    ea.manual_seed(1)
    out = _np(nn.Dropout2d(0.5)(ea.ones(8, 16, 3, 3, dtype=ea.float64)))
    per_channel = out.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    assert 0.3 < (per_channel == 0).all(-1).mean() < 0.7
    out1 = _np(nn.Dropout1d(0.5)(ea.ones(4, 10, 6, dtype=ea.float64)))
    assert np.all((out1 == 0).all(-1) | (out1 == 2.0).all(-1))
    out3 = _np(nn.Dropout3d(0.5)(ea.ones(2, 6, 2, 2, 2, dtype=ea.float64))).reshape(2, 6, -1)
    assert np.all((out3 == 0).all(-1) | (out3 == 2.0).all(-1))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        nn.Dropout1d()(ea.ones(1, 2, 3, 4))
    unbatched = nn.Dropout1d(0.5)(ea.ones(10, 6))
    assert tuple(unbatched.shape) == (10, 6)
    for m, shape in ((nn.Dropout1d(), (2, 3, 4)), (nn.Dropout2d(), (2, 3, 4, 4)), (nn.Dropout3d(), (2, 3, 2, 2, 2))):
        m.eval()
        x = ea.randn(*shape)
        np.testing.assert_array_equal(_np(m(x)), _np(x))


def test_alpha_dropout_keeps_moments() -> None:
    ea.manual_seed(2)
    x = ea.randn(400, 400, dtype=ea.float64)
    out = _np(nn.AlphaDropout(0.2)(x))
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02
    ad = nn.AlphaDropout(0.2).eval()
    np.testing.assert_array_equal(_np(ad(x)), _np(x))
    fad = _np(nn.FeatureAlphaDropout(0.5)(ea.randn(4, 8, 5, dtype=ea.float64))).reshape(4, 8, 5)
    assert np.all(np.ptp(fad, axis=-1)[np.ptp(fad, axis=-1) == 0] == 0)  # dropped channels are constant


# ---- embeddings ------------------------------------------------------------------------------
def test_embedding_lookup_init_and_state_dict() -> None:
    emb = nn.Embedding(10, 3)
    assert tuple(emb.weight.shape) == (10, 3) and list(emb.state_dict()) == ["weight"]
    assert repr(emb) == "Embedding(10, 3)"
    idx = ea.tensor([[1, 2, 4], [4, 3, 9]])
    out = emb(idx)
    assert tuple(out.shape) == (2, 3, 3)
    np.testing.assert_array_equal(_np(out), _np(emb.weight)[_np(idx)])
    big = nn.Embedding(1000, 100)
    w = _np(big.weight)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1.0) < 0.02  # N(0, 1)
    r = nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)
    assert (
        repr(r) == "Embedding(10, 3, padding_idx=9, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)"
    )
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_padding_idx_and_grad() -> None:
    emb = nn.Embedding(5, 2, padding_idx=0).double()
    assert emb.weight[0].tolist() == [0.0, 0.0]
    emb(ea.tensor([0, 1, 1, 0, 3])).sum().backward()
    g = _np(emb.weight.grad)
    np.testing.assert_array_equal(g, [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])
    w = ea.randn(5, 2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda t: F.embedding(ea.tensor([1, 3, 3]), t), (w,))
    for shape in ((), (2,), (2, 2, 2)):  # the table must be a matrix, as PyTorch's check says
        with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
            F.embedding(ea.tensor([[0, 1]]), ea.ones(shape), padding_idx=0)


def test_embedding_from_pretrained_and_max_norm() -> None:
    weights = ea.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    emb = nn.Embedding.from_pretrained(weights)
    assert not emb.weight.requires_grad
    np.testing.assert_allclose(_np(emb(ea.tensor([1]))), [[4.0, 5.1, 6.3]], rtol=1e-6)
    assert nn.Embedding.from_pretrained(weights, freeze=False).weight.requires_grad
    w = ea.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=ea.float64)
    out = F.embedding(ea.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(_np(w), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)  # renormalised in place
    np.testing.assert_allclose(_np(out), _np(w))


def test_embedding_bag_modes() -> None:
    bag = nn.EmbeddingBag(10, 3, mode="sum").double()
    assert repr(bag) == "EmbeddingBag(10, 3, mode='sum')"
    assert repr(nn.EmbeddingBag(10, 3)) == "EmbeddingBag(10, 3, mode='mean')"
    w = _np(bag.weight)
    inp = ea.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = ea.tensor([0, 4])
    np.testing.assert_allclose(_np(bag(inp, offsets)), [w[[1, 2, 4, 5]].sum(0), w[[4, 3, 2, 9]].sum(0)], rtol=1e-12)
    mean_bag = nn.EmbeddingBag.from_pretrained(bag.weight.detach(), mode="mean")
    np.testing.assert_allclose(_np(mean_bag(inp, offsets)), [w[[1, 2, 4, 5]].mean(0), w[[4, 3, 2, 9]].mean(0)])
    max_bag = nn.EmbeddingBag.from_pretrained(bag.weight.detach(), mode="max")
    np.testing.assert_allclose(_np(max_bag(inp.reshape(2, 4))), [w[[1, 2, 4, 5]].max(0), w[[4, 3, 2, 9]].max(0)])
    psw = ea.rand(8, dtype=ea.float64)
    np.testing.assert_allclose(
        _np(bag(inp, offsets, per_sample_weights=psw)),
        [(w[[1, 2, 4, 5]] * _np(psw)[:4, None]).sum(0), (w[[4, 3, 2, 9]] * _np(psw)[4:, None]).sum(0)],
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        bag(inp)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        bag(inp.reshape(2, 4), offsets)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        mean_bag(inp, offsets, per_sample_weights=psw)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(inp, bag.weight, offsets, mode="median")
