"""NAdam: Adam with Nesterov momentum (Dozat), with PyTorch's momentum-decay schedule.

Update, step ``t`` starting at 1 (``psi`` = momentum_decay)::

    g = -g if maximize
    p = p * (1 - lr * wd) if decoupled_weight_decay;  else g = g + wd * p
    mu_t = beta1 * (1 - 0.5 * 0.96**(t * psi)),  mu_{t+1} likewise,  prod = prod * mu_t
    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - prod) * g / denom
    p = p - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom
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
    _get_value,
    _restore_group_defaults,
    _use_grad_for_differentiable,
)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam (Nesterov-accelerated Adam).

    Example:
        >>> opt = NAdam(params, lr=2e-3, momentum_decay=4e-3)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_betas_eps_wd(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(self, {**_COMMON_FLAGS, "decoupled_weight_decay": False}, ("step", "mu_product"))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params, grads, state = _gather_group(
                self, group, ("exp_avg", "exp_avg_sq"), counters=(("step", 0.0), ("mu_product", 1.0))
            )
            nadam(
                params,
                grads,
                state["exp_avg"],
                state["exp_avg_sq"],
                state["mu_product"],
                state["step"],
                **F.group_options(
                    group, "betas", "lr", "weight_decay", "momentum_decay", "eps", "decoupled_weight_decay", "maximize"
                ),
            )
        return loss


def nadam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
    decoupled_weight_decay: bool = False,
    maximize: bool = False,
) -> None:
    """Functional NAdam."""
    func = fu.pick(_single_tensor_nadam, _multi_tensor_nadam, params, foreach, differentiable)
    func(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        mu_products,
        state_steps,
        beta1=beta1,
        beta2=beta2,
        lr=fu.to_scalar(lr),
        weight_decay=weight_decay,
        momentum_decay=momentum_decay,
        eps=eps,
        decoupled_weight_decay=decoupled_weight_decay,
        maximize=maximize,
    )


def _mus(step: float, beta1: float, momentum_decay: float) -> tuple[float, float]:
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    return mu, mu_next


def _single_tensor_nadam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay)
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step = F.advance_step(state_steps[i])
        bias_correction2 = 1 - beta2**step
        mu, mu_next = _mus(step, beta1, momentum_decay)
        mu_product *= mu
        F.update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        prod = _get_value(mu_product)
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - prod * mu_next))


def _multi_tensor_nadam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps]
    for d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_mu_products, d_steps in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(
            d_params, d_grads, weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay
        )
        steps = F.foreach_advance_steps(d_steps)
        F.foreach_update_moments(d_exp_avgs, d_exp_avg_sqs, d_grads, beta1, beta2)
        mus = [_mus(s, beta1, momentum_decay) for s in steps]
        ea._foreach_mul_(d_mu_products, [m for m, _ in mus])
        denom = ea._foreach_div(d_exp_avg_sqs, [1 - beta2**s for s in steps])
        ea._foreach_sqrt_(denom)
        ea._foreach_add_(denom, eps)
        prods = [_get_value(mp) for mp in d_mu_products]
        size_grads = [-lr * (1.0 - mu) / (1.0 - prod) for (mu, _), prod in zip(mus, prods, strict=True)]
        size_avgs = [-lr * nxt / (1.0 - prod * nxt) for (_, nxt), prod in zip(mus, prods, strict=True)]
        ea._foreach_addcdiv_(d_params, d_grads, denom, size_grads)
        ea._foreach_addcdiv_(d_params, d_exp_avgs, denom, size_avgs)
