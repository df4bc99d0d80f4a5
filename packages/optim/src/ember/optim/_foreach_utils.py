"""Choosing and feeding the three implementations of each algorithm.

Every algorithm has a single-tensor loop (the reference: one set of aten calls per
parameter), a ``foreach`` path (aten's ``_foreach_*`` operators: one call per
(device, dtype) bucket of parameters) and, for some, a ``fused`` path (one aten kernel
doing the whole update). As in PyTorch, ``foreach`` is the default when every
parameter lives on one device and the step is not differentiable.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
from ember.aten import Tensor

_FUSED_DTYPES = ("float64", "float32", "float16", "bfloat16")


def has_op(name: str) -> bool:
    return hasattr(ea, name)


def require_op(name: str) -> None:
    if not hasattr(ea, name):
        raise RuntimeError(f"this ember.aten build has no {name} operator (needed by foreach=/fused=True)")


def default_to_foreach(params: list[Tensor], differentiable: bool) -> bool:
    """True when the foreach operators exist and every parameter is on one device."""
    if differentiable or not params or not has_op("_foreach_add_"):
        return False
    device = params[0].device
    return all(isinstance(p, Tensor) and p.device == device for p in params)


def check_fused_param(p: Tensor, name: str) -> None:
    if not (p.is_floating_point() and str(p.dtype).rsplit(".", 1)[-1] in _FUSED_DTYPES):
        raise RuntimeError(
            f"`fused=True` requires all the params to be floating point Tensors of supported devices: "
            f"['cpu', 'cuda'] but {p.dtype} and {p.device.type}"
        )


def to_scalar(x: Any) -> Any:
    """A Python number from a number or a one-element tensor."""
    return x.item() if isinstance(x, Tensor) else x


def group_by_device_and_dtype(tensorlists: list[list[Any]]) -> dict[Any, tuple[list[list[Any]], list[int]]]:
    """Buckets parallel lists by the (device, dtype) of the first list's tensors.

    Returns ``{(device, dtype): ([bucketed list per input list], [original indices])}``;
    entries of the other lists may be None (e.g. a momentum buffer not created yet).
    """
    out: dict[Any, tuple[list[list[Any]], list[int]]] = {}
    for i, t in enumerate(tensorlists[0]):
        key = (str(t.device), str(t.dtype))
        if key not in out:
            out[key] = ([[] for _ in tensorlists], [])
        lists, indices = out[key]
        for dst, src in zip(lists, tensorlists, strict=True):
            dst.append(src[i])
        indices.append(i)
    return out


def pick(single: Any, multi: Any, params: list[Tensor], foreach: bool | None, differentiable: bool) -> Any:
    """The single-tensor or the foreach implementation, as ``foreach`` (None: the default) asks."""
    if foreach is None:
        foreach = default_to_foreach(params, differentiable)
    if foreach:
        require_op("_foreach_add_")
        return multi
    return single
