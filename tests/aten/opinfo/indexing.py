"""OpInfo entries of the indexing family: index, index_put, index_select, gather,
scatter, scatter_add, scatter_reduce, index_add, index_copy, index_fill,
index_reduce, masked_fill, masked_scatter, masked_select, take, put, nonzero,
argwhere. References are written with NumPy fancy indexing / ufunc.at, or as
plain loops over the index where NumPy has no single call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import (
    ALL_DTYPES,
    ALL_NUMERIC,
    ErrorInput,
    OpInfo,
    SampleInput,
    make_tensor,
    rng,
    tensor_from,
)

# ---- helpers -------------------------------------------------------------------------


def _long(a: Any) -> Any:
    return ea.from_numpy(np.array(a, dtype=np.int64, order="C")).clone()  # keeps 0-d arrays 0-d


def _int32(a: Any) -> Any:
    return ea.from_numpy(np.array(a, dtype=np.int32, order="C")).clone()


def _mask(shape: tuple[int, ...]) -> Any:
    return ea.from_numpy(rng().integers(0, 2, size=shape).astype(np.bool_)).clone()


def _randint(high: int, shape: tuple[int, ...], low: int = 0) -> Any:
    return _long(rng().integers(low, high, size=shape))


def _ints(shape: tuple[int, ...], dtype: Any, low: int = -9, high: int = 10) -> Any:
    """Integer values in any dtype: sums and products of a few stay exact even in float16 /
    bfloat16, so accumulating ops match the reference whatever the order of the additions."""
    if dtype == ea.bool:
        return make_tensor(shape, dtype)
    if dtype == ea.uint8:
        low = max(low, 0)
    return tensor_from(rng().integers(low, high, size=shape), dtype).reshape(shape)


def _same_dtype(s: SampleInput) -> Any:
    return s.input.dtype


def _value_for(dtype: Any) -> Any:
    if dtype == ea.bool:
        return True
    return 3.5 if dtype.is_floating_point else 3


def _along(nd: int, dim: int, idx: Any) -> tuple[Any, ...]:
    """The NumPy index a[:, ..., idx] with idx at position dim."""
    return (slice(None),) * dim + (idx,)


# ---- index / index_put -------------------------------------------------------------------


def _np_index(indices: list[Any]) -> tuple[Any, ...]:
    return tuple(slice(None) if i is None else i for i in indices)


def _index_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((5, 4, 3), dtype)
    yield SampleInput(x, ([_randint(5, (6,))],), name="one tensor")
    yield SampleInput(x, ([_randint(5, (6,), low=-5)],), name="negative indices")
    yield SampleInput(x, ([None, _randint(4, (2, 3))],), name="2-d index on dim 1")
    yield SampleInput(x, ([_randint(5, (2, 1)), _randint(4, (3,))],), name="broadcast adjacent")
    yield SampleInput(x, ([_randint(5, (4,)), None, _randint(3, (4,))],), name="separated: to the front")
    yield SampleInput(x, ([None, _randint(4, (4,)), _randint(3, (4,))],), name="adjacent after a slice")
    yield SampleInput(x, ([_mask((5,))],), name="mask dim 0")
    yield SampleInput(x, ([_mask((5, 4))],), name="2-d mask")
    yield SampleInput(x, ([None, _mask((4, 3))],), name="mask on the last dims")
    yield SampleInput(x, ([_mask((5, 4, 3))],), name="full mask")
    yield SampleInput(x, ([_int32([0, 4, 1])],), name="int32 index")
    yield SampleInput(x, ([_long(np.zeros((0,), np.int64))],), name="empty index")
    yield SampleInput(make_tensor((4,), dtype), ([_long(2)],), name="0-dim index")
    yield SampleInput(make_tensor((0, 3), dtype), ([None, _long([2, 0])],), name="empty self")


def _index_ref(a: Any, indices: list[Any]) -> Any:
    return np.asarray(a)[_np_index(indices)]


def _index_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, ([_long([0, 5])],)), IndexError, r"index 5 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, ([None, _long([-5])],)), IndexError, r"index -5 is out of bounds for dimension 1 with size 4"
    )
    yield ErrorInput(
        SampleInput(x, ([make_tensor((2,), ea.float32)],)),
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    )
    yield ErrorInput(
        SampleInput(x, ([_long([0]), _long([0]), _long([0])],)),
        IndexError,
        r"too many indices for tensor of dimension 2 \(got 3\)",
    )
    yield ErrorInput(
        SampleInput(x, ([_long([0, 1]), _long([0, 1, 2])],)),
        IndexError,
        r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]",
    )
    yield ErrorInput(
        SampleInput(x, ([_mask((4,))],)),
        IndexError,
        r"The shape of the mask \[4\] at index 0 does not match the shape of the indexed tensor \[3, 4\]",
    )


def _index_put_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((5, 4), dtype)
    perm = _long(rng().permutation(5)[:3])
    yield SampleInput(x, ([perm], make_tensor((3, 4), dtype)), name="rows")
    yield SampleInput(x, ([perm], make_tensor((4,), dtype)), name="broadcast value")
    yield SampleInput(x, ([perm, _long([0, 3, 1])], make_tensor((), dtype)), name="points, scalar value")
    yield SampleInput(x, ([_mask((5, 4))], make_tensor((), dtype)), name="mask = scalar")
    yield SampleInput(x, ([None, _long([-1, 0])], make_tensor((5, 2), dtype)), name="negative columns")
    dup = _long([0, 1, 0, 0, 4])
    xi = _ints((5, 4), dtype)
    yield SampleInput(xi, ([dup], _ints((5, 4), dtype), True), name="accumulate with duplicates")
    yield SampleInput(xi, ([dup, _long([1, 1, 1, 2, 3])], _ints((5,), dtype), True), name="accumulate points")


def _index_put_ref(a: Any, indices: list[Any], values: Any, accumulate: bool = False) -> Any:
    out = np.array(a, copy=True)
    idx = _np_index(indices)
    if accumulate:
        np.add.at(out, idx, np.broadcast_to(values, out[idx].shape))
    else:
        out[idx] = values
    return out


def _index_put_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, ([_long([0, 3])], make_tensor((2, 4), ea.float32))),
        IndexError,
        r"index 3 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        SampleInput(x, ([_long([0, 1])], make_tensor((2, 4), ea.float64))),
        RuntimeError,
        "Index put requires the source and destination dtypes match, got Float for the destination "
        "and Double for the source",
    )
    yield ErrorInput(
        SampleInput(x, ([_long([0, 1])], make_tensor((3,), ea.float32))),
        RuntimeError,
        r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of shape "
        r"\[2, 4\]",
    )


# ---- index_select / gather / take ----------------------------------------------------------


def _index_select_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((4, 5, 3), dtype)
    for dim in (0, 1, 2, -1):
        n = x.shape[dim]
        yield SampleInput(x, (dim, _randint(n, (7,))), name=f"dim {dim}")
    yield SampleInput(x, (1, _int32([4, 0, 0])), name="int32")
    yield SampleInput(x, (0, _long(np.zeros((0,), np.int64))), name="empty index")
    yield SampleInput(x, (2, _long(1)), name="0-dim index")
    yield SampleInput(make_tensor((), dtype), (0, _long([0])), name="0-dim self")
    yield SampleInput(make_tensor((6,), dtype), (0, _randint(6, (40,))), name="1-d")


def _index_select_ref(a: Any, dim: int, index: Any) -> Any:
    a = np.asarray(a)
    if a.ndim == 0:
        return a.copy()
    return np.take(a, np.asarray(index).reshape(-1), axis=dim)


def _index_select_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (1, _long([0, 4]))), IndexError, r"index 4 is out of bounds for dimension 1 with size 4"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([-1]))), IndexError, r"index -1 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([[0]]))), IndexError, r"index_select\(\): Index is supposed to be a vector"
    )
    yield ErrorInput(
        SampleInput(x, (0, make_tensor((2,), ea.float32))),
        RuntimeError,
        r"index_select\(\): Expected dtype int32 or int64 for index",
    )
    yield ErrorInput(SampleInput(x, (2, _long([0]))), IndexError, r"Dimension out of range")


def _gather_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((4, 5, 3), dtype)
    yield SampleInput(x, (0, _randint(4, (6, 5, 3))), name="dim 0, larger along dim")
    yield SampleInput(x, (1, _randint(5, (2, 3, 2))), name="dim 1, smaller elsewhere")
    yield SampleInput(x, (-1, _randint(3, (4, 5, 3))), name="dim -1")
    yield SampleInput(x, (2, _long(np.zeros((4, 5, 0), np.int64))), name="empty index")
    yield SampleInput(x, (1, _randint(5, (4, 1, 3))), {"sparse_grad": False}, name="sparse_grad")
    yield SampleInput(make_tensor((), dtype), (0, _long(0)), name="0-dim")
    yield SampleInput(make_tensor((7,), dtype), (0, _randint(7, (50,))), name="1-d")


def _gather_ref(a: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
    a = np.asarray(a)
    index = np.asarray(index)
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(-1)].reshape(index.shape)
    dim = dim % a.ndim
    part = a[tuple(slice(None) if d == dim else slice(0, index.shape[d]) for d in range(a.ndim))]
    return np.take_along_axis(part, index, axis=dim)


def _gather_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([[0, 3]]))), RuntimeError, r"index 3 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, (1, _long([[-1]]))), RuntimeError, r"index -1 is out of bounds for dimension 1 with size 4"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([0]))),
        RuntimeError,
        "Index tensor must have the same number of dimensions as input tensor",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long(np.zeros((2, 5), np.int64)))),
        RuntimeError,
        r"Size does not match at dimension 1 expected index \[2, 5\] to be smaller than self \[3, 4\] "
        r"apart from dimension 0",
    )


def _take_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((3, 4), dtype)
    yield SampleInput(x, (_randint(12, (5,)),), name="1-d")
    yield SampleInput(x, (_randint(12, (2, 3), low=-12),), name="negatives, 2-d")
    yield SampleInput(x, (_long(5),), name="0-dim index")
    yield SampleInput(make_tensor((), dtype), (_long([0, 0, -1]),), name="0-dim self")
    yield SampleInput(x, (_long(np.zeros((0,), np.int64)),), name="empty")


def _take_ref(a: Any, index: Any) -> Any:
    return np.take(np.asarray(a).reshape(-1), np.asarray(index))


def _take_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((2, 3), ea.float32)
    yield ErrorInput(
        SampleInput(x, (_long([6]),)), IndexError, r"out of range: tried to access index 6 on a tensor of 6 elements"
    )
    yield ErrorInput(
        SampleInput(x, (_long([-7]),)), IndexError, r"out of range: tried to access index -7 on a tensor of 6 elements"
    )
    yield ErrorInput(SampleInput(x, (_int32([0]),)), RuntimeError, r"take\(\): Expected a long tensor for index")


# ---- scatter family ----------------------------------------------------------------------------


def _unique_scatter_index(shape: tuple[int, ...], dim: int, size: int) -> Any:
    """An index of `shape` whose values along `dim` are distinct (no write races)."""
    out = np.empty(shape, np.int64)
    for pos in np.ndindex(*(s for d, s in enumerate(shape) if d != dim)):
        line = rng().permutation(size)[: shape[dim]]
        sl = list(pos)
        sl.insert(dim, slice(None))
        out[tuple(sl)] = line
    return _long(out)


def _scatter_loop(
    a: Any, dim: int, index: Any, src: Any, combine: Any, include_self: bool = True, mean: bool = False
) -> Any:
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(a.shape if a.ndim else (1,))
    index = np.asarray(index)
    index = index.reshape(index.shape if index.ndim else (1,))
    src = np.broadcast_to(np.asarray(src), index.shape) if np.ndim(src) == 0 else np.asarray(src)
    src = src.reshape(src.shape if src.ndim else (1,))
    dim = dim % out.ndim
    count = np.ones(out.shape, np.int64) if include_self else np.zeros(out.shape, np.int64)
    seen = np.zeros(out.shape, bool)
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        t = tuple(target)
        v = src[pos]
        if not include_self and not seen[t]:
            out[t] = v
        else:
            out[t] = combine(out[t], v)
        seen[t] = True
        count[t] += 1
    if mean:
        nz = count > 0
        if out.dtype.kind == "f":
            out[nz] = out[nz] / count[nz]
        else:
            out[nz] = np.floor_divide(out[nz], count[nz])
    return out.reshape(a.shape)


def _scatter_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((4, 5), dtype)
    yield SampleInput(x, (0, _unique_scatter_index((3, 5), 0, 4), make_tensor((3, 5), dtype)), name="src dim 0")
    yield SampleInput(x, (1, _unique_scatter_index((4, 2), 1, 5), make_tensor((4, 6), dtype)), name="larger src")
    yield SampleInput(x, (-1, _unique_scatter_index((2, 3), 1, 5), _value_for(dtype)), name="value")
    yield SampleInput(x, (0, _long(np.zeros((0, 5), np.int64)), make_tensor((0, 5), dtype)), name="empty index")
    yield SampleInput(make_tensor((), dtype), (0, _long(0), make_tensor((), dtype)), name="0-dim")
    if dtype != ea.bool:
        xi = _ints((4, 5), dtype)
        dup = _randint(4, (6, 5))
        yield SampleInput(xi, (0, dup, _ints((6, 5), dtype)), {"reduce": "add"}, name="reduce add")
        yield SampleInput(
            xi, (0, _randint(4, (3, 5)), _ints((3, 5), dtype, -2, 3)), {"reduce": "multiply"}, name="reduce multiply"
        )
        yield SampleInput(x, (1, _randint(5, (4, 7)), 2), {"reduce": "add"}, name="value reduce add")


def _scatter_ref(a: Any, dim: int, index: Any, src: Any, reduce: str | None = None) -> Any:
    if reduce == "add":
        return _scatter_loop(a, dim, index, src, lambda x, y: x + y)
    if reduce == "multiply":
        return _scatter_loop(a, dim, index, src, lambda x, y: x * y)
    return _scatter_loop(a, dim, index, src, lambda x, y: y)


def _scatter_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    src = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([[0, 3]]), src)), RuntimeError, r"index 3 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([[-1]]), src)), RuntimeError, r"index -1 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([[0]]), make_tensor((3, 4), ea.float64))),
        RuntimeError,
        r"scatter\(\): Expected self.dtype to be equal to src.dtype",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long(np.zeros((2, 5), np.int64)), src)),
        RuntimeError,
        r"Expected index \[2, 5\] to be smaller than self \[3, 4\] apart from dimension 0 and to be "
        r"smaller size than src \[3, 4\]",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([[0]]), src), {"reduce": "max"}),
        RuntimeError,
        "reduce argument must be either add or multiply",
    )


def _scatter_add_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _ints((4, 5), dtype)
    yield SampleInput(x, (0, _randint(4, (7, 5)), _ints((7, 5), dtype)), name="duplicates dim 0")
    yield SampleInput(x, (1, _randint(5, (3, 9)), _ints((4, 9), dtype)), name="duplicates dim 1")
    yield SampleInput(_ints((6,), dtype), (0, _randint(6, (30,)), _ints((30,), dtype)), name="1-d")
    yield SampleInput(_ints((), dtype), (0, _long([0, 0]), _ints((2,), dtype)), name="0-dim self")


def _scatter_add_ref(a: Any, dim: int, index: Any, src: Any) -> Any:
    if np.asarray(a).dtype == np.bool_:
        return _scatter_loop(a, dim, index, src, lambda x, y: x or y)
    return _scatter_loop(a, dim, index, src, lambda x, y: x + y)


_REDUCERS = {
    "sum": lambda x, y: x + y,
    "prod": lambda x, y: x * y,
    "mean": lambda x, y: x + y,
    "amax": lambda x, y: max(x, y),
    "amin": lambda x, y: min(x, y),
}


def _scatter_reduce_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _ints((4, 5), dtype, -3, 4)
    for reduce in _REDUCERS:
        for include_self in (True, False):
            idx = _randint(4, (5, 5))
            src = _ints((5, 5), dtype, -3, 4)
            yield SampleInput(
                x, (0, idx, src, reduce), {"include_self": include_self}, name=f"{reduce} include_self={include_self}"
            )
    yield SampleInput(
        make_tensor((8,), dtype), (0, _randint(8, (20,)), make_tensor((20,), dtype), "amax"), name="1-d amax"
    )
    yield SampleInput(
        _ints((8,), dtype),
        (
            0,
            _randint(8, (20,)),
            _ints((20,), dtype),
            "mean",
        ),
        {"include_self": False},
        name="1-d mean",
    )


def _scatter_reduce_ref(a: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool = True) -> Any:
    return _scatter_loop(a, dim, index, src, _REDUCERS[reduce], include_self, mean=reduce == "mean")


def _scatter_reduce_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([[0]]), x, "max")),
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got max",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([[4]]), x, "sum")),
        RuntimeError,
        r"index 4 is out of bounds for dimension 0 with size 3",
    )


# ---- index_add / index_copy / index_fill / index_reduce --------------------------------------


def _index_add_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _ints((4, 5), dtype)
    yield SampleInput(x, (0, _randint(4, (6,)), _ints((6, 5), dtype)), name="duplicates dim 0")
    yield SampleInput(x, (1, _int32([4, 0, 4]), _ints((4, 3), dtype)), name="int32 dim 1")
    if dtype != ea.bool:
        alpha = 2.5 if dtype.is_floating_point else 3
        yield SampleInput(x, (0, _long([1, 1]), _ints((2, 5), dtype)), {"alpha": alpha}, name="alpha")
    yield SampleInput(_ints((), dtype), (0, _long([0]), _ints((), dtype)), name="0-dim")
    yield SampleInput(x, (0, _long(np.zeros((0,), np.int64)), _ints((0, 5), dtype)), name="empty")


def _index_add_ref(a: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(a.shape if a.ndim else (1,))
    source = np.asarray(source).reshape(np.asarray(source).shape if np.ndim(source) else (1,))
    idx = np.asarray(index).reshape(-1)
    if out.dtype == np.bool_:
        np.logical_or.at(out, _along(out.ndim, dim % out.ndim, idx), source)
    else:
        np.add.at(out, _along(out.ndim, dim % out.ndim, idx), alpha * source)
    return out.reshape(a.shape)


def _index_add_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([0, 3]), make_tensor((2, 4), ea.float32))),
        IndexError,
        r"index 3 is out of bounds for dimension 0 with size 3",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([0, 1]), make_tensor((3, 4), ea.float32))),
        RuntimeError,
        r"index_add\(\): Number of indices \(2\) should be equal to source.size\(dim\) \(3\)",
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([0]), make_tensor((1, 4), ea.float64))),
        RuntimeError,
        r"index_add\(\): self \(Float\) and source \(Double\) must have the same scalar type",
    )
    i = make_tensor((3,), ea.int64)
    yield ErrorInput(
        SampleInput(i, (0, _long([0]), make_tensor((1,), ea.int64)), {"alpha": 1.5}),
        RuntimeError,
        "alpha must not be a floating point number",
    )


def _index_copy_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((5, 4), dtype)
    yield SampleInput(x, (0, _long(rng().permutation(5)[:3]), make_tensor((3, 4), dtype)), name="dim 0")
    yield SampleInput(x, (1, _long([3, 0]), make_tensor((5, 2), dtype)), name="dim 1")
    yield SampleInput(make_tensor((), dtype), (0, _long(0), make_tensor((), dtype)), name="0-dim")


def _index_copy_ref(a: Any, dim: int, index: Any, source: Any) -> Any:
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(a.shape if a.ndim else (1,))
    source = np.asarray(source).reshape(np.asarray(source).shape if np.ndim(source) else (1,))
    out[_along(out.ndim, dim % out.ndim, np.asarray(index).reshape(-1))] = source
    return out.reshape(a.shape)


def _index_fill_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((5, 4), dtype)
    yield SampleInput(x, (0, _long([1, 3, 1]), _value_for(dtype)), name="scalar value, duplicates")
    yield SampleInput(x, (1, _long([-1, 0]), _value_for(dtype)), name="negative index")
    yield SampleInput(x, (1, _long(2), make_tensor((), dtype)), name="0-dim tensor value")
    yield SampleInput(make_tensor((), dtype), (0, _long([0]), _value_for(dtype)), name="0-dim self")


def _index_fill_ref(a: Any, dim: int, index: Any, value: Any) -> Any:
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(a.shape if a.ndim else (1,))
    out[_along(out.ndim, dim % out.ndim, np.asarray(index).reshape(-1))] = value
    return out.reshape(a.shape)


def _index_fill_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([3]), 1.0)), IndexError, r"index 3 is out of bounds for dimension 0 with size 3"
    )
    yield ErrorInput(
        SampleInput(x, (0, _long([0]), make_tensor((2,), ea.float32))),
        RuntimeError,
        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension",
    )
    yield ErrorInput(SampleInput(x, (0, _int32([0]), 1.0)), RuntimeError, "Expected dtype int64 for index")


def _index_reduce_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _ints((4, 3), dtype, -3, 4)
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield SampleInput(
                x,
                (0, _randint(4, (6,)), _ints((6, 3), dtype, -3, 4), reduce),
                {"include_self": include_self},
                name=f"{reduce} include_self={include_self}",
            )


def _index_reduce_ref(a: Any, dim: int, index: Any, source: Any, reduce: str, include_self: bool = True) -> Any:
    source = np.asarray(source)
    idx = np.broadcast_to(np.asarray(index).reshape([-1 if d == dim else 1 for d in range(source.ndim)]), source.shape)
    return _scatter_loop(a, dim, idx, source, _REDUCERS[reduce], include_self, mean=reduce == "mean")


def _index_reduce_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (0, _long([0]), make_tensor((1, 4), ea.float32), "sum")),
        RuntimeError,
        r"index_reduce\(\): Expected reduce to be one of prod, mean, amax or amin but got sum",
    )


# ---- masked ops ---------------------------------------------------------------------------------


def _masked_fill_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((3, 4)), _value_for(dtype)), name="same shape")
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((4,)), _value_for(dtype)), name="broadcast mask")
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((3, 4)), make_tensor((), dtype)), name="tensor value")
    yield SampleInput(
        make_tensor((4,), dtype), (_mask((3, 4)), _value_for(dtype)), broadcasts_input=True, name="mask broadcasts self"
    )
    yield SampleInput(make_tensor((), dtype), (_mask(()), _value_for(dtype)), name="0-dim")
    yield SampleInput(make_tensor((0, 4), dtype), (_mask((0, 4)), _value_for(dtype)), name="empty")


def _masked_fill_ref(a: Any, mask: Any, value: Any) -> Any:
    a = np.asarray(a)
    return np.where(mask, np.asarray(value, dtype=a.dtype), a)


def _masked_fill_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3,), ea.float32)
    yield ErrorInput(
        SampleInput(x, (make_tensor((3,), ea.uint8), 1.0)),
        RuntimeError,
        "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char",
    )
    yield ErrorInput(
        SampleInput(x, (_mask((3,)), make_tensor((1,), ea.float32))),
        RuntimeError,
        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension",
    )
    yield ErrorInput(SampleInput(x, (_mask((4,)), 1.0)), RuntimeError, r"size of tensor a \(3\) must match")


def _masked_scatter_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((3, 4)), make_tensor((12,), dtype)), name="same shape")
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((4,)), make_tensor((4, 5), dtype)), name="broadcast mask")
    yield SampleInput(make_tensor((), dtype), (_mask(()), make_tensor((1,), dtype)), name="0-dim")
    yield SampleInput(
        make_tensor((200, 300), dtype),
        (_mask((200, 300)), make_tensor((60000,), dtype)),
        name="large (parallel chunks)",
    )


def _masked_scatter_ref(a: Any, mask: Any, source: Any) -> Any:
    a = np.asarray(a)
    shape = np.broadcast_shapes(a.shape, np.shape(mask))
    out = np.array(np.broadcast_to(a, shape), copy=True)
    m = np.broadcast_to(mask, shape)
    out[m] = np.asarray(source).reshape(-1)[: int(m.sum())]
    return out


def _masked_scatter_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3,), ea.float32)
    yield ErrorInput(
        SampleInput(x, (ea.tensor([True, True, False]), make_tensor((1,), ea.float32))),
        RuntimeError,
        "Number of elements of source < number of ones in mask",
    )
    yield ErrorInput(
        SampleInput(x, (make_tensor((3,), ea.uint8), x)),
        RuntimeError,
        "masked_scatter_ only supports boolean masks, but got mask with dtype unsigned char",
    )
    yield ErrorInput(
        SampleInput(x, (_mask((3,)), make_tensor((3,), ea.float64))),
        RuntimeError,
        "masked_scatter_: expected self and source to have same dtypes but got Float and Double",
    )


def _masked_select_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((3, 4)),), name="same shape")
    yield SampleInput(make_tensor((3, 4), dtype), (_mask((4,)),), name="broadcast mask")
    yield SampleInput(make_tensor((4,), dtype), (_mask((3, 4)),), name="broadcast self")
    yield SampleInput(make_tensor((), dtype), (_mask(()),), name="0-dim")
    yield SampleInput(make_tensor((0, 3), dtype), (_mask((0, 3)),), name="empty")
    yield SampleInput(make_tensor((250, 400), dtype), (_mask((250, 400)),), name="large (parallel chunks)")


def _masked_select_ref(a: Any, mask: Any) -> Any:
    shape = np.broadcast_shapes(np.shape(a), np.shape(mask))
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _masked_select_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3,), ea.float32)
    yield ErrorInput(
        SampleInput(x, (make_tensor((3,), ea.uint8),)), RuntimeError, "masked_select: expected BoolTensor for mask"
    )


# ---- put, nonzero, argwhere -------------------------------------------------------------------------


def _put_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((3, 4), dtype)
    yield SampleInput(x, (_long(rng().permutation(12)[:5] - 6), make_tensor((5,), dtype)), name="distinct")
    yield SampleInput(
        _ints((3, 4), dtype), (_long([[0, 5], [5, 5]]), _ints((4,), dtype), True), name="accumulate duplicates"
    )
    yield SampleInput(make_tensor((), dtype), (_long([0]), make_tensor((1,), dtype)), name="0-dim self")


def _put_ref(a: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    a = np.asarray(a)
    out = np.array(a, copy=True).reshape(-1)
    idx = np.asarray(index).reshape(-1)
    src = np.asarray(source).reshape(-1)
    if accumulate:
        if out.dtype == np.bool_:
            np.logical_or.at(out, idx, src)
        else:
            np.add.at(out, idx, src)
    else:
        out[idx] = src
    return out.reshape(a.shape)


def _put_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((2, 3), ea.float32)
    yield ErrorInput(
        SampleInput(x, (_long([6]), make_tensor((1,), ea.float32))),
        IndexError,
        r"out of range: tried to access index 6 on a tensor of 6 elements",
    )
    yield ErrorInput(
        SampleInput(x, (_long([0, 1]), make_tensor((1,), ea.float32))),
        RuntimeError,
        r"put_\(\): Expected source and index to have the same number of elements",
    )
    yield ErrorInput(
        SampleInput(x, (_long([0]), make_tensor((1,), ea.float64))),
        RuntimeError,
        r"put_\(\): self and source expected to have the same dtype",
    )


def _nonzero_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(), (0,), (7,), (3, 4), (2, 3, 4), (300, 250)]:
        a = make_tensor(shape, dtype)
        if dtype != ea.bool and len(shape) and a.numel():
            a = ea.masked_fill(a, _mask(shape), 0)  # plenty of zeros
        yield SampleInput(a, name=f"shape {shape}")
    if dtype.is_floating_point:
        yield SampleInput(ea.tensor([0.0, -0.0, float("nan"), 1.0], dtype=dtype), name="-0.0 and nan")


def _nonzero_ref(a: Any) -> Any:
    return np.argwhere(np.asarray(a))


OPS = [
    OpInfo(
        "index",
        ea.index,
        ALL_DTYPES,
        _index_samples,
        ref=_index_ref,
        error_inputs=_index_errors,
        supports_out=True,
        supports_noncontiguous=True,
    ),
    OpInfo(
        "index_put",
        ea.index_put,
        ALL_DTYPES,
        _index_put_samples,
        ref=_index_put_ref,
        error_inputs=_index_put_errors,
        supports_out=False,
        result_dtype=_same_dtype,
    ),
    OpInfo(
        "index_select",
        ea.index_select,
        ALL_DTYPES,
        _index_select_samples,
        ref=_index_select_ref,
        error_inputs=_index_select_errors,
    ),
    OpInfo("gather", ea.gather, ALL_DTYPES, _gather_samples, ref=_gather_ref, error_inputs=_gather_errors),
    OpInfo("take", ea.take, ALL_DTYPES, _take_samples, ref=_take_ref, error_inputs=_take_errors),
    OpInfo(
        "scatter",
        ea.scatter,
        ALL_DTYPES,
        _scatter_samples,
        ref=_scatter_ref,
        error_inputs=_scatter_errors,
        result_dtype=_same_dtype,
    ),
    OpInfo(
        "scatter_add", ea.scatter_add, ALL_DTYPES, _scatter_add_samples, ref=_scatter_add_ref, result_dtype=_same_dtype
    ),
    OpInfo(
        "scatter_reduce",
        ea.scatter_reduce,
        ALL_NUMERIC,
        _scatter_reduce_samples,
        ref=_scatter_reduce_ref,
        error_inputs=_scatter_reduce_errors,
        result_dtype=_same_dtype,
        check_unsupported=False,
    ),
    OpInfo(
        "index_add",
        ea.index_add,
        ALL_DTYPES,
        _index_add_samples,
        ref=_index_add_ref,
        error_inputs=_index_add_errors,
        result_dtype=_same_dtype,
    ),
    OpInfo("index_copy", ea.index_copy, ALL_DTYPES, _index_copy_samples, ref=_index_copy_ref),
    OpInfo(
        "index_fill",
        ea.index_fill,
        ALL_DTYPES,
        _index_fill_samples,
        ref=_index_fill_ref,
        error_inputs=_index_fill_errors,
        supports_out=False,
    ),
    OpInfo(
        "index_reduce",
        ea.index_reduce,
        ALL_NUMERIC,
        _index_reduce_samples,
        ref=_index_reduce_ref,
        error_inputs=_index_reduce_errors,
        result_dtype=_same_dtype,
        check_unsupported=False,
    ),
    OpInfo(
        "masked_fill",
        ea.masked_fill,
        ALL_DTYPES,
        _masked_fill_samples,
        ref=_masked_fill_ref,
        error_inputs=_masked_fill_errors,
        supports_out=False,
    ),
    OpInfo(
        "masked_scatter",
        ea.masked_scatter,
        ALL_DTYPES,
        _masked_scatter_samples,
        ref=_masked_scatter_ref,
        error_inputs=_masked_scatter_errors,
        supports_out=False,
    ),
    OpInfo(
        "masked_select",
        ea.masked_select,
        ALL_DTYPES,
        _masked_select_samples,
        ref=_masked_select_ref,
        error_inputs=_masked_select_errors,
    ),
    OpInfo(
        "put",
        ea.put,
        ALL_DTYPES,
        _put_samples,
        ref=_put_ref,
        error_inputs=_put_errors,
        supports_out=False,
        result_dtype=_same_dtype,
    ),
    OpInfo("nonzero", ea.nonzero, ALL_DTYPES, _nonzero_samples, ref=_nonzero_ref),
    OpInfo("argwhere", ea.argwhere, ALL_DTYPES, _nonzero_samples, ref=_nonzero_ref, supports_out=False),
]
