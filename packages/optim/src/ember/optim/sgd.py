"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize.

Update (PyTorch's documented algorithm), per parameter ``p`` with gradient ``g``::

    g = -g if maximize
    g = g + weight_decay * p                          if weight_decay != 0
    b = g (first step) | momentum * b + (1 - dampening) * g
    g = g + momentum * b (nesterov) | b               if momentum != 0
    p = p - lr * g
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from . import _foreach_utils as fu
from . import _functional as F
from .optimizer import Optimizer, ParamsT, _eval_closure, _use_grad_for_differentiable

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum).

    Example:
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(w).backward(); opt.step()
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _init_group(
        self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor], momentum_buffer_list: list[Any]
    ) -> None:
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"]:
                fu.check_fused_param(p, "SGD")
            params.append(p)
            grads.append(p.grad)
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state[p].get("momentum_buffer"))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            momentum_buffer_list: list[Any] = []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(
                params,
                grads,
                momentum_buffer_list,
                **F.group_options(
                    group, "weight_decay", "momentum", "lr", "dampening", "nesterov", "maximize", "fused"
                ),
            )
            if group["momentum"] != 0:
                for p, buf in zip(params, momentum_buffer_list, strict=True):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(
    params: list[Tensor],
    d_p_list: list[Tensor],
    momentum_buffer_list: list[Any],
    *,
    foreach: bool | None = None,
    fused: bool | None = None,
    differentiable: bool = False,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    """Functional SGD: updates ``params`` (and fills ``momentum_buffer_list``) in place."""
    if foreach is None and fused is None:
        foreach = fu.default_to_foreach(params, differentiable)
    if any(g.is_sparse for g in d_p_list):
        if fused:
            raise RuntimeError("`_fused_sgd` does not support sparse gradients")
        foreach = False  # sparse gradients (Embedding(sparse=True)) take the per-tensor path, as PyTorch's
    foreach = bool(foreach)
    fused = bool(fused)
    if foreach and fused:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if fused:
        fu.require_op("_fused_sgd_")
        func: Callable[..., None] = _fused_sgd
    elif foreach:
        fu.require_op("_foreach_add_")
        func = _multi_tensor_sgd
    else:
        func = _single_tensor_sgd
    func(
        params,
        d_p_list,
        momentum_buffer_list,
        weight_decay=weight_decay,
        momentum=momentum,
        lr=lr,
        dampening=dampening,
        nesterov=nesterov,
        maximize=maximize,
    )


def _single_tensor_sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Any],
    *,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    lr = fu.to_scalar(lr)
    for i, param in enumerate(params):
        grad = F.decayed_grad(param, grads[i], weight_decay, maximize=maximize)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


def _multi_tensor_sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Any],
    *,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    if not params:
        return
    lr = fu.to_scalar(lr)
    lists: list[list[Any]] = [params, grads] + ([momentum_buffer_list] if momentum != 0 else [])
    for (device_params, device_grads, *rest), indices in fu.group_by_device_and_dtype(lists).values():
        device_grads = F.foreach_decayed_grads(device_params, device_grads, weight_decay, maximize=maximize)
        if momentum != 0:
            device_bufs = rest[0]
            if all(b is not None for b in device_bufs):
                ea._foreach_mul_(device_bufs, momentum)
                ea._foreach_add_(device_bufs, device_grads, alpha=1 - dampening)
            else:
                for j, buf in enumerate(device_bufs):
                    if buf is None:
                        buf = device_grads[j].detach().clone()
                        device_bufs[j] = buf
                        momentum_buffer_list[indices[j]] = buf
                    else:
                        buf.mul_(momentum).add_(device_grads[j], alpha=1 - dampening)
            if nesterov:
                device_grads = ea._foreach_add(device_grads, device_bufs, alpha=momentum)
            else:
                device_grads = device_bufs
        ea._foreach_add_(device_params, device_grads, alpha=-lr)


def _fused_sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Any],
    *,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    if not params:
        return
    lr = fu.to_scalar(lr)
    no_momentum_buffer = momentum == 0
    is_first_step = not no_momentum_buffer and all(b is None for b in momentum_buffer_list)
    if is_first_step:
        for i, g in enumerate(grads):
            momentum_buffer_list[i] = ea.empty_like(g)
    lists: list[list[Any]] = [params, grads] + ([momentum_buffer_list] if not no_momentum_buffer else [])
    for (device_params, device_grads, *rest), _ in fu.group_by_device_and_dtype(lists).values():
        ea._fused_sgd_(
            device_params,
            device_grads,
            [] if no_momentum_buffer else rest[0],
            weight_decay=weight_decay,
            momentum=momentum,
            lr=lr,
            dampening=dampening,
            nesterov=nesterov,
            maximize=maximize,
            is_first_step=is_first_step,
        )
