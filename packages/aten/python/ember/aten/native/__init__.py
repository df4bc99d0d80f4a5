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

_MODULES = ("shape", "factories", "pointwise", "reductions", "indexing", "pointwise_unary", "linalg", "conv", "nn_ops")
# scaled dot product attention; padding, upsampling, grid sampling, pixel shuffle
_MODULES += ("attention", "sampling")  # type: ignore[assignment]
# linear (nn layer)
_MODULES += ("linear",)  # type: ignore[assignment]
# torch.linalg's decompositions and solvers; torch.special's aliases
_MODULES += ("linalg_ext", "special")  # type: ignore[assignment]


def kernels() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"{__name__}.{name}":
                continue
            raise
        for attr, value in vars(mod).items():
            if callable(value) and not attr.startswith("_") and getattr(value, "__module__", "") == mod.__name__:
                if attr in found:
                    raise RuntimeError(
                        f"composite kernel {attr} is defined twice ({found[attr].__module__}, {mod.__name__})"
                    )
                found[attr] = value
    return found
