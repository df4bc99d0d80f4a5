"""An ember extension package: the operator ``myops::my_add(x, y) = 2*x + y``.

Importing it loads the compiled module, whose EMBER_LIBRARY blocks define the operator
and register its CPU (and, when built with nvcc, CUDA) kernel in ember's dispatcher;
the derivative is registered here from Python.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
from ember.aten import library

from . import _C  # registers myops::my_add and its kernels (EMBER_LIBRARY blocks)


def _backward(ctx: Any, grad: Any) -> tuple[Any, Any]:
    return 2 * grad, grad  # d(2x + y)/dx = 2, d/dy = 1


library.register_autograd("myops::my_add", _backward)


def my_add(x: Any, y: Any) -> Any:
    """2 * x + y, computed by the extension's kernel (ember.aten.ops.myops.my_add)."""
    return ea.ops.myops.my_add(x, y)


__all__ = ["my_add"]
