"""deform_conv2d: forward against a NumPy reference (strides, padding, dilation, groups,
offset groups, with and without mask and bias, offsets that leave the image), zero offsets
equal an ordinary convolution, gradcheck of every input in float64, float32 against float64,
and clear errors for bad shapes."""

from __future__ import annotations

import ember.aten as ea
import ember.nn.functional as F
import numpy as np
import pytest
import vision_refs as ref
from ember.autograd import gradcheck
from ember.vision import ops

CASES = [
    # (n, c_in, h, w, c_out, kh, kw, stride, padding, dilation, groups, offset_groups, mask, bias)
    (1, 2, 5, 5, 3, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1, True, True),
    (2, 4, 6, 5, 2, 3, 2, (2, 1), (1, 0), (1, 1), 2, 2, False, True),
    (1, 2, 6, 6, 2, 2, 2, (1, 1), (0, 0), (2, 2), 1, 2, True, False),
    (1, 3, 4, 7, 6, 1, 3, (1, 2), (0, 1), (1, 1), 3, 1, True, True),
]


def _make(case: tuple, dtype: object, device: str = "cpu", offset_scale: float = 1.5) -> tuple[list, list]:
    n, c_in, h, w, c_out, kh, kw, stride, padding, dilation, groups, og, use_mask, use_bias = case
    h_out = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    w_out = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal((n, c_in, h, w)),
        offset_scale * rng.standard_normal((n, 2 * og * kh * kw, h_out, w_out)),  # some samples leave the image
        rng.standard_normal((c_out, c_in // groups, kh, kw)),
        rng.standard_normal(c_out) if use_bias else None,
        rng.uniform(0, 1, (n, og * kh * kw, h_out, w_out)) if use_mask else None,
    ]
    tensors = [None if a is None else ea.tensor(a, dtype=dtype, device=device) for a in arrays]
    return arrays, tensors


def _call(case: tuple, t: list) -> ea.Tensor:
    stride, padding, dilation = case[7], case[8], case[9]
    return ops.deform_conv2d(t[0], t[1], t[2], t[3], stride, padding, dilation, mask=t[4])


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("case", CASES)
def test_forward_matches_numpy(device: str, dtype: object, case: tuple) -> None:
    a, t = _make(case, dtype, device)
    out = _call(case, t)
    expected = ref.deform_conv2d(a[0], a[1], a[2], a[3], case[7], case[8], case[9], a[4])
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    tol = 1e-4 if dtype == ea.float32 else 1e-11
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES)
def test_zero_offsets_are_a_convolution(case: tuple) -> None:
    _, t = _make(case, ea.float64, offset_scale=0.0)
    t[4] = None
    out = _call(case, t)
    conv = F.conv2d(t[0], t[2], t[3], stride=case[7], padding=case[8], dilation=case[9], groups=case[10])
    np.testing.assert_allclose(out.numpy(), conv.numpy(), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("case", CASES)
def test_gradcheck(device: str, case: tuple) -> None:
    _, t = _make(case, ea.float64, device)
    present = [i for i, x in enumerate(t) if x is not None]
    for i in present:
        t[i].requires_grad_()

    def fn(*xs: ea.Tensor) -> ea.Tensor:
        args = list(t)
        for i, x in zip(present, xs, strict=True):
            args[i] = x
        return _call(case, args)

    assert gradcheck(fn, tuple(t[i] for i in present), fast_mode=True)


@pytest.mark.parametrize("case", CASES)
def test_backward_float32_matches_float64(case: tuple) -> None:
    grads = []
    for dtype in (ea.float32, ea.float64):
        _, t = _make(case, dtype)
        for x in t:
            if x is not None:
                x.requires_grad_()
        out = _call(case, t)
        w = ea.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)), dtype=dtype)
        (out * w).sum().backward()
        grads.append([None if x is None else x.grad.numpy().astype(np.float64) for x in t])
    for g32, g64 in zip(*grads, strict=True):
        if g64 is not None:
            np.testing.assert_allclose(g32, g64, rtol=2e-4, atol=2e-4)


def test_module_matches_functional_and_repr() -> None:
    ea.manual_seed(0)
    m = ops.DeformConv2d(4, 6, 3, stride=1, padding=1, groups=2)
    x, off = ea.randn(1, 4, 5, 5), ea.randn(1, 18, 5, 5)
    np.testing.assert_array_equal(
        m(x, off).detach().numpy(),
        ops.deform_conv2d(x, off, m.weight, m.bias, (1, 1), (1, 1), (1, 1)).detach().numpy(),
    )
    assert tuple(m.weight.shape) == (6, 2, 3, 3) and tuple(m.bias.shape) == (6,)
    assert repr(m) == "DeformConv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=2)"
    assert ops.DeformConv2d(2, 2, 1, bias=False).bias is None
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        ops.DeformConv2d(3, 4, 3, groups=2)


def test_bad_input_raises() -> None:
    x, w = ea.randn(1, 2, 5, 5), ea.randn(3, 2, 3, 3)
    off = ea.zeros(1, 18, 3, 3)
    with pytest.raises(RuntimeError, match=r"offset.shape\[1\]=17, while 2 \* weight.size\[2\] \* weight.size\[3\]=18"):
        ops.deform_conv2d(x, ea.zeros(1, 17, 3, 3), w)
    with pytest.raises(ValueError, match=r"deform_conv2d: expected offset of shape \[1, 18, 3, 3\]"):
        ops.deform_conv2d(x, ea.zeros(1, 18, 4, 4), w)
    with pytest.raises(ValueError, match=r"deform_conv2d: expected mask of shape \[1, 9, 3, 3\]"):
        ops.deform_conv2d(x, off, w, mask=ea.ones(1, 8, 3, 3))
    with pytest.raises(ValueError, match=r"deform_conv2d: expected bias of shape \[3\]"):
        ops.deform_conv2d(x, off, w, ea.zeros(4))
    with pytest.raises(TypeError, match=r"deform_conv2d: expected weight to have the dtype of input"):
        ops.deform_conv2d(x, off, w.to(ea.float64))
    with pytest.raises(TypeError, match=r"deform_conv2d: expected input to be float32 or float64"):
        ops.deform_conv2d(x.to(ea.int64), off.to(ea.int64), w.to(ea.int64))
    with pytest.raises(ValueError, match=r"deform_conv2d: expected input to be 4-dimensional"):
        ops.deform_conv2d(ea.randn(2, 5, 5), off, w)
    with pytest.raises(RuntimeError, match=r"input has 3 channels, not a multiple of weight.size\[1\]=2"):
        ops.deform_conv2d(ea.randn(1, 3, 5, 5), off, w)
    with pytest.raises(ValueError, match=r"deform_conv2d: stride must be positive"):
        ops.deform_conv2d(x, off, w, stride=0)
    with pytest.raises(ValueError, match=r"deform_conv2d: the output would be empty"):
        ops.deform_conv2d(ea.randn(1, 2, 2, 2), off, w)
    with pytest.raises(TypeError, match=r"deform_conv2d: stride must be an int or a pair of ints"):
        ops.deform_conv2d(x, off, w, stride=(1, 2, 3))


def test_module_backward_reaches_its_parameters() -> None:
    ea.manual_seed(1)
    m = ops.DeformConv2d(2, 3, 3, padding=1)
    x = ea.randn(1, 2, 5, 5, requires_grad=True)
    off = ea.randn(1, 18, 5, 5, requires_grad=True)
    out = m(x, off)
    out.sum().backward()
    for t in (x, off, m.weight, m.bias):
        assert t.grad is not None and tuple(t.grad.shape) == tuple(t.shape)
    # the bias gradient of a sum is the number of output pixels per channel
    np.testing.assert_allclose(m.bias.grad.numpy(), np.full(3, 25.0), rtol=1e-6)
