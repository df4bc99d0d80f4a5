"""Entry points into layers built beside the eager core, imported when first called."""

from __future__ import annotations

import importlib
from typing import Any


def _layer(module: str, dist: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise ModuleNotFoundError(
                f"{what} is {module}, which is not installed: pip install {dist}", name=module
            ) from None
        raise


def compile(model: Any = None, **kwargs: Any) -> Any:
    """torch.compile(model=None, *, fullgraph=False, dynamic=None, backend=..., mode=None, ...)

    ember's graph capture and compiler, ``ember.fx.compile`` (the ember-fx package); with
    ``model=None`` it returns a decorator, as PyTorch's does."""
    fx = _layer("ember.fx", "ember-fx", "ember.torch.compile")
    if model is None:
        return lambda m: fx.compile(m, **kwargs)
    return fx.compile(model, **kwargs)
