"""``python -m ember.distributed.run``: torchrun's command line over MPICH's mpiexec.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3

starts ``mpiexec -n 2`` (Hydra, from the ``mpich`` wheel) with each rank running the
script under :mod:`ember.distributed._bootstrap`, which sets torchrun's variables (RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). The same script runs
unchanged under ``mpiexec -n 2 python train.py``.

When the job fails, the launcher says which rank died first and how, and which
collective every rank was in: each rank writes its pid and phase into a status record
(see _status.py), and a watcher thread here polls those pids every few milliseconds,
reading the exit status of the first one that dies while it is still a zombie. Hydra
stops the remaining ranks as soon as one dies, so a dead rank never leaves the others
hanging; afterwards the launcher removes MPICH's shared-memory segments that the ranks
recorded and that a killed rank could not unlink. Single node only: for several hosts
use ``mpiexec`` with a host file.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ember.aten import cuda

from . import _status


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start N ranks of a training script on this machine (torchrun's flags, over mpiexec).",
    )
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1", help="ranks to start: a number, 'cpu' or 'gpu'")
    p.add_argument("--nnodes", default="1", help="only 1 (use mpiexec with a host file for several hosts)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun compatibility (always single node)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: MPICH's, beside this Python)")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument(
        "--no-python", "--no_python", action="store_true", help="run the script as a program, not with Python"
    )
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value: str) -> int:
    if value == "cpu" or value == "auto":
        return os.cpu_count() or 1
    if value == "gpu":
        return max(cuda.device_count(), 1)
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(
            f"ember.distributed.run: --nproc-per-node must be a number, 'cpu' or 'gpu', got {value!r}"
        ) from None
    if n < 1:
        raise SystemExit(f"ember.distributed.run: --nproc-per-node must be at least 1, got {n}")
    return n


def find_mpiexec() -> str:
    """MPICH's Hydra mpiexec installed beside this Python by the mpich wheel, else PATH's."""
    here = Path(sys.executable).parent
    for name in ("mpiexec.hydra", "mpiexec"):
        if (here / name).exists():
            return str(here / name)
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("ember.distributed.run: no mpiexec found: pip install 'ember-distributed[mpi]'")
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = out.stdout + out.stderr
    return "Open MPI" in text or "OpenRTE" in text or "PRRTE" in text or "prterun" in text


def command(args: argparse.Namespace, nproc: int, mpiexec: str) -> list[str]:
    cmd = [mpiexec]
    if os.geteuid() == 0 and _is_open_mpi(mpiexec):
        cmd.append("--allow-run-as-root")  # Open MPI refuses root without it; MPICH needs nothing
    cmd += ["-n", str(nproc)]
    if args.no_python:
        return [*cmd, args.script, *args.script_args]
    target = ["-m", args.script] if args.module else [args.script]
    return [*cmd, sys.executable, "-u", "-m", "ember.distributed._bootstrap", *target, *args.script_args]


class _DeathWatch:
    """Polls the ranks' pids; remembers the first to die and its wait status."""

    def __init__(self, run_dir: str, nproc: int) -> None:
        self.run_dir, self.nproc = run_dir, nproc
        self.first: tuple[int, int | None] | None = None  # (rank, wait status if seen as a zombie)
        self.stop = threading.Event()

    def run(self) -> None:
        pids: dict[int, int] = {}
        while not self.stop.is_set() and self.first is None:
            for r in range(self.nproc):
                if r not in pids:
                    rec = _status.read(self.run_dir, r)
                    if rec is not None and rec[0] > 0:
                        pids[r] = rec[0]
                    continue
                state, code = _proc_state(pids[r])
                if state in ("Z", "X", None):
                    rec = _status.read(self.run_dir, r)
                    if rec is not None and rec[1] == _status.EXITED:
                        continue  # a clean exit is not a death
                    self.first = (r, code)
                    break
            time.sleep(0.002)


def _proc_state(pid: int) -> tuple[str | None, int | None]:
    """(state letter, wait status) from /proc/PID/stat; (None, None) once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None, None
    state = fields[0].decode()
    code = int(fields[49]) if state == "Z" and len(fields) > 49 else None  # field 52: exit_code
    return state, code


def _how(code: int | None, rc: int) -> str:
    if code is None:  # Hydra reaped it first: its exit status is the one mpiexec returns
        return f"mpiexec's exit status {rc}: the signal number if it was killed"
    if code & 0x7F:
        return f"killed by signal {code & 0x7F}"
    return f"exit code {(code >> 8) & 0xFF}"


def report(run_dir: str, nproc: int, rc: int, first: tuple[int, int | None] | None) -> str:
    """The launcher's account of a failed job: who died first, where every rank was."""
    lines = [f"ember.distributed.run: the job failed (exit status {rc})"]
    for r in range(nproc):
        rec = _status.read(run_dir, r)
        if rec is None:
            lines.append(f"  rank {r}: never started")
            continue
        pid, phase, seq, name = rec
        where = _status.PHASE_NAMES.get(phase, "?")
        if phase in (_status.IN_COLLECTIVE, _status.FAILED) and name:
            where += f" ({name}, sequence number {seq})"
        elif phase == _status.READY and name:
            where += f" (last: {name}, sequence number {seq})"
        mark = f" <- died first ({_how(first[1], rc)})" if first is not None and first[0] == r else ""
        lines.append(f"  rank {r} (pid {pid}): {where}{mark}")
    return "\n".join(lines)


def _remove_shared_memory(run_dir: str, nproc: int) -> None:
    for r in range(nproc):
        try:
            names = Path(run_dir, f"rank-{r}.shm").read_text().split()
        except OSError:
            continue
        for name in names:
            if "/" not in name and name.startswith("mpich"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join("/dev/shm", name))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if str(args.nnodes) not in ("1", "1:1"):
        raise SystemExit(
            f"ember.distributed.run: --nnodes={args.nnodes}: only single-node jobs; for several hosts run "
            "mpiexec -n N -f hostfile python script.py"
        )
    nproc = _nproc(str(args.nproc_per_node))
    mpiexec = args.mpiexec or find_mpiexec()
    run_dir = tempfile.mkdtemp(prefix="ember-dist-")
    env = dict(os.environ)
    env.update(
        {
            "MASTER_ADDR": args.master_addr,
            "MASTER_PORT": str(args.master_port),
            "WORLD_SIZE": str(nproc),
            "LOCAL_WORLD_SIZE": str(nproc),
            _status.RUN_DIR_ENV: run_dir,
            "PATH": f"{Path(mpiexec).parent}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    env.pop("RANK", None)
    watch = _DeathWatch(run_dir, nproc)
    watcher = threading.Thread(target=watch.run, name="ember-death-watch", daemon=True)
    try:
        proc = subprocess.Popen(command(args, nproc, mpiexec), env=env, start_new_session=True)
        watcher.start()

        def forward(signum: int, _frame: Any) -> None:
            proc.send_signal(signum)  # Hydra passes SIGINT/SIGTERM on to every rank

        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, forward)
        rc = proc.wait()
        watch.stop.set()
        watcher.join(timeout=1)
        if rc != 0:
            sys.stdout.flush()
            sys.stderr.write(report(run_dir, nproc, rc, watch.first) + "\n")
            sys.stderr.flush()
        return rc
    finally:
        _remove_shared_memory(run_dir, nproc)
        shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
