"""Stochastic weight averaging (PyTorch's torch.optim.swa_utils): AveragedModel, SWALR, update_bn.

``AveragedModel`` is an ``ember.nn.Module``, so this module needs ember-nn, which
ember-optim does not depend on: install the extra, ``pip install 'ember-optim[swa]'``.
Nothing else in ember.optim imports ember.nn.

    >>> swa_model = AveragedModel(model)                 # running equal average (SWA)
    >>> ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    >>> swa_model.update_parameters(model)               # after each optimizer step / epoch
    >>> update_bn(loader, swa_model)                     # recompute BatchNorm statistics
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import no_grad

from . import _foreach_utils as fu
from .lr_scheduler import LRScheduler, _per_group, _warn_get_lr_called_within_step
from .optimizer import Optimizer

try:
    from ember.nn import Module
except ImportError as e:  # pragma: no cover - exercised by the layer tests without ember-nn
    raise ImportError(
        "ember.optim.swa_utils needs ember-nn (AveragedModel is an nn.Module); "
        "install the extra: pip install 'ember-optim[swa]'"
    ) from e

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Any], None]


def _lerp_all(dst: list[Tensor], src: list[Tensor], weight: float) -> None:
    if fu.has_op("_foreach_lerp_"):
        ea._foreach_lerp_(dst, src, weight)
    else:
        for d, s in zip(dst, src, strict=True):
            d.lerp_(s, weight)


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """Exponential moving average over lists: ``ema = decay * ema + (1 - decay) * current``."""

    def ema_update(ema_param_list: list[Tensor], current_param_list: list[Tensor], _: Any) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point():
                _lerp_all(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """Equal running average over lists: ``avg = avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param_list: list[Tensor], current_param_list: list[Tensor], num_averaged: Any) -> None:
        with no_grad():
            n = float(num_averaged)
            if averaged_param_list[0].is_floating_point():
                _lerp_all(averaged_param_list, current_param_list, 1 / (n + 1))
            else:
                # integer buffers (num_batches_tracked): average in floating point, truncate back
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """Exponential moving average of one tensor."""

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """Equal running average of one tensor."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are a running
    average of ``model``'s, updated by ``update_parameters(model)``.

    The default is SWA's equal average; pass ``avg_fn`` (per tensor) or ``multi_avg_fn`` (per
    list of tensors, e.g. ``get_ema_multi_avg_fn(0.999)``) for another one. ``n_averaged``
    (a long buffer) counts the updates; the first update copies the model.
    """

    def __init__(
        self,
        model: Any,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ea.tensor(0, dtype=ea.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Any) -> None:
        """Folds ``model``'s current parameters into the average."""
        if self.use_buffers:
            self_params = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            model_params = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            self_params = list(self.parameters())
            model_params = list(model.parameters())
        with no_grad():
            averaged = [p.detach() for p in self_params]
            current = [p.detach().to(device=a.device) for p, a in zip(model_params, averaged, strict=True)]
            n = int(self.n_averaged.item())
            if n == 0:
                for a, c in zip(averaged, current, strict=True):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(averaged, current, strict=True):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(device=a.device)))
            else:
                multi = self.multi_avg_fn or get_swa_multi_avg_fn()
                for (dst, src), _ in fu.group_by_device_and_dtype([averaged, current]).values():
                    multi(dst, src, self.n_averaged.to(device=dst[0].device))
            if not self.use_buffers:
                # buffers (BatchNorm statistics, ...) are not averaged: keep them equal to the model's
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(device=b_swa.device))
            self.n_averaged += 1


def _is_batchnorm(module: Any) -> bool:
    """BatchNorm layers (ember.nn's _BatchNorm; other norm layers with running statistics, such as
    InstanceNorm, are left alone, as in PyTorch). Modules outside ember.nn's norm classes count
    when they have running statistics, a momentum and ``reset_running_stats``."""
    norm_classes: tuple[type, type] | None = None
    try:
        # optional: ember.optim does not depend on ember.nn
        from ember.nn.extension import BatchNormBase, NormBase

        norm_classes = (NormBase, BatchNormBase)
    except ImportError:  # an ember.nn without norm layers
        pass
    if norm_classes is not None and isinstance(module, norm_classes[0]):
        return isinstance(module, norm_classes[1])
    return (
        hasattr(module, "reset_running_stats")
        and hasattr(module, "momentum")
        and getattr(module, "running_mean", None) is not None
    )


def update_bn(loader: Iterable[Any], model: Any, device: Any = None) -> None:
    """Recomputes the running statistics of every BatchNorm layer of ``model`` with one pass
    over ``loader`` (a cumulative average: momentum None), restoring train/eval mode after.

    Each item of ``loader`` is the input, or a list/tuple whose first element is the input.
    """
    momenta: dict[Any, Any] = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for item in loader:
            if isinstance(item, (list, tuple)):
                item = item[0]
            if device is not None:
                item = item.to(device=device)
            model(item)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to ``swa_lr`` over ``anneal_epochs`` (cosine or linear), then holds it.

    Example:
        >>> sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        if self.anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the annealing started from, given the current lr and the last mixing weight."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]
