"""The CUDA devices: availability, lazy initialisation, the current device and its properties.

The part of ``ember.aten.cuda`` the others stand on (memory, random and streams import it;
the package's ``__init__`` re-exports its public names), so that no module of the package
imports its ``__init__``.
"""

from __future__ import annotations

from typing import Any

import ember.c10py as _c10
from ember.c10py import cuda as _c10_cuda
from ember.c10py import device as _device_cls

from .. import _C, _factories

_initialized = False


def is_available() -> bool:
    """True if this build has CUDA and a CUDA device can be used now (never raises)."""
    return bool(_c10_cuda.is_available())


def device_count() -> int:
    """Number of usable CUDA devices: 0 without a GPU, a driver, or a CUDA build."""
    return int(_c10_cuda.device_count())


def _unavailable_message(what: str) -> str:
    return f"{what}: no CUDA device is available; {_c10_cuda.availability_error()}"


def _lazy_init(what: str) -> None:
    """Raises RuntimeError naming `what` and the reason when no CUDA device can be used."""
    global _initialized
    if not _c10_cuda.is_available():
        raise RuntimeError(_unavailable_message(what))
    _initialized = True


def init() -> None:
    """Initialises CUDA (PyTorch does so lazily; so does ember). Raises without a device."""
    _lazy_init("ember.aten.cuda.init")


def is_initialized() -> bool:
    """True once this process has used a CUDA device: a call here, or a CUDA tensor made
    (PyTorch's is True after ``torch.ones(1, device="cuda")``; code checks it before forking)."""
    if _initialized:
        return True
    if not _c10_cuda.is_available():
        return False
    return any(_c10.memory_stats(_device_cls("cuda", i))["num_allocs"] > 0 for i in range(device_count()))


def _get_device_index(device: Any, optional: bool = False, what: str = "ember.aten.cuda") -> int:
    """An index from an int, "cuda:1", a device or None (the current device if `optional`).

    A negative int passes through (PyTorch: "no-op" for the context managers)."""
    if device is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return current_device() if _c10_cuda.is_available() else -1
    if isinstance(device, bool):
        raise TypeError(f"{what}: expected a CUDA device, got {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device_cls(device)
    if isinstance(device, _device_cls):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is None:
            if not optional:
                raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
            return current_device() if _c10_cuda.is_available() else -1
        return int(device.index)
    if hasattr(device, "__index__"):
        return int(device.__index__())
    raise TypeError(f"{what}: expected a CUDA device (int, str or device), got {type(device).__name__}")


def _checked_index(device: Any, what: str) -> int:
    """The index of an existing device (device=None: the current one); RuntimeError without CUDA."""
    _lazy_init(what)
    idx = _get_device_index(device, optional=True, what=what)
    n = device_count()
    if not 0 <= idx < n:
        raise RuntimeError(f"{what}: Invalid device id {idx} ({n} CUDA device{'s' if n != 1 else ''} available)")
    return idx


# ---- the current device ----------------------------------------------------------------


def current_device() -> int:
    """Index of this thread's current CUDA device."""
    _lazy_init("ember.aten.cuda.current_device")
    return int(_c10_cuda.current_device())


def set_device(device: Any) -> None:
    """Makes `device` current for this thread (a negative index does nothing, as PyTorch)."""
    idx = _get_device_index(device, what="ember.aten.cuda.set_device")
    if idx >= 0:
        _checked_index(idx, "ember.aten.cuda.set_device")
        _c10_cuda.set_device(idx)


def _exchange_device(idx: int) -> int:
    """Makes `idx` current and returns the previous index (-1 in, -1 out: no change)."""
    if idx < 0:
        return -1
    _lazy_init("ember.aten.cuda.device")
    prev = current_device()
    if prev != idx:
        _checked_index(idx, "ember.aten.cuda.device")
        _c10_cuda.set_device(idx)
    return prev


class device:
    """Context manager selecting a CUDA device: ``with ember.aten.cuda.device(1): ...``.

    A negative index or None selects nothing (no device needed)."""

    def __init__(self, device: Any) -> None:
        self.idx = _get_device_index(device, optional=True, what="ember.aten.cuda.device")
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.prev_idx >= 0:
            _c10_cuda.set_device(self.prev_idx)


class device_of(device):
    """Context manager selecting the device of a tensor (nothing for a CPU tensor)."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device: Any = None) -> None:
    """Waits for all work queued on `device` (default: current) to finish, then raises the
    first index error a kernel reported on it (IndexError, as the CPU kernel's)."""
    idx = _checked_index(device, "ember.aten.cuda.synchronize")
    _c10_cuda.synchronize(idx)
    _check_device_errors(idx)


def _check_device_errors(idx: int = -1) -> None:
    check = getattr(_C, "_cuda_check_device_errors", None)  # only in CUDA builds
    if check is not None:
        check(idx)


# ---- device facts ----------------------------------------------------------------------


def get_device_properties(device: Any = None) -> Any:
    """name, major, minor, total_memory, multi_processor_count, warp_size, shared_memory_per_block."""
    idx = _checked_index(device, "ember.aten.cuda.get_device_properties")
    return _c10_cuda.get_device_properties(idx)


def get_device_name(device: Any = None) -> str:
    """'NVIDIA H100 80GB HBM3'."""
    return str(get_device_properties(device).name)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """(major, minor) compute capability: (9, 0) for an H100."""
    p = get_device_properties(device)
    return int(p.major), int(p.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True if the current CUDA device supports bfloat16: compute capability 8.0 or newer
    (or, with `including_emulation`, if a bfloat16 tensor can be made on it). False
    without a CUDA device (never raises), as PyTorch's."""
    if not is_available():
        return False
    idx = current_device()
    if get_device_properties(idx).major >= 8:
        return True
    if not including_emulation:
        return False
    try:
        _factories.tensor([1.0], dtype=_c10.bfloat16, device=_device_cls("cuda", idx))
    except Exception:
        return False
    return True
