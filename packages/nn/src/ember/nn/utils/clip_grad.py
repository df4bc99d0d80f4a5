"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``, ``clip_grads_with_norm_``.

Norms of a group of same-device, same-dtype gradients are computed by one ``_foreach_norm``
call when aten has it (the multi-tensor kernel), one ``linalg.vector_norm`` per tensor otherwise;
the total is the norm of those norms. Scaling multiplies each gradient in place by the
clamped coefficient, kept as a tensor (no host synchronisation).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _tensor_list(tensors: Any) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _group(tensors: list[Tensor]) -> dict[tuple[Any, Any], list[Tensor]]:
    groups: dict[tuple[Any, Any], list[Tensor]] = {}
    for t in tensors:
        groups.setdefault((str(t.device), t.dtype), []).append(t)
    return groups


def _foreach(name: str, foreach: bool | None) -> Any:
    fn = getattr(ea, name, None)
    if foreach and fn is None:
        raise RuntimeError(f"foreach=True was passed, but can't use the foreach API: ember.aten has no {name}")
    return fn if foreach is not False else None


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of the norms of ``tensors`` (of all their elements viewed as one vector)."""
    tensors = _tensor_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return ea.tensor(0.0)
    first_device = tensors[0].device
    foreach_norm = _foreach("_foreach_norm", foreach)
    norms: list[Tensor] = []
    with no_grad():
        for group in _group(tensors).values():
            if foreach_norm is not None:
                norms.extend(foreach_norm(group, norm_type))
            else:
                norms.extend(ea.linalg.vector_norm(g, norm_type) for g in group)
        total_norm = ea.linalg.vector_norm(ea.stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total_norm


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scales the gradients of ``parameters`` by max_norm / (total_norm + 1e-6), at most 1."""
    grads = [p.grad for p in _tensor_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = ea.clamp(clip_coef, max=1.0)
        for group in _group(grads).values():
            coef = clip_coef_clamped.to(group[0].device)
            for g in group:
                g.mul_(coef)


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None)

    Scales all gradients together so that their total norm is at most max_norm; returns the
    total norm before clipping.
    """
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(*args: Any, **kwargs: Any) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(*args, **kwargs)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """clip_grad_value_(parameters, clip_value, foreach=None): clamps every gradient to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    grads = [p.grad for p in _tensor_list(parameters) if p.grad is not None]
    with no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)
