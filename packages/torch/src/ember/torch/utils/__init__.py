"""torch.utils: ``torch.utils.data`` is ember.data (aliased by ember.torch's finder)."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "data":
        return importlib.import_module(f"{__name__}.data")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
