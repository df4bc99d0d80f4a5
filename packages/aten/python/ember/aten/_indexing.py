"""Tensor.__getitem__ / __setitem__ (basic indexing: ints, slices, None, Ellipsis).

Basic indices become views (select / slice / unsqueeze); advanced indices (bool
masks, integer tensors and lists) go through the index / index_put_ operators.
"""

from __future__ import annotations

from typing import Any


def _normalize(index: Any) -> tuple[Any, ...]:
    return index if isinstance(index, tuple) else (index,)


def _basic_view(t: Any, index: tuple[Any, ...]) -> Any:
    from . import _generated_ops as ops

    n_specified = sum(1 for i in index if i is not None and i is not Ellipsis)
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_specified > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    out = t
    dim = 0
    for item in index:
        if item is Ellipsis:
            dim += t.dim() - n_specified
        elif item is None:
            out = ops._call_unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, bool):
            raise IndexError("bool scalar indices are not supported yet")
        elif isinstance(item, int) or (hasattr(item, "__index__") and not hasattr(item, "_impl")):
            out = ops._call_select_int(out, dim, item.__index__())
        elif isinstance(item, slice):
            step = 1 if item.step is None else item.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            out = ops._call_slice_Tensor(out, dim, item.start, item.stop, step)
            dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(item).__name__})"
            )
    return out


def getitem(t: Any, index: Any) -> Any:
    return _basic_view(t, _normalize(index))


def setitem(t: Any, index: Any, value: Any) -> None:
    view = _basic_view(t, _normalize(index))
    from . import _generated_ops as ops

    if hasattr(value, "_impl"):
        ops._call_copy_(view, value, False)
    else:
        ops._call_fill__Scalar(view, value)
