"""Functions whose Python signature takes tensors as varargs (PyTorch's torch.functional):
``broadcast_tensors(*tensors)``, ``meshgrid(*tensors, indexing=None)``,
``cartesian_prod(*tensors)``, ``einsum(equation, *operands)``, ``tensordot(a, b, dims)``
(whose ``dims`` is an int or a pair of lists). Their operators are in native_functions.yaml
(``manual_python: True``); these wrappers only adapt the signature.
"""

from __future__ import annotations

import warnings
from typing import Any

from ._dispatch import return_type as _return_type
from ._dtypes import bool as _bool
from ._dtypes import get_default_dtype as _get_default_dtype
from ._dtypes import int64 as _int64
from ._factories import tensor as _tensor
from ._generated import _ops as ops
from ._tensor import Size

_histogramdd_result = _return_type("histogramdd", ["hist", "bin_edges"])


def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    """Views of the tensors expanded to their common broadcast shape.

    >>> a, b = broadcast_tensors(ember.aten.zeros(3, 1), ember.aten.zeros(4))
    >>> a.shape, b.shape
    (ember.aten.Size([3, 4]), ember.aten.Size([3, 4]))
    """
    return tuple(ops._call_broadcast_tensors(list(tensors)))


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Any, ...]:
    """Coordinate grids of 0-d/1-d tensors; indexing 'ij' (matrix, the default) or 'xy' (Cartesian).

    >>> x, y = meshgrid(ember.aten.arange(3), ember.aten.arange(2), indexing="ij")
    >>> x.shape
    ember.aten.Size([3, 2])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        return tuple(ops._call_meshgrid(list(tensors)))
    return tuple(ops._call_meshgrid_indexing(list(tensors), indexing))


def cartesian_prod(*tensors: Any) -> Any:
    """The Cartesian product of 1-d tensors, one row per combination (itertools.product order).

    >>> cartesian_prod(ember.aten.tensor([1, 2]), ember.aten.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    return ops._call_cartesian_prod(list(tensors))


def einsum(*args: Any) -> Any:
    """Sums products of the operands' elements over the labels an equation names (numpy.einsum's
    language: ``"ij,jk->ik"``, ``"...ij->...ji"``, implicit output without ``->``). Also the
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Contractions run left to right as bmm.

    >>> einsum("ij,jk->ik", ember.aten.ones(2, 3), ember.aten.ones(3, 4)).shape
    ember.aten.Size([2, 4])
    """
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand and its "
            "subscripts list"
        )
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        return ops._call_einsum(equation, operands, None)

    # sublist form: operand, sublist, operand, sublist, ..., [output sublist]
    def letters(sub: Any) -> str:
        s = ""
        for v in sub:
            if v is Ellipsis:
                s += "..."
            elif isinstance(v, int) and 0 <= v < 52:
                s += chr(ord("a") + v) if v < 26 else chr(ord("A") + v - 26)
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {v}")
        return s

    operands = list(args[0:-1:2]) if len(args) % 2 else list(args[0::2])
    subs = [letters(s) for s in args[1::2]]
    equation = ",".join(subs[: len(operands)])
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return ops._call_einsum(equation, operands, None)


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Any:
    """Contracts the last ``dims`` dims of ``a`` with the first ``dims`` of ``b`` (or the two
    lists of ``dims = (dims_a, dims_b)``).

    >>> tensordot(ember.aten.ones(3, 4, 5), ember.aten.ones(4, 5, 6)).shape
    ember.aten.Size([3, 6])
    """
    if hasattr(dims, "_impl"):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be a pair of lists of dims, but got {dims}")
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        raise RuntimeError(f"tensordot expects dims to be an int or a pair of lists, but got {type(dims).__name__}")
    if out is None:
        return ops._call_tensordot(a, b, dims_a, dims_b)
    return ops._call_tensordot_out(a, b, dims_a, dims_b, out)


# ---- functions family (issue 18) ----------------------------------------------------------


def _atleast(op: Any, seq: Any, tensors: tuple[Any, ...]) -> Any:
    if len(tensors) == 1:
        tensors = tensors[0]
        if not isinstance(tensors, (list, tuple)):
            return op(tensors)
    return tuple(seq(list(tensors)))


def atleast_1d(*tensors: Any) -> Any:
    """The input viewed with at least one dimension; several inputs (or one sequence) give a tuple.

    >>> atleast_1d(ember.aten.tensor(1.0)).shape
    ember.aten.Size([1])
    """
    return _atleast(ops._call_atleast_1d, ops._call_atleast_1d_Sequence, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """The input viewed with at least two dimensions (a vector becomes a row).

    >>> atleast_2d(ember.aten.ones(3)).shape
    ember.aten.Size([1, 3])
    """
    return _atleast(ops._call_atleast_2d, ops._call_atleast_2d_Sequence, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """The input viewed with at least three dimensions ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)).

    >>> atleast_3d(ember.aten.ones(2, 3)).shape
    ember.aten.Size([2, 3, 1])
    """
    return _atleast(ops._call_atleast_3d, ops._call_atleast_3d_Sequence, tensors)


def block_diag(*tensors: Any, out: Any = None) -> Any:
    """The block-diagonal matrix of 0-d, 1-d (a row) and 2-d blocks, in the promoted dtype.

    >>> block_diag(ember.aten.ones(1, 2), ember.aten.ones(2, 1)).shape
    ember.aten.Size([3, 3])
    """
    if out is None:
        return ops._call_block_diag(list(tensors))
    return ops._call_block_diag_out(list(tensors), out)


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape tensors of these shapes broadcast to, without making any tensor.

    >>> broadcast_shapes((2, 1), (3,))
    ember.aten.Size([2, 3])
    """
    dims: list[tuple[int, ...]] = []
    for s in shapes:
        if isinstance(s, int):
            s = (s,)
        elif not isinstance(s, (list, tuple)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
        for v in s:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(
                    f"torch.Size() takes an iterable of 'int' (item {list(s).index(v)} is '{type(v).__name__}')"
                )
            if v < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
        dims.append(tuple(s))
    n = max((len(s) for s in dims), default=0)
    result = [1] * n
    for i, s in enumerate(dims):
        for k, v in enumerate(s):
            j = n - len(s) + k
            if v == 1:
                continue
            if result[j] not in (1, v):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {v} at {k - len(s)}! Mismatching argument at index "
                    f"{i} had {tuple(s)}; but expected shape should be broadcastable to {result}"
                )
            result[j] = v
    return Size(result)


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """The coordinates, in an array of `shape`, of flat (row-major) indices: one tensor per dimension.

    >>> [t.tolist() for t in unravel_index(ember.aten.tensor([5, 3]), (2, 3))]
    [[1, 1], [2, 0]]
    """
    if indices.is_floating_point() or indices.dtype == _bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif isinstance(shape, (list, tuple)):
        for v in shape:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(v)}")
        shape = tuple(shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(v < 0 for v in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        coefs[k] = coefs[k + 1] * shape[k + 1]
    idx = indices.unsqueeze(-1)
    q = idx.div(_tensor(coefs, dtype=_int64, device=indices.device), rounding_mode="floor")
    r = q.remainder(_tensor(list(shape), dtype=_int64, device=indices.device))
    return tuple(r.unbind(-1))


def lu(A: Any, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple[Any, ...]:
    """The LU factorisation of A: (LU, pivots), with infos when get_infos (the older spelling of
    linalg.lu_factor / linalg.lu_factor_ex; a singular A raises unless get_infos).

    >>> LU, pivots = lu(ember.aten.eye(3))
    >>> pivots.tolist()
    [1, 2, 3]
    """
    from . import linalg  # a namespace ember/aten/__init__.py makes after importing this module

    lu_, pivots, infos = linalg.lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    result = (lu_, pivots, infos) if get_infos else (lu_, pivots)
    if out is not None:
        if len(out) != len(result):
            raise TypeError(f"lu(): out must be a tuple of {len(result)} tensors, got {len(out)}")
        from .native.linalg import _set_out  # native imports ember.aten, which imports this module

        return tuple(_set_out(o, r, "lu") for o, r in zip(out, result, strict=True))
    return result


def gradient(input: Any, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Any, ...]:
    """The derivative of input estimated by central differences in the interior and one-sided
    (edge_order 1) or second-order (edge_order 2) differences at the edges, along each of
    `dim` (every dimension by default), as numpy.gradient. `spacing`: one number (the step of
    every dim), one number per dim, or one 1-D tensor of coordinates per dim.

    >>> gradient(ember.aten.tensor([1.0, 2.0, 4.0, 8.0]))[0].tolist()
    [1.0, 1.5, 3.0, 4.0]
    """
    nd = input.dim()
    dims = list(range(nd)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d + nd if d < 0 else d for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            given = f"'dim = {dim}'" if dim is not None else f"'self.dim() = {nd}', since dim argument was not given"
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                f"{given}, but got a list of length {len(spacing)}"
            )
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input.is_floating_point() else input.to(_get_default_dtype())
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, steps, strict=True))


def _gradient_along(f: Any, d: int, h: Any, edge_order: int) -> Any:
    n = f.shape[d]

    def part(start: int, length: int) -> Any:
        return ops._call_narrow(f, d, start, length)

    def along(t: Any) -> Any:  # a 1-D tensor of n - k values, shaped to broadcast along d
        shape = [1] * f.dim()
        shape[d] = t.shape[0]
        return t.reshape(shape)

    if not hasattr(h, "_impl"):  # uniform spacing
        interior = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
        return ops._call_cat([first, interior, last], d)
    # coordinates: the non-uniform differences of numpy.gradient
    x = h.to(f.dtype)
    dx = x[1:] - x[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    a = along(-dx2 / (dx1 * (dx1 + dx2)))
    b = along((dx2 - dx1) / (dx1 * dx2))
    c = along(dx1 / (dx2 * (dx1 + dx2)))
    interior = a * part(0, n - 2) + b * part(1, n - 2) + c * part(2, n - 2)
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / dx[0]
        last = (part(n - 1, 1) - part(n - 2, 1)) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (
            -(2 * d1 + d2) / (d1 * (d1 + d2)) * part(0, 1)
            + (d1 + d2) / (d1 * d2) * part(1, 1)
            - d1 / (d2 * (d1 + d2)) * part(2, 1)
        )
        d1, d2 = dx[-2], dx[-1]
        last = (
            d2 / (d1 * (d1 + d2)) * part(n - 3, 1)
            - (d2 + d1) / (d1 * d2) * part(n - 2, 1)
            + (2 * d2 + d1) / (d2 * (d1 + d2)) * part(n - 1, 1)
        )
    return ops._call_cat([first, interior, last], d)


def histogramdd(input: Any, bins: Any, *, range: Any = None, weight: Any = None, density: bool = False) -> Any:
    """The D-dimensional histogram of the rows of input (..., D): (hist, bin_edges). bins: one int
    for every dimension, D ints, or D 1-D tensors of edges; range: (min_0, max_0, ..., min_D-1,
    max_D-1) for int bins; weight: one weight per row; density: hist normalised to integrate to 1.

    >>> h = histogramdd(ember.aten.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> h.hist.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    from .native.functions import _histogramdd  # native imports ember.aten, which imports this module

    if isinstance(bins, int):
        bins = [bins] * input.shape[-1]
    if len(bins) != input.shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    hist, edges = _histogramdd("torch.histogramdd", input, list(bins), range, weight, density)
    return _histogramdd_result(hist, tuple(edges))
