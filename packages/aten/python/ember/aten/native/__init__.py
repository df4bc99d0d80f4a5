"""Python kernels of composite operators (CompositeImplicitAutograd / CompositeExplicitAutograd).

A composite operator is written in terms of other operators, so it runs on every
backend and (when implicit) gets its gradient from the operators it calls. Each
kernel is a function named as in native_functions.yaml (``flatten_using_ints``
for ``flatten.using_ints`` without an explicit name) that takes the schema's
arguments positionally. The modules below are imported by ``kernels()``.
"""

from __future__ import annotations

import importlib
from typing import Any

# Every module of this package, each named once: shape, indexing, pointwise_unary and reductions;
# linear algebra (torch.linalg's decompositions and solvers in linalg_ext); convolution, nn_ops and
# linear (nn layers); attention (scaled dot product); sampling (padding, upsampling, grid
# sampling, pixel shuffle); special (torch.special's aliases). tests/aten/test_native_modules.py
# checks the list against the folder.
_MODULES = (
    "shape",
    "indexing",
    "pointwise_unary",
    "reductions",
    "linalg",
    "linalg_ext",
    "conv",
    "nn_ops",
    "linear",
    "attention",
    "sampling",
    "special",
    # --- functions family (issue 18) ---
    "functions",
)


def kernels() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _MODULES:
        # loaded by ember/aten/__init__.py's _register_kernels: the kernels call ember.aten's
        # public functions, which that package's import has defined by then
        mod = importlib.import_module(f"{__name__}.{name}")
        for attr, value in vars(mod).items():
            if callable(value) and not attr.startswith("_") and getattr(value, "__module__", "") == mod.__name__:
                if attr in found:
                    raise RuntimeError(
                        f"composite kernel {attr} is defined twice ({found[attr].__module__}, {mod.__name__})"
                    )
                found[attr] = value
    return found
