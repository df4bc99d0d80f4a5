"""Functions whose Python signature takes tensors as varargs (PyTorch's torch.functional):
``broadcast_tensors(*tensors)``, ``meshgrid(*tensors, indexing=None)``,
``cartesian_prod(*tensors)``, ``einsum(equation, *operands)``, ``tensordot(a, b, dims)``
(whose ``dims`` is an int or a pair of lists). Their operators are in native_functions.yaml
(``manual_python: True``); these wrappers only adapt the signature.
"""

from __future__ import annotations

import warnings
from typing import Any

from ._generated import _ops as ops


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
