"""Padding layers (constant / zero / circular), F.pad errors, PairwiseDistance, CosineSimilarity,
LocalResponseNorm, F.normalize, F.one_hot."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def test_constant_and_zero_pad() -> None:
    x = ea.randn(2, 3, 4, 5, dtype=ea.float64)
    out = nn.ZeroPad2d((1, 1, 2, 0))(x)
    np.testing.assert_array_equal(_np(out), np.pad(_np(x), ((0, 0), (0, 0), (2, 0), (1, 1))))
    out = nn.ConstantPad1d(2, 3.5)(x[0])
    np.testing.assert_array_equal(_np(out), np.pad(_np(x[0]), ((0, 0), (0, 0), (2, 2)), constant_values=3.5))
    out = nn.ConstantPad3d((1, 0, 0, 1, 2, 2), -1.0)(x)
    np.testing.assert_array_equal(_np(out), np.pad(_np(x), ((0, 0), (2, 2), (0, 1), (1, 0)), constant_values=-1.0))
    cropped = F.pad(x, (-1, -1))
    np.testing.assert_array_equal(_np(cropped), _np(x)[..., 1:-1])
    assert repr(nn.ZeroPad2d((1, 1, 2, 0))) == "ZeroPad2d((1, 1, 2, 0))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.ReflectionPad1d(2)) == "ReflectionPad1d((2, 2))"
    assert repr(nn.CircularPad2d(1)) == "CircularPad2d((1, 1, 1, 1))"
    assert nn.ZeroPad1d(1).padding == (1, 1) and nn.ReplicationPad3d(1).padding == (1,) * 6


def test_circular_pad() -> None:
    x = ea.randn(1, 2, 4, 5, dtype=ea.float64)
    out = nn.CircularPad2d((1, 2, 2, 1))(x)
    np.testing.assert_array_equal(_np(out), np.pad(_np(x), ((0, 0), (0, 0), (2, 1), (1, 2)), mode="wrap"))
    x1 = ea.randn(2, 3, 6, dtype=ea.float64)
    np.testing.assert_array_equal(_np(nn.CircularPad1d(3)(x1)), np.pad(_np(x1), ((0, 0), (0, 0), (3, 3)), mode="wrap"))
    xg = ea.randn(1, 1, 3, 3, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a: F.pad(a, (1, 1, 1, 0), mode="circular"), (xg,))


def test_pad_errors() -> None:
    x = ea.randn(2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(
        RuntimeError, match="Padding length should be less than or equal to two times the input dimension"
    ):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match=r'Padding mode "circular" doesn.t take in value argument'):
        F.pad(x, (1, 1), mode="circular", value=2.0)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")


def test_pairwise_distance() -> None:
    a = ea.randn(5, 4, dtype=ea.float64)
    b = ea.randn(5, 4, dtype=ea.float64)
    ref = np.linalg.norm(_np(a) - _np(b) + 1e-6, axis=-1)
    np.testing.assert_allclose(_np(nn.PairwiseDistance()(a, b)), ref, rtol=1e-12)
    ref1 = np.abs(_np(a) - _np(b) + 1e-6).sum(-1, keepdims=True)
    np.testing.assert_allclose(_np(nn.PairwiseDistance(p=1.0, keepdim=True)(a, b)), ref1, rtol=1e-12)
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance()"
    ag = a.clone().requires_grad_()
    assert gradcheck(F.pairwise_distance, (ag, b))


def test_cosine_similarity() -> None:
    a = ea.randn(5, 4, dtype=ea.float64)
    b = ea.randn(1, 4, dtype=ea.float64)  # broadcast
    na, nb = _np(a), _np(b)
    ref = (na * nb).sum(1) / (np.linalg.norm(na, axis=1) * np.linalg.norm(nb, axis=1))
    np.testing.assert_allclose(_np(nn.CosineSimilarity()(a, b)), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(nn.CosineSimilarity(dim=0)(a.t(), b.t())), ref, rtol=1e-12)
    zero = F.cosine_similarity(ea.zeros(1, 3, dtype=ea.float64), ea.ones(1, 3, dtype=ea.float64))
    assert zero.tolist() == [0.0]  # eps keeps it finite
    ag = a.clone().requires_grad_()
    bg = b.clone().requires_grad_()
    assert gradcheck(F.cosine_similarity, (ag, bg))


def test_local_response_norm() -> None:
    x = ea.randn(2, 5, 3, 3, dtype=ea.float64)
    size, alpha, beta, k = 3, 1e-2, 0.75, 2.0
    xs = _np(x)
    sq = np.pad(xs**2, ((0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)))
    div = np.stack([sq[:, c : c + size].sum(1) for c in range(5)], 1) / size
    ref = xs / (k + alpha * div) ** beta
    lrn = nn.LocalResponseNorm(size, alpha, beta, k)
    np.testing.assert_allclose(_np(lrn(x)), ref, rtol=1e-12)
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    x3 = ea.randn(2, 5, 4, dtype=ea.float64)
    assert tuple(lrn(x3).shape) == (2, 5, 4)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input \\(got 2 dimensions\\)"):
        lrn(ea.randn(2, 5))


def test_normalize_and_one_hot() -> None:
    x = ea.randn(3, 4, dtype=ea.float64)
    np.testing.assert_allclose(_np(F.normalize(x)), _np(x) / np.linalg.norm(_np(x), axis=1, keepdims=True))
    np.testing.assert_allclose(
        _np(F.normalize(x, p=1.0, dim=0)), _np(x) / np.abs(_np(x)).sum(0, keepdims=True), rtol=1e-12
    )
    oh = F.one_hot(ea.tensor([0, 2, 1]), 4)
    assert oh.dtype == ea.int64 and oh.tolist() == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0]]
    assert tuple(F.one_hot(ea.tensor([[1, 3]])).shape) == (1, 2, 4)
    with pytest.raises(RuntimeError, match=r"Class values must be smaller than num_classes."):
        F.one_hot(ea.tensor([5]), 3)
