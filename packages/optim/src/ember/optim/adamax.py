"""Adamax: Adam with the infinity norm (Kingma & Ba, section 7).

Update, step ``t`` starting at 1::

    g = -g if maximize;  g = g + wd * p  if wd != 0
    m = beta1 * m + (1 - beta1) * g                  (lerp)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1**t) * m / u
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from . import _functional as F
from .adam import _check_betas_eps_wd
from .optimizer import (
    _COMMON_FLAGS,
    Optimizer,
    ParamsT,
    _eval_closure,
    _gather_group,
    _restore_group_defaults,
    _use_grad_for_differentiable,
)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax (Adam based on the infinity norm).

    Example:
        >>> opt = Adamax(params, lr=2e-3)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_betas_eps_wd(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(self, _COMMON_FLAGS)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, state = _gather_group(self, group, ("exp_avg", "exp_inf"))
            adamax(
                params,
                grads,
                state["exp_avg"],
                state["exp_inf"],
                state["step"],
                **F.group_options(group, "eps", "betas", "lr", "weight_decay", "maximize"),
            )
        return loss


def adamax(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_infs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    eps: float,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """Functional Adamax."""
    func = fu.pick(_single_tensor_adamax, _multi_tensor_adamax, params, foreach, differentiable)
    func(
        params,
        grads,
        exp_avgs,
        exp_infs,
        state_steps,
        eps=eps,
        beta1=beta1,
        beta2=beta2,
        lr=fu.to_scalar(lr),
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _single_tensor_adamax(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_infs: list[Tensor],
    state_steps: list[Tensor],
    *,
    eps: float,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize)
        exp_avg = exp_avgs[i]
        exp_inf = exp_infs[i]
        step = F.advance_step(state_steps[i])
        exp_avg.lerp_(grad, 1 - beta1)
        ea.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = lr / (1 - beta1**step)
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


def _multi_tensor_adamax(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_infs: list[Tensor],
    state_steps: list[Tensor],
    *,
    eps: float,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_infs, state_steps]
    for d_params, d_grads, d_exp_avgs, d_exp_infs, d_steps in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(d_params, d_grads, weight_decay, maximize=maximize)
        steps = F.foreach_advance_steps(d_steps)
        ea._foreach_lerp_(d_exp_avgs, d_grads, 1 - beta1)
        ea._foreach_mul_(d_exp_infs, beta2)
        norm = ea._foreach_abs(d_grads)
        ea._foreach_add_(norm, eps)
        ea._foreach_maximum_(d_exp_infs, norm)
        step_size = [-(lr / (1 - beta1**s)) for s in steps]
        ea._foreach_addcdiv_(d_params, d_exp_avgs, d_exp_infs, step_size)
