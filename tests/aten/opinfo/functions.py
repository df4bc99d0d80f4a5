"""OpInfo entries of the functions family (issue 18): searchsorted / bucketize and
tril_indices / triu_indices (C++ kernels), and the composites of ember/aten/native/functions.py.

References are NumPy's functions of the same meaning (np.searchsorted, np.digitize, np.diff,
np.trapezoid, np.cov, np.corrcoef, np.quantile, ...) or SciPy's (scipy.spatial.distance for
cdist / pdist, scipy.integrate for cumulative_trapezoid, scipy.linalg.block_diag), in float64.
SciPy is imported by the references only: tests/autograd reuses these rows without it.
Entries of kind "functions" are gradchecked and gradgradchecked by tests/autograd. The in-place
variants (deg2rad_, rad2deg_, renorm_) are checked in test_functions.py: a composite in-place op
bumps the version counter once for its inner in-place op and once in its generated entry, and the
table's test counts exactly one. check_unsupported=False: the float-only composites PyTorch also
runs in float16 / bfloat16 (or, for cov, on integers), which the table leaves untested.
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
    ErrorInput,
    OpInfo,
    SampleInput,
    make_array,
    make_tensor,
    tensor_from,
)

F32_64 = (ea.float32, ea.float64)


def _err(input: Any, args: tuple[Any, ...], error: type[BaseException], regex: str, **kwargs: Any) -> ErrorInput:
    return ErrorInput(SampleInput(input, args, kwargs), error, regex)


def _sorted(shape: tuple[int, ...], dtype: Any) -> Any:
    return tensor_from(np.sort(make_array(shape, dtype), axis=-1), dtype)


# ---- searchsorted / bucketize -----------------------------------------------------------------


def _searchsorted_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for b_shape, v_shape in [((7,), (5,)), ((7,), (3, 4)), ((7,), ()), ((0,), (4,)), ((7,), (0,)), ((2, 6), (2, 3))]:
        b = _sorted(b_shape, dtype)
        v = make_tensor(v_shape, dtype)
        yield SampleInput(b, (v,), name=f"{b_shape} {v_shape}")
        yield SampleInput(b, (v,), {"right": True}, name=f"{b_shape} {v_shape} right")
    b = _sorted((3, 1, 5), dtype)
    yield SampleInput(b, (make_tensor((3, 1, 4), dtype),), {"side": "right", "out_int32": True}, name="3-d int32")
    # values equal to boundaries: left and right differ exactly there
    b = tensor_from(np.array([1, 2, 2, 2, 5, 7]), dtype)
    yield SampleInput(b, (tensor_from(np.array([2, 1, 7, 0, 8, 5]), dtype),), name="ties")
    yield SampleInput(b, (tensor_from(np.array([2, 1, 7, 0, 8, 5]), dtype),), {"side": "right"}, name="ties right")
    # unsorted boundaries put in order by sorter
    raw = make_array((2, 6), dtype)
    order = np.argsort(raw, axis=-1, kind="stable")
    yield SampleInput(
        tensor_from(raw, dtype),
        (make_tensor((2, 3), dtype),),
        {"sorter": ea.from_numpy(order.astype(np.int64))},
        name="sorter",
    )


def _ref_searchsorted(
    b: Any, v: Any, out_int32: bool = False, right: bool = False, side: Any = None, sorter: Any = None
) -> Any:
    side = side or ("right" if right else "left")
    b = np.asarray(b)
    v = np.asarray(v)
    if b.ndim == 1:
        r = np.searchsorted(b, v, side=side, sorter=sorter)
    else:
        bb = b.reshape(-1, b.shape[-1])
        vv = v.reshape(-1, v.shape[-1])
        ss = None if sorter is None else np.asarray(sorter).reshape(bb.shape)
        rows = [np.searchsorted(bb[i], vv[i], side=side, sorter=None if ss is None else ss[i]) for i in range(len(bb))]
        r = np.stack(rows).reshape(v.shape)
    return np.asarray(r).astype(np.int32 if out_int32 else np.int64)


def _searchsorted_errors(op: OpInfo) -> Iterator[ErrorInput]:
    b = ea.tensor([1.0, 2.0, 3.0])
    v = ea.tensor([1.5])
    yield _err(b, (v,), RuntimeError, "side and right can't be set to opposites", side="left", right=True)
    yield _err(b, (v,), RuntimeError, "side can only be 'left' or 'right' but got mid", side="mid")
    yield _err(
        ea.ones(2, 2), (1.0,), RuntimeError, r"input value can be a scalar only when boundaries tensor dimension is 1"
    )
    yield _err(
        ea.ones(2, 2), (ea.ones(3, 2),), RuntimeError, r"first N-1 dimensions of boundaries tensor and input value"
    )
    yield _err(ea.tensor(1.0), (v,), RuntimeError, "boundaries tensor should have positive dimension")
    yield _err(b, (v,), RuntimeError, "sorter must be a tensor of long dtype but got dtype Float", sorter=ea.ones(3))
    yield _err(b, (v,), RuntimeError, "boundary and sorter must have the same size", sorter=ea.tensor([0, 1]))
    yield _err(b, (v,), RuntimeError, "sorter index out of range", sorter=ea.tensor([0, 1, 5]))
    yield _err(b, (v,), RuntimeError, "output tensor's dtype is wrong", out=ea.empty(1))
    yield _err(b, (v,), RuntimeError, "output tensor's dtype is wrong", out=ea.empty(1, dtype=ea.int64), out_int32=True)


def _bucketize_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for v_shape in [(5,), (3, 4), (), (0,)]:
        b = _sorted((6,), dtype)
        yield SampleInput(make_tensor(v_shape, dtype), (b,), name=f"{v_shape}")
        yield SampleInput(
            make_tensor(v_shape, dtype), (b,), {"right": True, "out_int32": True}, name=f"{v_shape} right"
        )
    b = tensor_from(np.array([1, 3, 3, 6]), dtype)
    yield SampleInput(tensor_from(np.array([[3, 0], [6, 7]]), dtype), (b,), name="ties")
    yield SampleInput(tensor_from(np.array([[3, 0], [6, 7]]), dtype), (b,), {"right": True}, name="ties right")


def _ref_bucketize(v: Any, b: Any, out_int32: bool = False, right: bool = False) -> Any:
    return _ref_searchsorted(b, v, out_int32, right)


def _bucketize_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(3), (ea.ones(2, 2),), RuntimeError, r"boundaries tensor must be 1 dimension, but got dim\(2\)")
    yield _err(ea.ones(3), (ea.ones(3),), RuntimeError, "output tensor's dtype is wrong", out=ea.empty(3))


def _out_dtype(s: SampleInput) -> Any:
    return ea.int32 if s.kwargs.get("out_int32") else ea.int64


# ---- tril_indices / triu_indices ----------------------------------------------------------------


def _tri_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for row, col, offset in [(3, 3, 0), (4, 3, 1), (3, 5, -1), (5, 2, -3), (0, 3, 0), (3, 4, -9), (3, 4, 9), (1, 1, 0)]:
        yield SampleInput(row, (col, offset), {"dtype": dtype})


def _ref_tril(row: int, col: int, offset: int = 0, dtype: Any = None) -> Any:
    return np.stack(np.tril_indices(row, offset, col)).astype(np.int64).reshape(2, -1)


def _ref_triu(row: int, col: int, offset: int = 0, dtype: Any = None) -> Any:
    return np.stack(np.triu_indices(row, offset, col)).astype(np.int64).reshape(2, -1)


def _tri_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(-1, (3,), RuntimeError, "row must be non-negative, got-1")
    yield _err(3, (-2,), RuntimeError, "col must be non-negative, got-2")
    yield _err(3, (3,), RuntimeError, "not implemented for 'Short'", dtype=ea.int16)
    yield _err(3, (3,), RuntimeError, "not implemented for 'Float'", dtype=ea.float32)


# ---- composites -------------------------------------------------------------------------------


def _samples(*cases: tuple[Any, ...]):
    """sample_inputs from (shape, args[, kwargs]) cases; a tuple of shapes in args becomes a tensor."""

    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for case in cases:
            shape, args = case[0], case[1]
            kwargs = dict(case[2]) if len(case) > 2 else {}
            args = tuple(make_tensor(a.shape, dtype) if isinstance(a, _T) else a for a in args)
            kwargs = {k: make_tensor(v.shape, dtype) if isinstance(v, _T) else v for k, v in kwargs.items()}
            yield SampleInput(make_tensor(shape, dtype), args, kwargs, name=f"{shape} {case[1]} {case[2:] or ''}")

    return gen


class _T:
    """A tensor argument of this shape (made in the sample's dtype)."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape

    def __repr__(self) -> str:
        return f"T{self.shape}"


def _ref_diff(a: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    return np.diff(a, n=n, axis=dim, **kw)


def _diff_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.tensor(1.0), (), RuntimeError, "diff expects input to be at least one-dimensional")
    yield _err(ea.ones(3), (-1,), RuntimeError, "order must be non-negative but got -1")
    yield _err(ea.ones(3), (), RuntimeError, "same dimension as input", prepend=ea.ones(1, 1))


def _split_ref(np_fn: Any) -> Any:
    def f(a: Any, s: Any) -> Any:
        return tuple(np_fn(a, s if isinstance(s, int) else list(s)))

    return f


def _split_errors(name: str, min_dim: int) -> Any:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        low = ea.ones(*([2] * (min_dim - 1))) if min_dim > 1 else ea.tensor(1.0)
        yield _err(low, (2,), RuntimeError, f"torch.{name} requires a tensor with at least {min_dim} dimension")
        yield _err(ea.ones(3, 5, 7), (4,), RuntimeError, "is not divisible by the split_size 4")

    return gen


def _ref_inner(a: Any, b: Any) -> Any:
    return np.inner(a, b)


def _take_along_dim_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    r = np.random.default_rng(3)
    x = make_tensor((3, 4), dtype)
    yield SampleInput(x, (ea.from_numpy(r.integers(0, 4, (3, 2))),), {"dim": 1})
    yield SampleInput(x, (ea.from_numpy(r.integers(0, 3, (2, 4))), 0))
    yield SampleInput(x, (ea.from_numpy(r.integers(0, 12, (5,))),))
    yield SampleInput(x, (ea.from_numpy(r.integers(0, 4, (1, 3))), 1), name="broadcast indices")
    yield SampleInput(make_tensor((3, 1), dtype), (ea.from_numpy(r.integers(0, 1, (3, 2))), 1), name="broadcast self")
    yield SampleInput(make_tensor((0, 4), dtype), (ea.zeros(0, 2, dtype=ea.int64), 1), name="empty")


def _ref_take_along_dim(a: Any, idx: Any, dim: Any = None) -> Any:
    if dim is None:
        return np.take_along_axis(a.reshape(-1), idx.reshape(-1), 0)
    shape = np.broadcast_shapes(
        tuple(s if i != dim % a.ndim else idx.shape[i] for i, s in enumerate(a.shape)), idx.shape
    )
    ishape = list(shape)
    ishape[dim % a.ndim] = a.shape[dim % a.ndim]
    return np.take_along_axis(
        np.broadcast_to(a, np.broadcast_shapes(tuple(ishape), a.shape)), np.broadcast_to(idx, shape), dim
    )


def _take_along_dim_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = ea.ones(3, 4)
    yield _err(x, (ea.zeros(3, 2, dtype=ea.int32), 1), RuntimeError, "dtype of indices should be Long but got Int")
    yield _err(x, (ea.zeros(3, dtype=ea.int64), 1), RuntimeError, "should have the same number of dimensions")


def _block_diag_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make_tensor((2, 3), dtype), make_tensor((1, 1), dtype), make_tensor((2, 2), dtype)])
    yield SampleInput([make_tensor((), dtype), make_tensor((3,), dtype), make_tensor((2, 0), dtype)], name="0-d, 1-d")
    yield SampleInput([make_tensor((2, 2), dtype)], name="one")


def _block_diag(tensors: Any, **kw: Any) -> Any:
    return ea.block_diag(*tensors, **kw)


def _ref_block_diag(tensors: Any) -> Any:
    import scipy.linalg

    return scipy.linalg.block_diag(*[np.atleast_2d(t) if np.ndim(t) == 0 else t for t in tensors])


def _ref_cov(a: Any, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    return np.cov(a, ddof=correction, fweights=fweights, aweights=aweights)


def _cov_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((3, 6), dtype))
    yield SampleInput(make_tensor((6,), dtype), name="1-d")
    yield SampleInput(make_tensor((2, 5), dtype), (), {"correction": 0})
    fw = ea.tensor([1, 2, 0, 3, 1])
    aw = tensor_from(np.array([0.5, 1.0, 2.0, 1.5, 0.25]), dtype)
    yield SampleInput(make_tensor((2, 5), dtype), (), {"fweights": fw}, name="fweights")
    yield SampleInput(make_tensor((2, 5), dtype), (), {"aweights": aw}, name="aweights")
    yield SampleInput(make_tensor((2, 5), dtype), (), {"fweights": fw, "aweights": aw, "correction": 2}, name="both")


def _cov_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = ea.ones(2, 4)
    yield _err(ea.ones(2, 2, 2), (), RuntimeError, "expected input to have two or fewer dimensions")
    yield _err(x.bool(), (), RuntimeError, "bool dtype is not supported for input")
    yield _err(x, (), RuntimeError, "expected fweights to have integral dtype", fweights=ea.ones(4))
    yield _err(
        x, (), RuntimeError, "expected aweights to have floating point dtype", aweights=ea.ones(4, dtype=ea.int64)
    )
    yield _err(
        x,
        (),
        RuntimeError,
        r"same numel as there are observations in the input but got 3 != 4",
        fweights=ea.ones(3, dtype=ea.int64),
    )
    yield _err(x, (), RuntimeError, "fweights cannot be negative", fweights=ea.tensor([1, -1, 1, 1]))
    yield _err(x, (), RuntimeError, "expected aweights to have one or fewer dimensions", aweights=ea.ones(1, 4))


def _ref_corrcoef(a: Any) -> Any:
    return np.corrcoef(a)


def _trapz_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((5,), dtype))
    yield SampleInput(make_tensor((3, 4), dtype), (), {"dim": 0})
    yield SampleInput(make_tensor((3, 4), dtype), (), {"dx": 0.5})
    yield SampleInput(make_tensor((2, 0), dtype), (), name="empty dim")
    yield SampleInput(
        make_tensor((3, 4), dtype),
        (tensor_from(np.cumsum(make_array((4,), ea.float64, low=0.1, high=1)), dtype),),
        name="x 1-d",
    )
    yield SampleInput(make_tensor((3, 4), dtype), (make_tensor((3, 4), dtype),), {"dim": 0}, name="x same shape")


def _ref_trapezoid(y: Any, x: Any = None, dx: Any = 1, dim: int = -1) -> Any:
    return np.trapezoid(y, x=x, dx=dx, axis=dim)


def _ref_cumulative_trapezoid(y: Any, x: Any = None, dx: Any = 1, dim: int = -1) -> Any:
    import scipy.integrate

    if y.shape[dim] == 0:
        return y * 0
    if x is None:
        return scipy.integrate.cumulative_trapezoid(y, dx=dx, axis=dim)
    return scipy.integrate.cumulative_trapezoid(y, x=x, axis=dim)


def _trapz_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(3, 4), (ea.ones(3),), RuntimeError, "There must be one `x` value for each sample point")
    yield _err(ea.ones(3).bool(), (), RuntimeError, "received a bool input for `y`")


def _isin_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for e_shape, t_shape in [((5,), (4,)), ((3, 4), (2, 3)), ((), (6,)), ((0,), (3,)), ((4,), (0,))]:
        e = make_tensor(e_shape, dtype, low=0, high=6)
        t = make_tensor(t_shape, dtype, low=0, high=6)
        yield SampleInput(e, (t,))
        yield SampleInput(e, (t,), {"invert": True})
    yield SampleInput(make_tensor((3, 3), dtype, low=0, high=4), (2,), name="scalar test element")


def _ref_isin(e: Any, t: Any, assume_unique: bool = False, invert: bool = False) -> Any:
    return np.isin(e, t, invert=invert)


def _slice_scatter_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((4, 5), dtype), (make_tensor((2, 5), dtype),), {"start": 1, "end": 3})
    yield SampleInput(make_tensor((4, 6), dtype), (make_tensor((4, 3), dtype), 1, 0, None, 2))
    yield SampleInput(make_tensor((4, 5), dtype), (make_tensor((4, 5), dtype),))
    yield SampleInput(make_tensor((3, 2), dtype), (make_tensor((3, 1), dtype), -1, -1), name="small, negative")


def _ref_slice_scatter(a: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    out = a.copy()
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def _ref_select_scatter(a: Any, src: Any, dim: int, index: int) -> Any:
    out = a.copy()
    idx = [slice(None)] * a.ndim
    idx[dim] = index
    out[tuple(idx)] = src
    return out


def _ref_diagonal_scatter(a: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    out = a.copy()
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
    n1, n2 = moved.shape[-2:]
    rows = np.arange(max(0, -offset), min(n1, n2 - offset))
    moved[..., rows, rows + offset] = src
    return out


def _scatter_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(4, 5), (ea.ones(3, 5),), RuntimeError, "expected src to have a size equal to the slice of self")


def _ref_renorm(a: Any, p: float, dim: int, maxnorm: float) -> Any:
    other = tuple(i for i in range(a.ndim) if i != dim % a.ndim)
    norm = np.sum(np.abs(a) ** p, axis=other, keepdims=True) ** (1.0 / p)
    return a * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def _renorm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(3), (2, 0, 1.0), RuntimeError, "renorm: input needs at least 2 dimensions, got 1 dimensions")
    yield _err(ea.ones(2, 3), (0, 0, 1.0), RuntimeError, "renorm: non-positive-norm not supported")
    yield _err(ea.ones(2, 3), (2, 0, -1.0), RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1.0")


def _cdist_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for p in (2.0, 1.0, 3.0, math.inf):
        yield SampleInput(make_tensor((4, 3), dtype), (make_tensor((5, 3), dtype), p))
    yield SampleInput(make_tensor((2, 4, 3), dtype), (make_tensor((2, 2, 3), dtype),), name="batched")
    yield SampleInput(make_tensor((0, 3), dtype), (make_tensor((2, 3), dtype),), name="empty")


def _ref_cdist(a: Any, b: Any, p: float = 2.0, compute_mode: Any = None) -> Any:
    import scipy.spatial.distance

    if a.ndim == 3:
        return np.stack([_ref_cdist(x, y, p) for x, y in zip(a, b, strict=True)])
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros((a.shape[0], b.shape[0]))
    if math.isinf(p):
        return scipy.spatial.distance.cdist(a, b, "chebyshev")
    return scipy.spatial.distance.cdist(a, b, "minkowski", p=p)


def _cdist_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(3), (ea.ones(2, 3),), RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D")
    yield _err(
        ea.ones(2, 3), (ea.ones(2, 4),), RuntimeError, "X1 and X2 must have the same number of columns. X1: 3 X2: 4"
    )
    yield _err(ea.ones(2, 3), (ea.ones(2, 3), -1.0), RuntimeError, "cdist only supports non-negative p values")


def _pdist_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for p in (2.0, 1.0, 0.5):
        yield SampleInput(make_tensor((5, 3), dtype), (p,))
    yield SampleInput(make_tensor((1, 3), dtype), name="one row")


def _ref_pdist(a: Any, p: float = 2.0) -> Any:
    import scipy.spatial.distance

    if a.shape[0] < 2:
        return np.zeros((0,))
    return scipy.spatial.distance.pdist(a, "minkowski", p=p)


def _pdist_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(3), (), RuntimeError, "pdist only supports 2D tensors, got: 1D")
    yield _err(ea.ones(2, 3), (-1.0,), RuntimeError, "pdist only supports non-negative p values")


def _quantile_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    q = tensor_from(np.array([0.0, 0.25, 0.5, 0.9, 1.0]), dtype)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        yield SampleInput(make_tensor((3, 7), dtype), (q,), {"dim": 1, "interpolation": interp}, name=interp)
    yield SampleInput(make_tensor((3, 7), dtype), (0.3,), name="scalar q, all")
    yield SampleInput(make_tensor((4, 5), dtype), (0.75, 0, True), name="keepdim")
    yield SampleInput(make_tensor((4, 5), dtype), (q,), {"keepdim": True}, name="q 1-d, all, keepdim")
    yield SampleInput(make_tensor((), dtype), (q,), name="0-d")
    a = make_array((3, 6), dtype)
    a[0, 2] = np.nan
    a[2, :] = np.nan
    yield SampleInput(tensor_from(a, dtype), (q, 1), name="nan", gradcheck=False)


def _quantile_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = ea.ones(3)
    yield _err(x.long(), (0.5,), RuntimeError, "input tensor must be either float or double dtype")
    yield _err(x, (1.5,), RuntimeError, r"q must be in the range \[0, 1\]")
    yield _err(x, (ea.tensor([0.5, 2.0]),), RuntimeError, r"q values must be in the range \[0, 1\]")
    yield _err(x, (ea.ones(2, 2) / 2,), RuntimeError, "q must be a scalar or 1D tensor")
    yield _err(
        x, (ea.tensor([0.5], dtype=ea.float64),), RuntimeError, "q tensor must be same dtype as the input tensor"
    )
    yield _err(
        x,
        (0.5,),
        RuntimeError,
        "interpolation must be one of linear, lower, higher, midpoint or nearest",
        interpolation="x",
    )


def _ref_quantile(nan: bool) -> Any:
    def f(a: Any, q: Any, dim: Any = None, keepdim: bool = False, interpolation: str = "linear") -> Any:
        fn = np.nanquantile if nan else np.quantile
        return fn(a, q, axis=dim, keepdims=keepdim, method=interpolation)

    return f


def _ref_combinations(a: Any, r: int = 2, with_replacement: bool = False) -> Any:
    import itertools

    if r == 0:
        return np.zeros((0,), dtype=a.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    return np.array(list(pick(a.tolist(), r)), dtype=a.dtype).reshape(-1, r)


def _combinations_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.ones(2, 2), (), RuntimeError, r"Expect a 1D vector, but got shape \[2, 2\]")
    yield _err(ea.ones(3), (-1,), RuntimeError, "Expect a non-negative number, but got -1")


def _nonzero_static_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape, size in [((3, 4), 5), ((3, 4), 30), ((6,), 0), ((), 2), ((0, 3), 2)]:
        yield SampleInput(make_tensor(shape, dtype, low=-1, high=2), (), {"size": size})
    yield SampleInput(make_tensor((5,), dtype, low=-1, high=2), (), {"size": 8, "fill_value": 7}, name="fill")


def _ref_nonzero_static(a: Any, size: int, fill_value: int = -1) -> Any:
    nz = np.argwhere(a).astype(np.int64)[:size]
    pad = np.full((size - len(nz), a.ndim), fill_value, dtype=np.int64)
    return np.concatenate([nz.reshape(len(nz), a.ndim), pad])


OPS = [
    OpInfo(
        "searchsorted",
        ea.searchsorted,
        ALL_NUMERIC,
        _searchsorted_samples,
        ref=_ref_searchsorted,
        result_dtype=_out_dtype,
        error_inputs=_searchsorted_errors,
        supports_autograd=False,
    ),
    OpInfo(
        "bucketize",
        ea.bucketize,
        ALL_NUMERIC,
        _bucketize_samples,
        ref=_ref_bucketize,
        result_dtype=_out_dtype,
        error_inputs=_bucketize_errors,
        supports_autograd=False,
    ),
    OpInfo(
        "tril_indices",
        ea.tril_indices,
        (ea.int32, ea.int64),
        _tri_samples,
        ref=_ref_tril,
        result_dtype=lambda s: s.kwargs["dtype"],
        error_inputs=_tri_errors,
        supports_out=False,
        check_unsupported=False,
        supports_autograd=False,
    ),
    OpInfo(
        "triu_indices",
        ea.triu_indices,
        (ea.int32, ea.int64),
        _tri_samples,
        ref=_ref_triu,
        result_dtype=lambda s: s.kwargs["dtype"],
        error_inputs=_tri_errors,
        supports_out=False,
        check_unsupported=False,
        supports_autograd=False,
    ),
    OpInfo(
        "diff",
        ea.diff,
        ALL_DTYPES,
        _samples(
            ((5,), ()),
            ((3, 4), (2, 0)),
            ((3, 4), (1, -1, _T(3, 2), _T(3, 1))),
            ((3, 4), (), {"append": _T(3, 2)}),
            ((4,), (0,)),
            ((2, 3), (5,)),
            ((0, 3), (1, 0)),
        ),
        ref=_ref_diff,
        # a difference of values up to 9 rounds to the dtype's ulp at 16 (the reference is float64)
        tol_overrides={ea.float16: (8e-3, 1e-3), ea.bfloat16: (0.125, 1.6e-2)},
        error_inputs=_diff_errors,
        kind="functions",
    ),
    OpInfo(
        "hsplit",
        ea.hsplit,
        ALL_DTYPES,
        _samples(((4, 6), (3,)), ((6,), (2,)), ((4, 6), ((1, 4),))),
        ref=_split_ref(np.hsplit),
        supports_out=False,
        error_inputs=_split_errors("hsplit", 1),
        kind="functions",
    ),
    OpInfo(
        "vsplit",
        ea.vsplit,
        ALL_DTYPES,
        _samples(((4, 6), (2,)), ((4, 6), ((1, 3),))),
        ref=_split_ref(np.vsplit),
        supports_out=False,
        error_inputs=_split_errors("vsplit", 2),
        kind="functions",
    ),
    OpInfo(
        "dsplit",
        ea.dsplit,
        ALL_DTYPES,
        _samples(((2, 3, 4), (2,)), ((2, 3, 4), ((1, 3),))),
        ref=_split_ref(np.dsplit),
        supports_out=False,
        error_inputs=_split_errors("dsplit", 3),
        kind="functions",
    ),
    OpInfo(
        "ravel",
        ea.ravel,
        ALL_DTYPES,
        _samples(((3, 4), ()), ((), ()), ((2, 0), ())),
        ref=np.ravel,
        supports_out=False,
        kind="functions",
    ),
    OpInfo(
        "msort",
        ea.msort,
        ALL_DTYPES,
        _samples(((5, 3), ()), ((4,), ()), ((0, 2), ())),
        ref=lambda a: np.sort(a, axis=0),
        kind="functions",
    ),
    OpInfo(
        "inner",
        ea.inner,
        ALL_NUMERIC,
        _samples(
            ((3,), (_T(3),)), ((2, 3), (_T(4, 3),)), ((2, 2, 3), (_T(3),)), ((), (_T(2, 3),)), ((0, 3), (_T(2, 3),))
        ),
        ref=_ref_inner,
        kind="functions",
    ),
    OpInfo(
        "deg2rad",
        ea.deg2rad,
        ALL_NUMERIC,
        _samples(((5,), ()), ((3, 4), ()), ((0,), ())),
        ref=lambda a: np.deg2rad(np.asarray(a, dtype=np.float64)),
        result_dtype=lambda s: s.input.dtype if s.input.dtype.is_floating_point else ea.float32,
        tol_overrides={ea.bfloat16: (4e-2, 1.6e-2)},
        supports_inplace=False,
        kind="functions",
    ),
    OpInfo(
        "rad2deg",
        ea.rad2deg,
        ALL_NUMERIC,
        _samples(((5,), ()), ((3, 4), ()), ((0,), ())),
        ref=lambda a: np.rad2deg(np.asarray(a, dtype=np.float64)),
        result_dtype=lambda s: s.input.dtype if s.input.dtype.is_floating_point else ea.float32,
        tol_overrides={ea.float16: (2e-2, 1e-3), ea.bfloat16: (0.5, 1.6e-2)},
        supports_inplace=False,
        kind="functions",
    ),
    OpInfo(
        "take_along_dim",
        ea.take_along_dim,
        ALL_DTYPES,
        _take_along_dim_samples,
        ref=_ref_take_along_dim,
        error_inputs=_take_along_dim_errors,
        kind="functions",
    ),
    OpInfo(
        "block_diag",
        _block_diag,
        ALL_DTYPES,
        _block_diag_samples,
        ref=_ref_block_diag,
        method=None,
        supports_noncontiguous=False,
        kind="functions",
    ),
    OpInfo(
        "cov",
        ea.cov,
        F32_64,
        _cov_samples,
        ref=_ref_cov,
        supports_out=False,
        error_inputs=_cov_errors,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "corrcoef",
        ea.corrcoef,
        F32_64,
        _samples(((3, 6), ()), ((5,), ())),
        ref=_ref_corrcoef,
        supports_out=False,
        atol=1e-5,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "trapezoid",
        ea.trapezoid,
        F32_64,
        _trapz_samples,
        ref=_ref_trapezoid,
        supports_out=False,
        error_inputs=_trapz_errors,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "cumulative_trapezoid",
        ea.cumulative_trapezoid,
        F32_64,
        _trapz_samples,
        ref=_ref_cumulative_trapezoid,
        supports_out=False,
        error_inputs=_trapz_errors,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "isin",
        ea.isin,
        ALL_NUMERIC,
        _isin_samples,
        ref=_ref_isin,
        result_dtype=lambda s: ea.bool,
        supports_out=False,
        supports_autograd=False,
    ),
    OpInfo(
        "slice_scatter",
        ea.slice_scatter,
        ALL_DTYPES,
        _slice_scatter_samples,
        ref=_ref_slice_scatter,
        supports_out=False,
        error_inputs=_scatter_errors,
        kind="functions",
    ),
    OpInfo(
        "select_scatter",
        ea.select_scatter,
        ALL_DTYPES,
        _samples(((4, 5), (_T(5), 0, 2)), ((4, 5), (_T(4), 1, -1))),
        ref=_ref_select_scatter,
        supports_out=False,
        kind="functions",
    ),
    OpInfo(
        "diagonal_scatter",
        ea.diagonal_scatter,
        ALL_DTYPES,
        _samples(((4, 4), (_T(4),)), ((3, 5), (_T(3), 1)), ((2, 4, 3), (_T(4, 1), -1, 0, 2))),
        ref=_ref_diagonal_scatter,
        supports_out=False,
        kind="functions",
    ),
    OpInfo(
        "renorm",
        ea.renorm,
        F32_64,
        _samples(((3, 4), (2, 0, 1.0)), ((3, 4), (1, 1, 2.0)), ((2, 3, 2), (3, -1, 0.5)), ((3, 4), (2, 0, 100.0))),
        ref=_ref_renorm,
        error_inputs=_renorm_errors,
        supports_inplace=False,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "cdist",
        ea.cdist,
        F32_64,
        _cdist_samples,
        ref=_ref_cdist,
        supports_out=False,
        error_inputs=_cdist_errors,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "pdist",
        ea.pdist,
        F32_64,
        _pdist_samples,
        ref=_ref_pdist,
        supports_out=False,
        error_inputs=_pdist_errors,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "quantile",
        ea.quantile,
        F32_64,
        _quantile_samples,
        ref=_ref_quantile(False),
        supports_out=False,
        nondifferentiable_args=(1,),
        error_inputs=_quantile_errors,
        kind="functions",
    ),
    OpInfo(
        "nanquantile",
        ea.nanquantile,
        F32_64,
        _quantile_samples,
        ref=_ref_quantile(True),
        supports_out=False,
        nondifferentiable_args=(1,),
        error_inputs=_quantile_errors,
        kind="functions",
    ),
    OpInfo(
        "combinations",
        ea.combinations,
        ALL_DTYPES,
        _samples(((4,), ()), ((4,), (3,)), ((3,), (2, True)), ((3,), (0,)), ((2,), (3,)), ((5,), (1,))),
        ref=_ref_combinations,
        method=None,
        supports_out=False,
        error_inputs=_combinations_errors,
        kind="functions",
    ),
    OpInfo(
        "nonzero_static",
        ea.nonzero_static,
        ALL_DTYPES,
        _nonzero_static_samples,
        ref=_ref_nonzero_static,
        result_dtype=lambda s: ea.int64,
        supports_autograd=False,
        error_inputs=lambda op: iter(
            [_err(ea.ones(3), (), RuntimeError, "'size' must be an non-negative integer", size=-1)]
        ),
    ),
]


# ---- the *_copy views, dist, frexp --------------------------------------------------------------


def _copy_row(name: str, ref: Any, *cases: tuple[Any, ...], dtypes: tuple[Any, ...] = ALL_DTYPES) -> OpInfo:
    """A *_copy op: the view's values, contiguous (NumPy's view, copied, is the reference)."""
    return OpInfo(
        name,
        getattr(ea, name),
        dtypes,
        _samples(*cases),
        ref=lambda a, *args, **kw: np.ascontiguousarray(ref(a, *args, **kw)),
        supports_inplace=False,
        check_unsupported=False,
        kind="functions",
    )


def _ref_frexp(a: Any) -> Any:
    m, e = np.frexp(a)
    return m, e.astype(np.int32)


def _frexp_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make_tensor((3, 4), dtype), name="3x4")
    yield SampleInput(make_tensor((0, 2), dtype), name="empty")
    yield SampleInput(make_tensor((4, 3), dtype).t(), name="non-contiguous")
    # (zeros, powers of two and subnormals: test_functions.py; finite differences jump there)


def _frexp_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(ea.tensor([1, 2]), (), RuntimeError, r"torch\.frexp\(\) only supports floating-point dtypes")


def _ref_dist(a: Any, b: Any, p: float = 2) -> Any:
    d = np.abs(a - b).ravel()
    if p == 0:
        return np.array(float(np.count_nonzero(d)))
    if p == math.inf:
        return np.array(d.max() if d.size else 0.0)
    return np.array((d**p).sum() ** (1 / p))


COPY_OPS = [
    _copy_row("expand_copy", lambda a, size: np.broadcast_to(a, size), ((3, 1), ((2, 3, 4),)), ((0, 1), ((0, 2),))),
    _copy_row("permute_copy", np.transpose, ((2, 3, 4), ((2, 0, 1),)), ((0, 3), ((1, 0),))),
    _copy_row("transpose_copy", np.swapaxes, ((2, 3, 4), (0, 2)), ((3, 0), (0, 1))),
    _copy_row("t_copy", np.transpose, ((3, 4), ()), ((5,), ())),
    _copy_row("unsqueeze_copy", np.expand_dims, ((3, 4), (1,)), ((0,), (0,))),
    _copy_row(
        "diagonal_copy", lambda a, o=0, d1=0, d2=1: np.diagonal(a, o, d1, d2), ((4, 5), ()), ((3, 4, 5), (1, 2, 0))
    ),
    _copy_row(
        "narrow_copy", lambda a, d, s, n: np.take(a, range(s, s + n), axis=d), ((4, 5), (1, 1, 3)), ((4, 5), (0, 2, 0))
    ),
    _copy_row(
        "unfold_copy",
        lambda a, d, size, step: np.lib.stride_tricks.sliding_window_view(a, size, axis=d)[
            tuple(slice(None, None, step) if i == d else slice(None) for i in range(a.ndim))
        ],
        ((6, 3), (0, 2, 2)),
        ((7,), (0, 3, 1)),
    ),
    _copy_row("alias_copy", lambda a: a, ((3, 4), ()), ((0,), ())),
    OpInfo(
        "dist",
        ea.dist,
        F32_64,
        _samples(
            ((3, 4), (_T(3, 4),)),
            (
                (3, 4),
                (
                    _T(
                        4,
                    ),
                    3,
                ),
            ),
            ((2, 3), (_T(2, 3), 0)),
            ((2, 3), (_T(2, 3), math.inf)),
            ((0, 3), (_T(0, 3),)),
        ),
        ref=_ref_dist,
        supports_out=False,
        supports_inplace=False,
        check_unsupported=False,
        kind="functions",
    ),
    OpInfo(
        "frexp",
        ea.frexp,
        F32_64,
        _frexp_samples,
        ref=_ref_frexp,
        result_dtype=lambda s: s.input.dtype,
        error_inputs=_frexp_errors,
        supports_out=False,
        supports_inplace=False,
        check_unsupported=False,
        kind="functions",
    ),
]
OPS += COPY_OPS
