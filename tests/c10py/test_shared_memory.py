"""Shared memory: StorageImpl.share_memory_ with both strategies, across processes.

file_descriptor: a memfd; other processes get the fd (inherited through fork or sent
over a Unix socket) and map it; it shows in /proc/self/maps as "/memfd:ember_shared".
file_system: a named POSIX shm object /dev/shm/ember_<pid>_<n> with a shared refcount;
the last mapping to go unlinks it. Every multi-process test runs under a deadline.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import sys
from collections.abc import Iterator
from multiprocessing import reduction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ember.c10py import _C

STRATEGIES = ["file_descriptor", "file_system"]
DEADLINE_S = 30.0
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memfd and /dev/shm are Linux")


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The child-side module, importable by name in spawned children too."""
    monkeypatch.syspath_prepend(str(HERE))
    import c10py_shm_worker

    return c10py_shm_worker


# ---- where shared memory shows up -----------------------------------------------------


def memfd_mappings() -> list[tuple[int, int]]:
    """Address ranges of this process's ember memfd mappings."""
    out = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        if "/memfd:ember_shared" in line:
            lo, hi = line.split()[0].split("-")
            out.append((int(lo, 16), int(hi, 16)))
    return out


def is_memfd_mapped(addr: int) -> bool:
    return any(lo <= addr < hi for lo, hi in memfd_mappings())


def fd_is_ember_memfd(fd: int) -> bool:
    try:
        return "memfd:ember_shared" in os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False


def shm_path(name: str) -> Path:
    assert name.startswith("/ember_")
    return Path("/dev/shm") / name[1:]


class Freed:
    """Records where a shared storage lives, to check later that it is gone."""

    def __init__(self, storage: _C.StorageImpl, strategy: str) -> None:
        self.strategy = strategy
        self.addr = storage.data_ptr
        if strategy == "file_system":
            self.name = storage._share_filename()
            assert shm_path(self.name).exists()
        else:
            self.fd = storage._share_fd()
            assert fd_is_ember_memfd(self.fd)
            assert is_memfd_mapped(self.addr)

    def alive(self) -> bool:
        if self.strategy == "file_system":
            return shm_path(self.name).exists()
        return is_memfd_mapped(self.addr) or fd_is_ember_memfd(self.fd)


def shared(nbytes: int, strategy: str, fill: int = 0) -> _C.StorageImpl:
    s = _C.StorageImpl.from_bytes(bytes((fill + i) % 251 for i in range(nbytes)))
    s.share_memory_(strategy)
    return s


# ---- in one process -----------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_share_memory_in_place(strategy: str) -> None:
    payload = bytes(range(200))
    s = _C.StorageImpl.from_bytes(payload)
    old_ptr = s.data_ptr
    assert not s.is_shared()
    s.share_memory_(strategy)
    assert s.is_shared()
    assert s.tobytes() == payload  # the bytes moved along
    assert s.data_ptr != old_ptr and s.data_ptr % 64 == 0
    assert not s.resizable
    assert repr(s) == "StorageImpl(nbytes=200, device='cpu', shared)"
    ptr = s.data_ptr
    s.share_memory_(strategy)  # already shared: nothing happens
    s.share_memory_("file_system" if strategy == "file_descriptor" else "file_descriptor")
    assert s.data_ptr == ptr
    with pytest.raises(RuntimeError, match="not resizable"):
        s.resize_(400)
    a = np.frombuffer(s, np.uint8)
    a[:] = 7
    assert s.tobytes() == bytes([7]) * 200


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_handles(strategy: str) -> None:
    s = shared(64, strategy)
    if strategy == "file_system":
        assert s._share_filename().startswith(f"/ember_{os.getpid()}_")
        assert s._share_fd() == -1
    else:
        assert s._share_fd() >= 0
        assert s._share_filename() == ""
    plain = _C.StorageImpl(8)
    with pytest.raises(RuntimeError, match="not in shared memory"):
        plain._share_fd()
    with pytest.raises(RuntimeError, match="not in shared memory"):
        plain._share_filename()


def test_unknown_strategy() -> None:
    s = _C.StorageImpl(8)
    with pytest.raises(ValueError, match="unknown sharing strategy 'bogus'"):
        s.share_memory_("bogus")
    assert not s.is_shared()
    with pytest.raises(ValueError, match="unknown sharing strategy 'bogus'"):
        _C.StorageImpl._new_shared(8, "bogus")
    with pytest.raises(ValueError, match="non-negative"):
        _C.StorageImpl._new_shared(-1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_freed_when_the_last_reference_goes(strategy: str) -> None:
    s = shared(4096, strategy)
    freed = Freed(s, strategy)
    t = _C.TensorImpl(s, _C.float32)  # a tensor keeps the storage alive
    del s
    gc.collect()
    assert freed.alive()
    del t
    gc.collect()
    assert not freed.alive()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_second_mapping_in_the_same_process(strategy: str) -> None:
    s = shared(1000, strategy, fill=3)
    freed = Freed(s, strategy)
    if strategy == "file_system":
        other = _C.StorageImpl._new_shared_filename(s._share_filename(), 1000)
    else:
        other = _C.StorageImpl._new_shared_fd(s._share_fd(), 1000)
    assert other.data_ptr != s.data_ptr  # two mappings of one segment
    assert other.tobytes() == s.tobytes()
    memoryview(other)[:5] = b"hello"
    assert s.tobytes()[:5] == b"hello"
    del s
    gc.collect()
    assert other.tobytes()[:5] == b"hello"
    if strategy == "file_system":
        assert freed.alive()  # the second mapping holds a reference
    del other
    gc.collect()
    if strategy == "file_system":
        assert not freed.alive()
    assert memfd_mappings() == [] or not any(is_memfd_mapped(a) for a in (freed.addr,))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_new_shared_and_zero_bytes(strategy: str) -> None:
    s = _C.StorageImpl._new_shared(128, strategy)
    assert s.is_shared() and s.nbytes == 128
    assert s.tobytes() == bytes(128)  # fresh shared memory is zeroed
    z = _C.StorageImpl(0)
    z.share_memory_(strategy)
    assert z.is_shared() and z.nbytes == 0 and z.tobytes() == b""
    freed = Freed(z, strategy)
    del z
    gc.collect()
    assert not freed.alive()


def test_mapping_errors() -> None:
    with pytest.raises(RuntimeError, match="cannot open shared memory '/ember_does_not_exist'"):
        _C.StorageImpl._new_shared_filename("/ember_does_not_exist", 16)
    s = shared(16, "file_system")
    with pytest.raises(RuntimeError, match="too few"):
        _C.StorageImpl._new_shared_filename(s._share_filename(), 1 << 20)
    f = shared(16, "file_descriptor")
    with pytest.raises(RuntimeError, match="holds 16 bytes but 1048576 were expected"):
        _C.StorageImpl._new_shared_fd(f._share_fd(), 1 << 20)
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with pytest.raises(RuntimeError, match="invalid file descriptor"):
        _C.StorageImpl._new_shared_fd(r, 16)
    with pytest.raises(ValueError, match="non-negative"):
        _C.StorageImpl._new_shared_fd(f._share_fd(), -1)


# ---- across processes --------------------------------------------------------------------


class Child:
    """A worker process driven over a Pipe; killed if it outlives the test."""

    def __init__(self, ctx: Any, target: Any, args: tuple) -> None:
        self.conn, child_conn = ctx.Pipe()
        self.proc = ctx.Process(target=target, args=(*args[:3], child_conn, *args[3:]), daemon=True)
        self.proc.start()
        child_conn.close()

    def ask(self, *cmd: object) -> Any:
        if cmd:
            self.conn.send(cmd)
        return self.reply()

    def reply(self) -> Any:
        assert self.conn.poll(DEADLINE_S), "the child did not answer in time"
        kind, value = self.conn.recv()
        assert kind != "error", value
        return value

    def join(self) -> None:
        self.proc.join(DEADLINE_S)
        assert not self.proc.is_alive(), "the child did not exit in time"
        assert self.proc.exitcode == 0

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


@pytest.fixture
def children() -> Iterator[list[Child]]:
    made: list[Child] = []
    yield made
    for c in made:
        c.kill()


def start_child(children: list[Child], method: str, worker, storage: _C.StorageImpl, strategy: str) -> Child:  # type: ignore[no-untyped-def]
    name = storage._share_filename() if strategy == "file_system" else ""
    child = Child(mp.get_context(method), worker.serve, (strategy, name, storage.nbytes))
    children.append(child)
    if strategy == "file_descriptor":
        reduction.send_handle(child.conn, storage._share_fd(), child.proc.pid)
    return child


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_data_visible_across_processes(method: str, strategy: str, worker, children) -> None:  # type: ignore[no-untyped-def]
    nbytes = 1 << 16
    s = shared(nbytes, strategy, fill=11)
    original = s.tobytes()
    freed = Freed(s, strategy)
    child = start_child(children, method, worker, s, strategy)
    assert child.reply() == original  # the child sees the parent's bytes

    memoryview(s)[:6] = b"parent"  # parent writes, child reads ...
    seen = child.ask("check_and_write", None, b"child!")  # ... and writes back
    assert seen[:6] == b"parent" and seen[6:] == original[6:]
    assert s.tobytes()[:6] == b"child!"  # the child's write, seen by the parent
    assert np.frombuffer(s, np.uint8)[6:].tobytes() == original[6:]

    assert child.ask("drop") is None
    child.join()
    assert freed.alive()  # the parent still holds it
    del s
    gc.collect()
    assert not freed.alive()


def test_fd_inherited_through_fork(worker, children) -> None:  # type: ignore[no-untyped-def]
    s = shared(4096, "file_descriptor", fill=5)
    ctx = mp.get_context("fork")
    child = Child(ctx, worker.serve, ("file_descriptor", "", 4096, s._share_fd()))
    children.append(child)
    assert child.reply() == s.tobytes()
    child.ask("check_and_write", None, b"fork")
    assert s.tobytes()[:4] == b"fork"
    child.ask("drop")
    child.join()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_file_system_segment_outlives_its_creator_reference(method: str, worker, children) -> None:  # type: ignore[no-untyped-def]
    s = shared(3000, "file_system", fill=9)
    original = s.tobytes()
    freed = Freed(s, "file_system")
    child = start_child(children, method, worker, s, "file_system")
    child.reply()
    del s  # the creator lets go first: the child's mapping keeps the name alive
    gc.collect()
    assert freed.alive()
    assert child.ask("check_and_write", None, b"x") == original
    child.ask("drop")  # the last reference: the name is unlinked
    child.join()
    assert not freed.alive()


def test_fork_child_dropping_an_inherited_storage_keeps_the_segment(worker, children) -> None:  # type: ignore[no-untyped-def]
    # A forked child holds copies of the parent's objects but never took a reference on
    # their segments: dropping them there must not unlink the parent's segment.
    box = [shared(256, "file_system", fill=1)]  # the only reference, so the child can drop it
    name = box[0]._share_filename()
    ctx = mp.get_context("fork")
    conn, child_conn = ctx.Pipe()
    proc = ctx.Process(target=worker.drop_inherited, args=(box, child_conn), daemon=True)
    proc.start()
    try:
        assert conn.poll(DEADLINE_S)
        kind, value = conn.recv()
        assert kind == "dropped", value
        proc.join(DEADLINE_S)
        assert proc.exitcode == 0
    finally:
        if proc.is_alive():
            proc.kill()
    assert shm_path(name).exists()
    again = _C.StorageImpl._new_shared_filename(name, 256)  # still mappable by name
    assert again.tobytes() == box[0].tobytes()
    freed = Freed(box[0], "file_system")
    box.clear()
    del again
    gc.collect()
    assert not freed.alive()
