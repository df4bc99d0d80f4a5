"""End to end: ember.optim training ember.nn models (Adam + OneCycleLR, AdamW + a cosine
schedule, LBFGS) to a target loss, deterministically under manual_seed."""

from __future__ import annotations

import ember.aten as ea
from ember import nn
from ember.optim import LBFGS, Adam, AdamW, lr_scheduler


def _data(seed: int) -> tuple[ea.Tensor, ea.Tensor]:
    ea.manual_seed(seed)
    x = ea.randn(256, 8)
    w_true = ea.randn(8, 1)
    y = (x @ w_true).sin() + 0.1 * x[:, :1] ** 2
    return x, y


def _train_adam_onecycle(seed: int, steps: int = 200) -> tuple[list[float], list[float]]:
    x, y = _data(seed)
    net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = Adam(net.parameters(), lr=1e-3)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=steps)
    losses, lrs = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss))
        lrs.append(opt.param_groups[0]["lr"])
    return losses, lrs


def test_adam_with_one_cycle_reaches_target_loss_deterministically() -> None:
    losses, lrs = _train_adam_onecycle(0)
    assert losses[0] > 0.3
    assert min(losses[-10:]) < 0.02, losses[-10:]
    assert max(lrs) <= 2e-2 + 1e-12 and lrs.index(max(lrs)) in (58, 59)  # the peak at pct_start=0.3
    again, _ = _train_adam_onecycle(0)
    assert again == losses


def _make_adamw(net: nn.Module, steps: int) -> tuple[AdamW, lr_scheduler.CosineAnnealingLR]:
    opt = AdamW(net.parameters(), lr=2e-2, weight_decay=1e-3)
    return opt, lr_scheduler.CosineAnnealingLR(opt, T_max=steps)


def _train_adamw_cosine(steps: int, resume_at: int | None) -> list[float]:
    x, y = _data(1)
    ea.manual_seed(5)
    net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    opt, sched = _make_adamw(net, steps)
    losses = []
    for i in range(steps):
        if i == resume_at:  # checkpoint, then resume into fresh objects
            net_sd, opt_sd, sched_sd = net.state_dict(), opt.state_dict(), sched.state_dict()
            net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
            net.load_state_dict(net_sd)
            opt, sched = _make_adamw(net, steps)
            opt.load_state_dict(opt_sd)
            sched.load_state_dict(sched_sd)
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss))
    assert opt.param_groups[0]["lr"] < 1e-8  # annealed to eta_min = 0
    return losses


def test_adamw_cosine_schedule_and_state_dict_resume() -> None:
    full = _train_adamw_cosine(300, None)
    assert full[-1] < 0.05, full[-1]
    assert _train_adamw_cosine(300, 120) == full  # resuming continues identically


def test_lbfgs_fits_least_squares() -> None:
    x, _ = _data(2)
    w_true = ea.tensor([[0.5], [-1.0], [2.0], [0.0], [1.5], [-0.5], [0.25], [1.0]])
    y = x @ w_true + 0.3
    net = nn.Linear(8, 1)
    opt = LBFGS(net.parameters(), lr=1, line_search_fn="strong_wolfe", max_iter=50)

    def closure() -> ea.Tensor:
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        return loss

    opt.step(closure)
    assert float(closure()) < 1e-8
    assert abs(float(net.bias) - 0.3) < 1e-4
