"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky).

Update, step ``t`` starting at 1 (``eta`` starts at lr, ``mu`` at 1, ``ax`` at 0)::

    g = -g if maximize;  g = g + wd * p  if wd != 0
    p = p * (1 - lambd * eta);  p = p - eta * g
    ax = ax + (p - ax) * mu   if mu != 1,  else ax = p
    eta = lr / (1 + lambd * lr * t) ** alpha;   mu = 1 / max(1, t - t0)

``eta`` and ``mu`` are 0-dim tensors of the state (float32 unless the default dtype is float64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from . import _functional as F
from .optimizer import (
    _COMMON_FLAGS,
    Optimizer,
    ParamsT,
    _check_non_negative,
    _eval_closure,
    _gather_group,
    _get_scalar_dtype,
    _get_value,
    _restore_group_defaults,
    _use_grad_for_differentiable,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """Averaged SGD; the running average of the parameters is ``state[p]["ax"]``.

    Example:
        >>> opt = ASGD(params, lr=1e-2, t0=100)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(self, _COMMON_FLAGS, ("step", "eta", "mu"))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:

            def init_state(p: Tensor, state: dict[str, Any], lr: Any = group["lr"]) -> None:
                # ASGD's counters live on the parameter's device, in the default scalar dtype
                dtype = _get_scalar_dtype()
                state["step"] = ea.zeros((), dtype=dtype, device=p.device)
                state["eta"] = ea.tensor(float(fu.to_scalar(lr)), dtype=dtype, device=p.device)
                state["mu"] = ea.ones((), dtype=dtype, device=p.device)
                state["ax"] = ea.zeros_like(p)

            counters = (("step", 0.0), ("eta", 0.0), ("mu", 1.0))
            params, grads, state = _gather_group(self, group, ("ax",), counters=counters, init_state=init_state)
            asgd(
                params,
                grads,
                state["ax"],
                state["mu"],
                state["eta"],
                state["step"],
                **F.group_options(group, "lambd", "lr", "t0", "alpha", "weight_decay", "maximize"),
            )
        return loss


def asgd(
    params: list[Tensor],
    grads: list[Tensor],
    axs: list[Tensor],
    mus: list[Tensor],
    etas: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    lambd: float,
    lr: float,
    t0: float,
    alpha: float,
    weight_decay: float,
    maximize: bool = False,
) -> None:
    """Functional ASGD."""
    func = fu.pick(_single_tensor_asgd, _multi_tensor_asgd, params, foreach, differentiable)
    func(
        params,
        grads,
        axs,
        mus,
        etas,
        state_steps,
        lambd=lambd,
        lr=fu.to_scalar(lr),
        t0=t0,
        alpha=alpha,
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _update_ax_eta_mu(
    param: Tensor, ax: Tensor, mu: Tensor, eta: Tensor, step: float, *, lr: float, lambd: float, alpha: float, t0: float
) -> None:
    if mu.item() != 1:
        ax.add_(param.sub(ax).mul_(mu))
    else:
        ax.copy_(param)
    eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
    mu.fill_(1 / max(1, step - t0))


def _single_tensor_asgd(
    params: list[Tensor],
    grads: list[Tensor],
    axs: list[Tensor],
    mus: list[Tensor],
    etas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lambd: float,
    lr: float,
    t0: float,
    alpha: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize)
        step = F.advance_step(state_steps[i])
        eta_value = _get_value(etas[i])
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        _update_ax_eta_mu(param, axs[i], mus[i], etas[i], step, lr=lr, lambd=lambd, alpha=alpha, t0=t0)


def _multi_tensor_asgd(
    params: list[Tensor],
    grads: list[Tensor],
    axs: list[Tensor],
    mus: list[Tensor],
    etas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lambd: float,
    lr: float,
    t0: float,
    alpha: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, axs, mus, etas, state_steps]
    for d_params, d_grads, d_axs, d_mus, d_etas, d_steps in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(d_params, d_grads, weight_decay, maximize=maximize)
        ea._foreach_add_(d_steps, 1)
        eta_values = [_get_value(e) for e in d_etas]
        ea._foreach_mul_(d_params, [1 - lambd * e for e in eta_values])
        ea._foreach_add_(d_params, ea._foreach_mul(d_grads, [-e for e in eta_values]))
        for p, ax, mu, eta, st in zip(d_params, d_axs, d_mus, d_etas, d_steps, strict=True):
            _update_ax_eta_mu(p, ax, mu, eta, _get_value(st), lr=lr, lambd=lambd, alpha=alpha, t0=t0)
