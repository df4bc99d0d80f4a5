"""Adam (and, with ``decoupled_weight_decay=True``, AdamW).

Update (PyTorch's documented algorithm), step ``t`` starting at 1::

    g = -g if maximize
    p = p * (1 - lr * wd)            if decoupled weight decay
    g = g + wd * p                   otherwise, if wd != 0
    m = beta1 * m + (1 - beta1) * g              (lerp)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)            if amsgrad (used in place of v below)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
"""

from __future__ import annotations

import functools
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

__all__ = ["Adam", "adam"]


def _check_betas_eps_wd(lr: Any, betas: tuple[Any, Any], eps: float, weight_decay: float) -> None:
    _check_non_negative(lr=lr, eps=eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    _check_non_negative(weight_decay=weight_decay)


class Adam(Optimizer):
    """Adam: adaptive moment estimation (Kingma & Ba), with AMSGrad and decoupled weight decay.

    Example:
        >>> opt = Adam(model_params, lr=1e-3, betas=(0.9, 0.999))
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_betas_eps_wd(lr, betas, eps, weight_decay)
        betas = (fu.to_scalar(betas[0]), fu.to_scalar(betas[1]))
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_defaults(
            self, {"amsgrad": False, **_COMMON_FLAGS, "decoupled_weight_decay": False, "fused": None}
        )

    def _check_param(self, p: Tensor, group: dict[str, Any]) -> None:
        if group["fused"]:
            fu.check_fused_param(p, type(self).__name__)
        assert p.grad is not None
        if p.grad.is_sparse:
            raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            buffers = ["exp_avg", "exp_avg_sq"] + ["max_exp_avg_sq"] * bool(group["amsgrad"])
            params, grads, state = _gather_group(
                self, group, buffers, check=functools.partial(self._check_param, group=group)
            )
            adam(
                params,
                grads,
                state["exp_avg"],
                state["exp_avg_sq"],
                state.get("max_exp_avg_sq", []),
                state["step"],
                **F.group_options(
                    group,
                    "capturable",
                    "fused",
                    "amsgrad",
                    "betas",
                    "lr",
                    "weight_decay",
                    "eps",
                    "maximize",
                    "decoupled_weight_decay",
                ),
            )
        return loss


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
    fused: bool | None = None,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool = False,
) -> None:
    """Functional Adam/AdamW: updates params and state in place."""
    if fused is None and foreach is None:
        foreach = fu.default_to_foreach(params, differentiable)
    foreach = bool(foreach)
    fused = bool(fused)
    if foreach and fused:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if fused:
        fu.require_op("_fused_adamw_" if decoupled_weight_decay else "_fused_adam_")
        func: Callable[..., None] = _fused_adam
    elif foreach:
        fu.require_op("_foreach_add_")
        func = _multi_tensor_adam
    else:
        func = functools.partial(_single_tensor_adam, differentiable=differentiable)
    func(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        amsgrad=amsgrad,
        beta1=beta1,
        beta2=beta2,
        lr=lr,
        weight_decay=weight_decay,
        eps=eps,
        maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay,
    )


_ONE_PASS_DTYPES = (ea.float32, ea.float64)


def _single_tensor_adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool,
    differentiable: bool = False,
) -> None:
    lr = fu.to_scalar(lr)
    # A float32 / float64 parameter (not updated differentiably) takes one pass of the fused
    # kernel over its own tensors -- the same update, in the order written below, read and written
    # once instead of once per operation. Others (half precision, complex, differentiable=True) run
    # the operations one by one.
    one_pass = not differentiable and fu.has_op("_fused_adam_")
    kernel = ea._fused_adamw_ if decoupled_weight_decay else ea._fused_adam_
    for i, param in enumerate(params):
        if one_pass and param.dtype in _ONE_PASS_DTYPES and grads[i].dtype == param.dtype:
            step_t = state_steps[i]
            step_t += 1
            kernel(
                [param],
                [grads[i]],
                [exp_avgs[i]],
                [exp_avg_sqs[i]],
                [max_exp_avg_sqs[i]] if amsgrad else [],
                [step_t],
                lr=lr,
                beta1=beta1,
                beta2=beta2,
                weight_decay=weight_decay,
                eps=eps,
                amsgrad=amsgrad,
                maximize=maximize,
            )
            continue
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay)
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step = F.advance_step(state_steps[i])
        F.update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if amsgrad:
            ea.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


def _multi_tensor_adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool,
) -> None:
    if not params:
        return
    lr = fu.to_scalar(lr)
    lists: list[list[Any]] = [params, grads, exp_avgs, exp_avg_sqs, state_steps]
    if amsgrad:
        lists.append(max_exp_avg_sqs)
    for d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_steps, *rest in F.buckets(lists):
        d_grads = F.foreach_decayed_grads(
            d_params, d_grads, weight_decay, maximize=maximize, lr=lr, decoupled=decoupled_weight_decay
        )
        steps = F.foreach_advance_steps(d_steps)
        F.foreach_update_moments(d_exp_avgs, d_exp_avg_sqs, d_grads, beta1, beta2)
        del d_grads

        step_size = [-(lr / (1 - beta1**s)) for s in steps]
        bias_correction2_sqrt = [(1 - beta2**s) ** 0.5 for s in steps]
        if amsgrad:
            ea._foreach_maximum_(rest[0], d_exp_avg_sqs)
            denom = ea._foreach_sqrt(rest[0])
        else:
            denom = ea._foreach_sqrt(d_exp_avg_sqs)
        ea._foreach_div_(denom, bias_correction2_sqrt)
        ea._foreach_add_(denom, eps)
        ea._foreach_addcdiv_(d_params, d_exp_avgs, denom, step_size)


def _fused_adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool,
) -> None:
    if not params:
        return
    lr = fu.to_scalar(lr)
    kernel = ea._fused_adamw_ if decoupled_weight_decay else ea._fused_adam_
    lists: list[list[Any]] = [params, grads, exp_avgs, exp_avg_sqs, state_steps]
    if amsgrad:
        lists.append(max_exp_avg_sqs)
    for (d_params, d_grads, d_exp_avgs, d_exp_avg_sqs, d_steps, *rest), _ in fu.group_by_device_and_dtype(
        lists
    ).values():
        ea._foreach_add_(d_steps, 1)
        kernel(
            d_params,
            d_grads,
            d_exp_avgs,
            d_exp_avg_sqs,
            rest[0] if amsgrad else [],
            d_steps,
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            weight_decay=weight_decay,
            eps=eps,
            amsgrad=amsgrad,
            maximize=maximize,
        )
