"""Child-process side of test_shared_memory.py (a module of its own so that 'spawn'
children can import it by name; the test puts this folder on sys.path).

The child maps the parent's shared segment and then obeys commands sent over a Pipe:
    ("check_and_write", expected, new)  -> ("written", bytes seen before writing)
    ("drop",)                           -> ("dropped", None), then returns
It answers ("mapped", bytes) once mapped, and ("error", traceback) on any failure.
Every wait has a deadline, so a lost parent never leaves the child hanging.
"""

from __future__ import annotations

import os
import traceback
from multiprocessing import reduction
from multiprocessing.connection import Connection

from ember.c10py import _C

DEADLINE_S = 30.0


def _recv(conn: Connection) -> tuple:
    if not conn.poll(DEADLINE_S):
        raise TimeoutError("the parent sent nothing")
    return conn.recv()


def serve(strategy: str, name: str, nbytes: int, conn: Connection, inherited_fd: int = -1) -> None:
    try:
        if strategy == "file_system":
            storage = _C.StorageImpl._new_shared_filename(name, nbytes)
        elif inherited_fd >= 0:  # fork: the memfd came with the process
            storage = _C.StorageImpl._new_shared_fd(inherited_fd, nbytes)
        else:  # sent over the pipe as SCM_RIGHTS, as DataLoader workers do
            if not conn.poll(DEADLINE_S):
                raise TimeoutError("no file descriptor arrived")
            fd = reduction.recv_handle(conn)
            try:
                storage = _C.StorageImpl._new_shared_fd(fd, nbytes)
            finally:
                os.close(fd)  # the storage holds its own duplicate
        conn.send(("mapped", storage.tobytes()))
        while True:
            cmd = _recv(conn)
            if cmd[0] == "check_and_write":
                seen = storage.tobytes()
                memoryview(storage)[: len(cmd[2])] = cmd[2]
                conn.send(("written", seen))
            elif cmd[0] == "drop":
                del storage
                conn.send(("dropped", None))
                return
            else:
                raise ValueError(f"unknown command {cmd!r}")
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        raise


def drop_inherited(box: list, conn: Connection) -> None:
    """fork only: drops the child's copy of a storage inherited from the parent."""
    try:
        box.clear()
        import gc

        gc.collect()
        conn.send(("dropped", None))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        raise
