"""Per-rank status records the launcher reads after a failed job.

A rank killed by a signal cannot report anything, and Hydra (MPICH's mpiexec) stops the
whole job the moment one rank dies. So every rank keeps a tiny record in a file of the
launcher's run directory (``EMBER_DISTRIBUTED_RUN_DIR``), mapped into memory so that an
update is a few stores, not a system call:

    offset 0   int64  pid
    offset 8   int64  phase (STARTED, JOINING, READY, IN_COLLECTIVE, EXITED, FAILED)
    offset 16  int64  sequence number of the current/last collective
    offset 24  64 B   name of that collective (NUL padded)

After the job, ``ember.distributed.run`` reads every record and names the rank that died
and the collective each rank was in. Without a run directory (plain ``mpirun``) the
record lives only in memory and nothing is written.
"""

from __future__ import annotations

import mmap
import os
import struct

STARTED, JOINING, READY, IN_COLLECTIVE, EXITED, FAILED = range(1, 7)
PHASE_NAMES = {
    0: "not started",
    STARTED: "started",
    JOINING: "in init_process_group",
    READY: "idle",
    IN_COLLECTIVE: "in a collective",
    EXITED: "exited",
    FAILED: "failed",
}
_LAYOUT = struct.Struct("<qqq64s")
SIZE = _LAYOUT.size
RUN_DIR_ENV = "EMBER_DISTRIBUTED_RUN_DIR"


def record_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank-{rank}.status")


class StatusRecord:
    """This process's record (in memory only when there is no run directory)."""

    def __init__(self, rank: int) -> None:
        run_dir = os.environ.get(RUN_DIR_ENV)
        self._buf: mmap.mmap | bytearray
        if run_dir and os.path.isdir(run_dir):
            fd = os.open(record_path(run_dir, rank), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                os.ftruncate(fd, SIZE)
                self._buf = mmap.mmap(fd, SIZE)
            finally:
                os.close(fd)
        else:
            self._buf = bytearray(SIZE)
        self.set(STARTED, 0, "")

    def set(self, phase: int, seq: int, name: str) -> None:
        _LAYOUT.pack_into(self._buf, 0, os.getpid(), phase, seq, name.encode()[:64])

    def phase(self, phase: int) -> None:
        struct.pack_into("<q", self._buf, 8, phase)


def read(run_dir: str, rank: int) -> tuple[int, int, int, str] | None:
    """(pid, phase, seq, collective) of a rank's record, or None if it never wrote one."""
    try:
        with open(record_path(run_dir, rank), "rb") as f:
            data = f.read(SIZE)
    except OSError:
        return None
    if len(data) < SIZE:
        return None
    pid, phase, seq, name = _LAYOUT.unpack(data)
    return pid, phase, seq, name.rstrip(b"\0").decode(errors="replace")
