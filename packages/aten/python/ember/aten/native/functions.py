"""Composite kernels of the functions family (issue 18): PyTorch's composites over other ops.

diff, atleast_nd, h/v/dsplit, ravel, msort, inner, deg2rad / rad2deg, take_along_dim,
block_diag, cov / corrcoef, trapezoid / cumulative_trapezoid, isin, the ``*_scatter``
ops, renorm, cdist / pdist and quantile / nanquantile. Each takes its schema's arguments
positionally and calls ember.aten's public functions, so it runs on every backend and
autograd follows the operators it calls (these are CompositeImplicitAutograd in PyTorch too).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ember.aten as ea
import ember.c10py as _c10
from ember.aten import _memory_format as _mf
from ember.aten._generated import _ops as ops

from .linalg import _set_out
from .linalg_ext import _broadcast

_wrap = _c10.maybe_wrap_dim


def _out(out: Any, result: Any, name: str) -> Any:
    return _set_out(out, result, name)


# ---- diff ---------------------------------------------------------------------------------


def diff(self: Any, n: int, dim: int, prepend: Any, append: Any) -> Any:
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, self.dim())
    parts = []
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if t.dim() != self.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append((name, t))
    x = self
    if parts:
        pre = [t for k, t in parts if k == "prepend"]
        app = [t for k, t in parts if k == "append"]
        x = ea.cat([*pre, self, *app], d)
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        hi = ea.narrow(x, d, 1, length - 1)
        lo = ea.narrow(x, d, 0, length - 1)
        x = ea.logical_xor(hi, lo) if x.dtype == ea.bool else ea.sub(hi, lo)
    return x


def diff_out(self: Any, n: int, dim: int, prepend: Any, append: Any, out: Any) -> Any:
    return _out(out, diff(self, n, dim, prepend, append), "diff")


# ---- atleast_nd ---------------------------------------------------------------------------


def atleast_1d(self: Any) -> Any:
    return ea.reshape(self, (1,)) if self.dim() == 0 else self


def atleast_2d(self: Any) -> Any:
    if self.dim() == 0:
        return ea.reshape(self, (1, 1))
    return ea.unsqueeze(self, 0) if self.dim() == 1 else self


def atleast_3d(self: Any) -> Any:
    nd = self.dim()
    if nd == 0:
        return ea.reshape(self, (1, 1, 1))
    if nd == 1:
        return ea.unsqueeze(ea.unsqueeze(self, 0), -1)
    if nd == 2:
        return ea.unsqueeze(self, -1)
    return self


def atleast_1d_Sequence(tensors: Any) -> Any:
    return [atleast_1d(t) for t in tensors]


def atleast_2d_Sequence(tensors: Any) -> Any:
    return [atleast_2d(t) for t in tensors]


def atleast_3d_Sequence(tensors: Any) -> Any:
    return [atleast_3d(t) for t in tensors]


# ---- hsplit / vsplit / dsplit (numpy's, over tensor_split) ----------------------------------


def _dim_split(name: str, self: Any, sections_or_indices: Any, min_dim: int, dim: int, what: str) -> Any:
    if self.dim() < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with "
            f"{self.dim()} dimensions!"
        )
    if isinstance(sections_or_indices, int):
        s = sections_or_indices
        size = self.shape[dim]
        if s == 0 or size % s != 0:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {size} is not "
                f"divisible by the split_size {s}!"
            )
        return ea.tensor_split(self, s, dim)
    return ea.tensor_split(self, list(sections_or_indices), dim)


def hsplit_int(self: Any, sections: int) -> Any:
    return _dim_split("hsplit", self, sections, 1, 0 if self.dim() == 1 else 1, "")


def hsplit_array(self: Any, indices: Any) -> Any:
    return _dim_split("hsplit", self, tuple(indices), 1, 0 if self.dim() == 1 else 1, "")


def vsplit_int(self: Any, sections: int) -> Any:
    return _dim_split("vsplit", self, sections, 2, 0, "")


def vsplit_array(self: Any, indices: Any) -> Any:
    return _dim_split("vsplit", self, tuple(indices), 2, 0, "")


def dsplit_int(self: Any, sections: int) -> Any:
    return _dim_split("dsplit", self, sections, 3, 2, "")


def dsplit_array(self: Any, indices: Any) -> Any:
    return _dim_split("dsplit", self, tuple(indices), 3, 2, "")


# ---- small ones -----------------------------------------------------------------------------


def ravel(self: Any) -> Any:
    return ea.reshape(self, (-1,))


def msort(self: Any) -> Any:
    return ea.sort(self, 0)[0]


def msort_out(self: Any, out: Any) -> Any:
    return _out(out, msort(self), "msort")


def inner(self: Any, other: Any) -> Any:
    if self.dim() == 0 or other.dim() == 0:
        return ea.mul(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(self.shape)} and "
            f"{list(other.shape)}"
        )
    return ea.tensordot(self, other, ([-1], [-1]))


def inner_out(self: Any, other: Any, out: Any) -> Any:
    return _out(out, inner(self, other), "inner")


def _check_angle_dtype(name: str, self: Any) -> None:
    if self.dtype == ea.bool:
        raise RuntimeError(f"\"{name}\" not implemented for 'Bool'")


def deg2rad(self: Any) -> Any:
    _check_angle_dtype("deg2rad", self)
    x = self if self.is_floating_point() else self.to(ea.get_default_dtype())
    return ea.mul(x, math.pi / 180.0)


def deg2rad_out(self: Any, out: Any) -> Any:
    return _out(out, deg2rad(self), "deg2rad")


def deg2rad_(self: Any) -> Any:
    _check_angle_dtype("deg2rad_", self)
    if not self.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtype_name(self.dtype)}")
    return self.mul_(math.pi / 180.0)


def rad2deg(self: Any) -> Any:
    _check_angle_dtype("rad2deg", self)
    x = self if self.is_floating_point() else self.to(ea.get_default_dtype())
    return ea.mul(x, 180.0 / math.pi)


def rad2deg_out(self: Any, out: Any) -> Any:
    return _out(out, rad2deg(self), "rad2deg")


def rad2deg_(self: Any) -> Any:
    _check_angle_dtype("rad2deg_", self)
    if not self.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtype_name(self.dtype)}")
    return self.mul_(180.0 / math.pi)


def _dtype_name(dt: Any) -> str:
    names = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}
    return names.get(dt._name, dt._name)


# ---- take_along_dim ---------------------------------------------------------------------------


def take_along_dim(self: Any, indices: Any, dim: int | None) -> Any:
    if indices.dtype != ea.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_dtype_name(indices.dtype)}"
        )
    if dim is None:
        return ea.gather(ea.reshape(self, (-1,)), 0, ea.reshape(indices, (-1,)))
    if self.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{self.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = _wrap(dim, self.dim())
    s_sizes = list(self.shape)
    s_sizes[d] = indices.shape[d]
    idx = ea.broadcast_to(indices, _broadcast(tuple(s_sizes), tuple(indices.shape)))
    i_sizes = list(indices.shape)
    i_sizes[d] = self.shape[d]
    src = ea.broadcast_to(self, _broadcast(tuple(i_sizes), tuple(self.shape)))
    return ea.gather(src, d, idx)


def take_along_dim_out(self: Any, indices: Any, dim: int | None, out: Any) -> Any:
    return _out(out, take_along_dim(self, indices, dim), "take_along_dim")


# ---- block_diag -----------------------------------------------------------------------------


def block_diag(tensors: Any) -> Any:
    if not tensors:
        return ea.empty((1, 0))
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
        mats.append(atleast_2d(t))
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = _c10.promote_types(dtype, m.dtype)
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    # the blocks as one cat of zero-padded rows, so autograd follows cat and pad-free copies
    blocks = []
    c0 = 0
    for m in mats:
        r, c = m.shape
        left = ea.zeros((r, c0), dtype=dtype, device=m.device)
        right = ea.zeros((r, cols - c0 - c), dtype=dtype, device=m.device)
        blocks.append(ea.cat([left, m.to(dtype), right], 1))
        c0 += c
    out = ea.cat(blocks, 0)
    assert tuple(out.shape) == (rows, cols)
    return out


def block_diag_out(tensors: Any, out: Any) -> Any:
    return _out(out, block_diag(tensors), "block_diag")


# ---- cov / corrcoef -------------------------------------------------------------------------


def cov(self: Any, correction: int, fweights: Any, aweights: Any) -> Any:
    if self.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions"
        )
    if self.dtype == ea.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = ea.reshape(self, (1, -1)) if self.dim() < 2 else self
    n_obs = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        if wt.dim() > 1:
            raise RuntimeError(
                f"cov(): expected {name} to have one or fewer dimensions but got {name} with {wt.dim()} dimensions"
            )
        if name == "fweights" and wt.is_floating_point():
            raise RuntimeError(
                f"cov(): expected fweights to have integral dtype but got fweights with {_dtype_name(wt.dtype)} dtype"
            )
        if name == "aweights" and not wt.is_floating_point():
            raise RuntimeError(
                "cov(): expected aweights to have floating point dtype but got aweights with "
                f"{_dtype_name(wt.dtype)} dtype"
            )
        if wt.numel() != n_obs:
            raise RuntimeError(
                f"cov(): expected {name} to have the same numel as there are observations in the input but got "
                f"{wt.numel()} != {n_obs}"
            )
        if wt.numel() and bool(ea.amin(wt) < 0):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = wt if w is None else ea.mul(w, wt)
    w_sum = ea.sum(w) if w is not None else ea.scalar_tensor(n_obs, dtype=ea.int64, device=x.device)
    avg = ea.div(ea.sum(ea.mul(x, w) if w is not None else x, 1), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        norm = ea.sub(w_sum, ea.div(ea.mul(ea.sum(ea.mul(w, aweights)), correction), w_sum))
    else:
        norm = ea.sub(w_sum, correction)
    if bool(norm <= 0):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = ea.zeros_like(norm)
    xc = ea.sub(x, ea.unsqueeze(avg, 1))
    c = ea.mm(xc, ea.t(ea.mul(xc, w) if w is not None else xc))
    return ea.squeeze(ea.div(c, norm))


def corrcoef(self: Any) -> Any:
    if self.dim() > 2:
        raise RuntimeError(
            f"corrcoef(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions"
        )
    c = cov(self, 1, None, None)
    if c.dim() == 0:
        return ea.div(c, c)
    sd = ea.sqrt(ea.diagonal(c))
    c = ea.div(c, ea.reshape(sd, (-1, 1)))
    c = ea.div(c, ea.reshape(sd, (1, -1)))
    return ea.clip(c, -1, 1)


# ---- trapezoid / cumulative_trapezoid -------------------------------------------------------


def _trapz_check(name: str, y: Any) -> None:
    if y.dtype == ea.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def _trapz_dx(name: str, y: Any, x: Any, d: int) -> Any:
    if x.dtype == ea.bool:
        raise RuntimeError(f"{name}: received a bool input for `x`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        dx = ea.diff(x)
        shape = [1] * y.dim()
        shape[d] = dx.shape[0]
        return ea.reshape(dx, tuple(shape))
    if x.dim() < y.dim():
        x = ea.reshape(x, (1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return ea.diff(x, dim=d)


def _trapz_pairs(y: Any, d: int) -> Any:
    n = y.shape[d]
    return ea.add(ea.narrow(y, d, 1, n - 1), ea.narrow(y, d, 0, n - 1))


def trapezoid_x(y: Any, x: Any, dim: int) -> Any:
    _trapz_check("trapezoid", y)
    d = _wrap(dim, y.dim())
    if y.shape[d] == 0:
        return ea.sum(ea.mul(y, 0), d)
    dx = _trapz_dx("trapezoid", y, x, d)
    return ea.sum(ea.div(ea.mul(dx, _trapz_pairs(y, d)), 2.0), d)


def trapezoid_dx(y: Any, dx: Any, dim: int) -> Any:
    _trapz_check("trapezoid", y)
    d = _wrap(dim, y.dim())
    if y.shape[d] == 0:
        return ea.sum(ea.mul(y, 0), d)
    return ea.mul(ea.div(ea.sum(_trapz_pairs(y, d), d), 2.0), dx)


def cumulative_trapezoid_x(y: Any, x: Any, dim: int) -> Any:
    _trapz_check("cumulative_trapezoid", y)
    d = _wrap(dim, y.dim())
    if y.shape[d] == 0:
        return ea.mul(y, 0)
    dx = _trapz_dx("cumulative_trapezoid", y, x, d)
    return ea.cumsum(ea.div(ea.mul(dx, _trapz_pairs(y, d)), 2.0), d)


def cumulative_trapezoid_dx(y: Any, dx: Any, dim: int) -> Any:
    _trapz_check("cumulative_trapezoid", y)
    d = _wrap(dim, y.dim())
    if y.shape[d] == 0:
        return ea.mul(y, 0)
    return ea.mul(ea.cumsum(ea.div(_trapz_pairs(y, d), 2.0), d), dx)


# ---- isin: sort the test elements once, binary-search every element --------------------------


def isin_Tensor_Tensor(elements: Any, test_elements: Any, assume_unique: bool, invert: bool) -> Any:
    dtype = _c10.promote_types(elements.dtype, test_elements.dtype)
    e = elements.to(dtype)
    if test_elements.numel() == 0:
        return ea.full(tuple(elements.shape), invert, dtype=ea.bool, device=elements.device)
    s = ea.sort(ea.reshape(test_elements.to(dtype), (-1,)))[0]
    pos = ea.clamp(ea.searchsorted(s, e), max=s.shape[0] - 1)
    found = ea.eq(ea.take(s, pos), e)
    return ea.logical_not(found) if invert else found


def isin_Tensor_Tensor_out(elements: Any, test_elements: Any, assume_unique: bool, invert: bool, out: Any) -> Any:
    return _out(out, isin_Tensor_Tensor(elements, test_elements, assume_unique, invert), "isin")


def isin_Tensor_Scalar(elements: Any, test_element: Any, assume_unique: bool, invert: bool) -> Any:
    r = ea.eq(elements, test_element)
    return ea.logical_not(r) if invert else r


def isin_Scalar_Tensor(element: Any, test_elements: Any, assume_unique: bool, invert: bool) -> Any:
    e = ea.scalar_tensor(element, device=test_elements.device)
    if isinstance(element, bool):
        e = e.to(ea.bool)
    elif isinstance(element, int):
        e = e.to(ea.int64)
    return isin_Tensor_Tensor(e, test_elements, assume_unique, invert)


# ---- the *_scatter ops: a copy of self with src written into one view of it ---------------------


def _scatter_into(self: Any, view_of: Any, src: Any, name: str) -> Any:
    out = ea.clone(self)
    v = view_of(out)
    if tuple(v.shape) != tuple(src.shape):
        raise RuntimeError(
            f"{name}: expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice "
            f"size = {list(v.shape)}"
        )
    v.copy_(src)
    return out


def slice_scatter(self: Any, src: Any, dim: int, start: int | None, end: int | None, step: int) -> Any:
    return _scatter_into(self, lambda t: ops._call_slice_Tensor(t, dim, start, end, step), src, "slice_scatter")


def select_scatter(self: Any, src: Any, dim: int, index: int) -> Any:
    return _scatter_into(self, lambda t: ea.select(t, dim, index), src, "select_scatter")


def diagonal_scatter(self: Any, src: Any, offset: int, dim1: int, dim2: int) -> Any:
    return _scatter_into(self, lambda t: ea.diagonal(t, offset, dim1, dim2), src, "diagonal_scatter")


def as_strided_scatter(self: Any, src: Any, size: Any, stride: Any, storage_offset: int | None) -> Any:
    return _scatter_into(
        self, lambda t: ea.as_strided(t, tuple(size), tuple(stride), storage_offset), src, "as_strided_scatter"
    )


# ---- renorm ---------------------------------------------------------------------------------


def renorm(self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    if not self.is_floating_point():
        raise RuntimeError(f"\"renorm\" not implemented for '{_dtype_name(self.dtype)}'")
    if float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm)}")
    if self.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} dimensions")
    d = _wrap(dim, self.dim())
    others = [i for i in range(self.dim()) if i != d]
    norm = ea.linalg.vector_norm(self, float(p), others, True)
    # PyTorch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, else 1
    factor = ea.where(norm > float(maxnorm), ea.div(float(maxnorm), ea.add(norm, 1e-7)), ea.ones_like(norm))
    return ea.mul(self, factor)


def renorm_out(self: Any, p: Any, dim: int, maxnorm: Any, out: Any) -> Any:
    return _out(out, renorm(self, p, dim, maxnorm), "renorm")


def renorm_(self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    return self.copy_(renorm(self, p, dim, maxnorm))


# ---- cdist / pdist ----------------------------------------------------------------------------


def cdist(x1: Any, x2: Any, p: float, compute_mode: int | None) -> Any:
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.is_floating_point() or not x2.is_floating_point():
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_dtype_name(x1.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff_ = ea.sub(ea.unsqueeze(x1, -2), ea.unsqueeze(x2, -3))
    if x1.shape[-1] == 0:
        return ea.sum(diff_, -1)
    return ea.linalg.vector_norm(diff_, p, -1)


def pdist(self: Any, p: float) -> Any:
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if not self.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = self.shape[0]
    if n <= 1:
        return ea.empty((0,), dtype=self.dtype, device=self.device)
    i, j = ea.triu_indices(n, n, 1, device=self.device)
    return ea.linalg.vector_norm(ea.sub(ea.index_select(self, 0, i), ea.index_select(self, 0, j)), p, -1)


# ---- quantile / nanquantile -----------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(
    name: str, self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool
) -> Any:
    if not self.is_floating_point() or self.dtype not in (ea.float32, ea.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, ea.Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        q = ea.scalar_tensor(q, dtype=self.dtype, device=self.device)
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != self.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and not bool(ea.logical_and(q >= 0, q <= 1).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got '{interpolation}'"
        )
    q_1d = q.dim() == 1
    if dim is None:
        x = ea.reshape(self, (-1,))
        d = None
    else:
        d = _wrap(dim, max(self.dim(), 1))
        x = ea.movedim(ea.reshape(self, (1,)) if self.dim() == 0 else self, d, -1)
    rest = tuple(x.shape[:-1])
    n = x.shape[-1]
    qv = ea.reshape(q, (-1,))
    nq = qv.shape[0]
    if n == 0:
        r = ea.full((*rest, nq), math.nan, dtype=self.dtype, device=self.device)
    else:
        srt = ea.sort(x, -1)[0]
        nan = ea.isnan(srt)
        if ignore_nan:
            count = ea.sum(ea.logical_not(nan), -1, keepdim=True).to(self.dtype)
            ranks = ea.mul(qv, ea.sub(count, 1))
            ranks = ea.clamp(ranks, min=0)
        else:
            ranks = ea.mul(qv, float(n - 1)).expand(*rest, nq) if rest else ea.mul(qv, float(n - 1))
            ranks = ea.where(ea.any(nan, -1, keepdim=True), float(n - 1), ranks)
        ranks = ranks.expand(*rest, nq) if rest else ranks
        if interpolation == "lower":
            ranks = ea.floor(ranks)
        elif interpolation == "higher":
            ranks = ea.ceil(ranks)
        elif interpolation == "nearest":
            ranks = ea.round(ranks)
        below = ea.floor(ranks).to(ea.int64)
        above = ea.ceil(ranks).to(ea.int64)
        vb = ea.gather(srt, -1, below)
        if interpolation in ("lower", "higher", "nearest"):
            r = vb
        else:
            va = ea.gather(srt, -1, above)
            w = ea.sub(ranks, below.to(self.dtype)) if interpolation == "linear" else ea.full_like(ranks, 0.5)
            r = ea.lerp(vb, va, w)
    r = ea.movedim(r, -1, 0)  # (nq, *rest)
    if keepdim:
        if d is None:
            r = ea.reshape(r, (nq,) + (1,) * self.dim())
        else:
            r = ea.unsqueeze(r, d + 1)
    if not q_1d:
        r = ea.squeeze(r, 0)
    return r


def quantile(self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str) -> Any:
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def quantile_scalar(self: Any, q: float, dim: int | None, keepdim: bool, interpolation: str) -> Any:
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def quantile_out(self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str, out: Any) -> Any:
    return _out(out, quantile(self, q, dim, keepdim, interpolation), "quantile")


def nanquantile(self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str) -> Any:
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(self: Any, q: float, dim: int | None, keepdim: bool, interpolation: str) -> Any:
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def nanquantile_out(self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str, out: Any) -> Any:
    return _out(out, nanquantile(self, q, dim, keepdim, interpolation), "nanquantile")


# ---- combinations / nonzero_static --------------------------------------------------------------


def combinations(self: Any, r: int, with_replacement: bool) -> Any:
    import itertools

    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ea.empty((0,), dtype=self.dtype, device=self.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = [i for combo in pick(range(self.shape[0]), r) for i in combo]
    index = ea.tensor(rows, dtype=ea.int64, device=self.device)
    return ea.reshape(ea.index_select(self, 0, index), (-1, r))


def nonzero_static(self: Any, size: int, fill_value: int) -> Any:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = ea.nonzero(self)
    n = nz.shape[0]
    if n >= size:
        return ea.narrow(nz, 0, 0, size).clone()
    pad = ea.full((size - n, self.dim()), fill_value, dtype=ea.int64, device=self.device)
    return ea.cat([nz, pad], 0)


def nonzero_static_out(self: Any, size: int, fill_value: int, out: Any) -> Any:
    return _out(out, nonzero_static(self, size, fill_value), "nonzero_static")


# ---- the *_copy variants of the views ------------------------------------------------------
# PyTorch's functionalization ops: the view's values in a new contiguous tensor, differentiable
# through the view and the copy.


def _copied(view: Any) -> Any:
    return ops._call_clone(view, _mf.contiguous_format)


def expand_copy(self: Any, size: Any, implicit: bool) -> Any:
    return _copied(ops._call_expand(self, size, implicit))


def permute_copy(self: Any, dims: Any) -> Any:
    return _copied(ops._call_permute(self, dims))


def view_copy(self: Any, size: Any) -> Any:
    return _copied(ops._call_view(self, size))


def view_copy_dtype(self: Any, dtype: Any) -> Any:
    return _copied(ops._call_view_dtype(self, dtype))


def unsqueeze_copy(self: Any, dim: int) -> Any:
    return _copied(ops._call_unsqueeze(self, dim))


def squeeze_copy(self: Any) -> Any:
    return _copied(ops._call_squeeze_dims(self, None))


def squeeze_copy_dim(self: Any, dim: int) -> Any:
    return _copied(ops._call_squeeze_dims(self, (dim,)))


def squeeze_copy_dims(self: Any, dim: Any) -> Any:
    return _copied(ops._call_squeeze_dims(self, dim))


def transpose_copy_int(self: Any, dim0: int, dim1: int) -> Any:
    return _copied(ops._call_transpose_int(self, dim0, dim1))


def t_copy(self: Any) -> Any:
    return _copied(ops._call_t(self))


def diagonal_copy(self: Any, offset: int, dim1: int, dim2: int) -> Any:
    return _copied(ops._call_diagonal(self, offset, dim1, dim2))


def alias_copy(self: Any) -> Any:
    return _copied(ops._call_alias(self))


def detach_copy(self: Any) -> Any:
    return _copied(ops._call_detach(self))


def as_strided_copy(self: Any, size: Any, stride: Any, storage_offset: int | None) -> Any:
    return _copied(ops._call_as_strided(self, size, stride, storage_offset))


def narrow_copy(self: Any, dim: int, start: int, length: int) -> Any:
    # PyTorch's narrow_copy checks a 0-d self and a too large dim itself, as RuntimeError
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= self.dim():
        raise RuntimeError(
            f"Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false. (dim {dim}, "
            f"self.dim() {self.dim()})"
        )
    return _copied(ops._call_narrow(self, dim, start, length))


def select_copy_int(self: Any, dim: int, index: int) -> Any:
    return _copied(ops._call_select_int(self, dim, index))


def slice_copy_Tensor(self: Any, dim: int, start: int | None, end: int | None, step: int) -> Any:
    return _copied(ops._call_slice_Tensor(self, dim, start, end, step))


def unfold_copy(self: Any, dimension: int, size: int, step: int) -> Any:
    return _copied(ops._call_unfold(self, dimension, size, step))


def split_copy_Tensor(self: Any, split_size: int, dim: int) -> Any:
    return [_copied(v) for v in ops._call_split_Tensor(self, split_size, dim)]


def split_with_sizes_copy(self: Any, split_sizes: Any, dim: int) -> Any:
    return [_copied(v) for v in ops._call_split_with_sizes(self, split_sizes, dim)]


def unbind_copy_int(self: Any, dim: int) -> Any:
    return [_copied(v) for v in ops._call_unbind_int(self, dim)]


def _copy_out(fn: Any) -> Any:
    """The out= overload of a *_copy op: the functional result written into out."""

    def out_kernel(*args: Any) -> Any:
        *inputs, out = args
        return _out(out, fn(*inputs), fn.__name__)

    out_kernel.__name__ = out_kernel.__qualname__ = f"{fn.__name__}_out"
    out_kernel.__module__ = __name__
    return out_kernel


expand_copy_out = _copy_out(expand_copy)
permute_copy_out = _copy_out(permute_copy)
view_copy_out = _copy_out(view_copy)
view_copy_dtype_out = _copy_out(view_copy_dtype)
unsqueeze_copy_out = _copy_out(unsqueeze_copy)
squeeze_copy_out = _copy_out(squeeze_copy)
squeeze_copy_dim_out = _copy_out(squeeze_copy_dim)
squeeze_copy_dims_out = _copy_out(squeeze_copy_dims)
transpose_copy_int_out = _copy_out(transpose_copy_int)
t_copy_out = _copy_out(t_copy)
diagonal_copy_out = _copy_out(diagonal_copy)
alias_copy_out = _copy_out(alias_copy)
detach_copy_out = _copy_out(detach_copy)
as_strided_copy_out = _copy_out(as_strided_copy)
narrow_copy_out = _copy_out(narrow_copy)
select_copy_int_out = _copy_out(select_copy_int)
slice_copy_Tensor_out = _copy_out(slice_copy_Tensor)
unfold_copy_out = _copy_out(unfold_copy)


# ---- unsafe_chunk / unsafe_split, sum_to_size, fill, dist, trapz -------------------------------


def unsafe_chunk(self: Any, chunks: int, dim: int) -> Any:
    return list(ops._call_chunk(self, chunks, dim))


def unsafe_split_Tensor(self: Any, split_size: int, dim: int) -> Any:
    return list(ops._call_split_Tensor(self, split_size, dim))


def unsafe_split_with_sizes(self: Any, split_sizes: Any, dim: int) -> Any:
    return list(ops._call_split_with_sizes(self, split_sizes, dim))


def sum_to_size(self: Any, size: Any) -> Any:
    """The sum of self over the dimensions that `size` broadcasts (self must expand from size)."""
    shape = tuple(self.shape)
    size = tuple(size)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = ops._call_sum(self, tuple(range(lead)), False, None) if lead else self
    keep = tuple(i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    return ops._call_sum(out, keep, True, None) if keep else out


def fill_Scalar(self: Any, value: Any) -> Any:
    return ea.full_like(self, value)


def fill_Tensor(self: Any, value: Any) -> Any:
    if value.dim() != 0:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
        )
    # expanded and copied, so that the result is differentiable w.r.t. value
    return _copied(ops._call_expand(value.to(self.dtype), tuple(self.shape), False))


def dist(self: Any, other: Any, p: Any) -> Any:
    return ea.linalg.vector_norm(ea.sub(self, other), p)


def trapz_x(y: Any, x: Any, dim: int) -> Any:
    return trapezoid_x(y, x, dim)


def trapz_dx(y: Any, dx: float, dim: int) -> Any:
    return trapezoid_dx(y, dx, dim)


# ---- the complex-number functions on real tensors ----------------------------------------------


def conj(self: Any) -> Any:
    return self


def conj_physical(self: Any) -> Any:
    return self


def resolve_conj(self: Any) -> Any:
    return self


def resolve_neg(self: Any) -> Any:
    return self


def real(self: Any) -> Any:
    return self


def isreal(self: Any) -> Any:
    return ea.ones_like(self, dtype=ea.bool)


def angle(self: Any) -> Any:
    """0 for x >= 0, pi for x < 0, NaN for NaN (in the default float dtype for integer inputs)."""
    x = self if self.is_floating_point() else self.to(ea.get_default_dtype())
    pi = ea.full_like(x, math.pi)
    # where() with constants: no gradient, as PyTorch's angle of a real tensor
    return ea.where(ea.isnan(x), x.detach(), ea.where(x < 0, pi, ea.zeros_like(x)))


def angle_out(self: Any, out: Any) -> Any:
    return _out(out, angle(self), "angle")


# ---- torch.svd / torch.qr ----------------------------------------------------------------------


def svd(self: Any, some: bool, compute_uv: bool) -> Any:
    if not compute_uv:
        # PyTorch: S only, U and V zero-filled in their full shapes
        s = ea.linalg.svdvals(self)
        m, n = self.shape[-2], self.shape[-1]
        batch = tuple(self.shape[:-2])
        return (
            ea.zeros((*batch, m, m), dtype=self.dtype, device=self.device),
            s,
            ea.zeros((*batch, n, n), dtype=self.dtype, device=self.device),
        )
    u, s, vh = ea.linalg.svd(self, full_matrices=not some)
    return u, s, ea.transpose(vh, -2, -1)


def qr(self: Any, some: bool) -> Any:
    return ea.linalg.qr(self, "reduced" if some else "complete")


# ---- linspace / logspace with 0-d tensor bounds ------------------------------------------------


def _bound(name: str, start: Any, end: Any) -> tuple[Any, Any]:
    """The bounds as numbers: a tensor bound must be 0-d (PyTorch's message names both)."""
    bad = [
        f"{k} with {t.dim()} dimension(s)"
        for k, t in (("start", start), ("end", end))
        if hasattr(t, "_impl") and t.dim()
    ]
    if bad:
        parts = bad
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {' and '.join(parts)}.")
    return tuple(t.item() if hasattr(t, "_impl") else t for t in (start, end))  # type: ignore[return-value]


def _linspace(start: Any, end: Any, steps: int, *options: Any) -> Any:
    return ops._call_linspace(*_bound("linspace", start, end), steps, *options)


def _logspace(start: Any, end: Any, steps: int, base: float, *options: Any) -> Any:
    return ops._call_logspace(*_bound("logspace", start, end), steps, base, *options)


linspace_Tensor_Tensor = linspace_Tensor_Scalar = linspace_Scalar_Tensor = _linspace
logspace_Tensor_Tensor = logspace_Tensor_Scalar = logspace_Scalar_Tensor = _logspace


# ---- frexp: x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1 ---------------------------------


def frexp_Tensor(self: Any) -> Any:
    if not self.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = self.detach().double()
    a = ea.abs(x)
    regular = ea.logical_and(ea.isfinite(x), a != 0)  # 0, inf and NaN: themselves, exponent 0
    e = ea.where(regular, ea.floor(ea.log2(ea.where(regular, a, ea.ones_like(a)))) + 1, ea.zeros_like(a))

    def scaled(v: Any, k: Any) -> Any:  # v * 2**-k in two exact halves (2**1074 overflows)
        half = ea.floor(k / 2)
        return v * ea.exp2(-half) * ea.exp2(half - k)

    m = scaled(a, e)
    # log2 may round across a power of two: one step either way puts m in [0.5, 1)
    e = ea.where(m >= 1, e + 1, ea.where(m < 0.5, e - 1, e))
    e = ea.where(regular, e, ea.zeros_like(e))
    # the mantissa as self times a constant, so that its gradient is grad / 2**exponent (PyTorch's)
    mantissa = ea.where(regular, scaled(self.double(), e).to(self.dtype), self)
    return mantissa, e.to(ea.int32)


# ---- histogram / histogramdd ------------------------------------------------------------------
# PyTorch's histogramdd: an element falls in bin upper_bound(edges, x) - 1 of each dimension (the
# last bin includes its right edge); elements outside [edges[0], edges[-1]] and NaNs are
# skipped. The binary search is libstdc++'s std::upper_bound step for step, so that unsorted
# bin tensors give PyTorch's bins too.


def _upper_bound(edges: Any, x: Any) -> Any:
    n = edges.shape[0]
    first = ea.zeros(tuple(x.shape), dtype=ea.int64, device=x.device)
    length = ea.full(tuple(x.shape), n, dtype=ea.int64, device=x.device)
    while bool((length > 0).any()):
        half = ea.div(length, 2, rounding_mode="floor")
        middle = first + half
        right = ea.logical_and(length > 0, ea.logical_not(x < ea.take(edges, ea.clamp(middle, max=n - 1))))
        first = ea.where(right, middle + 1, first)
        length = ea.where(length > 0, ea.where(right, length - half - 1, half), length)
    return first


def _histogramdd(name: str, input: Any, bins: Any, range_: Any, weight: Any, density: bool) -> tuple[Any, list[Any]]:
    """(hist, bin_edges) of the rows of input (N, D): bins is D ints or D 1-D edge tensors."""
    x = input.detach().reshape(-1, input.shape[-1]) if input.dim() else input.detach().reshape(1, 1)
    n, dims = x.shape
    if not input.is_floating_point():
        kind = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{kind.get(input.dtype._name, input.dtype._name)}'"
        )
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
            f"excluding its innermost dimension, but got input with shape {list(x.shape)} and weight with shape "
            f"{list(weight.shape)}"
        )
    edges = []
    for d in range(dims):
        b = bins[d]
        if hasattr(b, "_impl"):
            if b.dim() != 1:
                raise RuntimeError(
                    f"torch.histogramdd: bins tensor should have one dimension, but got {b.dim()} dimensions in the "
                    f"bins tensor for dimension {d}"
                )
            if b.numel() == 0:
                raise RuntimeError(
                    "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins "
                    f"tensor for dimension {d}"
                )
            if b.dtype != input.dtype:
                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with "
                    f"dtype {_cpp_name(input.dtype)} and bins for dimension {d} with dtype {_cpp_name(b.dtype)}"
                )
            edges.append(b.detach())
            continue
        if b <= 0:
            raise RuntimeError(f"{name}(): bins must be > 0, but got {b} for dimension {d}")
        col = ea.select(x, 1, d)
        if range_ is not None:
            lo, hi = float(range_[2 * d]), float(range_[2 * d + 1])
        elif n:
            lo, hi = float(col.min()), float(col.max())
        else:
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not finite")
        if lo > hi:
            raise RuntimeError(
                f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for dimension {d}"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(ea.linspace(lo, hi, b + 1, dtype=input.dtype, device=input.device))
    shape = tuple(e.shape[0] - 1 for e in edges)
    size = 1
    for s in shape:
        size *= s
    flat = ea.zeros((n,), dtype=ea.int64, device=input.device)
    keep = ea.ones((n,), dtype=ea.bool, device=input.device)
    stride = size
    for d, e in enumerate(edges):
        col = ea.select(x, 1, d)
        keep = ea.logical_and(keep, ea.logical_and(col >= e[0], col <= e[-1]))
        pos = _upper_bound(e, col) - 1
        pos = ea.where(pos == e.shape[0] - 1, pos - 1, pos)
        stride //= max(shape[d], 1)
        flat = flat + pos * stride
    keep = ea.logical_and(keep, ea.logical_and(flat >= 0, flat < size))
    w = weight.detach().reshape(-1).to(input.dtype) if weight is not None else ea.ones((n,), dtype=input.dtype)
    hist = ea.zeros((size,), dtype=input.dtype, device=input.device)
    hist = hist.index_add(0, flat[keep], w[keep]).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            view = [1] * dims
            view[d] = shape[d]
            hist = hist / (e[1:] - e[:-1]).reshape(view)
    return hist, edges


def _cpp_name(dt: Any) -> str:
    return {"float32": "float", "float64": "double"}.get(dt._name, dt._name)


def histogram_bins_tensor(self: Any, bins: Any, weight: Any, density: bool) -> Any:
    hist, edges = _histogramdd("torch.histogram", self.reshape(-1, 1), [bins], None, _weight_1d(weight), density)
    return hist, edges[0]


def histogram_bin_ct(self: Any, bins: int, range: Any, weight: Any, density: bool) -> Any:
    hist, edges = _histogramdd("torch.histogram", self.reshape(-1, 1), [bins], range, _weight_1d(weight), density)
    return hist, edges[0]


def _weight_1d(weight: Any) -> Any:
    return weight.reshape(-1) if weight is not None else None


# ---- batch norm's other aten spellings ---------------------------------------------------------


def native_batch_norm_legit(
    input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool, momentum: float, eps: float
) -> Any:
    return ops._call_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_legit_no_stats(
    input: Any, weight: Any, bias: Any, training: bool, momentum: float, eps: float
) -> Any:
    return ops._call_native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


def batch_norm_with_update(
    input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, momentum: float, eps: float
) -> Any:
    out, mean, invstd = ops._call_native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    # the reserve buffer of cuDNN's kernel: empty on the CPU, as PyTorch's
    return out, mean, invstd, ea.empty((0,), dtype=ea.uint8, device=input.device)
