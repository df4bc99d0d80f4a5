"""RAdam: Adam with a rectified adaptive learning rate (Liu et al.).

Update, step ``t`` starting at 1::

    g = -g if maximize
    p = p * (1 - lr * wd) if decoupled_weight_decay;  else g = g + wd * p
    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**t)
    rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    if rho_t > 5:
        l = sqrt(1 - beta2**t) / (sqrt(v) + eps)
        r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p = p - lr * m_hat * l * r
    else:
        p = p - lr * m_hat
"""

from __future__ import annotations

import math
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

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """RAdam (rectified Adam).

    Example:
        >>> opt = RAdam(params, lr=1e-3)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_betas_eps_wd(lr, betas, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(self, {**_COMMON_FLAGS, "decoupled_weight_decay": False})

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, state = _gather_group(self, group, ("exp_avg", "exp_avg_sq"))
            radam(
                params,
                grads,
                state["exp_avg"],
                state["exp_avg_sq"],
                state["step"],
                **F.group_options(group, "betas", "lr", "weight_decay", "eps", "decoupled_weight_decay", "maximize"),
            )
        return loss


def radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    decoupled_weight_decay: bool = False,
    maximize: bool = False,
) -> None:
    """Functional RAdam."""
    func = fu.pick(_single_tensor_radam, _multi_tensor_radam, params, foreach, differentiable)
    func(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        state_steps,
        beta1=beta1,
        beta2=beta2,
        lr=fu.to_scalar(lr),
        weight_decay=weight_decay,
        eps=eps,
        decoupled_weight_decay=decoupled_weight_decay,
        maximize=maximize,
    )


def _rect(step: float, beta2: float) -> float:
    """The variance rectification term r_t, or 0 while rho_t <= 5 (the un-adapted phase)."""
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / (1 - beta2**step)
    if rho_t <= 5.0:
        return 0.0
    return math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))


def _single_tensor_radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay)
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step = F.advance_step(state_steps[i])
        F.update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rect = _rect(step, beta2)
        if rect > 0:
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def _multi_tensor_radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs, state_steps]
    for d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_steps in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(
            d_params, d_grads, weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay
        )
        steps = F.foreach_advance_steps(d_steps)
        F.foreach_update_moments(d_exp_avgs, d_exp_avg_sqs, d_grads, beta1, beta2)
        rects = [_rect(s, beta2) for s in steps]
        # p -= m * (lr/bc1 * sqrt(bc2) * r / (sqrt(v) + eps))  where rectified, m * lr/bc1 elsewhere
        coef = ea._foreach_sqrt(d_exp_avg_sqs)
        ea._foreach_add_(coef, eps)
        ea._foreach_reciprocal_(coef)
        rect_scale = [-(lr / (1 - beta1**s)) * (1 - beta2**s) ** 0.5 * r for s, r in zip(steps, rects, strict=True)]
        ea._foreach_mul_(coef, rect_scale)
        plain = [0.0 if r > 0 else -(lr / (1 - beta1**s)) for s, r in zip(steps, rects, strict=True)]
        ea._foreach_add_(coef, plain)
        ea._foreach_addcmul_(d_params, d_exp_avgs, coef)
