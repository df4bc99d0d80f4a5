"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter).

The weight decay shrinks the parameter directly, ``p = p * (1 - lr * weight_decay)``,
instead of entering the moments through the gradient; everything else is Adam's update.
"""

from __future__ import annotations

from typing import Any

from ember.aten import Tensor

from .adam import Adam, adam
from .optimizer import ParamsT

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``).

    Example:
        >>> opt = AdamW(model_params, lr=1e-3, weight_decay=0.01)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    **kwargs: Any,
) -> None:
    """Functional AdamW: ``adam(..., decoupled_weight_decay=True)``."""
    kwargs["decoupled_weight_decay"] = True
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs)
