"""Convolution, pooling, fold/unfold modules: parameters, NumPy float64 references, gradients, repr, errors."""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def conv2d_ref(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):  # type: ignore[no-untyped-def]
    """Direct 2-d cross-correlation in float64."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for g in range(groups):
        for oc in range(g * og, (g + 1) * og):
            for i in range(ho):
                for j in range(wo):
                    patch = xp[
                        :,
                        g * cg : (g + 1) * cg,
                        i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                        j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                    ]
                    out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def conv_transpose2d_ref(x, w, b, stride, padding, output_padding):  # type: ignore[no-untyped-def]
    n, _, h, wd = x.shape
    _, o, kh, kw = w.shape
    ho = (h - 1) * stride - 2 * padding + kh + output_padding
    wo = (wd - 1) * stride - 2 * padding + kw + output_padding
    full = np.zeros((n, o, (h - 1) * stride + kh + output_padding, (wd - 1) * stride + kw + output_padding))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j], w
            )
    out = full[:, :, padding : padding + ho, padding : padding + wo]
    return out + b[None, :, None, None]


def test_conv2d_parameters_init_state_dict() -> None:
    conv = nn.Conv2d(4, 6, (3, 5), groups=2)
    assert tuple(conv.weight.shape) == (6, 2, 3, 5) and tuple(conv.bias.shape) == (6,)
    assert list(conv.state_dict()) == ["weight", "bias"]
    bound = 1 / math.sqrt(2 * 3 * 5)
    assert np.abs(_np(conv.weight)).max() <= bound and np.abs(_np(conv.bias)).max() <= bound
    t = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 3, 3)
    assert tuple(nn.Conv1d(2, 3, 4).weight.shape) == (3, 2, 4)
    assert tuple(nn.Conv3d(2, 3, (1, 2, 3)).weight.shape) == (3, 2, 1, 2, 3)
    assert tuple(nn.ConvTranspose1d(2, 3, 4).weight.shape) == (2, 3, 4)
    assert tuple(nn.ConvTranspose3d(2, 3, 2).weight.shape) == (2, 3, 2, 2, 2)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"stride": 2, "padding": 1},
        {"dilation": 2, "padding": (2, 1)},
        {"groups": 2},
        {"stride": (1, 2), "bias": False},
    ],
)
def test_conv2d_values(kw: dict, device: str) -> None:
    conv = nn.Conv2d(4, 6, 3, **kw).double().to(device)
    x = ea.randn(2, 4, 7, 8, dtype=ea.float64).to(device)
    c = conv
    ref = conv2d_ref(
        _np(x), _np(c.weight), None if c.bias is None else _np(c.bias), c.stride, c.padding, c.dilation, c.groups
    )
    out = conv(x)
    assert tuple(out.shape) == ref.shape and out.device.type == device
    np.testing.assert_allclose(_np(out), ref, rtol=1e-10, atol=1e-10)


def test_conv_same_padding_and_padding_modes() -> None:
    x = ea.randn(1, 2, 6, 5, dtype=ea.float64)
    same = nn.Conv2d(2, 3, (3, 4), padding="same").double()
    with pytest.warns(UserWarning, match="Using padding='same' with even kernel lengths"):
        out = same(x)
    assert tuple(out.shape) == (1, 3, 6, 5)
    # PyTorch puts the odd extra padding on the right/bottom
    xp = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (1, 2)))
    np.testing.assert_allclose(_np(out), conv2d_ref(xp, _np(same.weight), _np(same.bias)), rtol=1e-10, atol=1e-10)
    circ = nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular").double()
    xw = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="wrap")
    np.testing.assert_allclose(_np(circ(x)), conv2d_ref(xw, _np(circ.weight), _np(circ.bias)), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(2, 2, 3, stride=2, padding="same")


def test_conv1d_conv3d_against_conv2d() -> None:
    c1 = nn.Conv1d(3, 4, 3, stride=2, padding=1).double()
    x = ea.randn(2, 3, 9, dtype=ea.float64)
    ref = conv2d_ref(_np(x)[:, :, None, :], _np(c1.weight)[:, :, None, :], _np(c1.bias), (1, 2), (0, 1))[:, :, 0, :]
    np.testing.assert_allclose(_np(c1(x)), ref, rtol=1e-10, atol=1e-10)
    c3 = nn.Conv3d(2, 3, (1, 3, 3)).double()
    x3 = ea.randn(1, 2, 1, 5, 5, dtype=ea.float64)
    ref3 = conv2d_ref(_np(x3)[:, :, 0], _np(c3.weight)[:, :, 0], _np(c3.bias))[:, :, None]
    np.testing.assert_allclose(_np(c3(x3)), ref3, rtol=1e-10, atol=1e-10)


def test_conv_transpose2d_values_and_output_size() -> None:
    ct = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1).double()
    x = ea.randn(2, 3, 4, 5, dtype=ea.float64)
    out = ct(x)
    assert tuple(out.shape) == (2, 2, 8, 10)
    np.testing.assert_allclose(
        _np(out), conv_transpose2d_ref(_np(x), _np(ct.weight), _np(ct.bias), 2, 1, 1), rtol=1e-10, atol=1e-10
    )
    plain = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    assert tuple(plain(x, output_size=[8, 10]).shape) == (2, 2, 8, 10)
    assert tuple(plain(x, output_size=[2, 2, 7, 9]).shape) == (2, 2, 7, 9)
    with pytest.raises(
        ValueError, match=r"requested an output size of \[9, 9\], but valid sizes range from \[7, 9\] to \[8, 10\]"
    ):
        plain(x, output_size=[9, 9])
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 2, 2, padding_mode="reflect")


def test_conv_gradcheck() -> None:
    x = ea.randn(1, 2, 5, 5, dtype=ea.float64, requires_grad=True)
    w = ea.randn(4, 1, 3, 3, dtype=ea.float64, requires_grad=True)
    b = ea.randn(4, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv2d(a, c, d, 2, 1, 1, 2), (x, w, b))
    wt = ea.randn(2, 3, 2, 2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a, c: F.conv_transpose2d(a, c, None, 2), (x, wt))


def test_conv_errors() -> None:
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 2, 2, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(2, 3, 2, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv2d(2, 2, 2, groups=0)
    with pytest.raises(ValueError, match="Invalid padding string 'foo', should be one of"):
        nn.Conv2d(2, 2, 2, padding="foo")
    with pytest.raises(ValueError, match=r"padding_mode must be one of .*, but got padding_mode='foo'"):
        nn.Conv2d(2, 2, 2, padding_mode="foo")
    with pytest.raises(RuntimeError):
        nn.Conv2d(2, 2, 2)(ea.randn(1, 3, 4, 4))


def test_conv_reprs() -> None:
    assert repr(nn.Conv2d(16, 33, 3, stride=2)) == "Conv2d(16, 33, kernel_size=(3, 3), stride=(2, 2))"
    assert (
        repr(
            nn.Conv2d(
                16,
                32,
                (3, 5),
                stride=(2, 1),
                padding=(4, 2),
                dilation=(3, 1),
                groups=2,
                bias=False,
                padding_mode="reflect",
            )
        )
        == "Conv2d(16, 32, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1), groups=2, "
        "bias=False, padding_mode=reflect)"
    )
    assert repr(nn.Conv1d(4, 8, 3, padding="same")) == "Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=same)"
    assert repr(nn.ConvTranspose2d(4, 8, 3, stride=2, output_padding=1)) == (
        "ConvTranspose2d(4, 8, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"
    )
    assert repr(nn.Conv3d(2, 4, 3)) == "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))"


# ---- pooling ---------------------------------------------------------------------------------
def _windows(x: np.ndarray, k: int, s: int, pad: int, fill: float) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    n, c, h, w = xp.shape
    ho, wo = (h - k) // s + 1, (w - k) // s + 1
    out = np.empty((n, c, ho, wo, k, k))
    for i in range(ho):
        for j in range(wo):
            out[:, :, i, j] = xp[:, :, i * s : i * s + k, j * s : j * s + k]
    return out


def test_maxpool2d_values_and_indices() -> None:
    x = ea.randn(2, 3, 7, 7, dtype=ea.float64)
    mp = nn.MaxPool2d(3, stride=2, padding=1)
    ref = _windows(_np(x), 3, 2, 1, -np.inf).max(axis=(4, 5))
    np.testing.assert_array_equal(_np(mp(x)), ref)
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    flat = _np(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, _np(idx).reshape(2, 3, -1), 2).reshape(out.shape), _np(out))
    un = nn.MaxUnpool2d(2)(out, idx, output_size=(7, 7))
    assert tuple(un.shape) == (2, 3, 7, 7)
    np.testing.assert_array_equal(
        np.take_along_axis(_np(un).reshape(2, 3, -1), _np(idx).reshape(2, 3, -1), 2).reshape(out.shape), _np(out)
    )
    assert float(un.abs().sum()) == pytest.approx(float(out.abs().sum()))
    x6 = ea.randn(1, 1, 6, 6)
    o6, i6 = F.max_pool2d(x6, 2, return_indices=True)
    assert tuple(nn.MaxUnpool2d(2)(o6, i6).shape) == (1, 1, 6, 6)


def test_avgpool2d_values() -> None:
    x = ea.randn(1, 2, 6, 6, dtype=ea.float64)
    ref = _windows(_np(x), 2, 2, 0, 0).mean(axis=(4, 5))
    np.testing.assert_allclose(_np(nn.AvgPool2d(2)(x)), ref, rtol=1e-12)
    padded = nn.AvgPool2d(3, stride=3, padding=1)(x)
    np.testing.assert_allclose(_np(padded), _windows(_np(x), 3, 3, 1, 0).sum(axis=(4, 5)) / 9, rtol=1e-12)
    excl = nn.AvgPool2d(3, stride=3, padding=1, count_include_pad=False)(x)
    counts = _windows(np.ones((1, 2, 6, 6)), 3, 3, 1, 0).sum(axis=(4, 5))
    np.testing.assert_allclose(_np(excl), _windows(_np(x), 3, 3, 1, 0).sum(axis=(4, 5)) / counts, rtol=1e-12)
    div = nn.AvgPool2d(2, divisor_override=1)(x)
    np.testing.assert_allclose(_np(div), _windows(_np(x), 2, 2, 0, 0).sum(axis=(4, 5)), rtol=1e-12)


def test_pool_1d_3d() -> None:
    x = ea.randn(2, 3, 8, dtype=ea.float64)
    np.testing.assert_array_equal(_np(nn.MaxPool1d(2)(x)), _np(x).reshape(2, 3, 4, 2).max(-1))
    np.testing.assert_allclose(_np(nn.AvgPool1d(4)(x)), _np(x).reshape(2, 3, 2, 4).mean(-1))
    x3 = ea.randn(1, 2, 4, 4, 4, dtype=ea.float64)
    ref = _np(x3).reshape(1, 2, 2, 2, 2, 2, 2, 2).max(axis=(3, 5, 7))
    np.testing.assert_array_equal(_np(nn.MaxPool3d(2)(x3)), ref)
    np.testing.assert_allclose(_np(nn.AvgPool3d(2)(x3)), _np(x3).reshape(1, 2, 2, 2, 2, 2, 2, 2).mean(axis=(3, 5, 7)))
    out, idx = nn.MaxPool1d(2, return_indices=True)(x)
    back = nn.MaxUnpool1d(2)(out, idx)
    assert tuple(back.shape) == (2, 3, 8)


def test_adaptive_pools() -> None:
    x = ea.randn(2, 3, 6, 9, dtype=ea.float64)
    np.testing.assert_allclose(_np(nn.AdaptiveAvgPool2d(1)(x)), _np(x).mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(
        _np(nn.AdaptiveAvgPool2d((2, 3))(x)), _np(x).reshape(2, 3, 2, 3, 3, 3).mean(axis=(3, 5)), rtol=1e-12
    )
    assert tuple(nn.AdaptiveAvgPool2d((None, 3))(x).shape) == (2, 3, 6, 3)
    np.testing.assert_array_equal(
        _np(nn.AdaptiveMaxPool2d((3, 3))(x)), _np(x).reshape(2, 3, 3, 2, 3, 3).max(axis=(3, 5))
    )
    out, idx = nn.AdaptiveMaxPool2d(1, return_indices=True)(x)
    np.testing.assert_array_equal(_np(out), _np(x).max(axis=(2, 3), keepdims=True))
    assert tuple(idx.shape) == (2, 3, 1, 1) and idx.dtype == ea.int64
    x1 = ea.randn(2, 3, 8, dtype=ea.float64)
    np.testing.assert_allclose(_np(nn.AdaptiveAvgPool1d(2)(x1)), _np(x1).reshape(2, 3, 2, 4).mean(-1), rtol=1e-12)
    np.testing.assert_array_equal(_np(nn.AdaptiveMaxPool1d(4)(x1)), _np(x1).reshape(2, 3, 4, 2).max(-1))
    x3 = ea.randn(1, 1, 4, 4, 4, dtype=ea.float64)
    assert tuple(nn.AdaptiveAvgPool3d(2)(x3).shape) == (1, 1, 2, 2, 2)
    assert tuple(nn.AdaptiveMaxPool3d(2)(x3).shape) == (1, 1, 2, 2, 2)


def test_lp_pool() -> None:
    x = ea.rand(1, 2, 4, 4, dtype=ea.float64)
    ref = (_windows(_np(x), 2, 2, 0, 0) ** 2).sum(axis=(4, 5)) ** 0.5
    np.testing.assert_allclose(_np(nn.LPPool2d(2, 2)(x)), ref, rtol=1e-10)
    x1 = ea.rand(1, 2, 6, dtype=ea.float64)
    np.testing.assert_allclose(
        _np(nn.LPPool1d(3, 3)(x1)), ((_np(x1).reshape(1, 2, 2, 3) ** 3).sum(-1)) ** (1 / 3), rtol=1e-10
    )


def test_pool_gradcheck() -> None:
    x = ea.randn(1, 2, 5, 5, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a: F.max_pool2d(a, 2, 1), (x,))
    assert gradcheck(lambda a: F.avg_pool2d(a, 3, 2, 1), (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (2, 3)), (x,))


def test_fold_unfold_round_trip() -> None:
    x = ea.randn(2, 3, 4, 5, dtype=ea.float64)
    cols = nn.Unfold(2)(x)
    assert tuple(cols.shape) == (2, 12, 12)
    back = nn.Fold((4, 5), 2)(cols)
    counts = nn.Fold((4, 5), 2)(nn.Unfold(2)(ea.ones(2, 3, 4, 5, dtype=ea.float64)))
    np.testing.assert_allclose(_np(back / counts), _np(x), rtol=1e-12)


def test_pool_reprs() -> None:
    assert (
        repr(nn.MaxPool2d(3, stride=2)) == "MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(nn.MaxPool1d(2)) == "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool2d((5, None))) == "AdaptiveAvgPool2d(output_size=(5, None))"
    assert repr(nn.AdaptiveMaxPool2d(3)) == "AdaptiveMaxPool2d(output_size=3)"
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    assert repr(nn.Fold((4, 5), 2)) == "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"


@pytest.mark.parametrize(
    ("fn", "shape"),
    [
        (F.adaptive_avg_pool2d, (1, 2, 3, 4)),
        (F.adaptive_max_pool2d, (1, 2, 3, 4)),
        (F.adaptive_avg_pool3d, (1, 2, 3, 4, 5)),
        (F.adaptive_max_pool3d, (1, 2, 3, 4, 5)),
    ],
)
def test_adaptive_pool_empty_output_size(fn: Any, shape: tuple[int, ...]) -> None:
    # an empty output_size is the kernel's RuntimeError (as PyTorch's), not a ValueError of the front end
    with pytest.raises(RuntimeError, match="output_size"):
        fn(ea.rand(*shape), ())
    with pytest.raises(ValueError, match="Input dimension should be at least"):
        fn(ea.rand(2, 2), (2,) * (len(shape) - 2))
