"""NCCL for CUDA tensors, loaded with ctypes on first use (like aten's lazy cuBLAS).

Nothing is built against NCCL and importing ember.distributed never loads it: the first
CUDA collective of a group dlopen()s ``libnccl.so.2`` from the ``nvidia-nccl-cu13`` wheel
(``pip install 'ember-distributed[nccl]'``; ``EMBER_NCCL_LIBRARY`` overrides the path),
rank 0 of the group makes an ``ncclUniqueId`` and broadcasts it over the group's MPI
communicator, and every rank calls ``ncclCommInitRank`` on its current CUDA device.

Why ctypes rather than a C++ shim in aten: NCCL's C API is a dozen plain functions over
pointers and ints, the calls are per-bucket (not per-element), and a Python loader keeps
aten's build and its import free of NCCL entirely.

Streams: each communicator enqueues on its own ember CUDA stream, which first waits for
the caller's current stream (so the inputs are ready); a recorded event marks completion.
``Work.wait()`` polls that event and ``ncclCommGetAsyncError`` against the timeout, and
aborts the communicator (``ncclCommAbort``) when it passes, so a dead rank never hangs a
GPU either. NCCL refuses two ranks on one GPU; ember checks that first and says so.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ember.aten as ea
import ember.c10py as c10
from ember.aten import cuda

from ._types import ReduceOp
from .distributed_c10d import Work, all_gather_object, broadcast_object_list

_lib: ctypes.CDLL | None = None

# ncclDataType_t and ncclRedOp_t (nccl.h)
_DTYPES = {
    ea.int8: 0,
    ea.uint8: 1,
    ea.int32: 2,
    ea.int64: 4,
    ea.float16: 6,
    ea.float32: 7,
    ea.float64: 8,
    ea.bfloat16: 9,
}
_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3, ReduceOp.AVG: 4}
_UNIQUE_ID_BYTES = 128
_IN_PROGRESS = 7  # ncclInProgress


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * _UNIQUE_ID_BYTES)]


def library_path() -> str | None:
    """Where libnccl.so.2 is (the nvidia-nccl wheel's lib/), or None when not installed."""
    override = os.environ.get("EMBER_NCCL_LIBRARY")
    if override:
        return override
    try:
        import nvidia.nccl  # type: ignore[import-not-found]
    except ImportError:
        return None
    for base in list(getattr(nvidia.nccl, "__path__", [])):
        candidate = Path(base) / "lib" / "libnccl.so.2"
        if candidate.exists():
            return str(candidate)
    return None


def load() -> ctypes.CDLL:
    """dlopen NCCL once and declare the functions ember calls."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if path is None:
        raise RuntimeError(
            "the NCCL backend needs NCCL: pip install 'ember-distributed[nccl]' (the nvidia-nccl-cu13 wheel), "
            "or set EMBER_NCCL_LIBRARY to libnccl.so.2"
        )
    if not Path(path).exists():
        raise RuntimeError(f"NCCL library not found at {path}: pip install 'ember-distributed[nccl]'")
    lib = ctypes.CDLL(path)
    p, i, sz, vp = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
    sigs: dict[str, list[Any]] = {
        "ncclGetVersion": [ctypes.POINTER(ctypes.c_int)],
        "ncclGetUniqueId": [ctypes.POINTER(_UniqueId)],
        "ncclCommInitRank": [ctypes.POINTER(p), i, _UniqueId, i],
        "ncclCommAbort": [p],
        "ncclCommDestroy": [p],
        "ncclCommGetAsyncError": [p, ctypes.POINTER(ctypes.c_int)],
        "ncclAllReduce": [vp, vp, sz, i, i, p, p],
        "ncclBroadcast": [vp, vp, sz, i, i, p, p],
        "ncclReduce": [vp, vp, sz, i, i, i, p, p],
        "ncclAllGather": [vp, vp, sz, i, p, p],
        "ncclReduceScatter": [vp, vp, sz, i, i, p, p],
        "ncclSend": [vp, sz, i, i, p, p],
        "ncclRecv": [vp, sz, i, i, p, p],
        "ncclGroupStart": [],
        "ncclGroupEnd": [],
    }
    for name, argtypes in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
    lib.ncclGetErrorString.argtypes = [ctypes.c_int]
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    _lib = lib
    return lib


def version() -> int:
    v = ctypes.c_int()
    _check(load().ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
    return v.value


def _check(result: int, what: str) -> None:
    if result != 0:
        msg = load().ncclGetErrorString(result).decode(errors="replace")
        raise RuntimeError(f"{what} failed: NCCL error {result}: {msg}")


def _dtype(t: Any, op: str) -> int:
    code = _DTYPES.get(t.dtype)
    if code is None:
        raise TypeError(f"{op}: the NCCL backend does not take {t.dtype} tensors")
    return code


class NCCLCommunicator:
    """One NCCL communicator for one ProcessGroup (made on its first CUDA collective)."""

    def __init__(self, pg: Any, comm: ctypes.c_void_p, device: int) -> None:
        self._pg = pg
        self._comm = comm
        self._device = device

        self._c10cuda = c10.cuda
        self._stream = c10.cuda.Stream(c10.device("cuda", device))

    @classmethod
    def create(cls, pg: Any) -> NCCLCommunicator:
        lib = load()
        device = cuda.current_device()

        # NCCL allows one rank per GPU in a communicator: say so before it fails obscurely
        where = [None] * pg.size()
        all_gather_object(where, (os.uname().nodename, device), group=pg)
        for r, w in enumerate(where):
            if r != pg.rank() and w == where[pg.rank()]:
                raise RuntimeError(
                    f"NCCL: ranks {pg.ranks[pg.rank()]} and {pg.ranks[r]} both use cuda:{device} on one host; NCCL "
                    "needs one GPU per rank (call ember.aten.cuda.set_device(local_rank) first)"
                )
        uid = _UniqueId()
        if pg.rank() == 0:
            _check(lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        # all 128 bytes (uid.internal would stop at the first NUL)
        box: list[bytes] = [ctypes.string_at(ctypes.addressof(uid), _UNIQUE_ID_BYTES)]
        broadcast_object_list(box, src=pg.ranks[0], group=pg)
        ctypes.memmove(ctypes.addressof(uid), box[0], _UNIQUE_ID_BYTES)
        comm = ctypes.c_void_p()
        _check(lib.ncclCommInitRank(ctypes.byref(comm), pg.size(), uid, pg.rank()), "ncclCommInitRank")
        return cls(pg, comm, device)

    def destroy(self) -> None:
        if self._comm:
            load().ncclCommDestroy(self._comm)
            self._comm = ctypes.c_void_p()

    # -- one enqueue, as a Work
    def _launch(
        self, name: str, tensors: list[Any], call: Callable[[int], int], finish: Callable[[], None] | None
    ) -> Any:
        for t in tensors:
            if t.device.index != self._device:
                raise ValueError(f"{name}: tensor is on {t.device}, the NCCL communicator on cuda:{self._device}")
        seq = self._pg._next_seq(name)
        c10cuda = self._c10cuda
        self._stream.wait_stream(c10cuda.current_stream(self._stream.device))
        _check(call(self._stream.handle), name)
        event = c10cuda.Event()
        event.record(self._stream)
        lib = load()

        def poll() -> bool:
            err = ctypes.c_int()
            lib.ncclCommGetAsyncError(self._comm, ctypes.byref(err))
            if err.value not in (0, _IN_PROGRESS):
                raise RuntimeError(f"NCCL error {err.value}: {lib.ncclGetErrorString(err.value).decode()}")
            return bool(event.query())

        def on_timeout() -> None:
            lib.ncclCommAbort(self._comm)
            self._comm = ctypes.c_void_p()

        def done() -> None:
            c10cuda.current_stream(self._stream.device).wait_event(event)
            if finish is not None:
                finish()

        return Work(self._pg, name, seq, poll, done, tensors, tensors, on_timeout)

    def all_reduce(self, t: Any, op: ReduceOp) -> Any:
        buf = t if t.is_contiguous() else t.contiguous()
        lib, dt = load(), _dtype(t, "all_reduce")
        finish = None if buf is t else (lambda: t.copy_(buf))
        return self._launch(
            "all_reduce",
            [buf],
            lambda s: lib.ncclAllReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), dt, _OPS[op], self._comm, s),
            finish,
        )

    def broadcast(self, t: Any, root: int) -> Any:
        buf = t if t.is_contiguous() else t.contiguous()
        lib, dt = load(), _dtype(t, "broadcast")
        finish = None if buf is t else (lambda: t.copy_(buf))
        return self._launch(
            "broadcast",
            [buf],
            lambda s: lib.ncclBroadcast(buf.data_ptr(), buf.data_ptr(), buf.numel(), dt, root, self._comm, s),
            finish,
        )

    def reduce(self, t: Any, root: int, op: ReduceOp) -> Any:
        buf = t if t.is_contiguous() else t.contiguous()
        lib, dt = load(), _dtype(t, "reduce")
        finish = None if buf is t else (lambda: t.copy_(buf))
        return self._launch(
            "reduce",
            [buf],
            lambda s: lib.ncclReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), dt, _OPS[op], root, self._comm, s),
            finish,
        )

    def all_gather(self, out: Any, inp: Any, finish: Callable[[], None] | None) -> Any:
        lib, dt = load(), _dtype(inp, "all_gather")
        return self._launch(
            "all_gather",
            [out, inp],
            lambda s: lib.ncclAllGather(inp.data_ptr(), out.data_ptr(), inp.numel(), dt, self._comm, s),
            finish,
        )

    def reduce_scatter(self, out: Any, inp: Any, op: ReduceOp, finish: Callable[[], None] | None) -> Any:
        lib, dt = load(), _dtype(inp, "reduce_scatter_tensor")
        return self._launch(
            "reduce_scatter_tensor",
            [out, inp],
            lambda s: lib.ncclReduceScatter(inp.data_ptr(), out.data_ptr(), out.numel(), dt, _OPS[op], self._comm, s),
            finish,
        )

    def send(self, t: Any, peer: int) -> Any:
        buf = t.contiguous()
        lib, dt = load(), _dtype(t, "send")
        return self._launch(
            "send", [buf], lambda s: lib.ncclSend(buf.data_ptr(), buf.numel(), dt, peer, self._comm, s), None
        )

    def recv(self, t: Any, peer: int) -> Any:
        buf = t if t.is_contiguous() else t.contiguous()
        lib, dt = load(), _dtype(t, "recv")
        finish = None if buf is t else (lambda: t.copy_(buf))
        return self._launch(
            "recv", [buf], lambda s: lib.ncclRecv(buf.data_ptr(), buf.numel(), dt, peer, self._comm, s), finish
        )


__all__ = ["NCCLCommunicator", "library_path", "load", "version"]
