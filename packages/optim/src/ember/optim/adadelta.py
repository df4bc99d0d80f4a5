"""Adadelta (Zeiler).

Update::

    g = -g if maximize;  g = g + wd * p  if wd != 0
    v = rho * v + (1 - rho) * g * g
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta
    p = p - lr * delta
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
    _restore_group_defaults,
    _use_grad_for_differentiable,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta.

    Example:
        >>> opt = Adadelta(params, lr=1.0, rho=0.9)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(eps=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
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
            params, grads, state = _gather_group(self, group, ("square_avg", "acc_delta"))
            adadelta(
                params,
                grads,
                state["square_avg"],
                state["acc_delta"],
                state["step"],
                **F.group_options(group, "lr", "rho", "eps", "weight_decay", "maximize"),
            )
        return loss


def adadelta(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    acc_deltas: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """Functional Adadelta."""
    func = fu.pick(_single_tensor_adadelta, _multi_tensor_adadelta, params, foreach, differentiable)
    func(
        params,
        grads,
        square_avgs,
        acc_deltas,
        state_steps,
        lr=fu.to_scalar(lr),
        rho=rho,
        eps=eps,
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _single_tensor_adadelta(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    acc_deltas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    for param, grad, square_avg, acc_delta, step in zip(
        params, grads, square_avgs, acc_deltas, state_steps, strict=True
    ):
        F.advance_step(step)
        grad = F.decayed_grad(param, grad, weight_decay, maximize=maximize)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def _multi_tensor_adadelta(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    acc_deltas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, square_avgs, acc_deltas, state_steps]
    for d_params, d_grads, d_square_avgs, d_acc_deltas, d_steps in F.buckets(lists):
        ea._foreach_add_(d_steps, 1)
        d_grads = F.foreach_decayed_grads(d_params, d_grads, weight_decay, maximize=maximize)
        ea._foreach_mul_(d_square_avgs, rho)
        ea._foreach_addcmul_(d_square_avgs, d_grads, d_grads, 1 - rho)
        std = ea._foreach_add(d_square_avgs, eps)
        ea._foreach_sqrt_(std)
        deltas = ea._foreach_add(d_acc_deltas, eps)
        ea._foreach_sqrt_(deltas)
        ea._foreach_div_(deltas, std)
        ea._foreach_mul_(deltas, d_grads)
        ea._foreach_mul_(d_acc_deltas, rho)
        ea._foreach_addcmul_(d_acc_deltas, deltas, deltas, 1 - rho)
        ea._foreach_add_(d_params, deltas, alpha=-lr)
