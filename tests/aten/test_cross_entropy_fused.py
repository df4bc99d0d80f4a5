"""cross_entropy's fused CPU path (_cross_entropy_loss_forward / _backward, csrc/native/Loss.cpp):
values and gradients against NumPy and against the unfused chain (log_softmax + nll_loss and
their backward kernels) -- bit for bit at label_smoothing 0 --, every reduction, class weights,
ignore_index, label smoothing, (C) inputs, empty batches, and clear errors for bad arguments."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.nn_ops import ref_cross_entropy

NONE, MEAN, SUM = 0, 1, 2


def _data(n: int, c: int, seed: int = 0, ignore: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.random.default_rng(seed)
    x = r.uniform(-4, 4, size=(n, c))
    t = r.integers(0, c, size=n)
    if ignore and n:
        t[::3] = -100
    return x, t, r.uniform(0.2, 2.0, size=c)


def _np_grad(x: np.ndarray, t: np.ndarray, w: Any, reduction: int, ls: float, go: Any, ii: int = -100) -> np.ndarray:
    """d loss / d x written out: per row g' (A softmax - q), q the smoothed weighted one-hot."""
    x2 = x.reshape(-1, x.shape[-1])
    t2 = np.asarray(t).reshape(-1)
    n, c = x2.shape
    wv = np.ones(c) if w is None else w
    p = np.exp(x2 - x2.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    keep = t2 != ii
    q = np.zeros_like(x2)
    q[np.arange(n)[keep], t2[keep]] = (1 - ls) * wv[t2[keep]]
    q += (ls / c) * wv[None, :]
    q *= keep[:, None]
    tw = wv[t2[keep]].sum()
    g = np.asarray(go, dtype=np.float64).reshape(-1)
    scale = g[:, None] if reduction == NONE else (g / tw if reduction == MEAN else g)
    return (scale * (q.sum(1, keepdims=True) * p - q)).reshape(x.shape)


def _fused(x: Any, t: Any, w: Any = None, reduction: int = MEAN, ii: int = -100, ls: float = 0.0) -> Any:
    return ea.nn._cross_entropy_loss_forward(x, t, w, reduction, ii, ls)


CASES = [
    pytest.param(None, -100, 0.0, id="plain"),
    pytest.param("w", -100, 0.0, id="weight"),
    pytest.param(None, 1, 0.0, id="ignore_index"),
    pytest.param("w", 1, 0.0, id="weight-ignore"),
    pytest.param(None, -100, 0.2, id="smoothing"),
    pytest.param("w", 1, 0.3, id="weight-ignore-smoothing"),
]


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
@pytest.mark.parametrize(("weighted", "ii", "ls"), CASES)
def test_forward_and_backward_match_numpy(dtype: Any, reduction: int, weighted: Any, ii: int, ls: float) -> None:
    x, t, w = _data(13, 7, seed=reduction)
    wt = ea.tensor(w, dtype=dtype) if weighted else None
    out, stats, tw = _fused(ea.tensor(x, dtype=dtype), ea.tensor(t), wt, reduction, ii, ls)
    tol = 1e-5 if dtype == ea.float32 else 1e-12
    expected = ref_cross_entropy(x, t, w if weighted else None, reduction, ii, ls)
    np.testing.assert_allclose(out.numpy(), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(stats.numpy()[:, 0], x.max(1), rtol=tol)
    np.testing.assert_allclose(stats.numpy().sum(1), np.log(np.exp(x).sum(1)), rtol=tol)
    keep = t != ii
    np.testing.assert_allclose(tw.item(), (w[t[keep]] if weighted else keep.astype(float)).sum(), rtol=tol)
    go = np.random.default_rng(9).uniform(0.5, 1.5, size=13 if reduction == NONE else ())
    gi = ea.nn._cross_entropy_loss_backward(
        ea.tensor(go, dtype=dtype), ea.tensor(x, dtype=dtype), ea.tensor(t), wt, reduction, ii, ls, stats, tw
    )
    assert gi.dtype == dtype and tuple(gi.shape) == x.shape
    np.testing.assert_allclose(gi.numpy(), _np_grad(x, t, w if weighted else None, reduction, ls, go, ii), atol=tol)


@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_backward_matches_finite_differences(reduction: int) -> None:
    x, t, w = _data(5, 4, seed=3, ignore=True)
    go = np.linspace(0.5, 1.5, 5) if reduction == NONE else np.array(1.3)
    wt, tt = ea.tensor(w), ea.tensor(t)

    def loss(a: np.ndarray) -> float:
        return float((go * _fused(ea.tensor(a), tt, wt, reduction, -100, 0.25)[0].numpy()).sum())

    num = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        a, b = x.copy(), x.copy()
        a[i] += 1e-6
        b[i] -= 1e-6
        num[i] = (loss(a) - loss(b)) / 2e-6
    _, stats, tw = _fused(ea.tensor(x), tt, wt, reduction, -100, 0.25)
    gi = ea.nn._cross_entropy_loss_backward(ea.tensor(go), ea.tensor(x), tt, wt, reduction, -100, 0.25, stats, tw)
    np.testing.assert_allclose(gi.numpy(), num, atol=1e-7)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
@pytest.mark.parametrize("weighted", [False, True])
def test_bit_for_bit_the_unfused_chain(dtype: Any, reduction: int, weighted: bool) -> None:
    # log_softmax + nll_loss_forward, and nll_loss_backward + _log_softmax_backward_data: without
    # label smoothing the fused kernels round exactly as these do (the rows are long enough for
    # the vector loops and their tails)
    x, t, w = _data(37, 1000 + 3, seed=5, ignore=True)
    xt, tt = ea.tensor(x, dtype=dtype), ea.tensor(t)
    wt = ea.tensor(w, dtype=dtype) if weighted else None
    out, stats, tw = _fused(xt, tt, wt, reduction, -100, 0.0)
    logp = ea._log_softmax(xt, 1, False)
    ref, ref_tw = ea.nn.nll_loss_forward(logp, tt, wt, reduction, -100)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    np.testing.assert_array_equal(tw.numpy(), ref_tw.numpy())
    go = ea.tensor(np.linspace(0.5, 2, 37) if reduction == NONE else np.array(0.7), dtype=dtype)
    gi = ea.nn._cross_entropy_loss_backward(go, xt, tt, wt, reduction, -100, 0.0, stats, tw)
    g_nll = ea.nn.nll_loss_backward(go, logp, tt, wt, reduction, -100, ref_tw)
    np.testing.assert_array_equal(gi.numpy(), ea._log_softmax_backward_data(g_nll, logp, 1, dtype).numpy())


@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_composite_takes_the_fused_path(ls: float) -> None:
    x, t, w = _data(8, 6, seed=1, ignore=True)
    xt, tt, wt = ea.tensor(x, dtype=ea.float32), ea.tensor(t), ea.tensor(w, dtype=ea.float32)
    got = ea.nn.cross_entropy_loss(xt, tt, wt, MEAN, -100, ls)
    np.testing.assert_array_equal(got.numpy(), _fused(xt, tt, wt, MEAN, -100, ls)[0].numpy())
    # a transposed (non-contiguous) input gives the same
    xT = ea.tensor(np.ascontiguousarray(x.T), dtype=ea.float32).t()
    np.testing.assert_array_equal(ea.nn.cross_entropy_loss(xT, tt, wt, MEAN, -100, ls).numpy(), got.numpy())


def test_one_dim_input_with_a_scalar_target() -> None:
    x = np.array([0.5, -1.0, 2.0, 0.25])
    for reduction in (NONE, MEAN, SUM):
        for ls in (0.0, 0.2):
            out, stats, tw = _fused(ea.tensor(x), ea.tensor(2), None, reduction, -100, ls)
            assert tuple(out.shape) == () and tuple(stats.shape) == (1, 2)
            np.testing.assert_allclose(out.item(), ref_cross_entropy(x, np.array(2), None, reduction, -100, ls))
            np.testing.assert_allclose(
                ea.nn.cross_entropy_loss(ea.tensor(x), ea.tensor(2), None, reduction, -100, ls).item(), out.item()
            )
            gi = ea.nn._cross_entropy_loss_backward(
                ea.tensor(1.5), ea.tensor(x), ea.tensor(2), None, reduction, -100, ls, stats, tw
            )
            np.testing.assert_allclose(gi.numpy(), _np_grad(x, np.array(2), None, reduction, ls, 1.5), atol=1e-12)


def test_empty_batch_and_all_ignored() -> None:
    x = ea.zeros(0, 5)
    t = ea.zeros(0, dtype=ea.int64)
    assert np.isnan(_fused(x, t)[0].item())  # the mean of nothing, as nll_loss
    assert _fused(x, t, reduction=SUM)[0].item() == 0.0
    out, stats, tw = _fused(x, t, reduction=NONE)
    assert tuple(out.shape) == (0,) and tuple(stats.shape) == (0, 2) and tw.item() == 0.0
    gi = ea.nn._cross_entropy_loss_backward(ea.tensor(1.0), x, t, None, MEAN, -100, 0.0, stats, tw)
    assert tuple(gi.shape) == (0, 5)
    x2, _, _ = _data(4, 3)
    t2 = ea.tensor([-100, -100, -100, -100])
    for ls in (0.0, 0.5):
        out, stats, tw = _fused(ea.tensor(x2), t2, None, MEAN, -100, ls)
        assert np.isnan(out.item()) and tw.item() == 0.0
        assert _fused(ea.tensor(x2), t2, None, SUM, -100, ls)[0].item() == 0.0
        gi = ea.nn._cross_entropy_loss_backward(ea.tensor(1.0), ea.tensor(x2), t2, None, SUM, -100, ls, stats, tw)
        assert (gi.numpy() == 0).all()


def test_extreme_logits_stay_finite() -> None:
    x = ea.tensor([[1e4, -1e4, 0.0], [-500.0, 800.0, 0.0]], dtype=ea.float32)
    t = ea.tensor([1, 1])
    out, stats, tw = _fused(x, t, None, NONE, -100, 0.1)
    assert np.isfinite(out.numpy()).all()
    np.testing.assert_allclose(out.numpy()[1], 0.1 / 3 * (1300 + 800), rtol=1e-5)
    gi = ea.nn._cross_entropy_loss_backward(ea.ones(2), x, t, None, NONE, -100, 0.1, stats, tw)
    assert np.isfinite(gi.numpy()).all()


def test_bad_arguments_raise_clear_errors() -> None:
    x, t, _ = _data(4, 3)
    xt, tt = ea.tensor(x), ea.tensor(t)
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        _fused(xt, ea.tensor([0, 3, 1, 2]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        _fused(xt, ea.tensor([0, -1, 1, 2]))
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):  # the composite's message is nll_loss's
        ea.nn.cross_entropy_loss(xt, ea.tensor([0, 3, 1, 2]))
    with pytest.raises(RuntimeError, match="size mismatch"):
        _fused(xt, ea.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="input tensor should be 1D or 2D"):
        _fused(ea.zeros(2, 3, 4, dtype=ea.float64), ea.zeros(2, 4, dtype=ea.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
        _fused(xt, ea.tensor(t, dtype=ea.float64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes"):
        _fused(xt, tt, ea.ones(4, dtype=ea.float64))
    with pytest.raises(NotImplementedError, match="float32 or float64"):
        _fused(ea.tensor(x, dtype=ea.float16), tt)
    with pytest.raises(NotImplementedError):
        _fused(ea.tensor(x, dtype=ea.int64), tt)
    with pytest.raises(RuntimeError, match=r"label_smoothing must be between 0\.0 and 1\.0"):
        _fused(xt, tt, None, MEAN, -100, 1.5)
    with pytest.raises(ValueError, match="reduction"):
        _fused(xt, tt, None, 3)
    _, stats, tw = _fused(xt, tt)
    with pytest.raises(RuntimeError, match="row_stats"):
        ea.nn._cross_entropy_loss_backward(ea.tensor(1.0), xt, tt, None, MEAN, -100, 0.0, stats[:2], tw)
    with pytest.raises(RuntimeError, match="grad_output must have one element"):
        ea.nn._cross_entropy_loss_backward(ea.ones(4), xt, tt, None, MEAN, -100, 0.0, stats, tw)
    with pytest.raises(RuntimeError, match="does not match the loss"):
        ea.nn._cross_entropy_loss_backward(ea.ones(3), xt, tt, None, NONE, -100, 0.0, stats, tw)
