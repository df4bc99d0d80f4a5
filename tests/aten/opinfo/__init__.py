"""The OpInfo database: every family module's OPS list, in one list."""

from __future__ import annotations

import importlib
import pkgutil

from .core import OpInfo

op_db: list[OpInfo] = []
for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _m.name == "core":
        continue
    op_db.extend(importlib.import_module(f"{__name__}.{_m.name}").OPS)

_names = [op.name for op in op_db]
_dups = {n for n in _names if _names.count(n) > 1}
assert not _dups, f"OpInfo entries defined twice: {sorted(_dups)}"
