"""The current accelerator (PyTorch's ``torch.accelerator``): CUDA, the only one ember has.

Training scripts pick their device with it::

    >>> import ember.aten as ea
    >>> dev = ea.accelerator.current_accelerator() if ea.accelerator.is_available() else ea.device("cpu")

``current_accelerator()`` answers what the build has (a CUDA build: ``device("cuda")``,
even on a machine without a GPU, as PyTorch's does); ``check_available=True`` adds the
run-time check. The index is left to ``current_device_index()``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ember.c10py import device as _device_cls

from . import _C, cuda

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "is_available",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]


def _built() -> bool:
    return bool(_C._built_with_cuda)


def device_count() -> int:
    """Number of usable accelerator devices (0 when there is none)."""
    return cuda.device_count() if _built() else 0


def is_available() -> bool:
    """True when the build has an accelerator and at least one device of it can be used."""
    return _built() and cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device_cls | None:
    """``device("cuda")`` in a CUDA build (None otherwise); with ``check_available=True``
    also None when no device can be used now."""
    if not _built() or (check_available and not cuda.is_available()):
        return None
    return _device_cls("cuda")


def _require(what: str) -> None:
    if not is_available():
        raise RuntimeError(f"ember.aten.accelerator.{what}: no accelerator is available (ember's is CUDA)")


def current_device_index() -> int:
    """Index of the current accelerator device."""
    _require("current_device_index")
    return cuda.current_device()


def set_device_index(device: Any) -> None:
    """Makes ``device`` (an index, ``"cuda:1"`` or a device) the current accelerator device."""
    _require("set_device_index")
    cuda.set_device(device)


# PyTorch's earlier names, kept there as deprecated aliases
current_device_idx = current_device_index
set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device: Any) -> Iterator[None]:
    """Context manager: ``device`` is the current accelerator device inside (None: no change)."""
    if device is None:
        yield
        return
    _require("device_index")
    with cuda.device(device):
        yield


def current_stream(device: Any = None) -> Any:
    """The current stream of ``device`` (default: the current device)."""
    _require("current_stream")
    return cuda.current_stream(device)


def set_stream(stream: Any) -> None:
    """Makes ``stream`` the current stream of its device."""
    _require("set_stream")
    cuda.set_stream(stream)


def synchronize(device: Any = None) -> None:
    """Waits for every kernel queued on ``device`` (default: the current device)."""
    _require("synchronize")
    cuda.synchronize(device)
