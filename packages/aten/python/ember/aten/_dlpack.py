"""DLPack interchange: ``Tensor.__dlpack__``/``__dlpack_device__`` and ``from_dlpack``.

The capsules and their ownership rules live in C++ (``csrc/python/dlpack.cpp``); this
file holds the Python protocol: which capsule to make for a consumer's request
(``max_version``, ``dl_device``, ``copy``, ``stream``), and how to ask a producer for one.
"""

from __future__ import annotations

import enum
from typing import Any

from ember.c10py import cuda
from ember.c10py import device as _device_cls

from . import _C
from ._tensor import Tensor


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (the ones ember can meet)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14


def dlpack_device(t: Tensor) -> tuple[DLDeviceType, int]:
    d = t.device
    if d.type == "cuda":
        return (DLDeviceType.kDLCUDA, d.index or 0)
    return (DLDeviceType.kDLCPU, 0)


def to_dlpack_capsule(
    t: Tensor, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
) -> Any:
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if copy is not None and type(copy) is not bool:
        raise TypeError(f"copy must be a bool or None, got {type(copy).__name__}")
    if max_version is not None:
        if not (isinstance(max_version, tuple) and len(max_version) == 2 and all(type(v) is int for v in max_version)):
            raise TypeError(f"max_version must be a tuple of two ints or None, got {max_version!r}")
    here = dlpack_device(t)
    if t.device.type == "cpu":
        if stream is not None and stream != -1:
            raise BufferError(f"__dlpack__: stream must be None for a CPU tensor, got {stream}")
    elif stream is not None and stream != -1:
        _sync_cuda(t, stream)
    src = t
    copied = False
    if dl_device is not None:
        try:
            want = (DLDeviceType(int(dl_device[0])), int(dl_device[1]))
        except (TypeError, ValueError, IndexError):
            raise BufferError(f"__dlpack__: unsupported dl_device {dl_device!r}") from None
        if want != here:
            if copy is False:
                raise BufferError(
                    f"__dlpack__: the tensor is on {here[0].name}:{here[1]}; exporting it to "
                    f"{want[0].name}:{want[1]} needs a copy, but copy=False"
                )
            if want[0] in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
                src = t.cpu()
            elif want[0] == DLDeviceType.kDLCUDA:
                src = t.to(_device_cls("cuda", want[1]))
            else:
                raise BufferError(f"__dlpack__: cannot export to device {want[0].name}")
            copied = True
    if copy is True and not copied:
        src = t.clone()
        copied = True
    versioned = max_version is not None and max_version[0] >= 1
    minor = max_version[1] if versioned and max_version[0] == 1 else _C._DLPACK_VERSION[1]
    return _C._to_dlpack(src.detach() if src.requires_grad else src, versioned, copied, max(0, minor))


def _sync_cuda(t: Tensor, stream: int) -> None:
    # ember's kernels run on the device's current stream; before another stream reads
    # the memory, wait for all queued work on this device (a conservative, correct sync).
    if stream == 0:
        raise BufferError("__dlpack__: stream 0 is ambiguous on CUDA (use 1 for the legacy default stream)")
    if stream == 2:
        raise BufferError("per-thread default stream is not supported.")

    cuda.synchronize(t.device.index or 0)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """from_dlpack(ext_tensor, *, device=None, copy=None) -> Tensor

    A tensor sharing memory with ``ext_tensor`` -- any object with ``__dlpack__`` (a
    NumPy array, a PyTorch/CuPy tensor) or a DLPack capsule (used once).

        >>> a = np.arange(4.0)
        >>> t = ember.aten.from_dlpack(a)
        >>> t[0] = -1.0  # a[0] is now -1.0
    """
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs: dict[str, Any] = {"max_version": _C._DLPACK_VERSION}
        if copy is not None:
            kwargs["copy"] = copy
        dev = ext_tensor.__dlpack_device__()
        if device is not None:
            want = _device_cls(device) if not isinstance(device, _device_cls) else device
            target = (DLDeviceType.kDLCUDA, want.index or 0) if want.type == "cuda" else (DLDeviceType.kDLCPU, 0)
            if (int(dev[0]), int(dev[1])) != (int(target[0]), target[1]):
                kwargs["dl_device"] = target
        if int(dev[0]) in (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM):
            kwargs["stream"] = 1  # the legacy default stream, where ember's kernels run
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:
            # A producer from before DLPack 1.0 takes no max_version/dl_device/copy.
            legacy = {k: v for k, v in kwargs.items() if k == "stream"}
            capsule = ext_tensor.__dlpack__(**legacy)
    else:
        capsule = ext_tensor
    t = _C._from_dlpack_capsule(capsule)
    if device is not None:
        t = t.to(device)
    return t


def install(tensor_cls: type) -> None:
    """Adds the DLPack protocol methods to Tensor."""

    def __dlpack__(
        self: Tensor, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
    ) -> Any:
        """__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> capsule

        A DLPack capsule sharing this tensor's memory (``dltensor_versioned`` when the
        consumer's ``max_version`` is 1.x or newer, else the legacy ``dltensor``).
        """
        return to_dlpack_capsule(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self: Tensor) -> tuple[DLDeviceType, int]:
        """(DLDeviceType, device index) of this tensor."""
        return dlpack_device(self)

    tensor_cls.__dlpack__ = __dlpack__  # type: ignore[attr-defined]
    tensor_cls.__dlpack_device__ = __dlpack_device__  # type: ignore[attr-defined]
