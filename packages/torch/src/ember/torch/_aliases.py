"""How ``ember.torch.<sub>`` (and, after install_as_torch, ``torch.<sub>``) become ember's modules.

A meta-path finder answers every import below ``ember.torch`` that the table names:
``import ember.torch.nn.functional`` puts the module object ``ember.nn.functional`` itself
into ``sys.modules`` under that name (an alias, not a copy), so ``ember.torch.nn is
ember.nn`` and every class keeps one identity. A name the table does not know falls
through to the files of this package (``jit``, ``utils``).

    ember.torch.<key>[.<rest>]   ->   <target>[.<rest>]       (longest key wins)

A target whose layer is not installed raises ModuleNotFoundError naming the distribution.
importlib stamps the returned module with the alias's ``__spec__``; the loader puts the
module's own spec back, so ``ember.nn.__spec__.name`` stays ``"ember.nn"``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

PACKAGE = "ember.torch"

# PyTorch's submodule path -> (ember module, or "module:attribute" for a namespace object
# that is not importable by itself; the distribution that provides it)
SUBMODULES: dict[str, tuple[str, str]] = {
    "nn": ("ember.nn", "ember-nn"),
    "optim": ("ember.optim", "ember-optim"),
    "autograd": ("ember.autograd", "ember-autograd"),
    "utils.data": ("ember.data", "ember-data"),
    "distributions": ("ember.distributions", "ember-distributions"),
    "distributed": ("ember.distributed", "ember-distributed"),
    "cuda": ("ember.aten.cuda", "ember-aten"),
    "backends": ("ember.aten.backends", "ember-aten"),
    "accelerator": ("ember.aten.accelerator", "ember-aten"),
    "random": ("ember.aten.random", "ember-aten"),
    "profiler": ("ember.aten.profiler", "ember-aten"),
    "library": ("ember.aten.library", "ember-aten"),
    "serialization": ("ember.aten.serialization", "ember-aten"),
    "functional": ("ember.aten.functional", "ember-aten"),
    "linalg": ("ember.aten:linalg", "ember-aten"),
    "special": ("ember.aten:special", "ember-aten"),
    "fft": ("ember.aten:fft", "ember-aten"),
    "return_types": ("ember.aten:return_types", "ember-aten"),
    "sparse": ("ember.aten:sparse", "ember-aten"),
    "signal": ("ember.aten.signal", "ember-aten"),  # torch.signal.windows
    "masked": ("ember.aten.masked", "ember-aten"),  # masked reductions (strided tensors)
    "onnx": ("ember.onnx", "ember-onnx"),
    "fx": ("ember.fx", "ember-fx"),
    "amp": ("ember.aten.amp", "ember-aten"),  # autocast, GradScaler, custom_fwd / custom_bwd
}

# PyTorch submodules ember does not have yet: importing one says so.
UNAVAILABLE: dict[str, str] = {}


def _lookup(rest: str) -> tuple[str, str, str] | None:
    """(key, target, distribution) for the dotted path below ember.torch, or None."""
    parts = rest.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in SUBMODULES:
            target, dist = SUBMODULES[key]
            tail = parts[n:]
            if tail:
                if ":" in target:
                    return None  # a namespace object has no submodules
                target = ".".join([target, *tail])
            return key, target, dist
    return None


# The layers above ember-torch (they build on it), which ember-torch[all] cannot bring in.
_ABOVE_TORCH = ("ember-fx", "ember-onnx")


def missing_layer_error(alias: str, target: str, dist: str) -> ModuleNotFoundError:
    layer = target.split(":")[0]
    extra = "" if dist in _ABOVE_TORCH else " (or ember-torch[all])"
    return ModuleNotFoundError(
        f"{alias} is {layer.replace(':', '.')}, which is not installed: pip install {dist}{extra}",
        name=alias,
    )


def _layer_installed(target: str) -> bool:
    top = ".".join(target.split(":")[0].split(".")[:2])  # "ember.nn"
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def resolve(alias: str, target: str, dist: str) -> types.ModuleType:
    """Imports the module behind ``alias`` (raising the missing-layer error when needed)."""
    if not _layer_installed(target):
        raise missing_layer_error(alias, target, dist)
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    if attr:
        module = getattr(module, attr)
    return module


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType) -> None:
        self._module = module
        self._own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._own_spec  # importlib set the alias's spec; keep the module's own


def _alias_spec(fullname: str, module: types.ModuleType) -> importlib.machinery.ModuleSpec:
    return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"))


class EmberTorchFinder(importlib.abc.MetaPathFinder):
    """``ember.torch.<table key>[...]`` -> the ember module (see the module docstring)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(PACKAGE + "."):
            return None
        rest = fullname[len(PACKAGE) + 1 :]
        head = rest.split(".")[0]
        if head in UNAVAILABLE:
            raise ModuleNotFoundError(f"{fullname}: {UNAVAILABLE[head]}", name=fullname)
        found = _lookup(rest)
        if found is None:
            return None
        _, target_name, dist = found
        return _alias_spec(fullname, resolve(fullname, target_name, dist))


class TorchFinder(importlib.abc.MetaPathFinder):
    """After install_as_torch(): ``torch.<x>`` -> ``ember.torch.<x>``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("torch."):
            return None
        module = importlib.import_module(PACKAGE + fullname[len("torch") :])
        return _alias_spec(fullname, module)


_finder = EmberTorchFinder()
_torch_finder = TorchFinder()


def install_finder() -> None:
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def install_torch_finder() -> None:
    if _torch_finder not in sys.meta_path:
        sys.meta_path.insert(0, _torch_finder)
