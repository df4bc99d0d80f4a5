"""The steps the algorithms' update loops share.

Every single-tensor loop starts the same way for each parameter -- negate the gradient
under ``maximize``, apply weight decay, count the step -- and so does every foreach loop
for each (device, dtype) bucket of parameters; Adam and its relatives then update the
same two moments. These functions are those steps, once, in the order the algorithms
apply them (the results are those of the loops written out).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from .optimizer import _get_value


def decayed_grad(
    param: Tensor, grad: Tensor, weight_decay: float, *, maximize: bool, lr: float = 0.0, decoupled: bool = False
) -> Tensor:
    """The gradient an update uses: ``-grad`` under ``maximize``, then weight decay --
    ``grad + weight_decay * param`` (L2), or, ``decoupled`` (AdamW's), ``param`` scaled in
    place by ``1 - lr * weight_decay`` and the gradient left as it is."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    return grad


def foreach_decayed_grads(
    params: list[Tensor],
    grads: list[Tensor],
    weight_decay: float,
    *,
    maximize: bool,
    lr: float = 0.0,
    decoupled: bool = False,
) -> list[Tensor]:
    """``decayed_grad`` of one bucket with the foreach operators."""
    if maximize:
        grads = ea._foreach_neg(grads)
    if weight_decay != 0:
        if decoupled:
            ea._foreach_mul_(params, 1 - lr * weight_decay)
        else:
            grads = ea._foreach_add(grads, params, alpha=weight_decay)
    return grads


def advance_step(step_t: Tensor) -> float:
    """Counts one step in the state tensor ``step_t``; returns the new count."""
    step_t += 1
    return _get_value(step_t)


def foreach_advance_steps(steps: list[Tensor]) -> list[float]:
    """``advance_step`` of one bucket."""
    ea._foreach_add_(steps, 1)
    return [_get_value(s) for s in steps]


def update_moments(exp_avg: Tensor, exp_avg_sq: Tensor, grad: Tensor, beta1: float, beta2: float) -> None:
    """Adam's moments: ``m = beta1 m + (1 - beta1) g`` and ``v = beta2 v + (1 - beta2) g^2``."""
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def foreach_update_moments(
    exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor], grads: list[Tensor], beta1: float, beta2: float
) -> None:
    """``update_moments`` of one bucket."""
    ea._foreach_lerp_(exp_avgs, grads, 1 - beta1)
    ea._foreach_mul_(exp_avg_sqs, beta2)
    ea._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)


def buckets(lists: list[list[Any]]) -> Iterator[list[list[Any]]]:
    """The (device, dtype) buckets of parallel lists (``fu.group_by_device_and_dtype``),
    each as its list of bucketed lists."""
    for bucket, _ in fu.group_by_device_and_dtype(lists).values():
        yield bucket


def group_options(group: dict[str, Any], *names: str) -> dict[str, Any]:
    """The keyword arguments a step passes to its functional algorithm from ``group``:
    ``foreach``, ``differentiable`` and the hyperparameters ``names`` (``betas`` as
    ``beta1`` and ``beta2``)."""
    options = {"foreach": group["foreach"], "differentiable": group["differentiable"]}
    for name in names:
        if name == "betas":
            options["beta1"], options["beta2"] = group["betas"]
        else:
            options[name] = group[name]
    return options
