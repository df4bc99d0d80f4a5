"""Softmax, normalization, loss, embedding and dropout kernels beyond the OpInfo table:
numerical stability at extreme inputs, backward operators against finite differences of
their forwards (float64), the gradient rules that are not derivatives (embedding's
padding_idx / scale_grad_by_freq), running-statistics updates and randomised dropout."""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import numpy as np
import pytest


def arr(*shape: int, seed: int = 0, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def t(a: Any, dtype: Any = ea.float64) -> Any:
    return ea.tensor(np.asarray(a), dtype=dtype)


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


def close(got: Any, expected: np.ndarray, tol: float = 1e-7) -> None:
    np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol)


# ---- numerical stability -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16])
def test_softmax_of_huge_inputs_is_finite(dtype: Any) -> None:
    x = t([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, -1e4]], dtype)
    for dim in (0, 1):
        s = ea.softmax(x, dim).float().numpy()
        ls = ea.log_softmax(x, dim).float().numpy()
        assert np.isfinite(s).all() and np.isfinite(ls).all()
        np.testing.assert_allclose(s.sum(axis=dim), 1.0, rtol=1e-2)
    np.testing.assert_allclose(ea.softmax(x, 1).float().numpy()[0], [0.5, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(ea.log_softmax(x, 1).float().numpy()[1], [-math.log(4)] * 4, rtol=1e-2)
    assert np.isfinite(ea.logsumexp(x, 1).float().numpy()).all()


def test_cross_entropy_of_confident_logits_is_finite() -> None:
    logits = t([[1e4, -1e4, 0.0], [-500.0, 800.0, 0.0]], ea.float32)
    right = ea.nn.cross_entropy_loss(logits, t([0, 1], ea.int64), reduction=0)
    wrong = ea.nn.cross_entropy_loss(logits, t([1, 0], ea.int64), reduction=0)
    np.testing.assert_allclose(right.numpy(), [0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(wrong.numpy(), [2e4, 1300.0], rtol=1e-6)
    probs = t([[0.9, 0.05, 0.05], [0.0, 1.0, 0.0]], ea.float32)
    soft = ea.nn.cross_entropy_loss(logits, probs, reduction=0, label_smoothing=0.1)
    assert np.isfinite(soft.numpy()).all()


def test_bce_with_logits_at_plus_minus_100_is_finite() -> None:
    x = t([100.0, -100.0, 100.0, -100.0], ea.float32)
    y = t([1.0, 0.0, 0.0, 1.0], ea.float32)
    out = ea.binary_cross_entropy_with_logits(x, y, reduction=0)
    np.testing.assert_allclose(out.numpy(), [0.0, 0.0, 100.0, 100.0], atol=1e-6)
    pw = ea.binary_cross_entropy_with_logits(x, y, pos_weight=t([3.0], ea.float32), reduction=0)
    np.testing.assert_allclose(pw.numpy(), [0.0, 0.0, 100.0, 300.0], atol=1e-5)


def test_nll_loss_target_out_of_range_names_the_value() -> None:
    x = ea.log_softmax(t(arr(3, 4), ea.float32), 1)
    with pytest.raises(IndexError, match=r"Target 9 is out of bounds"):
        ea.nn.nll_loss(x, t([0, 9, 1], ea.int64))
    with pytest.raises(IndexError, match=r"Target 4 is out of bounds"):
        ea.nn.cross_entropy_loss(x, t([4, 0, 1], ea.int64))
    # ignore_index is skipped before the range check
    ea.nn.nll_loss(x, t([0, -100, 1], ea.int64))


# ---- backward operators against finite differences (float64) ---------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_backward_matches_finite_differences(dim: int) -> None:
    x, go = arr(3, 5), arr(3, 5, seed=1)
    for fwd, back in ((ea._softmax, ea._softmax_backward_data), (ea._log_softmax, ea._log_softmax_backward_data)):
        out = fwd(t(x), dim, False)
        gi = back(t(go), out, dim, ea.float64)
        close(gi, numeric_grad(lambda a, fwd=fwd: fwd(t(a), dim, False).numpy(), x, go))


def test_layer_norm_backward_matches_finite_differences() -> None:
    x, w, b, go = arr(3, 4), arr(4, seed=2), arr(4, seed=3), arr(3, 4, seed=1)
    _out, mean, rstd = ea.native_layer_norm(t(x), [4], t(w), t(b), 1e-5)
    gx, gw, gb = ea.native_layer_norm_backward(t(go), t(x), [4], mean, rstd, t(w), t(b), [True, True, True])
    close(gx, numeric_grad(lambda a: ea.native_layer_norm(t(a), [4], t(w), t(b), 1e-5)[0].numpy(), x, go))
    close(gw, numeric_grad(lambda a: ea.native_layer_norm(t(x), [4], t(a), t(b), 1e-5)[0].numpy(), w, go))
    close(gb, go.sum(0))


def test_batch_norm_backward_matches_finite_differences() -> None:
    x, w, b, go = arr(4, 3, 2), arr(3, seed=2), arr(3, seed=3), arr(4, 3, 2, seed=1)

    def fwd(a: np.ndarray, wa: np.ndarray) -> Any:
        return ea.native_batch_norm(t(a), t(wa), t(b), None, None, True, 0.1, 1e-5)

    _out, mean, invstd = fwd(x, w)
    gx, gw, gb = ea.native_batch_norm_backward(
        t(go), t(x), t(w), None, None, mean, invstd, True, 1e-5, [True, True, True]
    )
    close(gx, numeric_grad(lambda a: fwd(a, w)[0].numpy(), x, go))
    close(gw, numeric_grad(lambda a: fwd(x, a)[0].numpy(), w, go))
    close(gb, go.sum((0, 2)))


def test_group_norm_backward_matches_finite_differences() -> None:
    x, w, b, go = arr(2, 4, 3), arr(4, seed=2), arr(4, seed=3), arr(2, 4, 3, seed=1)

    def fwd(a: np.ndarray, wa: np.ndarray) -> Any:
        return ea.native_group_norm(t(a), t(wa), t(b), 2, 4, 3, 2, 1e-5)

    _out, mean, rstd = fwd(x, w)
    gx, gw, gb = ea.native_group_norm_backward(t(go), t(x), mean, rstd, t(w), 2, 4, 3, 2, [True, True, True])
    close(gx, numeric_grad(lambda a: fwd(a, w)[0].numpy(), x, go))
    close(gw, numeric_grad(lambda a: fwd(x, a)[0].numpy(), w, go))
    close(gb, go.sum((0, 2)))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_backward_matches_finite_differences(reduction: int) -> None:
    x = arr(4, 3)
    target = t([2, 0, -100, 1], ea.int64)
    weight = t([0.5, 2.0, 1.0])
    out, total = ea.nn.nll_loss_forward(t(x), target, weight, reduction, -100)
    go = arr(*out.shape, seed=1) if reduction == 0 else np.array(0.7)
    gi = ea.nn.nll_loss_backward(t(go), t(x), target, weight, reduction, -100, total)
    close(gi, numeric_grad(lambda a: ea.nn.nll_loss_forward(t(a), target, weight, reduction, -100)[0].numpy(), x, go))


# pointwise losses: (forward, backward(grad_output, input, target, reduction)), target kept constant
_POINTWISE_LOSSES = {
    "mse": (lambda x, y, r: ea.nn.mse_loss(x, y, r), lambda g, x, y, r: ea.nn.mse_loss_backward(g, x, y, r)),
    "smooth_l1": (
        lambda x, y, r: ea.nn.smooth_l1_loss(x, y, r, 0.7),
        lambda g, x, y, r: ea.nn.smooth_l1_loss_backward(g, x, y, r, 0.7),
    ),
    "huber": (
        lambda x, y, r: ea.nn.huber_loss(x, y, r, 0.6),
        lambda g, x, y, r: ea.nn.huber_loss_backward(g, x, y, r, 0.6),
    ),
    "soft_margin": (
        lambda x, y, r: ea.nn.soft_margin_loss(x, y.sign(), r),
        lambda g, x, y, r: ea.nn.soft_margin_loss_backward(g, x, y.sign(), r),
    ),
}


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", list(_POINTWISE_LOSSES))
def test_pointwise_loss_backward_matches_finite_differences(name: str, reduction: int) -> None:
    fwd, back = _POINTWISE_LOSSES[name]
    x, y = arr(3, 4), arr(3, 4, seed=5)
    go = arr(3, 4, seed=1) if reduction == 0 else np.array(0.8)
    gi = back(t(go), t(x), t(y), reduction)
    close(gi, numeric_grad(lambda a: fwd(t(a), t(y), reduction).numpy(), x, go))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_binary_cross_entropy_backward_matches_finite_differences(reduction: int) -> None:
    p, y, w = arr(3, 4, low=0.1, high=0.9), arr(3, 4, seed=5, low=0.0, high=1.0), arr(4, seed=6, low=0.5, high=2)
    go = arr(3, 4, seed=1) if reduction == 0 else np.array(0.8)
    gi = ea.nn.binary_cross_entropy_backward(t(go), t(p), t(y), t(w), reduction)
    close(gi, numeric_grad(lambda a: ea.nn.binary_cross_entropy(t(a), t(y), t(w), reduction).numpy(), p, go))


def test_nll_loss2d_backward_matches_finite_differences() -> None:
    x = arr(2, 3, 2, 2)
    target = t([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], ea.int64)
    _out, total = ea.nn.nll_loss2d_forward(t(x), target, None, 1, -100)
    gi = ea.nn.nll_loss2d_backward(t(np.array(1.3)), t(x), target, None, 1, -100, total)
    f = lambda a: ea.nn.nll_loss2d_forward(t(a), target, None, 1, -100)[0].numpy()  # noqa: E731
    close(gi, numeric_grad(f, x, np.array(1.3)))


def test_rms_norm_backward_matches_finite_differences() -> None:
    x, w, go = arr(3, 4), arr(4, seed=2), arr(3, 4, seed=1)
    _out, rstd = ea._fused_rms_norm(t(x), [4], t(w), 1e-6)
    gx, gw = ea._fused_rms_norm_backward(t(go), t(x), [4], rstd, t(w), [True, True])
    close(gx, numeric_grad(lambda a: ea._fused_rms_norm(t(a), [4], t(w), 1e-6)[0].numpy(), x, go))
    close(gw, numeric_grad(lambda a: ea._fused_rms_norm(t(x), [4], t(a), 1e-6)[0].numpy(), w, go))


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_backward_matches_finite_differences(zero_infinity: bool) -> None:
    # as PyTorch's kernel, _ctc_loss_backward is the gradient w.r.t. the logits z of
    # log_probs = log_softmax(z) (frames past a sample's input length get none)
    z = arr(5, 2, 4)
    targets = t([[1, 2, 2], [3, 1, 0]], ea.int64)
    il, tl = ([5, 1] if zero_infinity else [5, 4]), [3, 2]  # with zero_infinity sample 1 is impossible

    def loss(a: np.ndarray) -> Any:
        return ea._ctc_loss(ea.log_softmax(t(a), 2), targets, il, tl, 0, zero_infinity)

    nll, alpha = loss(z)
    assert np.isinf(nll.numpy()[1]) == zero_infinity  # (_ctc_loss leaves the infinity; ctc_loss zeroes it)
    go = np.array([0.7, 1.1])
    gi = ea._ctc_loss_backward(t(go), ea.log_softmax(t(z), 2), targets, il, tl, nll, alpha, 0, zero_infinity)
    close(gi, numeric_grad(lambda a: np.where(np.isinf(v := loss(a)[0].numpy()), 0.0, v), z, go), 1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_backward_matches_finite_differences(mode: int) -> None:
    w = arr(6, 3)
    idx, off = t([1, 2, 4, 5, 4, 3], ea.int64), t([0, 2, 2, 5], ea.int64)
    out, offset2bag, bag_size, max_idx = ea._embedding_bag(t(w), idx, off, False, mode)
    go = arr(*out.shape, seed=1)
    gw = ea._embedding_bag_dense_backward(t(go), idx, offset2bag, bag_size, max_idx, 6, False, mode, None)
    close(gw, numeric_grad(lambda a: ea._embedding_bag(t(a), idx, off, False, mode)[0].numpy(), w, go))


def test_embedding_bag_per_sample_weights_backward_matches_finite_differences() -> None:
    w, psw = arr(6, 3), arr(6, seed=3)
    idx, off = t([1, 2, 4, 5, 4, 3], ea.int64), t([0, 2, 2, 5], ea.int64)
    out, offset2bag, _, _ = ea._embedding_bag(t(w), idx, off, False, 0, False, t(psw))
    go = arr(*out.shape, seed=1)
    g = ea._embedding_bag_per_sample_weights_backward(t(go), t(w), idx, off, offset2bag, 0)
    f = lambda a: ea._embedding_bag(t(w), idx, off, False, 0, False, t(a))[0].numpy()  # noqa: E731
    close(g, numeric_grad(f, psw, go))


# ---- embedding's gradient rules ---------------------------------------------------------------------


def test_embedding_dense_backward_sums_repeats_skips_padding_and_scales_by_frequency() -> None:
    go = arr(5, 3)
    idx = t([1, 4, 1, 1, 2], ea.int64)
    g = ea.embedding_dense_backward(t(go), idx, 6, -1, False).numpy()
    np.testing.assert_allclose(g[1], go[0] + go[2] + go[3])
    np.testing.assert_allclose(g[[0, 3, 5]], 0.0)
    g = ea.embedding_dense_backward(t(go), idx, 6, 1, False).numpy()
    np.testing.assert_allclose(g[1], 0.0)  # padding_idx gets no gradient
    np.testing.assert_allclose(g[4], go[1])
    g = ea.embedding_dense_backward(t(go), idx, 6, -1, True).numpy()
    np.testing.assert_allclose(g[1], (go[0] + go[2] + go[3]) / 3)
    np.testing.assert_allclose(g[2], go[4])
    # int32 indices and a 2-d index tensor give the same result
    g2 = ea.embedding_dense_backward(t(go.reshape(1, 5, 3)), idx.reshape(1, 5).to(ea.int32), 6, -1, True)
    np.testing.assert_allclose(g2.numpy(), g)


# ---- normalization state and dropout -------------------------------------------------------------------


def test_batch_norm_training_updates_running_stats_with_unbiased_variance() -> None:
    x = arr(5, 3, 4)
    rm, rv = t(np.zeros(3)), t(np.ones(3))
    ea.native_batch_norm(t(x), None, None, rm, rv, True, 0.25, 1e-5)
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2), ddof=1)
    close(rm, 0.25 * mean)
    close(rv, 0.75 + 0.25 * var)
    out = ea.native_batch_norm(t(x), None, None, rm, rv, False, 0.25, 1e-5)[0]
    close(out, (x - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5))


def test_native_dropout_mask_scale_and_backward() -> None:
    x = t(arr(200, 50) + 3.0, ea.float32)
    ea.manual_seed(7)
    out, mask = ea.native_dropout(x, 0.3, True)
    assert mask.dtype == ea.bool
    m = mask.numpy()
    assert abs(m.mean() - 0.7) < 0.02
    np.testing.assert_allclose(out.numpy(), np.where(m, x.numpy() / 0.7, 0.0), rtol=1e-6)
    go = t(arr(200, 50, seed=3), ea.float32)
    gi = ea.native_dropout_backward(go, mask, 1 / 0.7)
    np.testing.assert_allclose(gi.numpy(), np.where(m, go.numpy() / 0.7, 0.0), rtol=1e-6)
    ea.manual_seed(7)
    _out2, mask2 = ea.native_dropout(x, 0.3, True)
    assert (mask2.numpy() == m).all()  # all randomness comes from the generator


def test_feature_dropout_drops_whole_channels() -> None:
    x = t(np.ones((8, 16, 5)), ea.float32)
    ea.manual_seed(0)
    out = ea.feature_dropout(x, 0.5, True).numpy()
    per_channel = out.reshape(8 * 16, 5)
    assert all(len(set(row.tolist())) == 1 for row in per_channel)
    assert set(np.unique(per_channel).tolist()) == {0.0, 2.0}


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_zero_mean_unit_variance(feature: bool) -> None:
    x = t(np.random.default_rng(0).standard_normal((400, 250, 4)), ea.float32)
    ea.manual_seed(1)
    out = (ea.feature_alpha_dropout if feature else ea.alpha_dropout)(x, 0.2, True).numpy()
    assert abs(out.mean()) < 0.05
    assert abs(out.std() - 1.0) < 0.05
    assert not np.allclose(out, x.numpy())
