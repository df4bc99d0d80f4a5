"""ember.torch: PyTorch's namespace over ember's installed layers (the one-line port).

    >>> import ember.torch as torch
    >>> import ember.torch.nn.functional as F
    >>> from ember.torch.utils.data import DataLoader, TensorDataset
    >>> torch.nn.Linear is __import__("ember.nn").nn.Linear
    True

Nothing here is defined twice: the top-level names are ember.aten's (tensors, dtypes,
factories, ``save``/``load``, ``manual_seed``, ``cuda``, ``backends``, ``accelerator``)
and ember.autograd's grad modes (``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``); the submodules ``nn``, ``optim``, ``utils.data``, ``autograd``,
``distributions``, ``distributed``, ``onnx``, ``fx`` are the ember modules themselves, aliased by the
finder in ``_aliases.py`` and imported on first use, so a layer that is not installed
costs nothing until it is touched -- and then raises an ImportError naming the package.

``install_as_torch()`` makes ``import torch`` (and ``import torch.nn`` ...) give these
modules, for third-party code that imports torch itself.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
from importlib import metadata as _metadata
from typing import Any as _Any

import ember.aten as _ea

from . import _aliases

_aliases.install_finder()

from . import _pickle_names  # noqa: E402

_pickle_names.install()  # torch.nn.modules.linear.Linear in a PyTorch pickle -> ember.nn's Linear

# ember.aten's public names, except those that mean something else under torch
# (`nn`: aten's operator namespace, torch.nn is ember.nn) and the namespace package `ember`.
_NOT_FROM_ATEN = {"ember", "nn", "annotations"}
globals().update(
    {k: v for k, v in vars(_ea).items() if not k.startswith("_") and k not in _NOT_FROM_ATEN and k != "__version__"}
)

from ember.autograd import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

from . import jit  # noqa: E402
from ._lazy import compile  # noqa: E402

__version__ = _metadata.version("ember-torch")


def install_as_torch() -> None:
    """Makes ``import torch`` / ``import torch.nn.functional`` / ``from torch.utils.data
    import DataLoader`` resolve to ember (``sys.modules`` aliases), for third-party code
    that imports torch itself. Opt-in, process-wide, idempotent.

    Raises RuntimeError when PyTorch itself was imported first: two tensor types in one
    process would mix silently."""
    this = _sys.modules[__name__]
    existing = _sys.modules.get("torch")
    if existing is not None and existing is not this:
        where = getattr(existing, "__file__", None) or repr(existing)
        raise RuntimeError(
            f"install_as_torch(): a module named torch is already imported ({where}); "
            "call ember.torch.install_as_torch() before anything imports torch"
        )
    _sys.modules["torch"] = this
    _aliases.install_torch_finder()


def __getattr__(name: str) -> _Any:
    # torch.nn, torch.optim, torch.distributions, ...: the layer, imported on first use.
    if name in _aliases.SUBMODULES or name in _aliases.UNAVAILABLE or name == "utils":
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_aliases.SUBMODULES) | {"utils"})
