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


def test_reflection_replication_pad() -> None:
    x = ea.randn(2, 3, 4, 5, dtype=ea.float64)
    xs = _np(x)
    np.testing.assert_array_equal(
        _np(nn.ReflectionPad2d((1, 2, 3, 0))(x)), np.pad(xs, ((0, 0), (0, 0), (3, 0), (1, 2)), mode="reflect")
    )
    np.testing.assert_array_equal(
        _np(nn.ReplicationPad2d(2)(x)), np.pad(xs, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="edge")
    )
    x1 = ea.randn(2, 3, 6, dtype=ea.float64)
    np.testing.assert_array_equal(
        _np(nn.ReflectionPad1d((2, 1))(x1)), np.pad(_np(x1), ((0, 0), (0, 0), (2, 1)), mode="reflect")
    )
    np.testing.assert_array_equal(
        _np(nn.ReplicationPad1d(3)(x1)), np.pad(_np(x1), ((0, 0), (0, 0), (3, 3)), mode="edge")
    )
    x3 = ea.randn(1, 2, 3, 3, 3, dtype=ea.float64)
    np.testing.assert_array_equal(
        _np(nn.ReplicationPad3d(1)(x3)), np.pad(_np(x3), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)), mode="edge")
    )
    np.testing.assert_array_equal(
        _np(nn.ReflectionPad3d(1)(x3)), np.pad(_np(x3), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)), mode="reflect")
    )
    xg = ea.randn(1, 2, 4, 4, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a: F.pad(a, (1, 2, 2, 1), mode="reflect"), (xg,))
    assert gradcheck(lambda a: F.pad(a, (1, 2, 2, 1), mode="replicate"), (xg,))


def test_upsample() -> None:
    x = ea.randn(2, 3, 4, 5, dtype=ea.float64)
    xs = _np(x)
    up = nn.Upsample(scale_factor=2)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    np.testing.assert_array_equal(_np(up(x)), xs.repeat(2, axis=2).repeat(2, axis=3))
    near = F.interpolate(x, size=(8, 15))
    np.testing.assert_array_equal(_np(near), xs.repeat(2, axis=2).repeat(3, axis=3))
    x1 = ea.randn(2, 3, 4, dtype=ea.float64)
    np.testing.assert_array_equal(_np(F.interpolate(x1, scale_factor=3)), _np(x1).repeat(3, axis=2))
    # bilinear, align_corners=True: output pixel i samples input at i * (in - 1) / (out - 1)
    bl = nn.UpsamplingBilinear2d(size=(7, 9))
    assert repr(bl) == "UpsamplingBilinear2d(size=(7, 9), mode='bilinear')"
    out = _np(bl(x))

    def interp_axis(a: np.ndarray, n_out: int, axis: int) -> np.ndarray:
        n_in = a.shape[axis]
        pos = np.arange(n_out) * (n_in - 1) / (n_out - 1)
        lo = np.floor(pos).astype(int).clip(0, n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        w = pos - lo
        shape = [1] * a.ndim
        shape[axis] = n_out
        return np.take(a, lo, axis) * (1 - w.reshape(shape)) + np.take(a, hi, axis) * w.reshape(shape)

    np.testing.assert_allclose(out, interp_axis(interp_axis(xs, 7, 2), 9, 3), rtol=1e-12, atol=1e-12)
    assert tuple(nn.Upsample(size=(3, 5), mode="bilinear")(x).shape) == (2, 3, 3, 5)
    area = F.interpolate(x[:, :, :4, :4], size=(2, 2), mode="area")
    np.testing.assert_allclose(_np(area), xs[:, :, :4, :4].reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-12)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    xg = ea.randn(1, 1, 3, 3, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a: F.interpolate(a, size=(5, 4), mode="bilinear", align_corners=False), (xg,))


def test_pixel_shuffle() -> None:
    x = ea.randn(2, 8, 3, 4, dtype=ea.float64)
    ref = _np(x).reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    ps = nn.PixelShuffle(2)
    assert repr(ps) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    np.testing.assert_array_equal(_np(ps(x)), ref)
    np.testing.assert_array_equal(_np(nn.PixelUnshuffle(2)(ps(x))), _np(x))


@pytest.mark.parametrize("shape", [(2, 6, 3), (1, 6, 2, 3), (2, 6, 1, 2, 2), (0, 6, 4)])
def test_channel_shuffle(shape: tuple[int, ...]) -> None:
    x = ea.randn(*shape, dtype=ea.float64, requires_grad=True)
    xs = _np(x)
    ref = xs.reshape(shape[0], 3, 2, *shape[2:]).swapaxes(1, 2).reshape(shape)
    np.testing.assert_array_equal(_np(F.channel_shuffle(x, 3)), ref)
    np.testing.assert_array_equal(_np(nn.ChannelShuffle(3)(x)), ref)
    assert repr(nn.ChannelShuffle(3)) == "ChannelShuffle(groups=3)"
    # channel j * g + i of the output is channel i * k + j of the input (g = 3, k = 2)
    np.testing.assert_array_equal(_np(F.channel_shuffle(x, 3))[:, 1], xs[:, 2])
    np.testing.assert_array_equal(_np(F.channel_shuffle(x.transpose(0, 1).transpose(0, 1), 1)), xs)
    if x.numel():
        assert gradcheck(lambda a: F.channel_shuffle(a, 2), (x,))


def test_channel_shuffle_errors() -> None:
    with pytest.raises(RuntimeError, match="channel_shuffle expects input to have at least 3 dimensions"):
        F.channel_shuffle(ea.randn(2, 4), 2)
    with pytest.raises(RuntimeError, match=r"must be positive\. Value of groups:0"):
        F.channel_shuffle(ea.randn(1, 4, 2), 0)
    with pytest.raises(
        RuntimeError, match=r"Number of channels must be divisible by groups\. Got 4 channels and 3 groups\."
    ):
        F.channel_shuffle(ea.randn(1, 4, 2), 3)


def test_grid_sample_identity_and_affine_grid() -> None:
    x = ea.randn(2, 3, 5, 6, dtype=ea.float64)
    theta = ea.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=ea.float64)
    for ac in (True, False):
        grid = F.affine_grid(theta, [2, 3, 5, 6], align_corners=ac)
        assert tuple(grid.shape) == (2, 5, 6, 2)
        np.testing.assert_allclose(_np(F.grid_sample(x, grid, align_corners=ac)), _np(x), rtol=1e-10, atol=1e-12)
    flip = ea.tensor([[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=ea.float64)
    g = F.affine_grid(flip, [2, 3, 5, 6], align_corners=True)
    np.testing.assert_allclose(_np(F.grid_sample(x, g, mode="nearest", align_corners=True)), _np(x)[..., ::-1])
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.affine_grid(theta, [2, 3, 5, 6])
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'cubic'"):
        F.grid_sample(x, g, mode="cubic")
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(theta[:, :1], [2, 3, 5, 6], align_corners=False)
