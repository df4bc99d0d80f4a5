"""OpInfo entries: reductions, scans, sorting, unique and histograms.

Samples cover the whole tensor, single dims (positive and negative), several dims,
keepdim, 0-dim and empty inputs; NumPy is the reference (with the tie rules written
out where NumPy has none: the first extreme index, stable sorts, lower medians).
Ops whose out= dtype is the dtype computed in (sum, prod, cumsum: as PyTorch) and
the in-place cumsum_/cumprod_ are checked in test_reductions.py instead of by the
table's generic out=/in-place rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import (
    ALL_DTYPES,
    ALL_NUMERIC,
    FLOAT_DTYPES,
    INT_DTYPES,
    ErrorInput,
    OpInfo,
    SampleInput,
    make_tensor,
    tensor_from,
)

# ---- samples ---------------------------------------------------------------------

_SHAPES = [(), (5,), (3, 4), (2, 3, 4)]


def _dims(shape: tuple[int, ...], multi: bool) -> list[Any]:
    if not shape:
        return [0, -1]
    out: list[Any] = [0, -1]
    if len(shape) == 3 and multi:
        out += [(0, 2), (-1, 1), (0, 1, 2)]
    return out


def reduction_samples(
    op: OpInfo,
    dtype: Any,
    *,
    multi: bool = True,
    empty_ok: bool = True,
    keepdim: bool = True,
    **kw: Any,
) -> Iterator[SampleInput]:
    """op(x), op(x, dim), op(x, dim, keepdim=...) over 0-dim, 1-3 dim and empty inputs."""
    for shape in _SHAPES:
        t = make_tensor(shape, dtype, **kw)
        yield SampleInput(t, name=f"{shape} all")
        for d in _dims(shape, multi):
            yield SampleInput(t, (d,), name=f"{shape} dim={d}")
            if keepdim:
                yield SampleInput(t, (d,), {"keepdim": True}, name=f"{shape} dim={d} keepdim")
    # empty reductions (sum of nothing) and reductions with empty outputs
    e = make_tensor((2, 0, 3), dtype, **kw)
    if empty_ok:
        yield SampleInput(make_tensor((0,), dtype, **kw), name="(0,) all")
        yield SampleInput(e, (1,), name="reduce the empty dim")
        if keepdim:
            yield SampleInput(e, (1,), {"keepdim": True}, name="reduce the empty dim keepdim")
    yield SampleInput(e, (0,), name="empty output")


def _with_nans(dtype: Any, shape: tuple[int, ...], frac: float = 0.3, **kw: Any) -> Any:
    a = make_tensor(shape, dtype, **kw).float().numpy().astype(np.float64)
    if a.size:
        rng = np.random.default_rng(7)
        a[rng.random(a.shape) < frac] = np.nan
    return tensor_from(a, dtype)


def nan_reduction_samples(op: OpInfo, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    yield from reduction_samples(op, dtype, **kw)
    if dtype.is_floating_point:
        t = _with_nans(dtype, (4, 6))
        yield SampleInput(t, name="nan all")
        yield SampleInput(t, (1,), name="nan dim 1")
        yield SampleInput(t, (0,), {"keepdim": True}, name="nan dim 0 keepdim")


def single_dim_samples(op: OpInfo, dtype: Any, *, empty_ok: bool = False, **kw: Any) -> Iterator[SampleInput]:
    """op(x, dim[, keepdim]) for ops reducing exactly one dim (max.dim, median.dim, ...)."""
    for shape in _SHAPES:
        t = make_tensor(shape, dtype, **kw)
        for d in _dims(shape, False):
            yield SampleInput(t, (d,), name=f"{shape} dim={d}")
            yield SampleInput(t, (d,), {"keepdim": True}, name=f"{shape} dim={d} keepdim")
    yield SampleInput(make_tensor((2, 0, 3), dtype, **kw), (0,), name="empty output")


def scan_samples(op: OpInfo, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    for shape in _SHAPES:
        t = make_tensor(shape, dtype, **kw)
        for d in _dims(shape, False) + ([1] if len(shape) == 3 else []):
            yield SampleInput(t, (d,), name=f"{shape} dim={d}")
    yield SampleInput(make_tensor((2, 0, 3), dtype, **kw), (1,), name="empty")
    # a long scan dim with a short contiguous inner dim (the column loop)
    yield SampleInput(make_tensor((70, 3), dtype, **kw), (0,), name="columns")


def sort_samples(op: OpInfo, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    for shape in _SHAPES:
        t = make_tensor(shape, dtype)
        for d in _dims(shape, False):
            yield SampleInput(t, (d,), name=f"{shape} dim={d}")
            yield SampleInput(t, (d, True), name=f"{shape} dim={d} descending")
    yield SampleInput(make_tensor((2, 0, 3), dtype), (1,), name="empty")
    # long rows with many ties: the radix path, stability
    yield SampleInput(make_tensor((3, 300), dtype), (1,), name="long rows")
    yield SampleInput(make_tensor((300, 2), dtype), (0, True), name="long columns descending")


# ---- references ---------------------------------------------------------------------


def _axis(a: Any, dim: Any) -> Any:
    a = np.asarray(a)
    if dim is None or a.ndim == 0:
        return None
    if isinstance(dim, (int, np.integer)):
        return int(dim)
    return tuple(dim) if len(dim) else None


def _np_reduce(fn: Any, out_dtype: Any = None) -> Any:
    def ref(a: Any, dim: Any = None, keepdim: bool = False, **_: Any) -> Any:
        a = np.asarray(a)
        kwargs = {"dtype": out_dtype} if out_dtype is not None else {}
        r = fn(a, axis=_axis(a, dim), keepdims=keepdim, **kwargs)
        if a.ndim == 0:
            r = np.asarray(r).reshape(())
        return np.asarray(r)

    return ref


def _sum_ref(a: Any, dim: Any = None, keepdim: bool = False, **_: Any) -> Any:
    a = np.asarray(a)
    dt = np.int64 if a.dtype.kind in "biu" else np.float64
    return _np_reduce(np.sum, dt)(a, dim, keepdim)


def _nansum_ref(a: Any, dim: Any = None, keepdim: bool = False, **_: Any) -> Any:
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        return _sum_ref(a, dim, keepdim)
    return _np_reduce(np.nansum)(a, dim, keepdim)


def _prod_ref(a: Any, dim: Any = None, keepdim: bool = False, **_: Any) -> Any:
    a = np.asarray(a)
    dt = np.int64 if a.dtype.kind in "biu" else np.float64
    return _np_reduce(np.prod, dt)(a, dim, keepdim)


def _argext(a: Any, dim: Any, keepdim: bool, is_max: bool) -> Any:
    """The first index of the extreme (NaN counts as the most extreme)."""
    a = np.asarray(a)
    if dim is None or a.ndim == 0:
        flat = a.reshape(-1)
        i = _first_ext(flat, is_max)
        r = np.asarray(i, dtype=np.int64)
        return r.reshape((1,) * a.ndim) if keepdim else r
    am = np.moveaxis(a, dim, -1)
    r = np.zeros(am.shape[:-1], dtype=np.int64)
    for pos in np.ndindex(r.shape):
        r[pos] = _first_ext(am[pos], is_max)
    return np.expand_dims(r, dim) if keepdim else r


def _first_ext(v: Any, is_max: bool) -> int:
    v = np.asarray(v)
    if v.dtype.kind == "f" and np.isnan(v).any():
        return int(np.argmax(np.isnan(v)))
    return int(np.argmax(v) if is_max else np.argmin(v))


def _ext_ref(is_max: bool) -> Any:
    def ref(a: Any, dim: Any = None, keepdim: bool = False) -> Any:
        a = np.asarray(a)
        fn = np.max if is_max else np.min
        if dim is None:
            return np.asarray(fn(a))
        vals = np.asarray(fn(a, axis=_axis(a, dim), keepdims=keepdim))
        if a.ndim == 0:
            vals = vals.reshape(())
        return vals, _argext(a, dim, keepdim, is_max)

    return ref


def _var_ref(sqrt: bool, with_mean: bool = False) -> Any:
    def ref(a: Any, dim: Any = None, unbiased: bool = True, keepdim: bool = False, correction: Any = None) -> Any:
        a = np.asarray(a, dtype=np.float64)
        if isinstance(dim, bool):  # var(x, unbiased)
            unbiased, dim = dim, None
        ddof = (1 if unbiased else 0) if correction is None else correction
        ax = _axis(a, dim)
        n = a.size if ax is None else int(np.prod([a.shape[i] for i in np.atleast_1d(ax)]))
        mean = np.mean(a, axis=ax, keepdims=True) if a.size else np.full([1] * a.ndim, np.nan)
        ss = np.sum((a - mean) ** 2, axis=ax, keepdims=keepdim)
        v = ss / max(0, n - ddof) if n - ddof > 0 else ss / 0.0
        v = np.asarray(np.sqrt(v) if sqrt else v)
        if a.ndim == 0:
            v = v.reshape(())
        if not with_mean:
            return v
        m = np.asarray(np.mean(a, axis=ax, keepdims=keepdim))
        return v, (m.reshape(()) if a.ndim == 0 else m)

    return ref


def _vector_norm_ref(a: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    a = np.abs(np.asarray(a, dtype=np.float64))
    ax = _axis(a, dim)
    if ord == "fro" or ord is None:
        ord = 2
    if ord == 0:
        r = np.sum(a != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    elif ord == np.inf:
        r = np.max(a, axis=ax, keepdims=keepdim)
    elif ord == -np.inf:
        r = np.min(a, axis=ax, keepdims=keepdim)
    else:
        r = np.sum(a**ord, axis=ax, keepdims=keepdim) ** (1.0 / ord)
    r = np.asarray(r)
    return r.reshape(()) if a.ndim == 0 else r


def _norm_ref(a: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    return _vector_norm_ref(a, p, dim, keepdim)


def _logsumexp_ref(a: Any, dim: Any, keepdim: bool = False) -> Any:
    a = np.asarray(a, dtype=np.float64)
    ax = _axis(a, dim)
    m = np.max(a, axis=ax, keepdims=True) if a.size else np.zeros([1] * a.ndim)
    m = np.where(np.isinf(m), 0.0, m)
    r = np.log(np.sum(np.exp(a - m), axis=ax, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=ax) if ax is not None else r.reshape(())
    r = np.asarray(r)
    return r.reshape(()) if a.ndim == 0 else r


def _scan_ref(fn: Any, int_dtype: Any = np.int64) -> Any:
    def ref(a: Any, dim: int, dtype: Any = None) -> Any:
        a = np.asarray(a)
        if a.dtype.kind in "biu":
            a = a.astype(int_dtype)
        if a.ndim == 0:
            return np.asarray(a)
        return fn(a, axis=dim)

    return ref


def _cum_ext_ref(is_max: bool) -> Any:
    def ref(a: Any, dim: int) -> Any:
        a = np.asarray(a)
        if a.ndim == 0:
            return a.copy(), np.asarray(0, dtype=np.int64)
        vals = np.empty_like(a)
        idx = np.empty(a.shape, dtype=np.int64)
        am = np.moveaxis(a, dim, -1)
        vm = np.moveaxis(vals, dim, -1)
        im = np.moveaxis(idx, dim, -1)
        for pos in np.ndindex(am.shape[:-1]):
            row = am[pos]
            best, bi = None, 0
            for i, x in enumerate(row):
                take = best is None or (x != x) or (best == best and (x >= best if is_max else x <= best))
                if take:
                    best, bi = x, i
                vm[(*pos, i)] = best
                im[(*pos, i)] = bi
        return vals, idx

    return ref


def _stable_key(a: Any, descending: bool) -> Any:
    k = np.asarray(a).astype(np.float64)
    k = np.where(np.isnan(k), np.inf, k)  # (NaN sorts last; tests use no NaN and inf together)
    return -k if descending else k


def _sort_ref(a: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    a = np.asarray(a)
    if a.ndim == 0:
        return a.copy(), np.asarray(0, dtype=np.int64)
    idx = np.argsort(_stable_key(a, descending), axis=dim, kind="stable")
    return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)


def _argsort_ref(a: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    return _sort_ref(a, dim, descending)[1]


def _topk_ref(a: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    a = np.asarray(a)
    v, i = _sort_ref(a if a.ndim else a.reshape(1), dim, largest)
    v, i = np.take(v, range(k), axis=dim), np.take(i, range(k), axis=dim)
    if a.ndim == 0 and k == 1:
        v, i = v.reshape(()), i.reshape(())
    return v, i


def _pick_ref(pick: Any) -> Any:
    """Reference of ops that read one entry per row of the stably sorted rows."""

    def ref(a: Any, *args: Any, **kwargs: Any) -> Any:
        a = np.asarray(a)
        dim, keepdim, k = pick.parse(a, *args, **kwargs)
        x = a.reshape(1) if a.ndim == 0 else a
        d = 0 if a.ndim == 0 else dim
        xm = np.moveaxis(x, d, -1)
        vals = np.empty(xm.shape[:-1], dtype=a.dtype)
        idx = np.empty(xm.shape[:-1], dtype=np.int64)
        for pos in np.ndindex(xm.shape[:-1]):
            row = xm[pos]
            order = np.argsort(_stable_key(row, False), kind="stable")
            j = pick.choose(row, order, k)
            vals[pos], idx[pos] = row[j], j
        if keepdim and a.ndim:
            vals, idx = np.expand_dims(vals, d), np.expand_dims(idx, d)
        if pick.whole and not args and not kwargs:
            return vals.reshape(())
        return vals, idx

    return ref


def quickselect_position(row: Any, k: int) -> int:
    """The input position kthvalue reports for the k-th smallest (0-based) of `row`, as
    PyTorch's CPU kernel chooses among equal values: a median-of-three quickselect (NaN
    largest) over a copy of the row; the answer is the element that lands at position k."""
    v = [float(x) for x in row]
    ix = list(range(len(v)))

    def gt(a: float, b: float) -> bool:
        return (math.isnan(a) or a > b) and not math.isnan(b)

    def swap(a: int, b: int) -> None:
        v[a], v[b] = v[b], v[a]
        ix[a], ix[b] = ix[b], ix[a]

    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(v[lo], v[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(v[lo + 1], v[hi]):
            swap(lo + 1, hi)
        if gt(v[lo], v[hi]):
            swap(lo, hi)
        if gt(v[lo + 1], v[lo]):
            swap(lo + 1, lo)
        pivot, i, j = v[lo], lo + 1, hi
        while True:
            i += 1
            while gt(pivot, v[i]):
                i += 1
            j -= 1
            while gt(v[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ix[k]


class _Kth:
    whole = False

    @staticmethod
    def parse(a: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        return dim, keepdim, k

    @staticmethod
    def choose(row: Any, order: Any, k: int) -> int:
        return quickselect_position(row, k - 1)


class _Median:
    whole = True
    ignore_nan = False

    @classmethod
    def parse(cls, a: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return (0 if dim is None else dim), keepdim, 0

    @classmethod
    def choose(cls, row: Any, order: Any, k: int) -> int:
        nan = np.isnan(row.astype(np.float64))
        if nan.any() and not cls.ignore_nan:
            return int(np.argmax(nan))
        m = int((~nan).sum())
        return int(order[(m - 1) // 2 if m else 0])


class _NanMedian(_Median):
    ignore_nan = True


class _Mode:
    whole = False

    @staticmethod
    def parse(a: Any, dim: int = -1, keepdim: bool = False) -> Any:
        return dim, keepdim, 0

    @staticmethod
    def choose(row: Any, order: Any, k: int) -> int:
        s = row[order]
        best, pos, b = 0, 0, 0
        while b < len(s):
            e = b + 1
            while e < len(s) and s[e] == s[b]:
                e += 1
            if e - b > best:
                best, pos = e - b, e - 1
            b = e
        return int(order[pos])


def _median_ref_all(a: Any) -> Any:
    a = np.asarray(a)
    return _pick_ref(_Median)(a.reshape(-1))


def _unique_ref(
    a: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    a = np.asarray(a)
    if dim is None:
        u, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape).astype(np.int64)
    else:
        u, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inv = inv.reshape(-1).astype(np.int64)
    out: list[Any] = [u]
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt.astype(np.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_consecutive_ref(a: Any, return_inverse: bool = False, return_counts: bool = False, dim: Any = None) -> Any:
    a = np.asarray(a)
    flat = a.reshape(-1)
    starts = [i for i in range(len(flat)) if i == 0 or flat[i] != flat[i - 1]]
    vals = flat[starts] if len(flat) else flat[:0]
    inv = np.cumsum([1 if (i == 0 or flat[i] != flat[i - 1]) else 0 for i in range(len(flat))]) - 1
    cnt = np.diff([*starts, len(flat)])
    out: list[Any] = [vals]
    if return_inverse:
        out.append(np.asarray(inv, dtype=np.int64).reshape(a.shape))
    if return_counts:
        out.append(np.asarray(cnt, dtype=np.int64))
    return out[0] if len(out) == 1 else tuple(out)


# ---- result dtypes ----------------------------------------------------------------------


def _int64_for_integral(s: SampleInput) -> Any:
    dt = s.input.dtype
    return ea.int64 if (dt == ea.bool or not dt.is_floating_point) else dt


def _float_for_integral(s: SampleInput) -> Any:
    dt = s.input.dtype
    return dt if dt.is_floating_point else ea.get_default_dtype()


def _logical_dtype(s: SampleInput) -> Any:
    return ea.uint8 if s.input.dtype == ea.uint8 else ea.bool


# ---- error inputs --------------------------------------------------------------------------


def _dim_errors(name: str, fn_args: tuple[Any, ...] = ()) -> Any:
    def errors(op: OpInfo) -> Iterator[ErrorInput]:
        x = make_tensor((2, 3), ea.float32)
        yield ErrorInput(
            SampleInput(x, (*fn_args, 2)),
            IndexError,
            r"Dimension out of range \(expected to be in range "
            r"of \[-2, 1\], but got 2\)",
        )
        yield ErrorInput(SampleInput(x, (*fn_args, -3)), IndexError, "Dimension out of range")

    return errors


def _chain(*makers: Any) -> Any:
    def errors(op: OpInfo) -> Iterator[ErrorInput]:
        for m in makers:
            yield from m(op)

    return errors


def _empty_ext_errors(name: str) -> Any:
    def errors(op: OpInfo) -> Iterator[ErrorInput]:
        e = ea.empty((0,))
        yield ErrorInput(
            SampleInput(e),
            RuntimeError,
            rf"{name}\(\): Expected reduction dim to be specified for input.numel\(\) == 0",
        )
        yield ErrorInput(
            SampleInput(ea.empty((2, 0)), (1,)),
            IndexError,
            rf"{name}\(\): Expected reduction dim 1 to have non-zero size",
        )

    return errors


def _mean_errors(op: OpInfo) -> Iterator[ErrorInput]:
    i = make_tensor((3,), ea.int64)
    yield ErrorInput(
        SampleInput(i),
        RuntimeError,
        "mean\\(\\): could not infer output dtype. Input dtype must be "
        "either a floating point or complex dtype. Got: Long",
    )
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32), (), {"dtype": ea.int32}),
        RuntimeError,
        "Optional dtype must be either a floating point or complex dtype. Got: Int",
    )


def _var_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.int64)),
        RuntimeError,
        "std and var only support floating point and complex dtypes",
    )


def _norm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(make_tensor((3,), ea.int64)), RuntimeError, "Expected a floating point")
    yield ErrorInput(
        SampleInput(ea.empty((0,)), (float("inf"),)), RuntimeError, "cannot compute the inf norm on an empty tensor"
    )


def _kth_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((2, 3), ea.float32)
    yield ErrorInput(SampleInput(x, (4,)), RuntimeError, "kthvalue\\(\\): selected number k out of range")
    yield ErrorInput(SampleInput(x, (0,)), RuntimeError, "selected number k out of range")
    yield ErrorInput(SampleInput(x, (1, 2)), IndexError, "Dimension out of range")


def _topk_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((2, 3), ea.float32)
    yield ErrorInput(SampleInput(x, (4,)), RuntimeError, "selected index k out of range")
    yield ErrorInput(SampleInput(x, (-1,)), RuntimeError, "selected index k out of range")


def _bincount_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ea.tensor([1, -1])), RuntimeError, "bincount only supports 1-d non-negative integral")
    yield ErrorInput(SampleInput(ea.tensor([[1, 2]])), RuntimeError, "bincount only supports 1-d")
    yield ErrorInput(SampleInput(ea.tensor([1.0, 2.0])), RuntimeError, "integral inputs")
    yield ErrorInput(SampleInput(ea.tensor([1, 2]), (), {"minlength": -1}), RuntimeError, "minlength should be >= 0")
    yield ErrorInput(
        SampleInput(ea.tensor([1, 2]), (ea.tensor([1.0]),)),
        RuntimeError,
        "weights should be 1-d and have the same length as input",
    )


def _histc_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((5,), ea.float32)
    yield ErrorInput(SampleInput(x, (0,)), RuntimeError, "bins must be > 0")
    yield ErrorInput(SampleInput(x, (4, 3.0, 1.0)), RuntimeError, "max must be larger than min")
    yield ErrorInput(SampleInput(ea.tensor([1.0, float("inf")])), RuntimeError, "is not finite")


def _median_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(ea.empty((2, 0)), (1,)), IndexError, r"median\(\): Expected reduction dim 1 to have non-zero size"
    )
    yield ErrorInput(SampleInput(ea.tensor([True, False])), RuntimeError, "bool")


def _cumsum_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((2, 3), ea.float32)
    yield ErrorInput(SampleInput(x, (2,)), IndexError, "Dimension out of range")


# ---- the table --------------------------------------------------------------------------

_float_tols = {ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 2e-2)}


def _pick_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from single_dim_samples(op, dtype)


def _kth_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        t = make_tensor(shape, dtype)
        yield SampleInput(t, (1,), name=f"{shape} k=1")
        yield SampleInput(t, (2, 0), {"keepdim": True}, name=f"{shape} k=2 dim=0")
        yield SampleInput(t, (shape[-1], -1), name=f"{shape} k=n")
    yield SampleInput(make_tensor((), dtype), (1,), name="0-dim")


def _topk_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(5,), (3, 4), (2, 3, 4)]:
        t = make_tensor(shape, dtype)
        yield SampleInput(t, (2,), name=f"{shape} k=2")
        yield SampleInput(t, (1, 0), name=f"{shape} k=1 dim=0")
        yield SampleInput(t, (2,), {"largest": False}, name=f"{shape} smallest")
        yield SampleInput(t, (0,), name=f"{shape} k=0")
    yield SampleInput(make_tensor((), dtype), (1,), name="0-dim")
    yield SampleInput(make_tensor((4, 200), dtype), (5,), name="long rows")


def _median_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(), (5,), (3, 4), (2, 3, 4)]:
        yield SampleInput(make_tensor(shape, dtype), name=f"{shape} all")
    yield from single_dim_samples(op, dtype)
    if dtype.is_floating_point:
        t = _with_nans(dtype, (4, 7))
        yield SampleInput(t, (1,), name="nan rows")
        yield SampleInput(t, name="nan all")
        allnan = tensor_from(np.full((2, 3), np.nan), dtype)
        yield SampleInput(allnan, (1,), name="all nan rows")


def _vector_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for ord in (2, 1, 0, float("inf"), float("-inf"), 3, 0.5):
        for shape in [(), (5,), (3, 4), (2, 3, 4)]:
            t = make_tensor(shape, dtype, exclude_zero=ord < 0)
            yield SampleInput(t, (ord,), name=f"{shape} ord={ord}")
            if shape:
                yield SampleInput(t, (ord, -1), name=f"{shape} ord={ord} dim=-1")
                yield SampleInput(t, (ord, 0, True), name=f"{shape} ord={ord} dim=0 keepdim")
        yield SampleInput(make_tensor((2, 3, 4), dtype), (ord, (0, 2)), name=f"ord={ord} dims (0, 2)")
    yield SampleInput(make_tensor((0,), dtype), (2,), name="empty")


def _norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    t = make_tensor((3, 4), dtype)
    yield SampleInput(t, name="default p='fro'")
    yield SampleInput(t, ("fro",), name="fro")
    yield SampleInput(t, ("fro", (0, 1)), name="fro dims")
    yield SampleInput(t, (1, 1), name="p=1 dim=1")
    yield SampleInput(t, (float("inf"), 0, True), name="p=inf dim=0 keepdim")
    yield SampleInput(t, (2,), {"dim": -1, "keepdim": True}, name="kwargs")
    yield SampleInput(make_tensor((5,), dtype), (3,), name="p=3")


def _logsumexp_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in reduction_samples(op, dtype, low=-5, high=5):
        if s.args:
            yield s
    for shape in [(3, 4)]:
        yield SampleInput(make_tensor(shape, dtype, low=-5, high=5), ((),), name="dim=() (all dims)")


def _var_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(), (5,), (3, 4), (2, 3, 4)]:
        t = make_tensor(shape, dtype)
        yield SampleInput(t, name=f"{shape} all")
        for d in _dims(shape, True):
            yield SampleInput(t, (d,), name=f"{shape} dim={d}")
            yield SampleInput(t, (d, False, True), name=f"{shape} dim={d} biased keepdim")
            yield SampleInput(t, (d,), {"correction": 0, "keepdim": True}, name=f"{shape} dim={d} correction=0")
    yield SampleInput(make_tensor((2, 3, 4), dtype), ((0, 2),), {"correction": 2}, name="correction=2")
    yield SampleInput(make_tensor((0,), dtype), name="empty")


def _scan_float(fn: Any) -> Any:
    def ref(a: Any, dim: int) -> Any:
        a = np.asarray(a, dtype=np.float64)
        return np.asarray(a) if a.ndim == 0 else fn(a, axis=dim)

    return ref


def _bincount_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((20,), dtype, low=0, high=8)
    yield SampleInput(x, name="plain")
    yield SampleInput(x, (), {"minlength": 12}, name="minlength")
    yield SampleInput(x, (make_tensor((20,), ea.float32),), name="float32 weights")
    yield SampleInput(x, (make_tensor((20,), ea.float64),), name="float64 weights")
    yield SampleInput(x, (make_tensor((20,), ea.int32),), name="int weights (float64 counts)")
    yield SampleInput(make_tensor((0,), dtype), name="empty")
    yield SampleInput(make_tensor((0,), dtype), (), {"minlength": 3}, name="empty minlength")


def _bincount_ref(a: Any, weights: Any = None, minlength: int = 0) -> Any:
    a = np.asarray(a).astype(np.int64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return np.bincount(a, weights=w, minlength=minlength)


def _bincount_dtype(s: SampleInput) -> Any:
    w = s.args[0] if s.args else None
    if w is None:
        return ea.int64
    return ea.float32 if w.dtype == ea.float32 else ea.float64


def _histc_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = make_tensor((50,), dtype, low=-3, high=3)
    yield SampleInput(x, name="defaults (data range)")
    yield SampleInput(x, (10, -2.0, 2.0), name="range")
    yield SampleInput(make_tensor((4, 5), dtype), (7,), name="2-d")
    yield SampleInput(tensor_from(np.full((4,), 2.0), dtype), (3,), name="constant")
    yield SampleInput(make_tensor((0,), dtype), (5, 0.0, 1.0), name="empty")


def _histc_ref(a: Any, bins: int = 100, min: float = 0, max: float = 0) -> Any:
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return np.histogram(a, bins=bins, range=(lo, hi))[0].astype(np.float64)


def _unique_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in [(), (7,), (3, 4), (2, 3, 4)]:
        t = (
            make_tensor(shape, dtype, low=0, high=4)
            if not dtype.is_floating_point
            else tensor_from(np.random.default_rng(3).integers(0, 4, size=shape).astype(np.float64), dtype)
        )
        yield SampleInput(t, name=f"{shape}")
        yield SampleInput(t, (), {"return_inverse": True, "return_counts": True}, name=f"{shape} inverse counts")
        yield SampleInput(t, (), {"return_counts": True}, name=f"{shape} counts")
        if len(shape) >= 2:
            yield SampleInput(t, (), {"dim": 0, "return_inverse": True, "return_counts": True}, name=f"{shape} dim=0")
            yield SampleInput(t, (), {"dim": 1}, name=f"{shape} dim=1")
    yield SampleInput(make_tensor((0,), dtype), name="empty")


def _unique_consecutive_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    vals = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    t = tensor_from(vals.astype(np.float64) if dtype.is_floating_point else vals, dtype)
    if dtype == ea.bool:
        t = t.bool()
    yield SampleInput(t, name="runs")
    yield SampleInput(t, (True, True), name="inverse counts")
    yield SampleInput(t.reshape(2, 4), (), {"return_counts": True}, name="2-d")
    yield SampleInput(make_tensor((0,), dtype), name="empty")


OPS = [
    OpInfo(
        "sum",
        ea.sum,
        ALL_DTYPES,
        reduction_samples,
        ref=_sum_ref,
        result_dtype=_int64_for_integral,
        supports_out=False,
        tol_overrides=_float_tols,
        error_inputs=_dim_errors("sum"),
        kind="reduction",
    ),
    OpInfo(
        "nansum",
        ea.nansum,
        ALL_DTYPES,
        nan_reduction_samples,
        ref=_nansum_ref,
        result_dtype=_int64_for_integral,
        supports_out=False,
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "mean",
        ea.mean,
        FLOAT_DTYPES,
        reduction_samples,
        ref=_np_reduce(np.mean),
        tol_overrides=_float_tols,
        error_inputs=_chain(_mean_errors, _dim_errors("mean")),
        kind="reduction",
    ),
    OpInfo(
        "nanmean",
        ea.nanmean,
        FLOAT_DTYPES,
        nan_reduction_samples,
        ref=_np_reduce(np.nanmean),
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "prod",
        ea.prod,
        ALL_DTYPES,
        lambda op, dt: reduction_samples(
            op, dt, multi=False, **({"low": 0.5, "high": 1.5} if dt.is_floating_point else {"low": -2, "high": 3})
        ),
        ref=_prod_ref,
        result_dtype=_int64_for_integral,
        supports_out=False,
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "amax",
        ea.amax,
        ALL_DTYPES,
        lambda op, dt: reduction_samples(op, dt, empty_ok=False),
        ref=_np_reduce(np.amax),
        error_inputs=_empty_ext_errors("amax"),
        kind="reduction",
    ),
    OpInfo(
        "amin",
        ea.amin,
        ALL_DTYPES,
        lambda op, dt: reduction_samples(op, dt, empty_ok=False),
        ref=_np_reduce(np.amin),
        error_inputs=_empty_ext_errors("amin"),
        kind="reduction",
    ),
    OpInfo(
        "max",
        ea.max,
        ALL_DTYPES,
        lambda op, dt: reduction_samples(op, dt, multi=False, empty_ok=False),
        ref=_ext_ref(True),
        error_inputs=_empty_ext_errors("max"),
        kind="reduction",
    ),
    OpInfo(
        "min",
        ea.min,
        ALL_DTYPES,
        lambda op, dt: reduction_samples(op, dt, multi=False, empty_ok=False),
        ref=_ext_ref(False),
        error_inputs=_empty_ext_errors("min"),
        kind="reduction",
    ),
    OpInfo(
        "argmax",
        ea.argmax,
        ALL_NUMERIC,
        lambda op, dt: reduction_samples(op, dt, multi=False, empty_ok=False),
        ref=lambda a, dim=None, keepdim=False: _argext(a, dim, keepdim, True),
        result_dtype=lambda s: ea.int64,
        error_inputs=_chain(_dim_errors("argmax"), _empty_ext_errors("argmax")),
        kind="reduction",
    ),
    OpInfo(
        "argmin",
        ea.argmin,
        ALL_NUMERIC,
        lambda op, dt: reduction_samples(op, dt, multi=False, empty_ok=False),
        ref=lambda a, dim=None, keepdim=False: _argext(a, dim, keepdim, False),
        result_dtype=lambda s: ea.int64,
        kind="reduction",
    ),
    OpInfo(
        "aminmax",
        ea.aminmax,
        ALL_DTYPES,
        lambda op, dt: (
            SampleInput(s.input, (), {"dim": s.args[0], **s.kwargs} if s.args else s.kwargs)
            for s in reduction_samples(op, dt, multi=False, empty_ok=False)
        ),
        ref=lambda a, dim=None, keepdim=False: (
            _np_reduce(np.amin)(a, dim, keepdim),
            _np_reduce(np.amax)(a, dim, keepdim),
        ),
        kind="reduction",
    ),
    OpInfo(
        "all",
        ea.all,
        ALL_DTYPES,
        reduction_samples,
        ref=_np_reduce(np.all),
        result_dtype=_logical_dtype,
        kind="reduction",
    ),
    OpInfo(
        "any",
        ea.any,
        ALL_DTYPES,
        reduction_samples,
        ref=_np_reduce(np.any),
        result_dtype=_logical_dtype,
        kind="reduction",
    ),
    OpInfo(
        "count_nonzero",
        ea.count_nonzero,
        ALL_DTYPES,
        lambda op, dt: (s for s in reduction_samples(op, dt, keepdim=False)),
        ref=lambda a, dim=None: np.asarray(np.count_nonzero(a, axis=_axis(a, dim))).astype(np.int64),
        result_dtype=lambda s: ea.int64,
        supports_out=False,
        kind="reduction",
    ),
    OpInfo(
        "var",
        ea.var,
        FLOAT_DTYPES,
        _var_samples,
        ref=_var_ref(False),
        tol_overrides=_float_tols,
        error_inputs=_var_errors,
        kind="reduction",
    ),
    OpInfo(
        "std",
        ea.std,
        FLOAT_DTYPES,
        _var_samples,
        ref=_var_ref(True),
        tol_overrides=_float_tols,
        error_inputs=_var_errors,
        kind="reduction",
    ),
    OpInfo(
        "var_mean",
        ea.var_mean,
        FLOAT_DTYPES,
        _var_samples,
        ref=_var_ref(False, True),
        supports_out=False,
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "std_mean",
        ea.std_mean,
        FLOAT_DTYPES,
        _var_samples,
        ref=_var_ref(True, True),
        supports_out=False,
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "linalg.vector_norm",
        ea.linalg.vector_norm,
        FLOAT_DTYPES,
        _vector_norm_samples,
        ref=_vector_norm_ref,
        tol_overrides=_float_tols,
        error_inputs=_norm_errors,
        kind="reduction",
    ),
    OpInfo("norm", ea.norm, FLOAT_DTYPES, _norm_samples, ref=_norm_ref, tol_overrides=_float_tols, kind="reduction"),
    OpInfo(
        "logsumexp",
        ea.logsumexp,
        ALL_DTYPES,
        _logsumexp_samples,
        ref=_logsumexp_ref,
        result_dtype=_float_for_integral,
        tol_overrides=_float_tols,
        kind="reduction",
    ),
    OpInfo(
        "cumsum",
        ea.cumsum,
        ALL_DTYPES,
        scan_samples,
        ref=_scan_ref(np.cumsum),
        result_dtype=_int64_for_integral,
        supports_out=False,
        tol_overrides=_float_tols,
        error_inputs=_cumsum_errors,
        kind="scan",
    ),
    OpInfo(
        "cumprod",
        ea.cumprod,
        ALL_DTYPES,
        lambda op, dt: scan_samples(
            op, dt, **({"low": 0.5, "high": 1.5} if dt.is_floating_point else {"low": -2, "high": 3})
        ),
        ref=_scan_ref(np.cumprod),
        result_dtype=_int64_for_integral,
        supports_out=False,
        tol_overrides=_float_tols,
        kind="scan",
    ),
    OpInfo(
        "logcumsumexp",
        ea.logcumsumexp,
        FLOAT_DTYPES,
        scan_samples,
        ref=_scan_float(np.logaddexp.accumulate),
        tol_overrides=_float_tols,
        kind="scan",
    ),
    OpInfo("cummax", ea.cummax, ALL_DTYPES, scan_samples, ref=_cum_ext_ref(True), kind="scan"),
    OpInfo("cummin", ea.cummin, ALL_DTYPES, scan_samples, ref=_cum_ext_ref(False), kind="scan"),
    OpInfo("sort", ea.sort, ALL_DTYPES, sort_samples, ref=_sort_ref, kind="sort"),
    OpInfo(
        "argsort",
        ea.argsort,
        ALL_DTYPES,
        sort_samples,
        ref=_argsort_ref,
        supports_out=False,
        result_dtype=lambda s: ea.int64,
        kind="sort",
    ),
    OpInfo("topk", ea.topk, ALL_NUMERIC, _topk_samples, ref=_topk_ref, error_inputs=_topk_errors, kind="sort"),
    OpInfo(
        "kthvalue", ea.kthvalue, ALL_NUMERIC, _kth_samples, ref=_pick_ref(_Kth), error_inputs=_kth_errors, kind="sort"
    ),
    OpInfo(
        "median",
        ea.median,
        ALL_NUMERIC,
        _median_samples,
        ref=lambda a, *args, **kw: _pick_ref(_Median)(a, *args, **kw) if (args or kw) else _median_ref_all(a),
        supports_out=False,
        error_inputs=_median_errors,
        kind="sort",
    ),
    OpInfo(
        "nanmedian",
        ea.nanmedian,
        ALL_NUMERIC,
        _median_samples,
        ref=lambda a, *args, **kw: (
            _pick_ref(_NanMedian)(a, *args, **kw) if (args or kw) else _pick_ref(_NanMedian)(np.asarray(a).reshape(-1))
        ),
        supports_out=False,
        kind="sort",
    ),
    OpInfo(
        "mode",
        ea.mode,
        ALL_DTYPES,
        lambda op, dt: single_dim_samples(op, dt, low=0, high=3),
        ref=_pick_ref(_Mode),
        kind="sort",
    ),
    OpInfo("unique", ea.unique, ALL_DTYPES, _unique_samples, ref=_unique_ref, supports_out=False, kind="sort"),
    OpInfo(
        "unique_consecutive",
        ea.unique_consecutive,
        ALL_DTYPES,
        _unique_consecutive_samples,
        ref=_unique_consecutive_ref,
        supports_out=False,
        kind="sort",
    ),
    OpInfo(
        "bincount",
        ea.bincount,
        INT_DTYPES,
        _bincount_samples,
        ref=_bincount_ref,
        result_dtype=_bincount_dtype,
        supports_out=False,
        error_inputs=_bincount_errors,
        kind="histogram",
    ),
    OpInfo(
        "histc", ea.histc, FLOAT_DTYPES, _histc_samples, ref=_histc_ref, error_inputs=_histc_errors, kind="histogram"
    ),
]
# In-place cumsum_/cumprod_ compute in self's dtype (as PyTorch: a bool self keeps a
# running "or"), which the table's in-place rule does not describe: see test_reductions.py.
for _op in OPS:
    if _op.name in ("cumsum", "cumprod"):
        _op.inplace = None
