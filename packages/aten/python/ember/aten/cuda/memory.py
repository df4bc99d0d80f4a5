"""The CUDA caching allocator's statistics under PyTorch's names (``torch.cuda.memory``).

c10py keeps the counters per device (``ember.c10py.memory_stats(device("cuda:0"))``);
``memory_stats`` renames them to PyTorch's keys. As in PyTorch, before CUDA is usable
the counters read as empty / 0 and ``empty_cache`` does nothing.
"""

from __future__ import annotations

from typing import Any

import ember.c10py as _c10
from ember.c10py import cuda as _c10_cuda
from ember.c10py import device as _device_cls

from ._device import _checked_index, _get_device_index

__all__ = [
    "empty_cache",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
]


def _index_or_none(device: Any, what: str) -> int:
    """The device's index, or -1 when there is no CUDA device (a CPU device is still an error)."""
    idx = _get_device_index(device, optional=True, what=what)  # validates the argument first
    return idx if _c10_cuda.is_available() else -1


def memory_stats(device: Any = None) -> dict[str, int]:
    """The allocator's counters of `device` (default: current) under PyTorch's keys:
    ``allocated_bytes.all.current`` / ``.peak``, ``reserved_bytes.all.current`` / ``.peak``,
    ``allocation.all.allocated`` / ``.freed`` / ``.current``, ``num_device_alloc``.
    Empty when no CUDA device is available."""
    idx = _index_or_none(device, "ember.aten.cuda.memory_stats")
    if idx < 0:
        return {}
    idx = _checked_index(idx, "ember.aten.cuda.memory_stats")
    s = _c10.memory_stats(_device_cls("cuda", idx))
    return {
        "allocated_bytes.all.current": s["allocated_bytes"],
        "allocated_bytes.all.peak": s["peak_allocated_bytes"],
        "reserved_bytes.all.current": s["reserved_bytes"],
        "reserved_bytes.all.peak": s["peak_reserved_bytes"],
        "allocation.all.allocated": s["num_allocs"],
        "allocation.all.freed": s["num_frees"],
        "allocation.all.current": s["num_allocs"] - s["num_frees"],
        "num_device_alloc": s["num_device_allocs"],
    }


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on `device` now (0 without CUDA)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    """Peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver on `device` (in use or cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    """Peak of memory_reserved() since the start or the last reset_peak_memory_stats()."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of `device`'s memory (default: current) as the driver reports
    them now (cudaMemGetInfo): free counts other processes' memory and the caching
    allocator's cached blocks as used. Raises RuntimeError without a CUDA device."""
    idx = _checked_index(device, "ember.aten.cuda.mem_get_info")
    free, total = _c10_cuda.mem_get_info(idx)
    return int(free), int(total)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restarts the peaks (max_memory_allocated / max_memory_reserved) from the current values."""
    idx = _checked_index(device, "ember.aten.cuda.reset_peak_memory_stats")
    _c10.reset_peak_memory_stats(_device_cls("cuda", idx))


def reset_max_memory_allocated(device: Any = None) -> None:
    """Restarts max_memory_allocated() (PyTorch's older name; same as reset_peak_memory_stats)."""
    reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Returns the cached, unused blocks of every device to the driver (nothing without CUDA).
    Memory held by tensors stays; other processes (and nvidia-smi) see the rest freed."""
    for i in range(_c10_cuda.device_count()):
        _c10.empty_cache(_device_cls("cuda", i))


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A readable report of the caching allocator's state on `device` (default: current)."""
    idx = _index_or_none(device, "ember.aten.cuda.memory_summary")
    return str(_c10_cuda.memory_summary(idx if idx >= 0 else None))
