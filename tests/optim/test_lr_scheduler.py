"""Each scheduler's learning rate over 30+ steps against its closed form written out here,
plus the stepping-order warning, state_dict round trips and construction errors."""

from __future__ import annotations

import math
import pickle
import re
import warnings
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import pytest
from ember.optim import SGD, Adam
from ember.optim import lr_scheduler as L

N = 35


def _opt(lr: float = 1.0, groups: int = 1, **kw: Any) -> SGD:
    params = [{"params": [ea.zeros(1, requires_grad=True)], "lr": lr * (i + 1)} for i in range(groups)]
    return SGD(params, lr=lr, **kw)


def _run(opt: Any, sched: Any, n: int = N) -> list[list[float]]:
    """lr of every group at epoch 0 (after construction) and after each of n steps."""
    out = [[g["lr"] for g in opt.param_groups]]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append([g["lr"] for g in opt.param_groups])
    return out


def _check(got: list[list[float]], closed: Callable[[int, float], float], base_lrs: list[float]) -> None:
    for epoch, lrs in enumerate(got):
        want = [closed(epoch, b) for b in base_lrs]
        assert lrs == pytest.approx(want, rel=1e-12, abs=1e-15), f"epoch {epoch}"


def _cos(t: float, period: float) -> float:
    return (1 + math.cos(math.pi * t / period)) / 2


CLOSED_FORMS: list[tuple[str, Callable[[Any], Any], Callable[[int, float], float]]] = [
    ("LambdaLR", lambda o: L.LambdaLR(o, lambda e: 1 / (e + 1)), lambda e, b: b / (e + 1)),
    ("MultiplicativeLR", lambda o: L.MultiplicativeLR(o, lambda e: 0.9), lambda e, b: b * 0.9**e),
    ("StepLR", lambda o: L.StepLR(o, step_size=7, gamma=0.5), lambda e, b: b * 0.5 ** (e // 7)),
    (
        "MultiStepLR",
        lambda o: L.MultiStepLR(o, milestones=[3, 10, 10, 20], gamma=0.5),
        lambda e, b: b * 0.5 ** ((e >= 3) + 2 * (e >= 10) + (e >= 20)),
    ),
    ("ConstantLR", lambda o: L.ConstantLR(o, factor=0.25, total_iters=6), lambda e, b: b * (0.25 if e < 6 else 1.0)),
    (
        "LinearLR",
        lambda o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10),
        lambda e, b: b * (0.2 + 0.7 * min(e, 10) / 10),
    ),
    ("ExponentialLR", lambda o: L.ExponentialLR(o, gamma=0.9), lambda e, b: b * 0.9**e),
    (
        "PolynomialLR",
        lambda o: L.PolynomialLR(o, total_iters=12, power=2.0),
        lambda e, b: b * (1 - min(e, 12) / 12) ** 2,
    ),
    (
        # cosine between b and eta_min with period 2*T_max (it rises again after T_max)
        "CosineAnnealingLR",
        lambda o: L.CosineAnnealingLR(o, T_max=8, eta_min=0.05),
        lambda e, b: 0.05 + (b - 0.05) * _cos(e, 8),
    ),
]


@pytest.mark.parametrize(("name", "make", "closed"), CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_closed_form(name: str, make: Callable[[Any], Any], closed: Callable[[int, float], float]) -> None:
    opt = _opt(groups=2)
    sched = make(opt)
    got = _run(opt, sched)
    _check(got, closed, [1.0, 2.0])
    assert sched.get_last_lr() == got[-1]
    assert sched.last_epoch == N


# LambdaLR/MultiplicativeLR have no closed form: step(epoch) recomputes with get_lr (as in PyTorch)
WITH_CLOSED_FORM = [c for c in CLOSED_FORMS if c[0] not in ("LambdaLR", "MultiplicativeLR")]


@pytest.mark.parametrize(("name", "make", "closed"), WITH_CLOSED_FORM, ids=[c[0] for c in WITH_CLOSED_FORM])
def test_step_with_epoch_uses_closed_form(name: str, make: Callable[[Any], Any], closed: Any) -> None:
    opt = _opt()
    sched = make(opt)
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        for epoch in (13, 4, 21):
            opt.step()
            sched.step(epoch)
            assert opt.param_groups[0]["lr"] == pytest.approx(closed(epoch, 1.0), rel=1e-12)


def test_cosine_annealing_warm_restarts() -> None:
    opt = _opt()
    sched = L.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.01)
    got = _run(opt, sched)

    def closed(e: int, b: float) -> float:
        # cycles of length 5, 10, 20, ... starting at epochs 0, 5, 15, 35
        start, length = 0, 5
        while e >= start + length:
            start, length = start + length, length * 2
        return 0.01 + (b - 0.01) * _cos(e - start, length)

    _check(got, closed, [1.0])
    opt.step()
    sched.step(12.5)  # a fractional epoch: inside the second cycle
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01 + 0.99 * _cos(7.5, 10), rel=1e-12)


@pytest.mark.parametrize(
    ("mode", "kwargs", "scale"),
    [
        ("triangular", {}, lambda cycle, it: 1.0),
        ("triangular2", {}, lambda cycle, it: 1 / 2 ** (cycle - 1)),
        ("exp_range", {"gamma": 0.95}, lambda cycle, it: 0.95**it),
    ],
)
def test_cyclic_lr(mode: str, kwargs: dict[str, Any], scale: Callable[[int, int], float]) -> None:
    opt = _opt(momentum=0.9)
    sched = L.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=4, step_size_down=6, mode=mode, **kwargs)
    momenta = [opt.param_groups[0]["momentum"]]
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(N):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
    for it in range(N + 1):
        cycle = it // 10 + 1
        pos = it % 10
        height = pos / 4 if pos <= 4 else (10 - pos) / 6  # up over 4 steps, down over 6
        s = scale(cycle, it)
        assert lrs[it] == pytest.approx(0.1 + 0.9 * height * s, rel=1e-12), it
        assert momenta[it] == pytest.approx(0.9 - 0.1 * height * s, rel=1e-12), it


def test_cyclic_lr_with_adam_cycles_beta1() -> None:
    opt = Adam([ea.zeros(1, requires_grad=True)], lr=1.0)
    sched = L.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["betas"] == pytest.approx((0.85, 0.999))
    assert opt.param_groups[0]["lr"] == pytest.approx(0.55)


@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize("anneal", ["cos", "linear"])
def test_one_cycle_lr(three_phase: bool, anneal: str) -> None:
    total = 40
    opt = _opt(momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=total, three_phase=three_phase, anneal_strategy=anneal)
    got = _run(opt, sched, n=total - 1)
    momenta = []

    def ann(start: float, end: float, pct: float) -> float:
        if anneal == "cos":
            return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2
        return start + (end - start) * pct

    lo, hi, final = 1.0 / 25, 1.0, 1.0 / 25 / 1e4
    for step, (lr,) in enumerate(got):
        if three_phase:
            if step <= 11:  # 0.3 * 40 - 1
                want, mom = ann(lo, hi, step / 11), ann(0.95, 0.85, step / 11)
            elif step <= 22:
                want, mom = ann(hi, lo, (step - 11) / 11), ann(0.85, 0.95, (step - 11) / 11)
            else:
                want, mom = ann(lo, final, (step - 22) / 17), 0.95
        elif step <= 11:
            want, mom = ann(lo, hi, step / 11), ann(0.95, 0.85, step / 11)
        else:
            want, mom = ann(hi, final, (step - 11) / 28), ann(0.85, 0.95, (step - 11) / 28)
        assert lr == pytest.approx(want, rel=1e-12, abs=1e-15), step
        momenta.append(mom)
    assert opt.param_groups[0]["momentum"] == pytest.approx(momenta[-1])
    opt.step()
    sched.step()  # last_epoch == total_steps is still accepted, as in PyTorch
    with pytest.raises(
        ValueError, match=re.escape("Tried to step 41 times. The specified number of total steps is 40")
    ):
        sched.step()


def test_one_cycle_epochs_and_errors() -> None:
    opt = _opt(momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=0.5, epochs=4, steps_per_epoch=10)
    assert sched.total_steps == 40
    with pytest.raises(
        ValueError, match=re.escape("You must define either total_steps OR (epochs AND steps_per_epoch)")
    ):
        L.OneCycleLR(_opt(momentum=0.9), max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        L.OneCycleLR(_opt(momentum=0.9), max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        L.OneCycleLR(_opt(momentum=0.9), max_lr=1.0, total_steps=5, anneal_strategy="exp")
    opt_nm = SGD([ea.zeros(1, requires_grad=True)], lr=0.1)
    opt_nm.defaults.pop("momentum")
    with pytest.raises(
        ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
    ):
        L.OneCycleLR(opt_nm, max_lr=1.0, total_steps=5)


def test_reduce_lr_on_plateau() -> None:
    opt = _opt(groups=2)
    sched = L.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5, min_lr=[0.1, 0.4], threshold=0.01)
    metrics = [5, 4, 4, 4, 4, 3.99, 3.99, 3.99, 3.99, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
    lrs = []
    for m in metrics:
        sched.step(m)
        lrs.append([g["lr"] for g in opt.param_groups])
    # by hand: the 3rd bad epoch after the best (patience 2) halves lr, the epoch after is cooldown
    # (its badness ignored); 3.99 is not a 1% improvement over 4; min_lr stops the halving
    want_first = [1.0] * 4 + [0.5] * 4 + [0.25] * 4 + [0.125] * 4 + [0.1] * 15
    assert [x[0] for x in lrs] == pytest.approx(want_first)
    assert [x[1] for x in lrs] == pytest.approx([min(2.0, max(0.4, 2 * w)) for w in want_first])
    assert sched.get_last_lr() == lrs[-1]


def test_reduce_lr_on_plateau_max_mode_and_errors() -> None:
    opt = _opt()
    sched = L.ReduceLROnPlateau(opt, mode="max", patience=0, threshold_mode="abs", threshold=0.5)
    for m in (1.0, 1.4, 2.0):
        sched.step(m)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)  # 1.4 is not 0.5 above 1.0
    with pytest.raises(ValueError, match=re.escape("Factor should be < 1.0.")):
        L.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        L.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        L.ReduceLROnPlateau(opt, min_lr=[0.1, 0.2])


def test_sequential_lr() -> None:
    opt = _opt()
    sched = L.SequentialLR(
        opt,
        [L.ConstantLR(opt, factor=0.1, total_iters=3), L.ExponentialLR(opt, gamma=0.9), L.StepLR(opt, 4, 0.5)],
        milestones=[5, 15],
    )

    def closed(e: int, b: float) -> float:
        if e < 5:
            return b * (0.1 if e < 3 else 1.0)
        if e < 15:
            return b * 0.9 ** (e - 5)
        return b * 0.5 ** ((e - 15) // 4)

    _check(_run(opt, sched), closed, [1.0])


def test_chained_scheduler() -> None:
    opt = _opt()
    sched = L.ChainedScheduler([L.ConstantLR(opt, factor=0.1, total_iters=4), L.ExponentialLR(opt, gamma=0.9)])
    _check(_run(opt, sched), lambda e, b: b * (0.1 if e < 4 else 1.0) * 0.9**e, [1.0])


def test_composite_errors() -> None:
    opt, other = _opt(), _opt()
    with pytest.raises(
        ValueError, match=re.escape("SequentialLR expects at least one scheduler, but got no scheduler.")
    ):
        L.SequentialLR(opt, [], milestones=[])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more than the number"):
        L.SequentialLR(opt, [L.ExponentialLR(opt, 0.9)], milestones=[3])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        L.ChainedScheduler([L.ExponentialLR(opt, 0.9), L.ExponentialLR(other, 0.9)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau` scheduler"):
        L.ChainedScheduler([L.ReduceLROnPlateau(opt)])


# ---- protocol ---------------------------------------------------------------------------------
def test_warns_when_stepped_before_optimizer() -> None:
    opt = _opt()
    sched = L.StepLR(opt, 3)
    with pytest.warns(UserWarning, match=re.escape("Detected call of `lr_scheduler.step()` before `optimizer.step()`")):
        sched.step()
    opt2 = _opt()
    sched2 = L.StepLR(opt2, 3)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_warns_when_optimizer_step_overridden() -> None:
    opt = _opt()
    sched = L.StepLR(opt, 3)
    opt.step = lambda closure=None: None  # type: ignore[method-assign]
    with pytest.warns(UserWarning, match=re.escape("Seems like `optimizer.step()` has been overridden")):
        sched.step()


def test_get_lr_outside_step_warns() -> None:
    sched = L.ExponentialLR(_opt(), 0.5)
    with pytest.warns(UserWarning, match=re.escape("please use `get_last_lr()`")):
        sched.get_lr()


def test_initial_lr_and_resume_errors() -> None:
    opt = _opt(lr=0.3)
    L.StepLR(opt, 2)
    assert opt.param_groups[0]["initial_lr"] == 0.3
    with pytest.raises(KeyError, match=re.escape("param 'initial_lr' is not specified in param_groups[0]")):
        L.StepLR(_opt(), 2, last_epoch=3)
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        L.StepLR(3, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        L.LambdaLR(_opt(groups=2), [lambda e: 1.0])
    with pytest.raises(ValueError, match=re.escape("Constant multiplicative factor expected to be between 0 and 1.")):
        L.ConstantLR(_opt(), factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        L.LinearLR(_opt(), start_factor=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        L.CosineAnnealingWarmRestarts(_opt(), T_0=0)


class _Scale:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, epoch: int) -> float:
        return self.factor**epoch


@pytest.mark.parametrize(
    "make",
    [
        lambda o: L.StepLR(o, 4, 0.5),
        lambda o: L.MultiStepLR(o, [2, 9], 0.3),
        lambda o: L.CosineAnnealingLR(o, 6),
        lambda o: L.CosineAnnealingWarmRestarts(o, 3, 2),
        lambda o: L.CyclicLR(o, 0.1, 1.0, 3),
        lambda o: L.OneCycleLR(o, 1.0, total_steps=30),
        lambda o: L.LambdaLR(o, _Scale(0.9)),
        lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.8)], [4]),
    ],
)
def test_state_dict_round_trip(make: Callable[[Any], Any]) -> None:
    opt = _opt(momentum=0.9)
    sched = make(opt)
    full = _run(opt, sched, n=20)
    opt_a = _opt(momentum=0.9)
    sched_a = make(opt_a)
    _run(opt_a, sched_a, n=8)
    sd = pickle.loads(pickle.dumps((opt_a.state_dict(), sched_a.state_dict())))
    assert "optimizer" not in sd[1]
    opt_b = _opt(momentum=0.9)
    sched_b = make(opt_b)
    opt_b.load_state_dict(sd[0])
    sched_b.load_state_dict(sd[1])
    rest = _run(opt_b, sched_b, n=12)
    assert [x[0] for x in rest] == pytest.approx([x[0] for x in full[8:]], rel=1e-12)


def test_lambda_state_dict_keeps_callable_objects_only() -> None:
    opt = _opt(groups=2)
    sched = L.LambdaLR(opt, [lambda e: 1.0, _Scale(0.5)])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.5}]
    sd["lr_lambdas"][1] = {"factor": 0.25}
    sched.load_state_dict(sd)
    assert sched.lr_lambdas[1].factor == 0.25
