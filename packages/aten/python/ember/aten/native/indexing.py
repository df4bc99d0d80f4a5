"""Composite kernels of the indexing family.

``where(condition)`` (the one-argument form) is ``nonzero(condition, as_tuple=True)``:
one 1-d tensor of coordinates per dimension, as a tuple.
"""

from __future__ import annotations

from typing import Any

from ember.aten._generated import _ops as ops


def where(condition: Any) -> tuple[Any, ...]:
    return tuple(ops._call_nonzero_numpy(condition))
