"""Tensor.__getitem__ / __setitem__, and nonzero(as_tuple=...).

PyTorch's rules (which are NumPy's, with two differences noted below):

* Basic indices -- ints, slices with positive steps, None, ``...`` -- are applied
  one after the other as views (select / slice / unsqueeze): the result shares
  storage with the tensor, and writing through it is visible in the tensor.
* Advanced indices -- integer tensors, bool masks, lists and NumPy arrays, bool
  scalars -- are collected per dimension of that view and given to the ``index``
  operator (``index_put_`` for assignment): the result is a copy. Integer index
  tensors broadcast together; when they sit next to each other their result
  dimensions take their place, when something separates them they go first.
  A k-dim mask stands for the k integer tensors of its ``nonzero()`` coordinates.
* Differences from NumPy (as PyTorch): an int is always a basic index (a select),
  so ``x[0, :, [1, 2]]`` has shape ``(x.shape[1], 2)``; and a short list holding a
  slice, None, ``...``, a tensor or another sequence is read as a tuple.

Assignment: ``x[basic] = v`` copies v into the view (any dtype, broadcast);
``x[advanced] = v`` is ``index_put_`` (v must have x's dtype; Python numbers take
it). Both bump x's version counter.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from . import _C, _dtypes, _factories
from ._generated import _ops as ops
from ._tensor import Tensor

_INVALID = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})"


def _is_ndarray(x: Any) -> bool:
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def _is_sequence(x: Any) -> bool:
    """PySequence_Check, minus str/bytes (they are never indices)."""
    if isinstance(x, (str, bytes, bytearray, dict)):
        return False
    return (
        isinstance(x, (list, tuple, range))
        or _is_ndarray(x)
        or (hasattr(x, "__len__") and hasattr(x, "__getitem__") and not isinstance(x, Tensor))
    )


def _treat_as_tuple(index: Any) -> bool:
    """NumPy's old heuristic, kept by PyTorch: a short list of slices/None/.../tensors/sequences is a tuple."""
    if isinstance(index, tuple):
        return True
    if isinstance(index, Tensor) or _is_ndarray(index) or not _is_sequence(index):
        return False
    try:
        n = len(index)
    except TypeError:
        return False
    if n >= 32:
        return False
    for item in index:
        if item is None or item is Ellipsis or isinstance(item, (slice, Tensor)) or _is_sequence(item):
            return True
    return False


def _is_bool_scalar(x: Any) -> bool:
    return isinstance(x, bool) or (type(x).__name__ in ("bool_", "bool") and type(x).__module__ == "numpy")


def _sequence_to_index(seq: Any) -> Tensor:
    """A list / NumPy array used as an index: bool and uint8 stay, anything else becomes int64."""
    if _is_ndarray(seq):
        kind = seq.dtype.kind
        if kind == "b" or (kind == "u" and seq.dtype.itemsize == 1):
            t = _factories.from_numpy(seq.copy())
            return t
        if kind not in "biuf":
            raise IndexError(_INVALID.format(f"numpy.ndarray of dtype {seq.dtype}"))
        return _factories.from_numpy(seq.astype("int64"))

    try:
        t = _C._tensor_from_data(seq, None, None)
    except (TypeError, ValueError) as e:
        msg = str(e)
        if msg.startswith(("too many dimensions", "new(): self-referential")):
            raise  # as PyTorch: the list itself is refused, before it is read as an index
        raise IndexError(f"{_INVALID.format(type(seq).__name__)}: {e}") from None
    if t.dtype in (_dtypes.bool, _dtypes.uint8, _dtypes.int64):
        return t
    return t.to(_dtypes.int64)


def _slice_args(s: slice) -> tuple[Any, Any, int]:
    step = 1 if s.step is None else s.step.__index__()
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = None if s.start is None else s.start.__index__()
    stop = None if s.stop is None else s.stop.__index__()
    return start, stop, step


def _prepare(items: tuple[Any, ...]) -> tuple[list[Any], int]:
    """Converts sequences to tensors; returns the items and how many dims they index."""
    out: list[Any] = []
    specified = 0
    ellipses = 0
    for item in items:
        if item is None or _is_bool_scalar(item):
            pass
        elif item is Ellipsis:
            ellipses += 1
            if ellipses > 1:
                raise IndexError("an index can only have a single ellipsis ('...')")
        elif isinstance(item, Tensor):
            if item.dtype in (_dtypes.bool, _dtypes.uint8):
                specified += item.dim()
            else:
                specified += 1
        elif isinstance(item, (int, slice)):
            specified += 1
        elif _is_sequence(item):
            item = _sequence_to_index(item)
            specified += item.dim() if item.dtype in (_dtypes.bool, _dtypes.uint8) else 1
        elif hasattr(item, "__index__"):
            item = item.__index__()
            specified += 1
        else:
            raise IndexError(_INVALID.format(type(item).__name__))
        out.append(item)
    return out, specified


def _long_index(value: bool) -> Tensor:
    return _C._tensor_from_data([0] if value else [], _dtypes.int64, None)


def _select(t: Tensor, dim: int, i: int, real_dim: int) -> Tensor:
    size = t.shape[dim]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
    return ops._call_select_int(t, dim, i)


def apply_slicing(t: Tensor, index: Any) -> tuple[Tensor, list[Any] | None]:
    """(the view made by the basic indices, the advanced indices per dim of that view or None)."""
    items, specified = _prepare(tuple(index) if _treat_as_tuple(index) else (index,))
    ndim = t.dim()
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {specified})")
    out = t
    dim = 0  # position in `out`
    real = 0  # dims of t consumed so far (for error messages)
    slots: list[Any] = []  # advanced indices for ops.index: None or a tensor per dim (a mask covers mask.dim())
    covered = 0  # dims of `out` described by `slots`

    def record(idx: Tensor, ndims: int) -> None:
        nonlocal covered
        while covered < dim:
            slots.append(None)
            covered += 1
        slots.append(idx)
        covered += ndims

    for item in items:
        if item is None:
            out = ops._call_unsqueeze(out, dim)
            dim += 1
        elif item is Ellipsis:
            dim += ndim - specified
            real += ndim - specified
        elif _is_bool_scalar(item):
            out = ops._call_unsqueeze(out, dim)
            record(_long_index(bool(item)), 1)
            dim += 1
        elif isinstance(item, int):
            out = _select(out, dim, item, real)
            real += 1
        elif isinstance(item, slice):
            start, stop, step = _slice_args(item)
            if not (start is None and stop is None and step == 1):
                out = ops._call_slice_Tensor(out, dim, start, stop, step)
            dim += 1
            real += 1
        else:  # a tensor
            dt = item.dtype
            is_mask = dt in (_dtypes.bool, _dtypes.uint8)
            if item.dim() == 0 and not is_mask and not dt.is_floating_point:
                out = _select(out, dim, item.item(), real)
                real += 1
            elif item.dim() == 0 and is_mask:
                out = ops._call_unsqueeze(out, dim)
                record(_long_index(bool(item.item())), 1)
                dim += 1
            else:
                if dt == _dtypes.uint8:
                    warnings.warn(
                        "indexing with dtype ember.aten.uint8 is now deprecated, please use a dtype ember.aten.bool "
                        "instead.",
                        UserWarning,
                        stacklevel=4,
                    )
                k = item.dim() if is_mask else 1
                record(item, k)
                dim += k
                real += k
    if not slots:
        return (ops._call_alias(t) if out is t else out), None
    return out, slots


def getitem(t: Tensor, index: Any) -> Tensor:
    tp = type(index)
    if tp is int:  # t[i], a dataset's __getitem__: select's own checks, PyTorch's messages on failure
        try:
            return ops._call_select_int(t, 0, index)
        except IndexError:
            if t.dim() == 0:
                raise IndexError(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                    "convert a 0-dim tensor to a number"
                ) from None
            _select(t, 0, index, 0)  # raises the out-of-bounds message
            raise
    if tp is Tensor and index.dim() > 0 and index.dtype._name in ("int64", "bool"):
        return ops._call_index_Tensor(t, [index])
    if tp is slice:
        start, stop, step = _slice_args(index)
        if t.dim() == 0:
            raise IndexError("too many indices for tensor of dimension 0 (got 1)")
        return ops._call_slice_Tensor(t, 0, start, stop, step)
    view, slots = apply_slicing(t, index)
    if slots is None:
        return view
    return ops._call_index_Tensor(view, slots)


def _is_number(v: Any) -> bool:
    if isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, complex):
        return False
    return isinstance(v, numbers.Number) or _is_bool_scalar(v)


def setitem(t: Tensor, index: Any, value: Any) -> None:
    if isinstance(value, Tensor):
        number = False
    elif _is_number(value):
        number = True
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {t.type()}")
    view, slots = apply_slicing(t, index)
    if not number:
        # leading size-1 dims of the value do not take part (x[i] = v[None] works)
        shape = value.shape
        k = 0
        while k < len(shape) and shape[k] == 1:
            k += 1
        if k:
            value = ops._call_view(value, tuple(shape[k:]))
    if slots is None:
        if number:
            ops._call_fill__Scalar(view, value)
        else:
            ops._call_copy_(view, value, False)
        return
    if number:
        value = ops._call_scalar_tensor(value, t.dtype, None, t.device, None)
    ops._call_index_put_(view, slots, value, False)


# ---- nonzero(as_tuple=...) ------------------------------------------------------------


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    """nonzero(input, *, out=None, as_tuple=False) -> Tensor or tuple of Tensors

    The coordinates of the non-zero elements of ``input``, row-major: a ``(n, input.dim())``
    int64 tensor, or with ``as_tuple=True`` one 1-d tensor per dimension (a 0-dim input
    counts as 1-d), which indexes ``input`` directly.

    >>> ember.aten.nonzero(ember.aten.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    if as_tuple:
        if out is not None:
            raise TypeError("nonzero(): out= is not supported together with as_tuple=True")
        return tuple(ops._call_nonzero_numpy(input))
    if out is not None:
        return ops._call_nonzero_out(input, out)
    return ops._call_nonzero(input)


def _tensor_nonzero(self: Tensor, *, as_tuple: bool = False) -> Any:
    return nonzero(self, as_tuple=as_tuple)


_tensor_nonzero.__name__ = "nonzero"


def install(tensor_cls: type) -> None:
    """The hand-written methods of the indexing family (ember.aten imports ``nonzero`` itself)."""
    tensor_cls.nonzero = _tensor_nonzero  # type: ignore[attr-defined]
    # t[index] and t[index] = value (declared in _tensor.Tensor for the type checker only: this
    # module imports _tensor, so the class body cannot reach these without a call-time import)
    setattr(tensor_cls, "__getitem__", getitem)  # noqa: B010 (mypy: a method of a type)
    setattr(tensor_cls, "__setitem__", setitem)  # noqa: B010
