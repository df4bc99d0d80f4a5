"""Loss modules and softmax functions: values against NumPy float64 formulas, reductions, options,
gradients, errors."""

from __future__ import annotations

import math

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _red(v: np.ndarray, reduction: str) -> np.ndarray:
    return {"none": v, "mean": v.mean(), "sum": v.sum()}[reduction]


def _log_softmax(x: np.ndarray, axis: int = 1) -> np.ndarray:
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_softmax_family() -> None:
    x = ea.randn(3, 5, dtype=ea.float64)
    xs = _np(x)
    np.testing.assert_allclose(_np(F.softmax(x, 1)), np.exp(_log_softmax(xs)), rtol=1e-12)
    np.testing.assert_allclose(_np(F.log_softmax(x, 1)), _log_softmax(xs), rtol=1e-12)
    np.testing.assert_allclose(_np(F.softmin(x, 0)), np.exp(_log_softmax(-xs, 0)), rtol=1e-12)
    np.testing.assert_allclose(_np(nn.Softmax(dim=0)(x)), np.exp(_log_softmax(xs, 0)), rtol=1e-12)
    np.testing.assert_allclose(_np(nn.LogSoftmax(dim=1)(x)), _log_softmax(xs), rtol=1e-12)
    np.testing.assert_allclose(_np(nn.Softmin(dim=1)(x)), np.exp(_log_softmax(-xs)), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        F.softmax(x)
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)" and repr(nn.LogSoftmax(dim=-1)) == "LogSoftmax(dim=-1)"
    big = F.log_softmax(ea.tensor([[1e4, -1e4, 0.0]]), 1)
    assert bool(big.isfinite().all())
    s2 = nn.Softmax2d()(ea.randn(2, 3, 4, 4, dtype=ea.float64))
    np.testing.assert_allclose(_np(s2.sum(1)), np.ones((2, 4, 4)), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_regression_losses(reduction: str) -> None:
    a = ea.randn(4, 5, dtype=ea.float64)
    b = ea.randn(4, 5, dtype=ea.float64)
    d = _np(a) - _np(b)
    np.testing.assert_allclose(_np(nn.MSELoss(reduction=reduction)(a, b)), _red(d**2, reduction), rtol=1e-12)
    np.testing.assert_allclose(_np(nn.L1Loss(reduction=reduction)(a, b)), _red(np.abs(d), reduction), rtol=1e-12)
    beta = 0.5
    sl1 = np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)
    np.testing.assert_allclose(
        _np(nn.SmoothL1Loss(reduction=reduction, beta=beta)(a, b)), _red(sl1, reduction), rtol=1e-12
    )
    delta = 0.7
    hub = np.where(np.abs(d) < delta, 0.5 * d**2, delta * (np.abs(d) - 0.5 * delta))
    np.testing.assert_allclose(
        _np(nn.HuberLoss(reduction=reduction, delta=delta)(a, b)), _red(hub, reduction), rtol=1e-12
    )
    y = np.sign(_np(b))
    sm = np.log1p(np.exp(-y * _np(a)))
    np.testing.assert_allclose(
        _np(nn.SoftMarginLoss(reduction=reduction)(a, ea.from_numpy(y))), _red(sm, reduction), rtol=1e-12
    )


def test_regression_loss_gradcheck_and_warning() -> None:
    a = ea.randn(3, 4, dtype=ea.float64, requires_grad=True)
    b = ea.randn(3, 4, dtype=ea.float64)
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        assert gradcheck(lambda x, f=fn: f(x, b), (a,))
    with pytest.warns(UserWarning, match="Using a target size .* that is different to the input size"):
        F.mse_loss(a, b[0])
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(a, b, reduction="foo")
    with pytest.warns(
        UserWarning, match="size_average and reduce args will be deprecated, please use reduction='sum' instead."
    ):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"


def test_cross_entropy_and_nll() -> None:
    logits = ea.randn(6, 4, dtype=ea.float64)
    target = ea.tensor([0, 3, 1, 1, 2, 0])
    lp = _log_softmax(_np(logits))
    t = _np(target)
    nll = -lp[np.arange(6), t]
    np.testing.assert_allclose(_np(nn.CrossEntropyLoss()(logits, target)), nll.mean(), rtol=1e-12)
    np.testing.assert_allclose(
        _np(nn.NLLLoss(reduction="sum")(F.log_softmax(logits, 1), target)), nll.sum(), rtol=1e-12
    )
    w = ea.tensor([1.0, 2.0, 0.5, 3.0], dtype=ea.float64)
    wn = _np(w)[t]
    np.testing.assert_allclose(
        _np(nn.CrossEntropyLoss(weight=w)(logits, target)), (wn * nll).sum() / wn.sum(), rtol=1e-12
    )
    assert list(nn.CrossEntropyLoss(weight=w).state_dict()) == ["weight"]
    ign = ea.tensor([0, -100, 1, 1, -100, 0])
    keep = _np(ign) != -100
    np.testing.assert_allclose(_np(nn.CrossEntropyLoss()(logits, ign)), nll[keep].mean(), rtol=1e-12)
    eps = 0.1
    smooth = (1 - eps) * nll + eps * (-lp.mean(1))
    np.testing.assert_allclose(_np(nn.CrossEntropyLoss(label_smoothing=eps)(logits, target)), smooth.mean(), rtol=1e-12)
    probs = ea.softmax(ea.randn(6, 4, dtype=ea.float64), 1)
    np.testing.assert_allclose(_np(F.cross_entropy(logits, probs)), (-(lp * _np(probs)).sum(1)).mean(), rtol=1e-12)
    # (N, C, d) targets
    l3 = ea.randn(2, 3, 5, dtype=ea.float64)
    t3 = ea.randint(0, 3, (2, 5))
    lp3 = _log_softmax(_np(l3), 1)
    ref3 = -np.take_along_axis(lp3, _np(t3)[:, None, :], 1)[:, 0, :]
    np.testing.assert_allclose(_np(F.cross_entropy(l3, t3, reduction="none")), ref3, rtol=1e-12)
    xg = logits.clone().requires_grad_()
    assert gradcheck(lambda z: F.cross_entropy(z, target, weight=w, label_smoothing=0.2), (xg,))
    with pytest.raises(IndexError):
        F.cross_entropy(logits, ea.tensor([0, 4, 1, 1, 2, 0]))


def test_binary_cross_entropy() -> None:
    p = ea.rand(5, 3, dtype=ea.float64) * 0.9 + 0.05
    y = (ea.rand(5, 3, dtype=ea.float64) > 0.5).double()
    ps, ys = _np(p), _np(y)
    bce = -(ys * np.log(ps) + (1 - ys) * np.log(1 - ps))
    np.testing.assert_allclose(_np(nn.BCELoss()(p, y)), bce.mean(), rtol=1e-12)
    w = ea.tensor([1.0, 2.0, 3.0], dtype=ea.float64)
    np.testing.assert_allclose(_np(nn.BCELoss(weight=w, reduction="sum")(p, y)), (bce * _np(w)).sum(), rtol=1e-12)
    with pytest.raises(
        ValueError, match=r"Using a target size .* that is different to the input size .* is deprecated"
    ):
        F.binary_cross_entropy(p, y[0])
    z = ea.randn(5, 3, dtype=ea.float64) * 3
    zs = _np(z)
    sig = 1 / (1 + np.exp(-zs))
    ref = -(ys * np.log(sig) + (1 - ys) * np.log(1 - sig))
    np.testing.assert_allclose(_np(nn.BCEWithLogitsLoss()(z, y)), ref.mean(), rtol=1e-10)
    pw = ea.tensor([1.0, 3.0, 0.5], dtype=ea.float64)
    refpw = -(_np(pw) * ys * np.log(sig) + (1 - ys) * np.log(1 - sig))
    np.testing.assert_allclose(_np(nn.BCEWithLogitsLoss(pos_weight=pw, reduction="none")(z, y)), refpw, rtol=1e-10)
    assert list(nn.BCEWithLogitsLoss(pos_weight=pw).state_dict()) == ["pos_weight"]
    extreme = F.binary_cross_entropy_with_logits(ea.tensor([100.0, -100.0]), ea.tensor([0.0, 1.0]))
    assert math.isfinite(float(extreme)) and float(extreme) == pytest.approx(100.0)
    with pytest.raises(ValueError, match=r"Target size .* must be the same as input size"):
        F.binary_cross_entropy_with_logits(z, y[0])
    zg = z.clone().requires_grad_()
    assert gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, y, pos_weight=pw), (zg,))


def test_kl_div() -> None:
    inp = ea.log_softmax(ea.randn(4, 5, dtype=ea.float64), 1)
    tgt = ea.softmax(ea.randn(4, 5, dtype=ea.float64), 1)
    pointwise = _np(tgt) * (np.log(_np(tgt)) - _np(inp))
    np.testing.assert_allclose(_np(nn.KLDivLoss(reduction="batchmean")(inp, tgt)), pointwise.sum() / 4, rtol=1e-12)
    np.testing.assert_allclose(
        _np(nn.KLDivLoss(reduction="sum", log_target=True)(inp, tgt.log())), pointwise.sum(), rtol=1e-12
    )
    with pytest.warns(
        UserWarning, match="reduction: 'mean' divides the total loss by both the batch size and the support size"
    ):
        F.kl_div(inp, tgt)


def test_margin_and_embedding_losses() -> None:
    x1 = ea.randn(6, dtype=ea.float64)
    x2 = ea.randn(6, dtype=ea.float64)
    y = ea.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], dtype=ea.float64)
    a, b, ys = _np(x1), _np(x2), _np(y)
    np.testing.assert_allclose(
        _np(nn.MarginRankingLoss(margin=0.2)(x1, x2, y)), np.maximum(0, -ys * (a - b) + 0.2).mean(), rtol=1e-12
    )
    with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"):
        F.margin_ranking_loss(x1, x2, y[None])
    hinge = np.where(ys == 1, a, np.maximum(0, 1.0 - a))
    np.testing.assert_allclose(_np(nn.HingeEmbeddingLoss()(x1, y)), hinge.mean(), rtol=1e-12)
    u = ea.randn(6, 4, dtype=ea.float64)
    v = ea.randn(6, 4, dtype=ea.float64)
    us, vs = _np(u), _np(v)
    cos = (us * vs).sum(1) / np.sqrt((us**2).sum(1) * (vs**2).sum(1))
    ref = np.where(ys == 1, 1 - cos, np.maximum(0, cos - 0.1))
    np.testing.assert_allclose(_np(nn.CosineEmbeddingLoss(margin=0.1)(u, v, y)), ref.mean(), rtol=1e-10)
    n = ea.randn(6, 4, dtype=ea.float64)
    d_ap = np.linalg.norm(us - vs + 1e-6, axis=1)
    d_an = np.linalg.norm(us - _np(n) + 1e-6, axis=1)
    np.testing.assert_allclose(
        _np(nn.TripletMarginLoss(margin=0.5)(u, v, n)), np.maximum(d_ap - d_an + 0.5, 0).mean(), rtol=1e-10
    )
    with pytest.raises(
        RuntimeError, match="The anchor, positive, and negative tensors are expected to have the same number"
    ):
        F.triplet_margin_loss(u, v, n[0])
    for margin in (0.0, -1.0):  # PyTorch refuses a margin that is not positive
        with pytest.raises(ValueError, match=f"margin must be greater than 0, got {margin}"):
            F.triplet_margin_loss(u, v, n, margin=margin)


def test_poisson_gaussian_nll() -> None:
    inp = ea.randn(5, 2, dtype=ea.float64)
    tgt = ea.rand(5, 2, dtype=ea.float64) * 3
    i, t = _np(inp), _np(tgt)
    np.testing.assert_allclose(_np(nn.PoissonNLLLoss()(inp, tgt)), (np.exp(i) - t * i).mean(), rtol=1e-12)
    rate = ea.rand(5, 2, dtype=ea.float64) + 0.5
    r = _np(rate)
    np.testing.assert_allclose(
        _np(nn.PoissonNLLLoss(log_input=False)(rate, tgt)), (r - t * np.log(r + 1e-8)).mean(), rtol=1e-12
    )
    var = ea.rand(5, 2, dtype=ea.float64) + 0.1
    vv = _np(var)
    ref = 0.5 * (np.log(vv) + (i - t) ** 2 / vv)
    np.testing.assert_allclose(_np(nn.GaussianNLLLoss()(inp, tgt, var)), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(
        _np(nn.GaussianNLLLoss(full=True, reduction="sum")(inp, tgt, var)),
        (ref + 0.5 * math.log(2 * math.pi)).sum(),
        rtol=1e-12,
    )


def test_ctc_loss_trivial_alignment() -> None:
    # one time step per target symbol and a certain network: loss = -sum log p of that path
    T, C = 3, 4
    probs = np.full((T, 1, C), 1e-3)
    path = [1, 2, 3]
    for step, c in enumerate(path):
        probs[step, 0, c] = 1.0 - 3e-3
    log_probs = ea.from_numpy(np.log(probs))
    loss = nn.CTCLoss(reduction="sum")(log_probs, ea.tensor([[1, 2, 3]]), ea.tensor([3]), ea.tensor([3]))
    assert float(loss) == pytest.approx(-np.log(probs[[0, 1, 2], 0, path]).sum(), rel=1e-6)


def test_loss_reprs() -> None:
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()" and repr(nn.MSELoss()) == "MSELoss()"


def test_scaled_dot_product_attention_front_end() -> None:
    q = ea.randn(2, 3, 4, 8, dtype=ea.float64)
    k = ea.randn(2, 3, 5, 8, dtype=ea.float64)
    v = ea.randn(2, 3, 5, 6, dtype=ea.float64)
    s = np.einsum("bhle,bhse->bhls", _np(q), _np(k)) / math.sqrt(8)
    ref = np.einsum("bhls,bhsd->bhld", np.exp(_log_softmax(s, -1)), _np(v))
    np.testing.assert_allclose(_np(F.scaled_dot_product_attention(q, k, v)), ref, rtol=1e-10, atol=1e-12)
    causal = F.scaled_dot_product_attention(q, k[:, :, :4], v[:, :, :4], is_causal=True, scale=0.5)
    sc = np.einsum("bhle,bhse->bhls", _np(q), _np(k)[:, :, :4]) * 0.5
    sc = np.where(np.tril(np.ones((4, 4), dtype=bool)), sc, -np.inf)
    np.testing.assert_allclose(
        _np(causal), np.einsum("bhls,bhsd->bhld", np.exp(_log_softmax(sc, -1)), _np(v)[:, :, :4]), rtol=1e-10
    )


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction: str, weighted: bool) -> None:
    x = ea.randn(5, 4, dtype=ea.float64, requires_grad=True)
    y = (ea.rand(5, 4, dtype=ea.float64) > 0.5).to(ea.float64)
    w = ea.rand(4, dtype=ea.float64) + 0.5 if weighted else None
    xs, ys = _np(x), _np(y)
    per = -(ys * _log_sigmoid(xs) + (1 - ys) * _log_sigmoid(-xs))
    if w is not None:
        per = per * _np(w)
    per = per.sum(-1) / 4
    ref = {"none": per, "mean": per.mean(), "sum": per.sum()}[reduction]
    got = F.multilabel_soft_margin_loss(x, y, weight=w, reduction=reduction)
    np.testing.assert_allclose(_np(got), ref, rtol=1e-12)
    np.testing.assert_allclose(_np(nn.MultiLabelSoftMarginLoss(weight=w, reduction=reduction)(x, y)), ref, rtol=1e-12)
    assert gradcheck(lambda a: F.multilabel_soft_margin_loss(a, y, weight=w, reduction=reduction), (x,))
    # a 1-d input is one sample: the mean over its classes
    np.testing.assert_allclose(
        _np(F.multilabel_soft_margin_loss(x[0], y[0], reduction="none")),
        -(ys[0] * _log_sigmoid(xs[0]) + (1 - ys[0]) * _log_sigmoid(-xs[0])).mean(),
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.multilabel_soft_margin_loss(x, y, reduction="bad")


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_with_distance_loss(swap: bool, reduction: str) -> None:
    a, p, n = (ea.randn(6, 3, dtype=ea.float64, requires_grad=True) for _ in range(3))
    an, pn, nn_ = _np(a), _np(p), _np(n)

    def dist(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.linalg.norm(u - v + 1e-6, axis=-1)

    d_neg = dist(an, nn_)
    if swap:
        d_neg = np.minimum(d_neg, dist(pn, nn_))
    per = np.maximum(dist(an, pn) - d_neg + 0.7, 0)
    ref = {"none": per, "mean": per.mean(), "sum": per.sum()}[reduction]
    got = F.triplet_margin_with_distance_loss(a, p, n, margin=0.7, swap=swap, reduction=reduction)
    np.testing.assert_allclose(_np(got), ref, rtol=1e-10)
    mod = nn.TripletMarginWithDistanceLoss(margin=0.7, swap=swap, reduction=reduction)
    np.testing.assert_allclose(_np(mod(a, p, n)), ref, rtol=1e-10)
    # a custom distance (L1); the default equals triplet_margin_loss with p=2
    l1 = F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1))
    ref_l1 = np.maximum(np.abs(an - pn).sum(-1) - np.abs(an - nn_).sum(-1) + 1.0, 0).mean()
    np.testing.assert_allclose(_np(l1), ref_l1, rtol=1e-10)
    np.testing.assert_allclose(
        _np(F.triplet_margin_with_distance_loss(a, p, n, swap=swap)),
        _np(F.triplet_margin_loss(a, p, n, swap=swap)),
        rtol=1e-12,
    )
    assert gradcheck(
        lambda x, y, z: F.triplet_margin_with_distance_loss(x, y, z, swap=swap, reduction=reduction), (a, p, n)
    )


def test_triplet_margin_with_distance_loss_errors() -> None:
    a = ea.randn(4, 3)
    with pytest.raises(ValueError, match=r"margin must be greater than 0, got 0\.0"):
        F.triplet_margin_with_distance_loss(a, a, a, margin=0.0)
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D inputs"):
        F.triplet_margin_with_distance_loss(a, a, a[0])
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.triplet_margin_with_distance_loss(a, a, a, reduction="bad")
