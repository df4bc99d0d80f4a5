"""Functions whose Python signature takes tensors as varargs (PyTorch's torch.functional):
``broadcast_tensors(*tensors)``, ``meshgrid(*tensors, indexing=None)``,
``cartesian_prod(*tensors)``. Their operators are in native_functions.yaml
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
