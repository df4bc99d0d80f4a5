"""LBFGS on the Rosenbrock function: the iterates PyTorch 2.13 produces (fixtures), convergence,
the closure contract and the single-group rule."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import pytest
from ember.optim import LBFGS


def _rosenbrock_run(steps: int, **kwargs: Any) -> tuple[list[float], list[float], dict[str, Any]]:
    x = ea.tensor([-1.5, 2.0], dtype=ea.float64, requires_grad=True)
    opt = LBFGS([x], **kwargs)

    def closure() -> Any:
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss

    losses = [float(opt.step(closure)) for _ in range(steps)]
    return x.tolist(), losses, opt.state[x]


# (kwargs, steps, final x, losses returned by each step(), func_evals, n_iter) -- from torch 2.13
FIXTURES = [
    (
        {"lr": 0.1, "max_iter": 5},
        3,
        [-1.4150083583808064, 2.0130458780729557],
        [12.5, 5.869497426825734, 5.85847173127243],
        15,
        15,
    ),
    (
        {"lr": 1, "max_iter": 4, "history_size": 3},
        3,
        [-1.1744469415394325, 1.3233499507948814],
        [12.5, 6.0280127382928885, 5.800255909536548],
        12,
        12,
    ),
    (
        {"line_search_fn": "strong_wolfe", "max_iter": 10},
        2,
        [-0.18808051962335232, 0.019626940366247132],
        [12.5, 4.546767747883813],
        24,
        18,
    ),
    (
        {"line_search_fn": "strong_wolfe", "max_iter": 100, "history_size": 10},
        1,
        [0.9999834179208867, 0.9999669023996953],
        [12.5],
        50,
        40,
    ),
]


@pytest.mark.parametrize(("kwargs", "steps", "x", "losses", "evals", "n_iter"), FIXTURES)
def test_matches_pytorch_iterates(
    kwargs: dict[str, Any], steps: int, x: list[float], losses: list[float], evals: int, n_iter: int
) -> None:
    got_x, got_losses, state = _rosenbrock_run(steps, **kwargs)
    assert got_x == pytest.approx(x, rel=1e-9, abs=1e-12)
    assert got_losses == pytest.approx(losses, rel=1e-9)
    assert state["func_evals"] == evals
    assert state["n_iter"] == n_iter


def test_strong_wolfe_converges_on_a_quadratic() -> None:
    a = ea.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=ea.float64)
    b = ea.tensor([1.0, -1.0], dtype=ea.float64)
    x = ea.zeros(2, dtype=ea.float64, requires_grad=True)
    opt = LBFGS([x], line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = 0.5 * (x @ (a @ x)) - (b * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert x.tolist() == pytest.approx([0.6, -0.8], abs=1e-6)  # solves a x = b


def test_closure_required_and_single_group() -> None:
    x = ea.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        LBFGS([{"params": [x]}, {"params": [ea.zeros(1, requires_grad=True)]}])
    opt = LBFGS([x])
    with pytest.raises(TypeError):
        opt.step()  # type: ignore[call-arg]
    bad = LBFGS([x], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        bad.step(lambda: (x * x).sum())
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        LBFGS([x], lr=-1)


def test_stops_when_gradient_is_already_small() -> None:
    x = ea.zeros(3, requires_grad=True)
    opt = LBFGS([x])
    calls = []

    def closure() -> Any:
        calls.append(1)
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert len(calls) == 1 and x.tolist() == [0.0, 0.0, 0.0]
