"""Accumulating a gradient into a leaf's ``.grad`` (what AccumulateGrad does).

First gradient: the incoming tensor itself when nothing else can reach it (PyTorch's
AccumulateGrad "steals" it: grad mode off, the engine's input buffer its only holder -- no
name, hook, retained grad, other buffer or view refers to it, no saved record holds its
TensorImpl -- and laid out like the leaf, ``_C._grad_stealable``); otherwise a copy laid out
like the leaf (PyTorch's gradient layout contract: ``p.grad`` has ``p``'s strides when ``p``
is dense), so ``.grad`` never aliases a tensor the graph or the user still holds. A stolen
view keeps its storage (as PyTorch's ``detach``) but is no view any more. The engine drops its
own references to a gradient once it is in a buffer, so that the buffer can be its only
holder. Later gradients: added in place when no
graph is being built (``p.grad`` keeps its identity across accumulations, as
optimizers expect), out of place under ``create_graph=True`` (so ``.grad`` itself is
differentiable). Post-accumulate-grad hooks run last.
"""

from __future__ import annotations

from typing import Any

import ember.c10py as _c10
from ember.aten.extension import entries as ops
from ember.aten.extension import grad_stealable as _grad_stealable

from .grad_mode import _state


def _copy_like(g: Any, var: Any) -> Any:
    impl = var._impl
    if impl.is_non_overlapping_and_dense:
        out = ops._call_empty_strided(impl.sizes, impl.strides, g.dtype, None, g.device, None)
    else:
        out = ops._call_empty_strided(impl.sizes, _contiguous_strides(impl.sizes), g.dtype, None, g.device, None)
    return out.copy_(g)


def _contiguous_strides(sizes: Any) -> tuple[int, ...]:
    return tuple(_c10.contiguous_strides(sizes))


def accumulate_grad(var: Any, grads: list[Any]) -> None:
    """Adds ``grads[0]`` (not None) into ``var.grad``. The list, not the tensor: while only the
    list holds the gradient (no local name here does), it may be stolen."""
    m = var._meta
    old = m.grad
    if old is None:
        if not _state.enabled and _grad_stealable(grads, 0, var):
            g = grads[0]
            if g._base is not None:
                g._base = None  # PyTorch's steal is new_grad.detach(): the storage, not a view
            m.grad = g
        else:
            g = grads[0]
            # a sparse gradient stays sparse (and uncoalesced), as PyTorch's AccumulateGrad keeps it
            m.grad = g.clone() if _state.enabled or g.is_sparse else _copy_like(g, var)
    else:
        _accumulate_into(var, m, old, grads[0])
    hooks = m.post_accumulate_hooks
    if hooks:
        for h in tuple(hooks.values()):
            h(var)


def _accumulate_into(var: Any, m: Any, old: Any, g: Any) -> None:
    if old.is_sparse and not g.is_sparse:
        m.grad = g + old  # sparse .grad + dense gradient -> dense
    elif not _state.enabled and not old.requires_grad:
        old.add_(g)
    else:
        m.grad = old + g
