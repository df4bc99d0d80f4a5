"""Helper functions the formulas of derivatives.yaml call (PyTorch's FunctionsManual).

Every helper is written with operators (Tensor methods and ``ember.aten`` functions),
so a formula built from them is itself differentiable: with ``create_graph=True``
the backward pass is recorded and gradients of gradients work. Arguments named like
a schema's (``self_shape`` is ``self.shape`` saved at forward time) are plain values.

Tensor-typed schema arguments may arrive as Python numbers (``x * 2`` passes the 2 as
a "wrapped number"), so helpers that use an input's value accept numbers too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ember.aten as ea
import ember.c10py as _c10
from ember.aten.extension import entries as ops

_wrap_dim = _c10.maybe_wrap_dim


def _is_tensor(x: Any) -> bool:
    return isinstance(x, ea.Tensor)


def not_implemented(name: str, *_: Any) -> Any:
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


# ---------------------------------------------------------------------------
# attribute snapshots taken at forward time (the generator rewrites `x.shape` to these)
# ---------------------------------------------------------------------------


def _a_shape(x: Any) -> tuple[int, ...]:
    return x._impl.sizes if _is_tensor(x) else ()


def _a_dtype(x: Any) -> Any:
    return x._impl.dtype if _is_tensor(x) else None


def _a_device(x: Any) -> Any:
    return x.device if _is_tensor(x) else None


def _a_dim(x: Any) -> int:
    return x._impl.dim if _is_tensor(x) else 0


def _a_numel(x: Any) -> int:
    return x._impl.numel if _is_tensor(x) else 1


def _a_stride(x: Any) -> tuple[int, ...]:
    return x._impl.strides if _is_tensor(x) else ()


def _a_storage_offset(x: Any) -> int:
    return x._impl.storage_offset if _is_tensor(x) else 0


def _a_is_contiguous(x: Any) -> bool:
    return x._impl.is_contiguous if _is_tensor(x) else True


def _a_shapes(xs: Any) -> list[tuple[int, ...]]:
    return [_a_shape(x) for x in xs]


def _a_dtypes(xs: Any) -> list[Any]:
    return [_a_dtype(x) for x in xs]


# ---------------------------------------------------------------------------
# basics
# ---------------------------------------------------------------------------


def threshold_backward(grad: Any, self: Any, threshold: Any) -> Any:
    """grad where self > threshold, else 0 (relu's and threshold's backward): aten's
    threshold_backward, one pass; under create_graph it records ThresholdBackwardBackward0
    (derivatives.yaml), whose gradient in ``self`` is zeros, as PyTorch's."""
    return ops._call_threshold_backward(grad, self, threshold)


def zeros_like(t: Any, dtype: Any = None) -> Any:
    return ops._call_zeros_like(t, dtype, None, None, None, None)


def ones_like(t: Any) -> Any:
    return ops._call_ones_like(t, None, None, None, None, None)


def new_zeros(t: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    return ops._call_new_zeros(t, tuple(shape), dtype, None, None, None)


def where(cond: Any, a: Any, b: Any) -> Any:
    """where(cond, a, b) where a or b may be a Python number."""
    if not _is_tensor(a):
        if not _is_tensor(b):
            raise TypeError("where: one of the branches must be a tensor")
        a = ops._call_scalar_tensor(a, b.dtype, None, b.device, None)
    elif not _is_tensor(b):
        b = ops._call_scalar_tensor(b, a.dtype, None, a.device, None)
    return ops._call_where_self(cond, a, b)


def maybe_multiply(grad: Any, alpha: Any) -> Any:
    if isinstance(alpha, bool) or alpha == 1:
        return grad
    return grad * alpha


def sum_to(grad: Any, shape: Sequence[int]) -> Any:
    """Sums `grad` down to `shape` (the reverse of broadcasting `shape` to grad's shape)."""
    shape = tuple(shape)
    gshape = tuple(grad._impl.sizes)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    r = ops._call_sum(grad, tuple(dims), True, None) if dims else grad
    if lead or tuple(r._impl.sizes) != shape:
        r = r.reshape(shape)
    return r


# linear's gradients: for a 2-D input (the common case) one mm or sum each, with no reshape views
def linear_backward_input(grad: Any, weight: Any) -> Any:
    if grad.ndim == 2:
        return ops._call_mm(grad, weight)
    return grad.matmul(weight)


def linear_backward_weight(grad: Any, input: Any) -> Any:
    if grad.ndim == 2 and input.ndim == 2:
        return ops._call_mm(ops._call_t(grad), input)
    return grad.reshape(-1, grad.size(-1)).t().mm(input.reshape(-1, input.size(-1)))


def linear_backward_bias(grad: Any) -> Any:
    if grad.ndim == 2:
        return ops._call_sum(grad, (0,), False, None)
    return grad.reshape(-1, grad.size(-1)).sum(0)


def _to_copy_backward(grad: Any, dtype: Any, device: Any) -> Any:
    return grad.to(device=device, dtype=dtype)


def has_nan(t: Any) -> bool:
    return bool(t.isnan().any())


# ---------------------------------------------------------------------------
# views
# ---------------------------------------------------------------------------


def permute_backwards(grad: Any, dims: Sequence[int]) -> Any:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[_wrap_dim(d, n)] = i
    return grad.permute(inv)


def select_backward(grad: Any, shape: Sequence[int], dim: int, index: int) -> Any:
    z = new_zeros(grad, shape)
    z.select(dim, index).copy_(grad)
    return z


def slice_backward(grad: Any, shape: Sequence[int], dim: int, start: Any, end: Any, step: int) -> Any:
    z = new_zeros(grad, shape)
    ops._call_slice_Tensor(z, dim, start, end, step).copy_(grad)
    return z


def unsqueeze_to(grad: Any, shape: Sequence[int]) -> Any:
    return grad.reshape(tuple(shape))


def unbind_backward(grads: Sequence[Any], dim: int, shape: Sequence[int], dtype: Any, device: Any) -> Any:
    d = _wrap_dim(dim, len(shape))
    part = tuple(shape[:d]) + tuple(shape[d + 1 :])
    filled = [g if g is not None else ops._call_zeros(part, dtype, None, device, None) for g in grads]
    if not filled:
        return ops._call_zeros(tuple(shape), dtype, None, device, None)
    return ops._call_stack(filled, d)


def split_with_sizes_backward(
    grads: Sequence[Any], split_sizes: Sequence[int], dim: int, shape: Sequence[int], dtype: Any, device: Any
) -> Any:
    """The pieces' gradients concatenated back along `dim` (zeros for a piece no gradient reached)."""
    d = _wrap_dim(dim, len(shape))
    filled = []
    for g, n in zip(grads, split_sizes, strict=True):
        if g is None:
            g = ops._call_zeros((*shape[:d], n, *shape[d + 1 :]), dtype, None, device, None)
        filled.append(g)
    return ops._call_cat(filled, d)


def split_backward(
    grads: Sequence[Any], split_size: int, dim: int, shape: Sequence[int], dtype: Any, device: Any
) -> Any:
    n = shape[_wrap_dim(dim, len(shape))]
    k = len(grads)
    sizes = [split_size] * (k - 1) + [n - split_size * (k - 1)]
    return split_with_sizes_backward(grads, sizes, dim, shape, dtype, device)


def _geometry_extent(sizes: Sequence[int], strides: Sequence[int], offset: int) -> int:
    """One past the last storage element a geometry touches (its offset if it is empty)."""
    if any(s == 0 for s in sizes):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(sizes, strides, strict=True)) + 1


def _overlaps(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether two elements of this geometry can share a storage location."""
    dims = sorted((st, s) for s, st in zip(sizes, strides, strict=True) if s > 1)
    reach = 0
    for st, s in dims:
        if st <= reach:
            return True
        reach += (s - 1) * st
    return False


def as_strided_backward(
    grad: Any,
    in_sizes: Sequence[int],
    in_strides: Sequence[int],
    in_offset: int,
    sizes: Sequence[int],
    strides: Sequence[int],
    offset: int | None,
) -> Any:
    """Gradient of as_strided: scatter `grad` into a storage-shaped buffer, read it with the input's geometry."""
    offset = in_offset if offset is None else offset
    sizes, strides = tuple(sizes), tuple(strides)
    lo = min(in_offset, offset)
    hi = max(_geometry_extent(in_sizes, in_strides, in_offset), _geometry_extent(sizes, strides, offset))
    buf = ops._call_zeros((max(hi - lo, 0),), grad.dtype, None, grad.device, None)
    # a dimension of stride 0 (expand) maps all its elements to one place: sum it first
    zero = [i for i, (s, st) in enumerate(zip(sizes, strides, strict=True)) if st == 0 and s > 1]
    if zero:
        grad = ops._call_sum(grad, tuple(zero), True, None)
        sizes = tuple(1 if i in zero else s for i, s in enumerate(sizes))
    if _overlaps(sizes, strides):
        idx = _storage_indices(sizes, strides, offset - lo, grad.device)
        buf = buf.index_add(0, idx.reshape(-1), grad.reshape(-1))
    else:
        ops._call_as_strided(buf, sizes, strides, offset - lo).copy_(grad)
    out = ops._call_as_strided(buf, tuple(in_sizes), tuple(in_strides), in_offset - lo)
    if _overlaps(in_sizes, in_strides):
        # an overlapping input gets each location's gradient once per element that reads it
        idx = _storage_indices(in_sizes, in_strides, in_offset - lo, grad.device)
        count = ops._call_zeros((max(hi - lo, 0),), grad.dtype, None, grad.device, None)
        count = count.index_add(0, idx.reshape(-1), ones_like(idx.reshape(-1)).to(grad.dtype))
        out = out / ops._call_as_strided(count, tuple(in_sizes), tuple(in_strides), in_offset - lo)
    return out


def _storage_indices(sizes: Sequence[int], strides: Sequence[int], offset: int, device: Any) -> Any:
    idx = ops._call_scalar_tensor(offset, ea.int64, None, device, None)
    n = len(sizes)
    for d, (s, st) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * n
        shape[d] = s
        idx = idx + (ea.arange(s, device=device) * st).reshape(shape)
    return idx.expand(tuple(sizes)) if n else idx


def unfold_backward(grad: Any, shape: Sequence[int], dimension: int, size: int, step: int) -> Any:
    nd = len(shape)
    d = _wrap_dim(dimension, nd) if nd else 0
    if nd == 0:
        return grad.reshape(())
    n_windows = grad.shape[d]
    # grad: (..., n_windows, ..., size) -> (..., n_windows * size, ...) and the element each came from
    g = grad.movedim(-1, d + 1).flatten(d, d + 1)
    idx = (ea.arange(n_windows, device=grad.device) * step).unsqueeze(1) + ea.arange(size, device=grad.device)
    z = new_zeros(grad, shape)
    return z.index_add(d, idx.reshape(-1), g)


def diagonal_backward(grad: Any, shape: Sequence[int], offset: int, dim1: int, dim2: int) -> Any:
    z = new_zeros(grad, shape)
    z.diagonal(offset, dim1, dim2).copy_(grad)
    return z


# ---------------------------------------------------------------------------
# pointwise
# ---------------------------------------------------------------------------


def div_self_backward(grad: Any, other: Any, rounding_mode: str | None) -> Any:
    if rounding_mode is not None:
        return zeros_like(grad)
    return grad / other


def div_other_backward(grad: Any, self: Any, other: Any, rounding_mode: str | None) -> Any:
    if rounding_mode is not None:
        return zeros_like(grad)
    return -grad * ((self / other) / other)


def xlogy_self_backward(grad: Any, self: Any, other: Any) -> Any:
    """d/dx x*log(y) = log(y), 0 where x == 0 and y <= 0 (PyTorch's convention at the singularity)."""
    g = grad * (other.log() if _is_tensor(other) else math.log(other))
    if not _is_tensor(other):
        return g
    return where((self == 0).logical_and(other <= 0), 0.0, g)


def pow_backward_self(grad: Any, self: Any, exponent: Any) -> Any:
    if not _is_tensor(exponent):
        if exponent == 0:
            return zeros_like(grad)
        return grad * exponent * self.pow(exponent - 1)
    return where(exponent == 0, 0.0, grad * (exponent * self.pow(exponent - 1)))


def pow_backward_exponent(grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    if not _is_tensor(self):
        if self == 0:
            return where(exponent >= 0, 0.0, grad * (result * -math.inf))
        return grad * (result * math.log(self))
    cond = (self == 0) & (exponent >= 0) if _is_tensor(exponent) else (self == 0)
    if not _is_tensor(exponent) and exponent < 0:
        cond = self != self  # all False: 0 ** negative has a non-zero derivative (-inf / nan)
    return where(cond, 0.0, grad * (result * self.log()))


def copysign_backward(grad: Any, self: Any, result: Any) -> Any:
    ratio = result / self
    return grad * where(self == 0, 0.0, ratio)


def _halve_ties(grad: Any, self: Any, other: Any) -> Any:
    return where(self == other, grad / 2, grad)


def maximum_self_backward(grad: Any, self: Any, other: Any) -> Any:
    return _halve_ties(grad, self, other).masked_fill(self < other, 0)


def maximum_other_backward(grad: Any, self: Any, other: Any) -> Any:
    return _halve_ties(grad, self, other).masked_fill(self > other, 0)


def minimum_self_backward(grad: Any, self: Any, other: Any) -> Any:
    return _halve_ties(grad, self, other).masked_fill(self > other, 0)


def minimum_other_backward(grad: Any, self: Any, other: Any) -> Any:
    return _halve_ties(grad, self, other).masked_fill(self < other, 0)


def fmax_fmin_backward(grad: Any, self: Any, other: Any, is_max: bool, wrt_self: bool) -> Any:
    keep_self = ((self >= other) if is_max else (self <= other)).logical_or(other.isnan())
    mask = keep_self.logical_not() if wrt_self else keep_self
    return grad.masked_fill(mask, 0)


def clamp_backward(grad: Any, self: Any, min: Any, max: Any) -> Any:
    if min is None and max is None:
        return grad
    if min is None:
        return grad.masked_fill(self > max, 0)
    if max is None:
        return grad.masked_fill(self < min, 0)
    return grad.masked_fill((self < min).logical_or(self > max), 0)


def clamp_backward_min_max(grad: Any, self: Any, min: Any, max: Any, mask: Sequence[bool]) -> tuple[Any, Any]:
    gmin = gmax = None
    if max is None:
        if mask[0]:
            gmin = grad.masked_fill(self >= min, 0)
    elif min is None:
        if mask[1]:
            gmax = grad.masked_fill(self <= max, 0)
    else:
        if mask[0]:
            gmin = grad.masked_fill((min < self).logical_or(min > max), 0)
        if mask[1]:
            gmax = grad.masked_fill((max > self).logical_and(max >= min), 0)
    return gmin, gmax


def logit_backward(grad: Any, self: Any, eps: float | None) -> Any:
    d = grad / (self * (1 - self))
    if eps is None:
        return where((self < 0).logical_or(self > 1), math.nan, d)
    return where((self < eps).logical_or(self > 1 - eps), 0.0, d)


def elu_backward(grad: Any, self: Any, alpha: Any, scale: Any, input_scale: Any) -> Any:
    neg = (self * input_scale).exp() * (alpha * scale * input_scale)
    return grad * where(self > 0, scale, neg)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu_backward(grad: Any, self: Any) -> Any:
    return elu_backward(grad, self, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu_backward(grad: Any, self: Any, alpha: Any) -> Any:
    return elu_backward(grad, self, alpha, 1.0, 1.0 / alpha)


def gelu_backward(grad: Any, self: Any, approximate: str) -> Any:
    # one fused aten kernel (its own gradient: gelu_double_backward)
    return ops._call_gelu_backward(grad, self, approximate)


def gelu_double_backward(grad: Any, grad_output: Any, self: Any, approximate: str) -> Any:
    """d/dx of grad_output * gelu'(x), times grad."""
    if approximate == "tanh":
        # gelu = x s, s = sigmoid(v), v = k2 (x + c x^3): gelu'' = 2 h + x h',
        # h = s (1 - s) v', h' = h (1 - 2 s) v' + s (1 - s) v''
        k2 = 2.0 * math.sqrt(2.0 / math.pi)
        c = 0.044715
        x_sq = self * self
        s = ((self + x_sq * self * c) * k2).sigmoid()
        ds = s * (1 - s)
        v1 = (x_sq * (3 * c) + 1) * k2
        h = ds * v1
        h1 = h * (1 - 2 * s) * v1 + ds * (self * (6 * c * k2))
        return grad * grad_output * (h * 2 + self * h1)
    # gelu'' = phi(x) (2 - x^2)
    pdf = (self * self * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * grad_output * pdf * (2 - self * self)


def silu_backward(grad: Any, self: Any) -> Any:
    s = self.sigmoid()
    return grad * (s * (1 + self * (1 - s)))


def mish_backward(grad: Any, self: Any) -> Any:
    sp = ops._call_softplus(self, 1, 20)
    t = sp.tanh()
    return grad * (t + self * self.sigmoid() * (1 - t * t))


def hardsigmoid_backward(grad: Any, self: Any) -> Any:
    return where((self > -3).logical_and(self < 3), grad / 6, 0.0)


def hardswish_backward(grad: Any, self: Any) -> Any:
    return where(self < -3, 0.0, where(self <= 3, grad * (self / 3 + 0.5), grad))


def softplus_backward(grad: Any, self: Any, beta: Any, threshold: Any) -> Any:
    z = self * beta
    return where(z > threshold, grad, grad * z.sigmoid())


def leaky_relu_backward(grad: Any, self: Any, negative_slope: Any) -> Any:
    return where(self > 0, grad, grad * negative_slope)


def trigamma(x: Any) -> Any:
    """polygamma(1, x), from the recurrence, an asymptotic series and the reflection formula."""
    neg = x < 0.5
    y = where(neg, 1 - x, x)
    acc = 0
    for k in range(6):
        acc = acc + 1 / ((y + k) * (y + k))
    z = y + 6
    z2 = z * z
    series = 1 / z + 1 / (2 * z2) + (1 / (z2 * z)) * (1 / 6 - (1 / z2) * (1 / 30 - (1 / z2) * (1 / 42 - 1 / (30 * z2))))
    pos = acc + series
    s = (x * math.pi).sin()
    reflected = (math.pi * math.pi) / (s * s) - pos
    return where(neg, reflected, pos)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def _reduced_dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or ndim == 0:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return list(range(ndim))
    return sorted(_wrap_dim(d, ndim) for d in dim)


def restore_reduced_dims(grad: Any, shape: Sequence[int], dim: Any, keepdim: bool) -> Any:
    """`grad` of a reduction, with the reduced dims put back as size 1."""
    if keepdim or len(shape) == 0:
        return grad
    g = grad
    for d in _reduced_dims(dim, len(shape)):
        g = g.unsqueeze(d)
    return g


def sum_backward(grad: Any, shape: Sequence[int], dim: Any, keepdim: bool) -> Any:
    return restore_reduced_dims(grad, shape, dim, keepdim).expand(tuple(shape))


def _count(shape: Sequence[int], dim: Any) -> int:
    n = 1
    for d in _reduced_dims(dim, len(shape)):
        n *= shape[d]
    return n


def mean_backward(grad: Any, shape: Sequence[int], dim: Any, keepdim: bool) -> Any:
    return sum_backward(grad, shape, dim, keepdim) / _count(shape, dim)


def nansum_backward(grad: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    return sum_backward(grad, self.shape, dim, keepdim).masked_fill(self.isnan(), 0)


def nanmean_backward(grad: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    valid = self.isnan().logical_not()
    count = ops._call_sum(valid, tuple(_reduced_dims(dim, self.dim())), True, None)
    g = restore_reduced_dims(grad, self.shape, dim, keepdim)
    return (g / count).expand(tuple(self.shape)).masked_fill(self.isnan(), 0)


def prod_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    if self.dim() == 0:
        return grad
    dims = None if dim is None else (dim,)
    g = restore_reduced_dims(grad, self.shape, dims, keepdim)
    r = restore_reduced_dims(result, self.shape, dims, keepdim)
    red = tuple(_reduced_dims(dims, self.dim()))
    is_zero = self == 0
    zeros = ops._call_sum(is_zero, red, True, None)
    # product of the others: result / x where x != 0; for the single zero of a slice, the product of the rest
    safe = where(is_zero, 1.0, self)
    prod_nonzero = safe
    for d in red:
        prod_nonzero = ops._call_prod(prod_nonzero, d, True, None)
    others = where(is_zero, where(zeros == 1, prod_nonzero, 0.0), r / safe)
    return g * others


def evenly_distribute_backward(grad: Any, self: Any, result: Any) -> Any:
    if result.isnan().item():
        mask = self.isnan()
    else:
        mask = self == result
    return mask * (grad / ops._call_sum(mask, None, False, None))


def value_selecting_reduction_backward(grad: Any, dim: int, indices: Any, shape: Sequence[int], keepdim: bool) -> Any:
    if len(shape) == 0:
        return grad
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return new_zeros(grad, shape).scatter(dim, indices, grad)


def amax_amin_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    g = restore_reduced_dims(grad, self.shape, dim, keepdim)
    r = restore_reduced_dims(result, self.shape, dim, keepdim)
    mask = self == r
    count = ops._call_sum(mask, tuple(_reduced_dims(dim, self.dim())), True, None)
    return (g / count).expand(tuple(self.shape)) * mask


def aminmax_backward(grads: Sequence[Any], self: Any, rmin: Any, rmax: Any, dim: Any, keepdim: bool) -> Any:
    out = None
    for g, r in ((grads[0], rmin), (grads[1], rmax)):
        if g is None:
            continue
        d = amax_amin_backward(g, self, r, dim, keepdim)
        out = d if out is None else out + d
    return out


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return float(correction)
    if unbiased is None:
        return 1.0
    return 1.0 if unbiased else 0.0


def var_backward(grad: Any, self: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    if self.dim() == 0:
        return grad * 0
    n = _count(self.shape, dim)
    g = restore_reduced_dims(grad, self.shape, dim, keepdim)
    red = tuple(_reduced_dims(dim, self.dim()))
    centered = self - ops._call_mean(self, red, True, None)
    return g * centered * (2.0 / max(n - correction, 0)) if n - correction > 0 else g * centered * math.inf


def _safe_div(num: Any, den: Any) -> Any:
    """num / den, 0 where den == 0 -- with no inf in either branch, so its own gradient has no NaN."""
    zero = den == 0
    return where(zero, 0.0, num) / where(zero, 1.0, den)


def std_backward(result: Any, grad: Any, self: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    return var_backward(_safe_div(grad, result * 2), self, dim, correction, keepdim)


def var_mean_backward(gvar: Any, gmean: Any, self: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    out = None
    if gvar is not None:
        out = var_backward(gvar, self, dim, correction, keepdim)
    if gmean is not None:
        m = mean_backward(gmean, self.shape, dim, keepdim)
        out = m if out is None else out + m
    return out


def std_mean_backward(gstd: Any, gmean: Any, self: Any, std: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    out = None
    if gstd is not None:
        out = std_backward(std, gstd, self, dim, correction, keepdim)
    if gmean is not None:
        m = mean_backward(gmean, self.shape, dim, keepdim)
        out = m if out is None else out + m
    return out


def norm_backward(grad: Any, self: Any, ord: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    p = float(ord)
    g = restore_reduced_dims(grad, self.shape, dim, keepdim)
    r = restore_reduced_dims(result, self.shape, dim, keepdim)
    if p == 0.0:
        return self * 0
    if p == 1.0:
        return self.sgn() * g
    if p == 2.0:
        return self * _safe_div(g, r)
    if math.isinf(p):
        mask = self.abs() == r
        count = ops._call_sum(mask, tuple(_reduced_dims(dim, self.dim())), True, None)
        return self.sgn() * ((g / count) * mask)
    a = self.abs()
    scale = a.pow(p - 2) * self if p >= 1 else where(a == 0, 0.0, a.pow(p - 2) * self)
    return scale * _safe_div(g, r.pow(p - 1))


def logsumexp_backward(grad: Any, self: Any, result: Any, dim: Any, keepdim: bool) -> Any:
    g = restore_reduced_dims(grad, self.shape, dim, keepdim)
    r = restore_reduced_dims(result, self.shape, dim, keepdim)
    return g * (self - r).exp()


def reverse_cumsum(grad: Any, dim: int) -> Any:
    """sum over k >= i of grad[k] along `dim` (the gradient of cumsum)."""
    if grad.dim() == 0:
        return grad
    return grad.flip((dim,)).cumsum(dim).flip((dim,))


def cumprod_backward(grad: Any, self: Any, dim: int, result: Any) -> Any:
    if self.dim() == 0 or self.numel() == 0:
        return grad
    d = _wrap_dim(dim, self.dim())
    if not bool((self == 0).any()):
        return reverse_cumsum(grad * result, d) / self
    # with zeros: g_i = P_{i-1} * R_i, R_i = grad_i + x_{i+1} R_{i+1}, P = exclusive cumprod (a scan along dim)
    n = self.shape[d]
    ones = new_zeros(self, tuple(s if i != d else 1 for i, s in enumerate(self.shape))) + 1
    exclusive = ops._call_cat([ones, self.narrow(d, 0, n - 1)], d).cumprod(d) if n > 1 else ones
    parts: list[Any] = [None] * n
    r = grad.narrow(d, n - 1, 1)
    parts[n - 1] = r
    for i in range(n - 2, -1, -1):
        r = grad.narrow(d, i, 1) + self.narrow(d, i + 1, 1) * r
        parts[i] = r
    return exclusive * ops._call_cat(parts, d)


def logcumsumexp_backward(grad: Any, self: Any, result: Any, dim: int) -> Any:
    if self.dim() == 0:
        return grad
    d = _wrap_dim(dim, self.dim())
    c = ops._call_amax(result, (d,), True)
    c = where(c.isinf(), 0.0, c)
    return (self - c).exp() * reverse_cumsum(grad * (c - result).exp(), d)


def cummaxmin_backward(grad: Any, self: Any, indices: Any, dim: int) -> Any:
    if self.dim() == 0:
        return grad
    return new_zeros(grad, tuple(self.shape)).scatter_add(dim, indices, grad)


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


def index_backward(grad: Any, shape: Sequence[int], indices: Any) -> Any:
    return new_zeros(grad, shape).index_put(indices, grad, True)


def index_values_backward(grad: Any, indices: Any) -> Any:
    return ops._call_index_Tensor(grad, indices)


def index_select_backward(grad: Any, shape: Sequence[int], dim: int, index: Any) -> Any:
    if len(shape) == 0:
        return grad.reshape(())
    return new_zeros(grad, shape).index_add(dim, index.reshape(-1), grad)


def gather_backward(grad: Any, shape: Sequence[int], dim: int, index: Any) -> Any:
    return new_zeros(grad, shape).scatter_add(dim, index, grad)


def index_add_source_backward(grad: Any, dim: int, index: Any, source_dim: int, alpha: Any) -> Any:
    if source_dim == 0:
        g = grad.index_select(dim, index.reshape(-1)).reshape(())
    else:
        g = grad.index_select(dim, index.reshape(-1)) if grad.dim() else grad
    return maybe_multiply(g, alpha)


def gather_to_src(grad: Any, dim: int, index: Any, src_shape: Sequence[int]) -> Any:
    """Gradient of scatter's src: the gathered values, zero for the elements of src beyond index's extent."""
    g = grad.gather(dim, index) if grad.dim() else grad.expand(tuple(index.shape))
    return _pad_to(g, src_shape)


def index_copy_source_backward(grad: Any, dim: int, index: Any, source_dim: int) -> Any:
    g = grad.index_select(dim, index.reshape(-1)) if grad.dim() else grad
    return g.reshape(()) if source_dim == 0 else g


def masked_fill_value_backward(grad: Any, mask: Any) -> Any:
    return where(mask, grad, 0.0).sum()


def masked_scatter_source_backward(grad: Any, mask: Any, source_shape: Sequence[int]) -> Any:
    n = 1
    for s in source_shape:
        n *= s
    sel = grad.masked_select(mask)
    diff = n - sel.numel()
    if diff > 0:
        sel = ops._call_cat([sel, new_zeros(sel, (diff,))], 0)
    return sel.reshape(tuple(source_shape))


def masked_select_backward(grad: Any, self: Any, mask: Any) -> Any:
    shape = _broadcast_shape(tuple(self.shape), tuple(mask.shape))
    z = new_zeros(grad, shape)
    return z.masked_scatter(mask, grad)


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


def take_backward(grad: Any, self: Any, index: Any) -> Any:
    return zeros_like(self).put(index, grad, True)


def put_source_backward(grad: Any, index: Any, source_shape: Sequence[int]) -> Any:
    return grad.take(index).reshape(tuple(source_shape))


def _pad_to(g: Any, shape: Sequence[int]) -> Any:
    """Zero-pads `g` at the end of each dim up to `shape` (src elements scatter did not use)."""
    pad: list[int] = []
    for s, i in zip(reversed(tuple(shape)), reversed(tuple(g.shape)), strict=False):
        pad += [0, s - i]
    return ops._call_constant_pad_nd(g, tuple(pad), 0) if any(pad) else g


def _narrow_to(t: Any, shape: Sequence[int]) -> Any:
    for d, n in enumerate(shape):
        if t.shape[d] != n:
            t = t.narrow(d, 0, n)
    return t


def scatter_reduce_backward(
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    src: Any,
    reduce: str,
    include_self: bool,
    result: Any,
    mask: Sequence[bool],
) -> tuple[Any, Any]:
    """Gradients of scatter_reduce (PyTorch's scatter_reduce_backward, zeros of prod included)."""
    src_shape = tuple(src.shape)
    src = _narrow_to(src, tuple(index.shape))  # the part of src that was scattered
    if reduce == "sum":
        gself = grad
        gsrc = grad.gather(dim, index)
    elif reduce == "prod":
        masked_self = where(self == 0, 1.0, self)
        masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
        gself = grad * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index)
        src_single_zero = src_zero.logical_and(src_num_zeros == 1)
        masked_src = where(src_single_zero, 1.0, src)
        masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce, include_self=include_self)
        gsrc = where(
            src_single_zero,
            (grad * masked_src_result).gather(dim, index),
            (grad * result).gather(dim, index) / where(src_zero, 1.0, src),
        )
    elif reduce == "mean":
        n = ones_like(grad) if include_self else zeros_like(grad)
        n = n.scatter_add(dim, index, ones_like(src))
        n = where(n == 0, 1.0, n)
        gself = grad / n
        gsrc = grad.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        self_is_result = (self == result).to(grad.dtype)
        src_is_result = (src == value).to(grad.dtype)
        distributed = grad / self_is_result.scatter_add(dim, index, src_is_result)
        gself = self_is_result * distributed
        gsrc = src_is_result * distributed.gather(dim, index)
    else:
        not_implemented(f"scatter_reduce with reduce={reduce!r}")
    if not include_self:
        gself = gself.scatter(dim, index, 0)
    return (gself if mask[0] else None), (_pad_to(gsrc, src_shape) if mask[1] else None)


def index_reduce_backward(
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    source: Any,
    reduce: str,
    include_self: bool,
    result: Any,
    mask: Sequence[bool],
) -> tuple[Any, Any]:
    """index_reduce is scatter_reduce with `index` spread along `dim` over source's shape."""
    if self.dim() == 0:
        full = index.reshape(())
    else:
        d = _wrap_dim(dim, self.dim())
        shape = [1] * source.dim()
        shape[d] = -1
        full = index.reshape(shape).expand(tuple(source.shape))
    return scatter_reduce_backward(grad, self, dim, full, source, reduce, include_self, result, mask)


# ---------------------------------------------------------------------------
# shape
# ---------------------------------------------------------------------------


def cat_tensors_backward(grad: Any, shapes: Sequence[Sequence[int]], dim: int) -> list[Any]:
    out: list[Any] = []
    # legacy: 1-d empty tensors are skipped by cat (whatever the dim)
    ref = next((s for s in shapes if not (len(s) == 1 and s[0] == 0)), None)
    if ref is None:
        return [new_zeros(grad, s) for s in shapes]
    d = _wrap_dim(dim, len(ref))
    start = 0
    for s in shapes:
        if len(s) == 1 and s[0] == 0:
            out.append(new_zeros(grad, s))
            continue
        out.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return out


def stack_tensors_backward(grad: Any, dim: int, n: int) -> list[Any]:
    d = _wrap_dim(dim, grad.dim())
    return list(grad.unbind(d))


def repeat_backward(grad: Any, repeats: Sequence[int], shape: Sequence[int]) -> Any:
    repeats = tuple(repeats)
    lead = len(repeats) - len(shape)
    g = grad
    if lead:
        g = g.sum(tuple(range(lead)))
    inner = repeats[lead:]
    split: list[int] = []
    for r, s in zip(inner, shape, strict=True):
        split += [r, s]
    if not split:
        return g.reshape(tuple(shape))
    g = g.reshape(tuple(split))
    return g.sum(tuple(range(0, len(split), 2))) if split else g


def repeat_interleave_backward_int(grad: Any, shape: Sequence[int], repeats: int, dim: Any) -> Any:
    if dim is None:
        return grad.reshape(-1, repeats).sum(1).reshape(tuple(shape))
    d = _wrap_dim(dim, len(shape))
    s = tuple(shape)
    g = grad.reshape((*s[:d], s[d], repeats, *s[d + 1 :]))
    return g.sum(d + 1)


def repeat_interleave_backward_tensor(grad: Any, shape: Sequence[int], repeats: Any, dim: Any) -> Any:
    if dim is None:
        n = 1
        for x in shape:
            n *= x
        flat_shape: tuple[int, ...] = (n,)
        d = 0
    else:
        flat_shape = tuple(shape)
        d = _wrap_dim(dim, len(shape))
    src = ea.arange(flat_shape[d] if flat_shape else 1, device=grad.device)
    idx = src.repeat_interleave(repeats.reshape(-1) if repeats.dim() else repeats, 0)
    out = new_zeros(grad, flat_shape).index_add(d, idx, grad.reshape(-1) if dim is None else grad)
    return out.reshape(tuple(shape))


def roll_backward(grad: Any, shifts: Sequence[int], dims: Sequence[int]) -> Any:
    return grad.roll(tuple(-s for s in shifts), tuple(dims))


def diag_backward(grad: Any, shape: Sequence[int], diagonal: int) -> Any:
    if len(shape) == 1:
        return grad.diagonal(diagonal)
    return diagonal_backward(grad, shape, diagonal, 0, 1)


def trace_backward(grad: Any, shape: Sequence[int]) -> Any:
    z = new_zeros(grad, shape)
    z.diagonal().copy_(grad.expand((min(shape),)))
    return z


def constant_pad_nd_backward(grad: Any, pad: Sequence[int]) -> Any:
    g = grad
    n = g.dim()
    for i in range(len(pad) // 2):
        d = n - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = g.shape[d] - lo - hi
        if lo < 0 or hi < 0:
            # the forward cropped: put zeros back where it cut
            parts = []
            if lo < 0:
                shp = list(g.shape)
                shp[d] = -lo
                parts.append(new_zeros(g, shp))
            mid = g.narrow(d, max(lo, 0), g.shape[d] - max(lo, 0) - max(hi, 0))
            parts.append(mid)
            if hi < 0:
                shp = list(g.shape)
                shp[d] = -hi
                parts.append(new_zeros(g, shp))
            g = ops._call_cat(parts, d)
        else:
            g = g.narrow(d, lo, size)
    return g
