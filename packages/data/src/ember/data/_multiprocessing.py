"""Tensors between processes through shared memory (PyTorch's ``torch.multiprocessing`` reductions).

Importing ember.data registers reductions for ``ember.aten.Tensor`` and
``ember.c10py.StorageImpl`` with ``multiprocessing.reduction.ForkingPickler``, the
pickler every ``multiprocessing`` Queue, Pipe and spawned Process uses. A tensor then
travels as its metadata (dtype, sizes, strides, offset) plus a handle to its storage,
never as pickled bytes:

- the storage is moved into shared memory in place (``share_memory_``; a no-op for
  storages already there, such as the batches DataLoader workers collate straight into
  shared memory), in the current sharing strategy;
- "file_descriptor" (default): the handle is the memfd, passed as a duplicate with
  ``multiprocessing.reduction.DupFd`` (the sender's resource sharer keeps a copy until
  the receiver has fetched it, so the sender may drop the tensor at once). Nothing
  appears in /dev/shm, and the kernel frees the memory when the last mapping and fd
  are gone -- even if a process dies;
- "file_system": the handle is the name of a refcounted /dev/shm segment. The sender
  holds a reference for the receiver until the receiver, having mapped the segment (and
  so holding its own), tells it so through the same resource sharer (``_HandOver``); a
  sender that exits first lets go of what it still holds, so nothing stays in /dev/shm.

The receiver maps the storage and rebuilds a Tensor over it; the memory is released
when the last process drops its last tensor over it. CUDA tensors are pickled by value.
A process that ends without dropping its file_system tensors (killed by a signal, or
still holding them when the interpreter exits) leaves their segments in /dev/shm, as
PyTorch's file_system strategy does; file_descriptor memory cannot outlive its users.
"""

from __future__ import annotations

import itertools
import os
import pickle
import threading
from multiprocessing import reduction, resource_sharer, util
from typing import Any

import ember.c10py as _c10
from ember.aten import Tensor, uint8
from ember.aten.extension import wrap as _wrap
from ember.c10py import StorageImpl, TensorImpl

__all__ = ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy"]

_ALL_STRATEGIES = frozenset({"file_descriptor", "file_system"})
_sharing_strategy = "file_descriptor"


def get_sharing_strategy() -> str:
    """The strategy new shared storages use: "file_descriptor" (default) or "file_system"."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Sets how tensors are shared between processes (PyTorch's torch.multiprocessing.set_sharing_strategy)."""
    global _sharing_strategy
    if new_strategy not in _ALL_STRATEGIES:
        raise ValueError(f"unknown sharing strategy {new_strategy!r}; expected one of {sorted(_ALL_STRATEGIES)}")
    _sharing_strategy = new_strategy


def get_all_sharing_strategies() -> set[str]:
    return set(_ALL_STRATEGIES)


def new_shared_tensor(sizes: tuple[int, ...], dtype: Any) -> Tensor:
    """An uninitialised contiguous CPU tensor whose storage is in shared memory.

    Raises ember.c10py.OutOfMemoryError when shared memory is exhausted (with how to fix it).
    """
    numel = 1
    for s in sizes:
        numel *= s
    storage = _c10.new_shared_storage(numel * dtype.itemsize, _sharing_strategy)
    return _wrap(TensorImpl(storage, dtype, sizes, _c10.contiguous_strides(sizes), 0))


# ---- StorageImpl ------------------------------------------------------------------------


def _rebuild_storage_fd(df: Any, nbytes: int) -> StorageImpl:
    fd = df.detach()
    try:
        return _c10.shared_storage_from_fd(fd, nbytes)  # maps a duplicate of fd
    finally:
        os.close(fd)


# file_system hand-over: storages this process has sent and not yet seen mapped, by key.
_held: dict[int, StorageImpl] = {}
_held_pid: int | None = None
_held_lock = threading.Lock()
_held_keys = itertools.count()


def _release_held() -> None:
    with _held_lock:
        _held.clear()


def _hand_over(storage: StorageImpl) -> Any:
    """Keeps `storage` referenced until a receiver fetches the returned identifier (or this
    process exits); the identifier travels with the segment's name."""
    global _held_pid
    with _held_lock:
        if _held_pid != os.getpid():
            # First use in this process (or a forked child's copy): start afresh, and let
            # go of everything at exit -- multiprocessing's children end with os._exit.
            _held.clear()
            _held_pid = os.getpid()
            util.Finalize(None, _release_held, exitpriority=100)
        key = next(_held_keys)
        _held[key] = storage

    def send(conn: Any, pid: int) -> None:
        _held.pop(key, None)
        conn.send(True)

    def close() -> None:
        _held.pop(key, None)

    return resource_sharer._resource_sharer.register(send, close)  # type: ignore[attr-defined]


def _rebuild_storage_filename(name: str, nbytes: int, hand_over: Any) -> StorageImpl:
    storage = _c10.shared_storage_from_filename(name, nbytes)  # takes this process's reference
    try:
        with resource_sharer._resource_sharer.get_connection(hand_over) as conn:  # type: ignore[attr-defined]
            conn.recv()  # the sender has dropped the reference it held for us
    except (OSError, EOFError):
        pass  # the sender is gone: what it held went with it; the mapping is ours
    return storage


def _as_bytes_tensor(storage: StorageImpl) -> Tensor:
    return _wrap(TensorImpl(storage, uint8, (storage.nbytes,), (1,), 0))


def _rebuild_storage_bytes(data: bytes, device: str) -> StorageImpl:
    storage = StorageImpl.from_bytes(data)
    if device == "cpu":
        return storage
    # a GPU storage comes back on its device, through a host-to-device copy
    return _as_bytes_tensor(storage).to(device)._impl.storage  # type: ignore[no-any-return]


def reduce_storage(storage: StorageImpl) -> tuple[Any, tuple[Any, ...]]:
    if storage.device.type != "cpu":
        # device memory is not shared between processes here: its bytes travel, copied to
        # the host first (StorageImpl.tobytes reads host memory only)
        host = _as_bytes_tensor(storage).cpu()._impl.storage.tobytes()[: storage.nbytes]
        return (_rebuild_storage_bytes, (host, str(storage.device)))
    storage.share_memory_(_sharing_strategy)
    name = storage._share_filename()
    if name:
        return (_rebuild_storage_filename, (name, storage.nbytes, _hand_over(storage)))
    return (_rebuild_storage_fd, (reduction.DupFd(storage._share_fd()), storage.nbytes))


# ---- Tensor -----------------------------------------------------------------------------


def _rebuild_tensor(
    storage: StorageImpl,
    dtype: Any,
    sizes: tuple[int, ...],
    strides: tuple[int, ...],
    offset: int,
    requires_grad: bool,
) -> Tensor:
    t = _wrap(TensorImpl(storage, dtype, sizes, strides, offset))
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t: Tensor) -> tuple[Any, tuple[Any, ...]]:
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    if t.device.type != "cpu":
        return t.__reduce_ex__(pickle.HIGHEST_PROTOCOL)  # type: ignore[no-any-return]
    impl = t._impl
    return (
        _rebuild_tensor,
        (impl.storage, impl.dtype, impl.sizes, impl.strides, impl.storage_offset, t.requires_grad),
    )


def init_reductions() -> None:
    """Registers the reductions with ForkingPickler (done once, when ember.data is imported)."""
    reduction.ForkingPickler.register(Tensor, reduce_tensor)
    reduction.ForkingPickler.register(StorageImpl, reduce_storage)
