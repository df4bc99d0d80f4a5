"""swa_utils (the ember-optim[swa] extra): AveragedModel, SWALR and update_bn against hand
computation."""

from __future__ import annotations

import math

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import no_grad
from ember.optim import SGD
from ember.optim.swa_utils import (
    SWALR,
    AveragedModel,
    get_ema_avg_fn,
    get_ema_multi_avg_fn,
    update_bn,
)


class RunningStats(nn.Module):
    """A minimal BatchNorm1d stand-in: running mean/var buffers, ``momentum`` (None: cumulative
    average, as BatchNorm), ``reset_running_stats``; the output uses the running mean."""

    def __init__(self, n: int, momentum: float | None = 0.1) -> None:
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", ea.zeros(n, dtype=ea.float64))
        self.register_buffer("running_var", ea.ones(n, dtype=ea.float64))
        self.register_buffer("num_batches_tracked", ea.tensor(0, dtype=ea.long))

    def reset_running_stats(self) -> None:
        self.running_mean.zero_()
        self.running_var.fill_(1.0)
        self.num_batches_tracked.zero_()

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        if self.training:
            with no_grad():
                self.num_batches_tracked += 1
                f = 1.0 / int(self.num_batches_tracked) if self.momentum is None else self.momentum
                self.running_mean.mul_(1 - f).add_(x.mean(0), alpha=f)
                self.running_var.mul_(1 - f).add_(x.var(0), alpha=f)
        return x - self.running_mean


def _net() -> nn.Module:
    ea.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4).double(), RunningStats(4), nn.Linear(4, 2).double())


def _perturb(net: nn.Module, k: int) -> list[np.ndarray]:
    with no_grad():
        for i, p in enumerate(net.parameters()):
            p.add_(ea.full_like(p, 0.1 * (k + 1) * (i + 1)))
    return [p.detach().numpy().copy() for p in net.parameters()]


def test_swa_is_the_equal_average_of_the_snapshots() -> None:
    net = _net()
    swa = AveragedModel(net)
    assert int(swa.n_averaged) == 0
    snapshots = []
    for k in range(4):
        snapshots.append(_perturb(net, k))
        swa.update_parameters(net)
    assert int(swa.n_averaged) == 4
    for got, *snaps in zip(swa.module.parameters(), *snapshots, strict=True):
        np.testing.assert_allclose(got.detach().numpy(), np.mean(snaps, axis=0), rtol=1e-12)
    # the average is a deep copy: the model's parameters are untouched by it
    assert [p.detach().numpy().tolist() for p in net.parameters()] == [s.tolist() for s in snapshots[-1]]
    x = ea.randn(5, 3, dtype=ea.float64)
    swa.eval()
    assert swa(x).tolist() == swa.module(x).tolist()


def test_ema_multi_and_single_avg_fns() -> None:
    for make in (lambda: {"multi_avg_fn": get_ema_multi_avg_fn(0.9)}, lambda: {"avg_fn": get_ema_avg_fn(0.9)}):
        net = _net()
        ema = AveragedModel(net, **make())
        snaps = []
        for k in range(3):
            snaps.append(_perturb(net, k))
            ema.update_parameters(net)
        for i, got in enumerate(ema.module.parameters()):
            want = snaps[0][i]  # the first update copies, then ema = 0.9 ema + 0.1 current
            for s in snaps[1:]:
                want = 0.9 * want + 0.1 * s[i]
            np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        AveragedModel(_net(), avg_fn=get_ema_avg_fn(), multi_avg_fn=get_ema_multi_avg_fn())


def test_buffers_copied_or_averaged() -> None:
    net = _net()
    bn = net[1]
    plain = AveragedModel(net)
    with_buffers = AveragedModel(net, use_buffers=True)
    means = []
    for k in range(3):
        with no_grad():
            bn.running_mean.fill_(float(k))
        means.append(float(k))
        plain.update_parameters(net)
        with_buffers.update_parameters(net)
    assert plain.module[1].running_mean.tolist() == [2.0] * 4  # kept in sync with the model
    assert with_buffers.module[1].running_mean.tolist() == pytest.approx([np.mean(means)] * 4)


def test_update_bn_recomputes_cumulative_statistics() -> None:
    net = _net()
    bn = net[1]
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((6, 3)) for _ in range(4)]
    loader = [(ea.from_numpy(b), ea.zeros(6)) for b in batches]  # (input, target) pairs
    with no_grad():
        bn.running_mean.fill_(7.0)
    net.eval()
    update_bn(loader, net)
    assert not net.training and bn.momentum == 0.1  # mode and momentum restored
    w1 = net[0].weight.detach().numpy()
    b1 = net[0].bias.detach().numpy()
    feats = [b @ w1.T + b1 for b in batches]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([f.mean(0) for f in feats], axis=0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean([f.var(0, ddof=1) for f in feats], axis=0), rtol=1e-12)
    assert int(bn.num_batches_tracked) == 4
    update_bn([ea.randn(2, 3)], nn.Linear(3, 1))  # no BatchNorm: nothing to do


def test_swalr_anneals_to_swa_lr() -> None:
    opt = SGD([ea.zeros(1, requires_grad=True)], lr=1.0)
    sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="cos")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(30):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    for t, lr in enumerate(lrs):
        alpha = (1 - math.cos(math.pi * min(t, 5) / 5)) / 2
        assert lr == pytest.approx(1.0 * (1 - alpha) + 0.05 * alpha, rel=1e-12), t
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear', instead got exp"):
        SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
