"""pin_memory: copies batches into page-locked host memory (PyTorch's ``_utils/pin_memory``).

Pinned memory comes from c10py's CUDA host allocator (``ember.c10py.cuda.pinned_storage``),
so a later ``.cuda(non_blocking=True)`` copy can overlap with compute. With worker
processes, pinning runs in a thread of the main process (``_pin_memory_loop``) between
the workers' result queue and the batches the iterator yields.
"""

from __future__ import annotations

import collections.abc
import copy
import queue
from typing import Any

import ember.c10py as _c10
from ember.aten import Tensor
from ember.aten.extension import wrap as _wrap
from ember.c10py import TensorImpl, cuda

from ._utils import ExceptionWrapper

# How often the pinning thread checks whether it should stop (seconds).
MP_STATUS_CHECK_INTERVAL = 1.0


def is_pin_memory_available() -> bool:
    """Pinned memory needs a CUDA device (PyTorch: an accelerator)."""
    return bool(cuda.is_available())


def _pinned_storage(nbytes: int) -> Any:
    return cuda.pinned_storage(nbytes)


def pin_tensor(t: Tensor) -> Tensor:
    """A contiguous copy of CPU tensor `t` in pinned memory (`t` itself if already pinned)."""
    if t.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{t.type()}' only dense CPU tensors can be pinned")
    if t.numel() and cuda.is_available() and cuda.is_pinned(t.data_ptr()):
        return t
    sizes = tuple(t.shape)
    storage = _pinned_storage(t.numel() * t.element_size())
    out = _wrap(TensorImpl(storage, t.dtype, sizes, _c10.contiguous_strides(sizes), 0))
    out.copy_(t)
    return out


def pin_memory(data: Any, device: Any = None) -> Any:
    """Pins every tensor in `data` (mappings, named tuples and sequences are rebuilt around
    the pinned copies; objects with a ``pin_memory()`` method have it called)."""
    if isinstance(data, Tensor):
        return pin_tensor(data)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v, device) for k, v in data.items()}
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(pinned)
            return clone
        try:
            return type(data)(pinned)  # type: ignore[call-arg]
        except TypeError:
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_memory(sample, device) for sample in data))
    if isinstance(data, tuple):
        return [pin_memory(sample, device) for sample in data]  # a list, as PyTorch
    if isinstance(data, collections.abc.Sequence):
        pinned_list = [pin_memory(sample, device) for sample in data]
        if isinstance(data, list):
            return pinned_list
        try:
            return type(data)(pinned_list)  # type: ignore[call-arg]
        except TypeError:
            return pinned_list
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


def _pin_memory_loop(in_queue: Any, out_queue: Any, device_id: int, done_event: Any, decode: Any) -> None:
    """The pinning thread: (idx, payload) from the workers -> (idx, pinned batch) to the iterator.

    `decode` unpickles a worker's message (mapping its shared memory); exceptions from the
    workers pass through unpinned, errors while pinning are sent as exceptions.
    """
    if cuda.is_available():
        cuda.set_device(device_id)
    while not done_event.is_set():
        try:
            r = in_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        idx, data = r = decode(r)
        if not done_event.is_set() and not isinstance(data, ExceptionWrapper):
            try:
                data = pin_memory(data)
            except Exception:
                data = ExceptionWrapper(where=f"in pin memory thread for device {device_id}")
            r = (idx, data)
        while not done_event.is_set():
            try:
                out_queue.put(r, timeout=MP_STATUS_CHECK_INTERVAL)
                break
            except queue.Full:
                continue
        del r, idx, data  # no reference kept to a batch while waiting for the next
