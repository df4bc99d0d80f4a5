"""Rprop: resilient backpropagation (Riedmiller & Braun).

Update (``s`` the per-element step size, starting at lr; ``g_prev`` starting at 0)::

    g = -g if maximize
    f = etaplus where g * g_prev > 0, etaminus where < 0, 1 where == 0
    s = clamp(s * f, step_size_min, step_size_max)
    g = 0 where g * g_prev < 0
    p = p - sign(g) * s;   g_prev = g
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from .optimizer import (
    _COMMON_FLAGS,
    Optimizer,
    ParamsT,
    _check_non_negative,
    _eval_closure,
    _gather_group,
    _restore_group_defaults,
    _step_tensor,
    _use_grad_for_differentiable,
)

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Rprop.

    Example:
        >>> opt = Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50))
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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

            def init_state(p: Tensor, state: dict[str, Any], group: dict[str, Any] = group) -> None:
                state["step"] = _step_tensor(0.0, p.device, fused_or_capturable=bool(group["capturable"]))
                state["prev"] = ea.zeros_like(p)
                assert p.grad is not None  # _gather_group passes parameters that have one
                state["step_size"] = ea.full_like(p.grad, fu.to_scalar(group["lr"]))

            params, grads, state = _gather_group(self, group, ("prev", "step_size"), init_state=init_state)
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            rprop(
                params,
                grads,
                state["prev"],
                state["step_size"],
                state["step"],
                foreach=group["foreach"],
                differentiable=group["differentiable"],
                step_size_min=step_size_min,
                step_size_max=step_size_max,
                etaminus=etaminus,
                etaplus=etaplus,
                maximize=group["maximize"],
            )
        return loss


def rprop(
    params: list[Tensor],
    grads: list[Tensor],
    prevs: list[Tensor],
    step_sizes: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    step_size_min: float,
    step_size_max: float,
    etaminus: float,
    etaplus: float,
    maximize: bool = False,
) -> None:
    """Functional Rprop."""
    func = fu.pick(_single_tensor_rprop, _multi_tensor_rprop, params, foreach, differentiable)
    func(
        params,
        grads,
        prevs,
        step_sizes,
        state_steps,
        step_size_min=step_size_min,
        step_size_max=step_size_max,
        etaminus=etaminus,
        etaplus=etaplus,
        maximize=maximize,
    )


def _factor(sign: Tensor, etaminus: float, etaplus: float) -> Tensor:
    """etaplus where sign > 0, etaminus where sign < 0, 1 where sign == 0."""
    one = ea.ones_like(sign)
    return ea.where(sign.gt(0), one * etaplus, ea.where(sign.lt(0), one * etaminus, one))


def _single_tensor_rprop(
    params: list[Tensor],
    grads: list[Tensor],
    prevs: list[Tensor],
    step_sizes: list[Tensor],
    state_steps: list[Tensor],
    *,
    step_size_min: float,
    step_size_max: float,
    etaminus: float,
    etaplus: float,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev = prevs[i]
        step_size = step_sizes[i]
        state_steps[i] += 1
        sign = grad.mul(prev).sign()
        step_size.mul_(_factor(sign, etaminus, etaplus)).clamp_(step_size_min, step_size_max)
        grad = ea.where(sign.lt(0), ea.zeros_like(grad), grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def _multi_tensor_rprop(
    params: list[Tensor],
    grads: list[Tensor],
    prevs: list[Tensor],
    step_sizes: list[Tensor],
    state_steps: list[Tensor],
    *,
    step_size_min: float,
    step_size_max: float,
    etaminus: float,
    etaplus: float,
    maximize: bool,
) -> None:
    if not params:
        return
    lists = [params, grads, prevs, step_sizes, state_steps]
    for (d_params, d_grads, d_prevs, d_step_sizes, d_steps), _ in fu.group_by_device_and_dtype(lists).values():
        ea._foreach_add_(d_steps, 1)
        if maximize:
            d_grads = ea._foreach_neg(d_grads)
        signs = ea._foreach_mul(d_grads, d_prevs)
        ea._foreach_sign_(signs)
        ea._foreach_mul_(d_step_sizes, [_factor(s, etaminus, etaplus) for s in signs])
        ea._foreach_clamp_min_(d_step_sizes, step_size_min)
        ea._foreach_clamp_max_(d_step_sizes, step_size_max)
        new_grads = [ea.where(s.lt(0), ea.zeros_like(g), g) for s, g in zip(signs, d_grads, strict=True)]
        ea._foreach_addcmul_(d_params, ea._foreach_sign(new_grads), d_step_sizes, -1)
        ea._foreach_copy_(d_prevs, new_grads)
