"""CopySlices: the grad_fn of a base after an in-place operation on one of its views.

    x = leaf.clone(); x[0].mul_(2)      # x.grad_fn is CopySlices(fn=MulBackward0)

The gradient of the base is copied into a buffer with the base's geometry; the
window of the view (``as_strided`` with the view's sizes, strides and offset) is
replaced by what the in-place op's node ``fn`` computes from it; the other outputs
of ``fn`` (gradients of the op's other inputs) pass through unchanged. Every step is
an operator call, so with ``create_graph=True`` the result is differentiable.
"""

from __future__ import annotations

from typing import Any

from ember.aten.extension import entries as ops
from ember.aten.extension import input_meta

from .graph import Node


class CopySlices(Node):
    __slots__ = ("base_geometry", "fn", "view_geometry")

    def __init__(self, base: Any, view: Any, fn: Node) -> None:
        Node.__init__(self)
        b, v = base._impl, view._impl
        self.base_geometry = (b.sizes, b.strides, b.storage_offset)
        self.view_geometry = (v.sizes, v.strides, v.storage_offset)
        self.fn = fn
        self._input_meta = (input_meta(base),)

    def apply(self, grads: list[Any]) -> list[Any]:
        grad = grads[0]
        n = len(self.next_edges)
        if grad is None:
            return [None] * n
        sizes, strides, offset = self.base_geometry
        result = ops._call_empty_strided(sizes, strides, grad.dtype, None, grad.device, None)
        result.copy_(grad)
        vsizes, vstrides, voffset = self.view_geometry
        grad_slice = ops._call_as_strided(result, vsizes, vstrides, voffset - offset)
        res = self.fn.apply([ops._call_clone(grad_slice, None)])
        out: list[Any] = [None] * n
        if self.next_edges[0] is not None:
            if res[0] is None:
                grad_slice.zero_()
            else:
                grad_slice.copy_(res[0])
            out[0] = result
        for i in range(1, min(n, len(res))):
            out[i] = res[i]
        return out

    def release_variables(self) -> None:
        self.fn.release_variables()
