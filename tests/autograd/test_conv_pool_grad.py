"""Gradients of convolution and pooling (derivatives.yaml, section "convolution, pooling"),
checked in float64 with gradcheck (first derivatives) and gradgradcheck (second: the
formulas of convolution_backward, max_pool*_with_indices_backward, avg_pool*_backward,
...), over configurations the OpInfo samples do not reach; plus node names, gradients
reaching leaves through the nn front ends, and output_mask pruning."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import grad, gradcheck, gradgradcheck
from helpers import rand


def R(*shape: int, seed: int = 0) -> Any:
    return rand(*shape, requires_grad=True, seed=seed)


def distinct(*shape: int, seed: int = 0) -> Any:
    """Values far apart (a permutation of a grid), so a max pool has no near-ties that finite
    differences could cross."""
    n = int(np.prod(shape))
    a = np.random.default_rng(seed).permutation(n).astype(np.float64).reshape(shape) / n
    return ea.from_numpy(a).requires_grad_(True)


# ---- convolution ---------------------------------------------------------------------------------

CONV_CASES = [
    # (name, fn, input shape, weight shape, bias size, kwargs)
    ("conv1d strided dilated", ea.conv1d, (2, 2, 7), (3, 2, 3), 3, {"stride": 2, "padding": 1, "dilation": 2}),
    ("conv2d grouped", ea.conv2d, (1, 4, 4, 5), (4, 2, 2, 3), 4, {"stride": (1, 2), "padding": (1, 0), "groups": 2}),
    ("conv2d depthwise", ea.conv2d, (1, 3, 4, 4), (3, 1, 3, 3), None, {"padding": 1, "groups": 3}),
    ("conv2d unbatched", ea.conv2d, (2, 4, 4), (2, 2, 2, 2), 2, {"dilation": (2, 1)}),
    ("conv2d same (asymmetric)", ea.conv2d, (1, 2, 4, 4), (2, 2, 2, 3), 2, {"padding": "same"}),
    ("conv2d 1x1", ea.conv2d, (2, 3, 3, 3), (2, 3, 1, 1), 2, {}),
    ("conv3d", ea.conv3d, (1, 2, 3, 3, 3), (2, 1, 2, 2, 2), 2, {"padding": (1, 0, 1), "groups": 2}),
    (
        "conv_transpose1d",
        ea.conv_transpose1d,
        (2, 2, 4),
        (2, 3, 3),
        3,
        {"stride": 3, "padding": 1, "output_padding": 2},
    ),
    (
        "conv_transpose2d grouped",
        ea.conv_transpose2d,
        (1, 4, 3, 3),
        (4, 1, 2, 3),
        2,
        {"stride": (2, 1), "padding": (1, 1), "output_padding": (1, 0), "groups": 2},
    ),
    (
        "conv_transpose2d dilated",
        ea.conv_transpose2d,
        (1, 2, 3, 2),
        (2, 2, 2, 2),
        None,
        {"dilation": 3, "output_padding": 2},
    ),
    ("conv_transpose3d unbatched", ea.conv_transpose3d, (2, 2, 2, 2), (2, 2, 2, 1, 2), 2, {"stride": 2}),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_convolution_gradients(case: tuple[Any, ...]) -> None:
    _, fn, xs, ws, nb, kw = case
    x, w = R(*xs, seed=1), R(*ws, seed=2)
    inputs = (x, w) if nb is None else (x, w, R(nb, seed=3))

    def f(*a: Any) -> Any:
        return fn(a[0], a[1], a[2] if len(a) > 2 else None, **kw)

    name = type(f(*inputs).grad_fn).__name__
    assert name == "ConvolutionBackward0" or (len(xs) == len(ws) - 1 and name.startswith("SqueezeBackward"))
    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


def test_convolution_node_names_and_double_backward_node() -> None:
    x, w, b = R(1, 2, 4, 4), R(3, 2, 3, 3), R(3)
    y = ea.conv2d(x, w, b, padding=1)
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    gx, _gw = grad(y.sum(), (x, w), create_graph=True)
    assert type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"
    # the second derivative of sum(conv(x, w)) w.r.t. x and w: d(gx)/dw is again a convolution
    (gww,) = grad((gx * gx).sum(), (w,))
    assert tuple(gww.shape) == tuple(w.shape)


def test_convolution_backward_gradients_directly() -> None:
    # convolution_backward itself, differentiated w.r.t. grad_output, input and weight
    x, w, go = R(1, 2, 4, 5, seed=4), R(4, 1, 2, 2, seed=5), R(1, 4, 3, 4, seed=6)

    def f(g: Any, a: Any, b: Any) -> Any:
        return ea.convolution_backward(g, a, b, [4], (2, 1), (1, 0), (1, 1), False, (0, 0), 2, (True, True, True))

    assert gradcheck(f, (go, x, w))
    xt, wt = R(1, 2, 2, 3, seed=7), R(2, 2, 3, 2, seed=8)
    got = R(*ea.conv_transpose2d(xt.detach(), wt.detach(), None, 2, 1, 1).shape, seed=9)

    def ft(g: Any, a: Any, b: Any) -> Any:
        return ea.convolution_backward(g, a, b, None, (2, 2), (1, 1), (1, 1), True, (1, 1), 1, (True, True, False))

    assert gradcheck(ft, (got, xt, wt))


def test_only_requested_gradients_are_computed() -> None:
    x, w = R(1, 2, 4, 4), ea.from_numpy(np.ones((3, 2, 3, 3)))
    y = ea.conv2d(x, w)
    y.sum().backward()
    assert x.grad is not None and w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), ea.conv_transpose2d(ea.ones(1, 3, 2, 2, dtype=ea.float64), w).numpy())


def test_float32_gradients_agree_with_float64() -> None:
    x, w, b = R(2, 3, 6, 6, seed=11), R(4, 3, 3, 3, seed=12), R(4, seed=13)
    ea.conv2d(x, w, b, stride=2, padding=1).pow(2).sum().backward()
    x32, w32, b32 = (t.detach().float().requires_grad_(True) for t in (x, w, b))
    ea.conv2d(x32, w32, b32, stride=2, padding=1).pow(2).sum().backward()
    for a, a32 in ((x, x32), (w, w32), (b, b32)):
        np.testing.assert_allclose(a32.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-4)


# ---- pooling ---------------------------------------------------------------------------------------

POOL_CASES = [
    ("max_pool1d", lambda x: ea.nn.max_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 7), "max"),
    ("max_pool2d dilated", lambda x: ea.nn.max_pool2d(x, 2, 1, 1, (2, 1)), (1, 2, 4, 5), "max"),
    ("max_pool2d ceil_mode", lambda x: ea.max_pool2d(x, 3, 2, 1, 1, True), (2, 5, 5), "max"),
    ("max_pool3d", lambda x: ea.max_pool3d(x, 2, (1, 2, 2), 1), (1, 1, 3, 4, 4), "max"),
    ("avg_pool1d", lambda x: ea.avg_pool1d(x, 3, 2, 1, True, False), (2, 8), "avg"),
    ("avg_pool2d divisor_override", lambda x: ea.nn.avg_pool2d(x, 3, 2, 1, True, True, 5), (1, 2, 5, 6), "avg"),
    ("avg_pool2d count_include_pad=False", lambda x: ea.nn.avg_pool2d(x, (2, 3), 2, 1, False, False), (2, 5, 5), "avg"),
    ("avg_pool3d", lambda x: ea.nn.avg_pool3d(x, 2, 1, 1, False, False), (1, 1, 3, 3, 3), "avg"),
    ("adaptive_avg_pool1d", lambda x: ea.adaptive_avg_pool1d(x, 4), (2, 7), "avg"),
    ("adaptive_avg_pool2d", lambda x: ea.nn.adaptive_avg_pool2d(x, (3, 2)), (1, 2, 5, 5), "avg"),
    ("adaptive_avg_pool3d", lambda x: ea.nn.adaptive_avg_pool3d(x, (2, 2, 3)), (1, 3, 3, 4), "avg"),
    ("adaptive_max_pool1d", lambda x: ea.adaptive_max_pool1d(x, 3)[0], (2, 7), "max"),
    ("adaptive_max_pool2d", lambda x: ea.nn.adaptive_max_pool2d(x, (2, 3))[0], (1, 2, 5, 5), "max"),
    ("adaptive_max_pool3d", lambda x: ea.nn.adaptive_max_pool3d(x, 2)[0], (1, 1, 3, 4, 4), "max"),
    ("lp_pool2d", lambda x: ea.nn.lp_pool2d(x + 2, 2, 2), (1, 2, 4, 4), "avg"),
    ("unfold", lambda x: ea.nn.unfold(x, (2, 3), 1, 1, (2, 1)), (1, 2, 4, 4), "avg"),
    ("fold", lambda x: ea.nn.fold(x, (3, 4), 2, 1, 0, 1), (1, 8, 6), "avg"),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pooling_gradients(case: tuple[Any, ...]) -> None:
    _, fn, shape, kind = case
    x = distinct(*shape) if kind == "max" else R(*shape)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pooling_node_names_follow_pytorch() -> None:
    x = distinct(1, 2, 4, 4)
    assert type(ea.nn.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(ea.max_pool3d(x.unsqueeze(0), 1).grad_fn).__name__ == "MaxPool3DWithIndicesBackward0"
    assert type(ea.nn.avg_pool2d(x, 2).grad_fn).__name__ == "AvgPool2DBackward0"
    assert type(ea.nn.avg_pool3d(x.unsqueeze(0), 1).grad_fn).__name__ == "AvgPool3DBackward0"
    assert type(ea.nn.adaptive_avg_pool2d(x, 2).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    assert type(ea.nn.adaptive_max_pool2d(x, 2)[0].grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"
    assert type(ea.nn.unfold(x, 2).grad_fn).__name__ == "Im2ColBackward0"
    assert type(ea.nn.fold(ea.nn.unfold(x, 2), (4, 4), 2).grad_fn).__name__ == "Col2ImBackward0"
    v, i = ea.nn.max_pool2d(x, 2, return_indices=True)
    assert not i.requires_grad and i.grad_fn is None
    assert type(ea.nn.max_unpool2d(v, i, (4, 4)).grad_fn).__name__ == "MaxUnpool2DBackward0"
    (g,) = grad(ea.nn.max_pool2d(x, 2).sum(), (x,), create_graph=True)
    assert type(g.grad_fn).__name__ == "MaxPool2DWithIndicesBackwardBackward0"
    (g,) = grad(ea.nn.avg_pool2d(x, 2).pow(2).sum(), (x,), create_graph=True)
    assert "AvgPool2DBackwardBackward0" in repr(g.grad_fn) or g.grad_fn is not None


def test_max_pool_gradient_routes_to_the_maximum() -> None:
    x = ea.tensor([[[[1.0, 5.0, 2.0, 2.0], [3.0, 4.0, 2.0, 9.0]]]], dtype=ea.float64, requires_grad=True)
    ea.nn.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]]]
    # overlapping windows sharing a maximum add up
    y = ea.tensor([[0.0, 7.0, 1.0]], dtype=ea.float64, requires_grad=True)
    ea.nn.max_pool1d(y, 2, 1).sum().backward()
    assert y.grad.tolist() == [[0.0, 2.0, 0.0]]


def test_max_unpool_gradients() -> None:
    x = distinct(1, 2, 4, 4)
    v, i = ea.nn.max_pool2d(x.detach(), 2, return_indices=True)
    v = v.clone().requires_grad_(True)
    assert gradcheck(lambda a: ea.nn.max_unpool2d(a, i, (4, 4)), (v,))
    assert gradgradcheck(lambda a: ea.nn.max_unpool2d(a, i, (4, 4)), (v,))


@pytest.mark.parametrize(
    ("name", "fn", "back_shape"),
    [
        (
            "max_pool2d_with_indices_backward",
            lambda g, x: ea.nn.max_pool2d_with_indices_backward(
                g,
                x,
                (2, 2),
                (1, 2),
                (1, 0),
                (1, 1),
                True,
                ea.nn.max_pool2d_with_indices(x.detach(), (2, 2), (1, 2), (1, 0), (1, 1), True)[1],
            ),
            (1, 2, 4, 2),
        ),
        (
            "avg_pool2d_backward",
            lambda g, x: ea.nn.avg_pool2d_backward(g, x, (2, 2), (1, 2), (1, 0), True, False, None),
            (1, 2, 4, 2),
        ),
        ("_adaptive_avg_pool2d_backward", lambda g, x: ea._adaptive_avg_pool2d_backward(g, x), (1, 2, 2, 3)),
        (
            "adaptive_max_pool2d_backward",
            lambda g, x: ea.nn.adaptive_max_pool2d_backward(g, x, ea.nn.adaptive_max_pool2d(x.detach(), (2, 3))[1]),
            (1, 2, 2, 3),
        ),
    ],
)
def test_pooling_backward_ops_are_differentiable(name: str, fn: Any, back_shape: tuple[int, ...]) -> None:
    x = distinct(1, 2, 3, 4)
    g = R(*back_shape, seed=3)
    # linear in grad_output; its gradient w.r.t. the input is zero (the indices are constants)
    assert gradcheck(lambda gg: fn(gg, x.detach()), (g,))
    assert gradgradcheck(lambda gg: fn(gg, x.detach()), (g,))
    out = fn(g, x)
    (gx,) = grad(out.pow(2).sum(), (x,), allow_unused=True)
    assert gx is None or not gx.abs().sum().item()
