"""Pooling beyond the OpInfo table: configurations against the references of opinfo/pooling.py
(values and indices), PyTorch's output-size rules, NaN / tie / -inf behaviour, channels-last
layouts, the backward operators against finite differences of their forwards, the
nn.functional front ends, and errors."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.pooling import (
    ref_adaptive_avg,
    ref_adaptive_max,
    ref_avg_pool,
    ref_lp_pool2d,
    ref_max_pool,
    ref_max_unpool2d,
)

RNG = np.random.default_rng(77)


def arr(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape)


def t(a: np.ndarray, dtype: Any = ea.float64) -> Any:
    return ea.from_numpy(np.ascontiguousarray(a)).to(dtype)


def close(got: Any, expected: np.ndarray, tol: float = 1e-12) -> None:
    g = got.numpy() if isinstance(got, ea.Tensor) else np.asarray(got)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    if g.dtype.kind in "iu":
        np.testing.assert_array_equal(g, expected)
    else:
        np.testing.assert_allclose(g, expected, atol=tol, rtol=tol)


MAX = {2: ea.nn.max_pool2d_with_indices, 3: ea.nn.max_pool3d_with_indices}
AVG = {2: ea.nn.avg_pool2d, 3: ea.nn.avg_pool3d}

# (dims, shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CONFIGS = [
    (2, (2, 3, 9, 8), 3, 2, 1, 1, False),
    (2, (2, 3, 9, 8), 3, 2, 1, 1, True),
    (2, (1, 2, 6, 6), 2, 2, 0, 1, True),  # ceil_mode that adds nothing
    (2, (1, 2, 5, 5), 2, 2, 1, 1, True),  # last window starts in the right padding: dropped
    (2, (1, 1, 10, 9), (3, 2), (2, 3), (1, 1), (2, 3), True),
    (2, (4, 7, 7), 4, 3, 2, 1, False),  # unbatched
    (2, (1, 1, 4, 4), 4, 1, 2, 1, False),
    (3, (1, 2, 5, 6, 4), (2, 3, 2), (2, 2, 1), (1, 1, 0), (1, 1, 2), True),
    (3, (2, 4, 4, 4), 2, 2, 0, 1, False),
    # wide rows: columns whose windows lie inside the row take the kernel's unclipped path,
    # the padded / dilated / ceil_mode ones at either end the clipped one
    (2, (2, 3, 5, 37), 3, 1, 1, 1, False),
    (2, (1, 2, 6, 41), (2, 5), (1, 3), (1, 2), (1, 2), True),
    (2, (1, 1, 4, 33), (1, 7), (1, 2), (0, 3), (1, 3), True),
    (2, (1, 1, 3, 5), (2, 5), 1, (0, 2), 1, False),  # every column clipped
    (3, (1, 1, 3, 4, 29), (2, 2, 3), (1, 2, 2), (1, 0, 1), (1, 1, 2), False),
]


@pytest.mark.parametrize("cfg", MAX_CONFIGS, ids=lambda c: f"{c[0]}d-{c[1]}-k{c[2]}-ceil{c[6]}")
def test_max_pool_matches_reference(cfg: tuple[Any, ...]) -> None:
    n, shape, k, s, p, d, ceil = cfg
    x = arr(*shape)
    vals, idx = MAX[n](t(x), k, s, p, d, ceil)
    ev, ei = ref_max_pool(n, x, k, s, p, d, ceil)
    close(vals, ev)
    close(idx, ei)
    assert idx.dtype == ea.int64
    # float32, and the value-only front end
    v32 = (ea.max_pool2d if n == 2 else ea.max_pool3d)(t(x, ea.float32), k, s, p, d, ceil)
    close(v32, ev.astype(np.float32), 0)


# The float kernel runs N output columns of a row at once (N = 4 to 16 lanes by CPU and
# dtype): whole vectors, a tail block, rows narrower than a vector, stride 1 (direct loads),
# 2 (deinterleaved loads, odd and even window offsets) and 3 (lane gathers), padding that
# the lanes read as -inf, dilation, ceil_mode, 3-d. (dims, shape, kernel, stride, padding,
# dilation, ceil_mode)
LANE_CONFIGS = [
    (2, (2, 2, 4, 64), 2, 2, 0, 1, False),  # the bench's k2 s2
    (2, (1, 3, 7, 67), 2, 2, 0, 1, True),  # tail block; ceil_mode adds a clipped column
    (2, (2, 2, 9, 32), 3, 2, 1, 1, False),  # ResNet's stem pool: 16 columns, padded at both ends
    (2, (1, 2, 6, 35), 3, 1, 1, 1, True),
    (2, (1, 2, 5, 50), (2, 3), 3, (1, 1), (2, 2), True),
    (2, (1, 1, 5, 9), (3, 4), (1, 2), (1, 2), 1, False),  # narrower than a vector
    (2, (1, 1, 6, 40), (1, 4), (1, 2), (0, 2), (1, 3), True),  # dilation 3, stride 2: odd and even offsets
    (2, (1, 1, 3, 130), (2, 2), (1, 1), (1, 0), (2, 1), False),
    (3, (1, 2, 4, 5, 41), (2, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), True),
]


def planted(shape: tuple[int, ...]) -> np.ndarray:
    """Values on a grid of quarters (many ties) with NaNs, -infs and an all -inf block."""
    r = np.random.default_rng(sum(shape))
    x = np.round(r.uniform(-2, 2, size=shape) * 4) / 4
    x[r.random(shape) < 0.03] = np.nan
    x[r.random(shape) < 0.08] = -np.inf
    x[..., :3, :5] = -np.inf
    x[..., -2, -2] = np.nan
    return x


@pytest.mark.parametrize("dtype", [ea.float64, ea.float32, ea.bfloat16], ids=str)
@pytest.mark.parametrize("cfg", LANE_CONFIGS, ids=lambda c: f"{c[0]}d-{c[1]}-k{c[2]}-s{c[3]}")
def test_max_pool_lanes_match_reference(cfg: tuple[Any, ...], dtype: Any, capability: str) -> None:
    n, shape, k, s, p, d, ceil = cfg
    x = t(planted(shape), dtype)
    xr = x.to(ea.float64).numpy()  # the reference sees the values the dtype holds (its ties too)
    vals, idx = MAX[n](x, k, s, p, d, ceil)
    ev, ei = ref_max_pool(n, xr, k, s, p, d, ceil)
    assert vals.dtype == dtype
    np.testing.assert_array_equal(vals.to(ea.float64).numpy(), ev)  # NaN where NaN
    np.testing.assert_array_equal(idx.numpy(), ei)
    assert np.isnan(ev).any() and (ev == -np.inf).any()  # the planted values reach the outputs
    # the backward adds each gradient at its index: np.add.at of the reference's indices
    go = np.round(arr(*ev.shape) * 8) / 8  # exact in bfloat16 too, sums exact in float32
    back = ea.nn.max_pool2d_with_indices_backward if n == 2 else ea.nn.max_pool3d_with_indices_backward
    kk, ss, pp, dd = ((v_,) * n if isinstance(v_, int) else v_ for v_ in (k, s, p, d))
    gi = back(t(go, dtype), x, kk, ss, pp, dd, ceil, idx)
    planes = int(np.prod(shape[:-n]))
    expected = np.zeros((planes, int(np.prod(shape[-n:]))))
    for q in range(planes):
        np.add.at(expected[q], ei.reshape(planes, -1)[q], go.reshape(planes, -1)[q])
    tol = 1e-2 if dtype == ea.bfloat16 else 0
    close(gi.to(ea.float64), expected.reshape(shape), tol)


@pytest.mark.parametrize(("k", "s", "p", "d"), [(3, 2, 1, 1), ((2, 3), 3, 1, (1, 2))])
def test_max_pool_lanes_finite_differences(k: Any, s: Any, p: Any, d: Any) -> None:
    # distinct values (no ties): the max is differentiable; a stride-2 and a stride-3 row
    x = arr(1, 2, 4, 23)
    v, i = ea.nn.max_pool2d_with_indices(t(x), k, s, p, d)
    go = arr(*v.shape)
    kk, ss, pp, dd = ((v_,) * 2 if isinstance(v_, int) else v_ for v_ in (k, s, p, d))
    gi = ea.nn.max_pool2d_with_indices_backward(t(go), t(x), kk, ss, pp, dd, False, i)
    close(gi, numeric_grad(lambda a: ea.nn.max_pool2d_with_indices(t(a), k, s, p, d)[0].numpy(), x, go), 1e-7)


def test_output_sizes_follow_pytorch() -> None:
    # measured with PyTorch 2.13
    x = t(arr(2, 3, 7, 6))
    assert tuple(ea.nn.max_pool2d(x, 3, 2, 1, ceil_mode=True).shape) == (2, 3, 4, 4)
    assert tuple(ea.nn.max_pool1d(t(arr(2, 3, 7)), 3, 2, 1, ceil_mode=True).shape) == (2, 3, 4)
    assert tuple(ea.nn.lp_pool2d(x, 2, 3, 2).shape) == (2, 3, 3, 2)
    assert tuple(ea.nn.lp_pool2d(x, 2, 3, 2, ceil_mode=True).shape) == (2, 3, 3, 3)
    assert tuple(ea.nn.lp_pool1d(t(arr(2, 3, 7)), 2, 3, 2).shape) == (2, 3, 3)
    assert tuple(ea.nn.adaptive_avg_pool2d(x, 0).shape) == (2, 3, 0, 0)
    assert tuple(ea.nn.max_pool2d(t(arr(0, 3, 4, 4)), 2).shape) == (0, 3, 2, 2)


def test_max_pool_nan_ties_and_infinities() -> None:
    nan, inf = float("nan"), float("inf")
    x = t(np.array([[[[1.0, nan, 3.0, 3.0], [nan, 0.0, 3.0, 2.0], [-inf, -inf, 5.0, 5.0], [-inf, -inf, 5.0, 5.0]]]]))
    v, i = ea.nn.max_pool2d_with_indices(x, 2)
    v, i = v.numpy()[0, 0], i.numpy()[0, 0]
    assert np.isnan(v[0, 0]) and i[0, 0] == 4  # NaN wins, and a later NaN wins over an earlier one
    assert v[0, 1] == 3.0 and i[0, 1] == 2  # ties: the first maximum
    assert v[1, 0] == -inf and i[1, 0] == 8  # all -inf: the first element
    assert v[1, 1] == 5.0 and i[1, 1] == 10
    # the same rules in the middle of a wide row (the windows there are never clipped)
    row = np.arange(40, dtype=np.float64) % 5
    row[17] = nan
    row[22] = 9.0
    row[23] = 9.0
    wide = np.tile(row, (2, 1))
    wide[1, 16] = nan
    wide[1, 17] = 0.0
    v, i = ea.nn.max_pool2d_with_indices(t(wide[None, None]), 2, 2)
    v, i = v.numpy()[0, 0, 0], i.numpy()[0, 0, 0]
    assert np.isnan(v[8]) and i[8] == 40 + 16  # the NaN of row 1 comes after row 0's NaN (17)
    assert v[11] == 9.0 and i[11] == 22  # a tie: the first one
    assert v[4] == 4.0 and i[4] == 9  # the same maximum in both rows: row 0's
    # integers: the smallest value of the dtype can be a maximum
    xi = ea.tensor([[[-128, -128], [-128, -128]]], dtype=ea.int8)
    vi, ii = ea.nn.max_pool2d_with_indices(xi, 2)
    assert vi.item() == -128 and ii.item() == 0


def test_max_pool_channels_last() -> None:
    x = arr(2, 3, 6, 5)
    xc = t(x).contiguous(memory_format=ea.channels_last)
    v, i = ea.nn.max_pool2d_with_indices(xc, 2, 2, 1)
    ev, ei = ref_max_pool(2, x, 2, 2, 1)
    close(v, ev)
    close(i, ei)
    assert v.is_contiguous(memory_format=ea.channels_last) and i.is_contiguous(memory_format=ea.channels_last)
    a = ea.nn.avg_pool2d(xc, 3, 1, 1)
    close(a, ref_avg_pool(2, x, 3, 1, 1))
    assert a.is_contiguous(memory_format=ea.channels_last)
    g = ea.nn.max_pool2d_with_indices_backward(ea.ones_like(v), xc, (2, 2), (2, 2), (1, 1), (1, 1), False, i)
    assert g.is_contiguous(memory_format=ea.channels_last)
    x3 = arr(1, 2, 4, 4, 3)
    v3 = ea.max_pool3d(t(x3).contiguous(memory_format=ea.channels_last_3d), 2)
    close(v3, ref_max_pool(3, x3, 2)[0])


AVG_CONFIGS = [
    (2, (2, 3, 9, 8), 3, 2, 1, False, True, None),
    (2, (2, 3, 9, 8), 3, 2, 1, True, False, None),
    (2, (1, 2, 5, 5), 2, 2, 1, True, True, None),
    (2, (1, 1, 7, 6), (3, 2), (2, 3), (1, 1), True, True, 5),
    (2, (3, 6, 6), 4, 2, 2, False, False, None),
    (3, (1, 2, 5, 6, 4), (2, 3, 2), (2, 2, 1), (1, 1, 0), True, False, None),
    (3, (2, 4, 4, 4), 3, 2, 1, False, True, 3),
]


@pytest.mark.parametrize("cfg", AVG_CONFIGS, ids=lambda c: f"{c[0]}d-{c[1]}-ceil{c[5]}-pad{c[6]}-div{c[7]}")
def test_avg_pool_matches_reference(cfg: tuple[Any, ...]) -> None:
    n, shape, k, s, p, ceil, cip, div = cfg
    x = arr(*shape)
    expected = ref_avg_pool(n, x, k, s, p, ceil, cip, div)
    close(AVG[n](t(x), k, s, p, ceil, cip, div), expected)
    close(AVG[n](t(x, ea.float32), k, s, p, ceil, cip, div), expected, 1e-6)


def test_avg_pool_integers_truncate() -> None:
    x = ea.tensor([[[[1, 2, 0, -7], [2, 2, 0, 0]]]])
    out = ea.nn.avg_pool2d(x, 2)
    assert out.dtype == ea.int64
    assert out.tolist() == [[[[1, -1]]]]  # 7 / 4 = 1.75 -> 1, -7 / 4 = -1.75 -> -1 (toward zero, as C)
    assert ea.avg_pool1d(ea.tensor([[5, 4, 3]]), 2, 1).tolist() == [[4, 3]]


@pytest.mark.parametrize(
    ("n", "shape", "out"),
    [
        (1, (2, 3, 7), (3,)),
        (2, (2, 3, 7, 5), (3, 4)),
        (2, (3, 4, 4), (4, 4)),
        (2, (1, 2, 3, 5), (5, 2)),
        (3, (1, 2, 5, 4, 3), (2, 3, 2)),
        (2, (1, 1, 5, 5), (1, 1)),
    ],
)
def test_adaptive_pools_match_reference(n: int, shape: tuple[int, ...], out: tuple[int, ...]) -> None:
    x = arr(*shape)
    avg = {1: ea.adaptive_avg_pool1d, 2: ea.nn.adaptive_avg_pool2d, 3: ea.nn.adaptive_avg_pool3d}[n]
    mx = {1: ea.adaptive_max_pool1d, 2: ea.nn.adaptive_max_pool2d, 3: ea.nn.adaptive_max_pool3d}[n]
    close(avg(t(x), out), ref_adaptive_avg(n, x, out))
    v, i = mx(t(x), out)
    ev, ei = ref_adaptive_max(n, x, out)
    close(v, ev)
    close(i, ei)


def test_max_unpool_inverts_max_pool() -> None:
    x = np.abs(arr(2, 3, 6, 6)) + 0.1
    v, i = ea.nn.max_pool2d_with_indices(t(x), 2)
    u = ea.nn.max_unpool2d(v, i, (6, 6))
    close(u, ref_max_unpool2d(v.numpy(), i.numpy(), (6, 6)))
    # pooling the unpooled tensor again finds the same positions (every other value is 0 < the maxima)
    np.testing.assert_array_equal(ea.nn.max_pool2d_with_indices(u, 2)[1].numpy(), i.numpy())


# ---- backward operators against finite differences -----------------------------------------


def numeric_grad(f: Any, x: np.ndarray, go: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        orig = x[i]
        x[i] = orig + eps
        plus = np.sum(go * f(x))
        x[i] = orig - eps
        minus = np.sum(go * f(x))
        x[i] = orig
        grad[i] = (plus - minus) / (2 * eps)
    return grad


@pytest.mark.parametrize(
    ("n", "shape", "k", "s", "p", "d", "ceil"),
    [
        (2, (2, 2, 5, 6), 3, 2, 1, 1, True),
        (2, (3, 5, 5), 2, 1, 0, 2, False),
        (2, (1, 2, 4, 4), 2, 2, 0, 1, False),
        (3, (1, 2, 3, 4, 4), 2, (1, 2, 2), 1, 1, False),
    ],
)
def test_max_pool_backward_matches_finite_differences(
    n: int, shape: tuple[int, ...], k: Any, s: Any, p: Any, d: Any, ceil: bool
) -> None:
    x = arr(*shape)  # distinct values: no ties, so the max is differentiable
    v, i = MAX[n](t(x), k, s, p, d, ceil)
    go = arr(*v.shape)
    back = ea.nn.max_pool2d_with_indices_backward if n == 2 else ea.nn.max_pool3d_with_indices_backward
    kk, ss, pp, dd = ((v_,) * n if isinstance(v_, int) else v_ for v_ in (k, s, p, d))
    gi = back(t(go), t(x), kk, ss, pp, dd, ceil, i)
    close(gi, numeric_grad(lambda a: MAX[n](t(a), k, s, p, d, ceil)[0].numpy(), x, go), 1e-7)


@pytest.mark.parametrize("cfg", AVG_CONFIGS[:5] + AVG_CONFIGS[6:], ids=lambda c: f"{c[0]}d-{c[1]}")
def test_avg_pool_backward_matches_finite_differences(cfg: tuple[Any, ...]) -> None:
    n, shape, k, s, p, ceil, cip, div = cfg
    x = arr(*shape)
    out = AVG[n](t(x), k, s, p, ceil, cip, div)
    go = arr(*out.shape)
    back = ea.nn.avg_pool2d_backward if n == 2 else ea.nn.avg_pool3d_backward
    kk, ss, pp = ((v_,) * n if isinstance(v_, int) else v_ for v_ in (k, s, p))
    gi = back(t(go), t(x), kk, ss, pp, ceil, cip, div)
    close(gi, numeric_grad(lambda a: AVG[n](t(a), k, s, p, ceil, cip, div).numpy(), x, go), 1e-7)


@pytest.mark.parametrize(
    ("n", "shape", "out"), [(2, (2, 2, 5, 7), (3, 4)), (2, (3, 4, 4), (6, 3)), (3, (1, 2, 4, 3, 5), (2, 2, 3))]
)
def test_adaptive_backward_matches_finite_differences(n: int, shape: tuple[int, ...], out: tuple[int, ...]) -> None:
    x = arr(*shape)
    avg = ea._adaptive_avg_pool2d if n == 2 else ea._adaptive_avg_pool3d
    avg_back = ea._adaptive_avg_pool2d_backward if n == 2 else ea._adaptive_avg_pool3d_backward
    mx = ea.nn.adaptive_max_pool2d if n == 2 else ea.nn.adaptive_max_pool3d
    mx_back = ea.nn.adaptive_max_pool2d_backward if n == 2 else ea.nn.adaptive_max_pool3d_backward
    go = arr(*avg(t(x), out).shape)
    close(avg_back(t(go), t(x)), numeric_grad(lambda a: avg(t(a), out).numpy(), x, go), 1e-7)
    _, i = mx(t(x), out)
    close(mx_back(t(go), t(x), i), numeric_grad(lambda a: mx(t(a), out)[0].numpy(), x, go), 1e-7)


def test_backward_operator_errors() -> None:
    x = t(arr(1, 2, 4, 4))
    v, i = ea.nn.max_pool2d_with_indices(x, 2)
    args = ((2, 2), (2, 2), (0, 0), (1, 1), False)
    with pytest.raises(
        RuntimeError,
        match=r"max_pool2d_with_indices_backward: expected grad_output of size "
        r"\[1, 2, 2, 2\] \(the size of the pooling's output\), but got \[1, 2, 3, 2\]",
    ):
        ea.nn.max_pool2d_with_indices_backward(t(arr(1, 2, 3, 2)), x, *args, i)
    with pytest.raises(RuntimeError, match="expected indices of dtype int64, but got int32"):
        ea.nn.max_pool2d_with_indices_backward(ea.ones_like(v), x, *args, i.int())
    with pytest.raises(RuntimeError, match=r"found an invalid index 16 for input planes of 16 elements"):
        ea.nn.max_pool2d_with_indices_backward(ea.ones_like(v), x, *args, ea.full_like(i, 16))
    with pytest.raises(RuntimeError, match="expected grad_output of dtype float64, but got float32"):
        ea.nn.avg_pool2d_backward(ea.ones_like(v).float(), x, (2, 2), (2, 2), (0, 0), False, True, None)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d_backward: grad_output of size"):
        ea._adaptive_avg_pool2d_backward(t(arr(2, 2, 2, 2)), x)


# ---- nn.functional front ends -------------------------------------------------------------------


def test_nn_functional_max_pools() -> None:
    x = arr(2, 3, 8)
    v = ea.nn.max_pool1d(t(x), 3, stride=None, padding=1)
    v2, i2 = ea.nn.max_pool1d(t(x), 3, padding=1, return_indices=True)
    ev, ei = ref_max_pool(1, x, 3, (), 1)
    close(v, ev)
    close(v2, ev)
    close(i2, ei)
    x2 = arr(1, 2, 6, 6)
    out = ea.nn.max_pool2d(t(x2), (2, 3), return_indices=True)
    assert isinstance(out, tuple) and len(out) == 2
    close(out[1], ref_max_pool(2, x2, (2, 3))[1])
    close(ea.nn.max_pool2d(t(x2), 2, 1, 1, 2, True), ref_max_pool(2, x2, 2, 1, 1, 2, True)[0])
    x3 = arr(1, 1, 4, 4, 4)
    close(ea.nn.max_pool3d(t(x3), 2, return_indices=True)[1], ref_max_pool(3, x3, 2)[1])
    # torch-level names
    assert ea.nn.avg_pool1d is ea.avg_pool1d and ea.nn.adaptive_avg_pool1d is ea.adaptive_avg_pool1d


def test_lp_pool() -> None:
    x = RNG.uniform(0.2, 2, size=(2, 3, 6, 7))
    close(ea.nn.lp_pool2d(t(x), 2, 2), ref_lp_pool2d(x, 2, 2), 1e-12)
    close(ea.nn.lp_pool2d(t(x), 3.0, (3, 2), (2, 1), True), ref_lp_pool2d(x, 3.0, (3, 2), (2, 1), True), 1e-12)
    x1 = RNG.uniform(0.2, 2, size=(2, 8))
    expected = np.stack([np.sqrt((x1[:, 2 * j : 2 * j + 2] ** 2).sum(-1)) for j in range(4)], -1)
    close(ea.nn.lp_pool1d(t(x1), 2, 2), expected, 1e-12)


def test_max_pool1d_with_indices_errors() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"Given input size: \(3x1x2\). Calculated output size: \(3x1x0\). Output "
        r"size is too small",
    ):
        ea.max_pool1d_with_indices(t(arr(2, 3, 2)), 3)
    with pytest.raises(
        RuntimeError,
        match=r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
        r"'self' \(while checking arguments for adaptive_max_pool1d\)",
    ):
        ea.adaptive_max_pool1d(t(arr(2, 3, 4, 4)), 2)


def test_many_planes_run_in_parallel_and_agree() -> None:
    # enough planes for several threads: every plane must still match its own reference
    x = arr(64, 16, 9, 9)
    v, i = ea.nn.max_pool2d_with_indices(t(x), 3, 2, 1)
    ev, ei = ref_max_pool(2, x[:2], 3, 2, 1)
    close(v[:2], ev)
    close(i[:2], ei)
    flat = x.reshape(64 * 16, 81)
    picked = np.take_along_axis(flat, i.numpy().reshape(64 * 16, -1), 1)
    close(v, picked.reshape(v.shape))
