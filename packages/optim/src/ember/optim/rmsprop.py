"""RMSprop (Hinton), optionally centered and with momentum.

Update::

    g = -g if maximize;  g = g + wd * p  if wd != 0
    v = alpha * v + (1 - alpha) * g * g
    avg = sqrt(v - ga * ga) with ga = alpha * ga + (1 - alpha) * g   if centered,  else sqrt(v)
    avg = avg + eps
    b = momentum * b + g / avg;  p = p - lr * b      if momentum > 0
    p = p - lr * g / avg                             otherwise
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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop.

    Example:
        >>> opt = RMSprop(params, lr=1e-2, alpha=0.99, momentum=0.9, centered=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(self, {"momentum": 0, "centered": False, **_COMMON_FLAGS})

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            # the momentum buffer and the centered average exist only when the group uses them
            buffers = ["square_avg"] + ["momentum_buffer"] * (group["momentum"] > 0) + ["grad_avg"] * group["centered"]
            params, grads, state = _gather_group(self, group, buffers)
            rmsprop(
                params,
                grads,
                state["square_avg"],
                state.get("grad_avg", []),
                state.get("momentum_buffer", []),
                state["step"],
                **F.group_options(group, "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"),
            )
        return loss


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    differentiable: bool = False,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool = False,
) -> None:
    """Functional RMSprop."""
    func = fu.pick(_single_tensor_rmsprop, _multi_tensor_rmsprop, params, foreach, differentiable)
    func(
        params,
        grads,
        square_avgs,
        grad_avgs,
        momentum_buffer_list,
        state_steps,
        lr=fu.to_scalar(lr),
        alpha=alpha,
        eps=eps,
        weight_decay=weight_decay,
        momentum=momentum,
        centered=centered,
        maximize=maximize,
    )


def _single_tensor_rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
) -> None:
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize)
        square_avg = square_avgs[i]
        F.advance_step(state_steps[i])
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def _multi_tensor_rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
) -> None:
    if not params:
        return
    lists: list[list[Any]] = [params, grads, square_avgs, state_steps]
    if momentum > 0:
        lists.append(momentum_buffer_list)
    if centered:
        lists.append(grad_avgs)
    for d_params, d_grads, d_square_avgs, d_steps, *rest in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(d_params, d_grads, weight_decay, maximize=maximize)
        ea._foreach_add_(d_steps, 1)
        ea._foreach_mul_(d_square_avgs, alpha)
        ea._foreach_addcmul_(d_square_avgs, d_grads, d_grads, 1 - alpha)
        if centered:
            d_grad_avgs = rest[-1]
            ea._foreach_lerp_(d_grad_avgs, d_grads, 1 - alpha)
            avg = ea._foreach_addcmul(d_square_avgs, d_grad_avgs, d_grad_avgs, -1)
            ea._foreach_sqrt_(avg)
        else:
            avg = ea._foreach_sqrt(d_square_avgs)
        ea._foreach_add_(avg, eps)
        if momentum > 0:
            d_bufs = rest[0]
            ea._foreach_mul_(d_bufs, momentum)
            ea._foreach_addcdiv_(d_bufs, d_grads, avg)
            ea._foreach_add_(d_params, d_bufs, alpha=-lr)
        else:
            ea._foreach_addcdiv_(d_params, d_grads, avg, -lr)
