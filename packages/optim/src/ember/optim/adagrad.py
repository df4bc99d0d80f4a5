"""Adagrad (Duchi et al.).

Update, step ``t`` starting at 1::

    g = -g if maximize;  g = g + wd * p  if wd != 0
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                       (s starts at initial_accumulator_value)
    p = p - clr * g / (sqrt(s) + eps)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from . import _functional as F
from .optimizer import (
    Optimizer,
    ParamsT,
    _check_non_negative,
    _ensure_step_tensors,
    _eval_closure,
    _step_tensor,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad. Its state (``step``, ``sum``) is created when the optimizer is built.

    Example:
        >>> opt = Adagrad(params, lr=1e-2, lr_decay=1e-3)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_non_negative(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )
        if fused:
            raise RuntimeError("Adagrad: fused=True needs an aten _fused_adagrad_ kernel, which ember does not have")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor(0.0)
                state["sum"] = ea.full_like(p.detach(), initial_accumulator_value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        _ensure_step_tensors(self)

    def share_memory(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            state_sums: list[Tensor] = []
            state_steps: list[Tensor] = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                state_sums.append(state["sum"])
                state_steps.append(state["step"])
            adagrad(
                params,
                grads,
                state_sums,
                state_steps,
                **F.group_options(group, "lr", "weight_decay", "lr_decay", "eps", "maximize"),
            )
        return loss


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    lr: float,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """Functional Adagrad."""
    func = fu.pick(_single_tensor_adagrad, _multi_tensor_adagrad, params, foreach, differentiable)
    func(
        params,
        grads,
        state_sums,
        state_steps,
        lr=fu.to_scalar(lr),
        weight_decay=weight_decay,
        lr_decay=lr_decay,
        eps=eps,
        maximize=maximize,
    )


def _single_tensor_adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps, strict=True):
        step = F.advance_step(step_t)
        grad = F.decayed_grad(param, grad, weight_decay, maximize=maximize)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def _multi_tensor_adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, state_sums, state_steps]
    for d_params, d_grads, d_sums, d_steps in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(d_params, d_grads, weight_decay, maximize=maximize)
        minus_clr = [-lr / (1 + (s - 1) * lr_decay) for s in F.foreach_advance_steps(d_steps)]
        ea._foreach_addcmul_(d_sums, d_grads, d_grads, 1)
        std = ea._foreach_sqrt(d_sums)
        ea._foreach_add_(std, eps)
        ea._foreach_addcdiv_(d_params, d_grads, std, minus_clr)
