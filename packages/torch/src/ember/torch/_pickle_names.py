"""PyTorch's global names in pickles, mapped to ember's objects (registered into ember.aten's loader).

A full-module checkpoint saved by PyTorch (``torch.save(model)``, loaded with
``weights_only=False``) names its classes by module path: ``torch.nn.modules.linear.Linear``,
``torch.nn.modules.activation.MultiheadAttention``, ``torch.optim.adam.Adam``. ember's layers
use the same module layout below their own names, so the facade's table (``_aliases``)
turns ``torch.<sub>.<rest>`` into ``ember.<layer>.<rest>``; the reverse gives an ember class
its torch name, so ``safe_globals([torch.nn.Linear])`` admits the name PyTorch wrote.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ember.aten.extension import register_torch_pickle_names

from . import _aliases


def resolve(module: str, name: str) -> Any:
    """``torch.nn.modules.linear``, ``Linear`` -> ember.nn.modules.linear.Linear (None if there is none)."""
    try:
        if module == "torch":
            return getattr(importlib.import_module(_aliases.PACKAGE), name, None)
        found = _aliases._lookup(module[len("torch.") :])
        if found is None:
            return None
        _, target, dist = found
        mod = _aliases.resolve(f"{_aliases.PACKAGE}.{module[len('torch.') :]}", target, dist)
    except ImportError:
        return None
    obj: Any = mod
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def names_of(obj: Any) -> list[str]:
    """PyTorch's names of an ember object: ember.nn.modules.linear.Linear -> ["torch.nn.modules.linear.Linear"].

    An object a module re-exports where PyTorch defines it (ember.nn.modules.activation.MultiheadAttention,
    defined in ember.nn.modules.attention) gets that module's torch name too."""
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(qualname, str) or "." in qualname:
        return []
    names = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("ember.") or getattr(module, qualname, None) is not obj:
            continue
        # where it is defined, where a module lists it in __all__, or where a module's __getattr__
        # serves it on purpose (ember.nn.modules.linear.NonDynamicallyQuantizableLinear); not every import
        exported = qualname in getattr(module, "__all__", ()) or qualname not in vars(module)
        if module_name != obj.__module__ and not exported:
            continue
        if module_name.rsplit(".", 1)[-1].startswith("_"):
            continue
        torch_module = _torch_module_of(module_name)
        if torch_module is not None:
            names.append(f"{torch_module}.{qualname}")
    return sorted(set(names))


def _torch_module_of(module: str) -> str | None:
    """ember.nn.modules.linear -> torch.nn.modules.linear (the longest table entry that holds it)."""
    best: tuple[int, str] | None = None
    for key, (target, _dist) in _aliases.SUBMODULES.items():
        if ":" in target or not (module == target or module.startswith(target + ".")):
            continue
        if best is None or len(target) > best[0]:
            best = (len(target), "torch." + key + module[len(target) :])
    return None if best is None else best[1]


def install() -> None:
    register_torch_pickle_names(resolve, names_of)
