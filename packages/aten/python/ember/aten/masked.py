"""Masked reductions and normalisations, as PyTorch's ``torch.masked`` (strided tensors).

Every function takes a boolean ``mask`` (keyword-only; broadcastable to the input, of no
more dimensions than it; None: every element is valid). A masked-out element is replaced
by the identity of the operation before it runs -- 0 for sum, 1 for prod, -inf (the
dtype's minimum for integers) for amax / argmax / logsumexp / logaddexp / softmax, +inf
(the maximum) for amin / argmin / softmin, NaN for median -- so it takes no part in the
result. Where every element of a reduction is masked out, sum / prod / amax / ... give
that identity, and mean / var / std / median give NaN (an undefined value).

    >>> import ember.aten as ea
    >>> from ember.aten import masked
    >>> x = ea.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> m = ea.tensor([[True, False, True], [False, False, True]])
    >>> masked.sum(x, 1, mask=m)
    tensor([4., 6.])
    >>> masked.mean(x, 1, mask=m)
    tensor([2., 6.])

A submodule imported on first use (``import ember.aten.masked``; ``ember.torch.masked``),
as ``ember.aten.signal``: it is built on ember.aten's namespace, which therefore does not
import it. The functions are composites of ember.aten's operators (``where`` then the reduction), so
their gradients are those operators' (masked-out elements get a zero gradient).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.aten as _ea

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]

Dims = int | Sequence[int] | None

# the integer dtypes sum / prod accumulate in int64 (as torch.sum does)
_PROMOTED_TO_INT64 = ("bool", "uint8", "int8", "int16", "int32")
# (smallest, largest) value of each integer dtype: the identities of amax / amin on them
_INTEGER_RANGE = {
    "uint8": (0, 2**8 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


# ---------------------------------------------------------------- helpers
def _canonical_dims(dim: Dims, ndim: int) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative dims; None (or ()) is every dim."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(ndim))
    rank = max(ndim, 1)
    dims: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
        if d % rank in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        dims.append(d % rank)
    return tuple(sorted(dims))


def _one_dim(dim: int, ndim: int) -> int:
    return _canonical_dims(dim, ndim)[0]


def _input_mask(input: Any, mask: Any) -> Any:
    """`mask` as a boolean tensor of the input's shape (broadcast)."""
    if not isinstance(mask, _ea.Tensor):
        raise TypeError(f"masked: mask must be a Tensor, got {type(mask).__name__}")
    if mask.shape != input.shape:
        if mask.dim() > input.dim():
            raise IndexError(
                f"masked: the mask has {mask.dim()} dimensions, more than the input's {input.dim()} "
                f"(mask shape {list(mask.shape)}, input shape {list(input.shape)})"
            )
        mask = _ea.broadcast_to(mask, input.shape)
    return mask if mask.dtype == _ea.bool else mask.to(_ea.bool)


def _identity(op: str, input: Any, ord: float = 2.0) -> Any:
    """The value a masked-out element of `input` takes for reduction `op`."""
    dt = input.dtype
    floating = dt.is_floating_point
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if op in ("amax", "logsumexp"):
        if floating:
            return float("-inf")
        if dt._name in _INTEGER_RANGE:
            return _INTEGER_RANGE[dt._name][0]
    elif op == "amin":
        if floating:
            return float("inf")
        if dt._name in _INTEGER_RANGE:
            return _INTEGER_RANGE[dt._name][1]
    elif op == "norm":
        return float("inf") if ord == float("-inf") else 0
    elif op == "median":
        return float("nan")
    raise TypeError(f"masked {op}: no identity for {dt} input")


def _fill(op: str, input: Any, mask: Any, ord: float = 2.0) -> Any:
    """`input` with its masked-out elements replaced by the identity of `op`."""
    if mask is None:
        return input
    value = _identity(op, input, ord)
    return _ea.where(_input_mask(input, mask), input, _ea.tensor(value, dtype=input.dtype, device=input.device))


def _accumulating_dtype(input: Any, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    return _ea.int64 if input.dtype._name in _PROMOTED_TO_INT64 else input.dtype


def _check_strided(name: str, *tensors: Any) -> None:
    for t in tensors:
        if not isinstance(t, _ea.Tensor):
            raise TypeError(f"masked {name}(): expected a Tensor, got {type(t).__name__}")
        if t.is_sparse:
            raise ValueError(f"masked {name} expects strided tensor (got {t.layout} tensor)")


# ---------------------------------------------------------------- reductions
def sum(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Sum of the valid elements over `dim` (0 where none is valid)."""
    _check_strided("sum", input)
    dims = _canonical_dims(dim, input.dim())
    return _ea.sum(_fill("sum", input, mask), dims, bool(keepdim), dtype=_accumulating_dtype(input, dtype))


def prod(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Product of the valid elements over `dim` (1 where none is valid)."""
    _check_strided("prod", input)
    dims = _canonical_dims(dim, input.dim())
    result = _fill("prod", input, mask).to(_accumulating_dtype(input, dtype))
    for d in reversed(dims):  # aten's prod reduces one dim at a time
        result = result.prod(d, keepdim=bool(keepdim))
    return result


def amax(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Largest valid element over `dim` (-inf, or the dtype's minimum, where none is valid)."""
    _check_strided("amax", input)
    dims = _canonical_dims(dim, input.dim())
    out = _ea.amax(_fill("amax", input, mask), dims, bool(keepdim))
    return out if dtype is None else out.to(dtype)


def amin(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Smallest valid element over `dim` (+inf, or the dtype's maximum, where none is valid)."""
    _check_strided("amin", input)
    dims = _canonical_dims(dim, input.dim())
    out = _ea.amin(_fill("amin", input, mask), dims, bool(keepdim))
    return out if dtype is None else out.to(dtype)


def argmax(input: Any, dim: int | None = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Index of the largest valid element along `dim` (of the flattened input when None),
    in the input's dtype unless `dtype` says otherwise (as torch.masked.argmax)."""
    _check_strided("argmax", input)
    out = _ea.argmax(_fill("amax", input, mask), dim, bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def argmin(input: Any, dim: int | None = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Index of the smallest valid element along `dim` (of the flattened input when None),
    in the input's dtype unless `dtype` says otherwise (as torch.masked.argmin)."""
    _check_strided("argmin", input)
    out = _ea.argmin(_fill("amin", input, mask), dim, bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def _count(input: Any, dim: Dims, keepdim: bool, mask: Any) -> Any:
    """How many valid elements each reduction over `dim` has (int64)."""
    if mask is None:
        valid = _ea.ones(input.shape, dtype=_ea.int64, device=input.device)
    else:
        valid = _input_mask(input, mask)
    return _ea.sum(valid, _canonical_dims(dim, input.dim()), keepdim, dtype=_ea.int64)


def _floating_dtype(name: str, input: Any, dtype: Any) -> Any:
    source = "Optional" if dtype is not None else "Input"
    dt = input.dtype if dtype is None else dtype
    if not dt.is_floating_point:
        raise ValueError(
            f"{name}(): Could not infer output dtype. {source} dtype must be either a floating point or complex "
            f"dtype. Got: {dt}"
        )
    return dt


def mean(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Mean of the valid elements over `dim` (NaN where none is valid)."""
    _check_strided("mean", input)
    dt = _floating_dtype("mean", input, dtype)
    total = sum(input, dim, keepdim=keepdim, dtype=dt, mask=mask)
    return total / _count(input, dim, bool(keepdim), mask)


def median(input: Any, dim: int = -1, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Median of the valid elements along `dim` (NaN where none is valid; the lower of the
    two middle values for an even count, as ``median``)."""
    _check_strided("median", input)
    d = _one_dim(dim, input.dim())
    floating = input.dtype.is_floating_point
    x = input if floating else input.to(_ea.float32)
    out = _ea.nanmedian(_fill("median", x, mask), d, bool(keepdim))[0]  # (values, indices)
    if floating:
        return out
    if bool(_ea.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(input.dtype if dtype is None else dtype)


def logsumexp(input: Any, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """log(sum(exp)) of the valid elements over `dim` (-inf where none is valid)."""
    _check_strided("logsumexp", input)
    dims = _canonical_dims(dim, input.dim())
    out = _ea.logsumexp(_fill("logsumexp", input, mask), dims, bool(keepdim))
    return out if dtype is None else out.to(dtype)


def norm(
    input: Any,
    ord: float = 2.0,
    dim: Dims = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Any = None,
) -> Any:
    """Vector norm of order `ord` of the valid elements over `dim` (``linalg.vector_norm``)."""
    _check_strided("norm", input)
    if ord == float("-inf") and not input.dtype.is_floating_point:
        raise TypeError(f"masked norm: ord=-inf needs a floating-point input, got {input.dtype}")
    dims = _canonical_dims(dim, input.dim())
    filled = _fill("norm", input, mask, ord)
    return _ea.linalg.vector_norm(filled, ord, dims, bool(keepdim), dtype=input.dtype if dtype is None else dtype)


def _std_var(
    name: str,
    input: Any,
    dim: Dims,
    unbiased: bool | None,
    correction: float | None,
    keepdim: bool,
    dtype: Any,
    mask: Any,
) -> Any:
    _check_strided(name, input)
    if unbiased is not None and correction is not None:
        raise ValueError(f"masked {name}(): only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _ea.float32
    compute = dtype if dtype.is_floating_point else _ea.float32
    count = _count(input, dim, True, mask)
    mean_ = sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    centred = input - mean_
    total = sum(centred * centred, dim, keepdim=keepdim, dtype=compute, mask=mask)
    count = count.reshape(total.shape)
    if corr != 0:
        count = _ea.clamp_min(count.to(compute) - corr, 0)
    return (total / count).to(dtype)


def var(
    input: Any,
    dim: Dims = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Any = None,
) -> Any:
    """Variance of the valid elements over `dim`, with Bessel's `correction` (1 unless
    ``unbiased=False`` or ``correction`` says otherwise); NaN where too few are valid."""
    return _std_var("var", input, dim, unbiased, correction, bool(keepdim), dtype, mask)


def std(
    input: Any,
    dim: Dims = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Any = None,
) -> Any:
    """Standard deviation of the valid elements over `dim` (the square root of ``var``)."""
    return _ea.sqrt(_std_var("std", input, dim, unbiased, correction, bool(keepdim), dtype, mask))


# ---------------------------------------------------------------- normalisations and scans
def cumsum(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative sum along `dim`, masked-out elements counted as 0."""
    _check_strided("cumsum", input)
    dt = input.dtype if dtype is None else dtype
    return _ea.cumsum(_fill("sum", input, mask), _one_dim(dim, input.dim()), dtype=dt).to(dt)


def cumprod(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative product along `dim`, masked-out elements counted as 1."""
    _check_strided("cumprod", input)
    dt = input.dtype if dtype is None else dtype
    return _ea.cumprod(_fill("prod", input, mask), _one_dim(dim, input.dim()), dtype=dt).to(dt)


def softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Softmax along `dim` over the valid elements (masked-out ones get 0; NaN along a
    slice with none valid)."""
    _check_strided("softmax", input)
    dt = input.dtype if dtype is None else dtype
    return _ea.softmax(_fill("amax", input, mask), _one_dim(dim, input.dim()), dtype=dt)


def log_softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """log(softmax) along `dim` over the valid elements (masked-out ones get -inf)."""
    _check_strided("log_softmax", input)
    dt = input.dtype if dtype is None else dtype
    return _ea.log_softmax(_fill("amax", input, mask), _one_dim(dim, input.dim()), dtype=dt)


def softmin(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """softmax(-input) along `dim` over the valid elements (masked-out ones get 0)."""
    _check_strided("softmin", input)
    dt = input.dtype if dtype is None else dtype
    return _ea.softmax(-_fill("amin", input, mask), _one_dim(dim, input.dim()), dtype=dt)


def normalize(input: Any, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None, mask: Any = None) -> Any:
    """The valid elements divided by their `ord`-norm along `dim` (at least `eps`);
    masked-out elements become 0."""
    _check_strided("normalize", input)
    dt = input.dtype if dtype is None else dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dt, mask=mask)
    return _ea.divide(_fill("sum", input, mask), _ea.clamp_min(nrm, eps))


def logaddexp(input: Any, other: Any, *, dtype: Any = None, input_mask: Any = None, other_mask: Any = None) -> Any:
    """log(exp(input) + exp(other)), each operand's masked-out elements taken as -inf."""
    _check_strided("logaddexp", input, other)
    out = _ea.logaddexp(_fill("amax", input, input_mask), _fill("amax", other, other_mask))
    return out.to(input.dtype if dtype is None else dtype)
