"""Accumulating a gradient into a leaf's ``.grad`` (what AccumulateGrad does).

First gradient: a copy laid out like the leaf (PyTorch's gradient layout contract:
``p.grad`` has ``p``'s strides when ``p`` is dense), so ``.grad`` never aliases a
tensor the graph or the user still holds. Later gradients: added in place when no
graph is being built (``p.grad`` keeps its identity across accumulations, as
optimizers expect), out of place under ``create_graph=True`` (so ``.grad`` itself is
differentiable). Post-accumulate-grad hooks run last.
"""

from __future__ import annotations

from typing import Any

import ember.c10py as _c10
from ember.aten.extension import entries as ops

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


def accumulate_grad(var: Any, g: Any) -> None:
    m = var._meta
    old = m.grad
    if old is None:
        # a sparse gradient stays sparse (and uncoalesced), as PyTorch's AccumulateGrad keeps it
        m.grad = g.clone() if _state.enabled or g.is_sparse else _copy_like(g, var)
    elif old.is_sparse and not g.is_sparse:
        m.grad = g + old  # sparse .grad + dense gradient -> dense
    elif not _state.enabled and not old.requires_grad:
        old.add_(g)
    else:
        m.grad = old + g
    hooks = m.post_accumulate_hooks
    if hooks:
        for h in tuple(hooks.values()):
            h(var)
