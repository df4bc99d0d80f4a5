"""Helpers for tests that start real ranks: ``run_ranks`` launches a worker script with
``python -m ember.distributed.run`` (or ``mpiexec``) over loopback, and checks that no
process and no shared-memory file of the job is left behind, whatever happened."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

WORKERS = Path(__file__).parent / "workers"


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def _processes_with(marker: str) -> list[int]:
    """pids whose environment holds ``marker`` (every rank inherits it from the launcher)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _shm() -> set[str]:
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def run_ranks(
    nproc: int,
    worker: str,
    *args: str,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    launcher: str = "run",
) -> Job:
    """Run ``workers/<worker>`` on ``nproc`` ranks; returns the job's outcome. Fails the test
    if any process of the job outlives it, or if it leaves files in /dev/shm."""
    marker = f"EMBER_TEST_JOB={uuid.uuid4().hex}"
    full_env = dict(os.environ)
    full_env.update(env or {})
    key, value = marker.split("=")
    full_env[key] = value
    full_env["PYTHONPATH"] = os.pathsep.join([str(WORKERS), full_env.get("PYTHONPATH", "")])
    script = str(WORKERS / worker)
    if launcher == "run":
        cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), script, *args]
    else:  # mpiexec directly, as `mpirun -n N python script.py`
        mpiexec = str(Path(sys.executable).parent / "mpiexec")
        cmd = [mpiexec, "-n", str(nproc), sys.executable, script, *args]
    shm_before = _shm()
    start = time.monotonic()
    done = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False)
    seconds = time.monotonic() - start
    deadline = time.monotonic() + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    leftover = _processes_with(marker)
    assert not leftover, f"processes of the job outlived it: {leftover}"
    leaked = {f for f in _shm() - shm_before if "mpich" in f.lower() or "hydra" in f.lower() or "ember" in f.lower()}
    assert not leaked, f"the job left shared memory behind: {sorted(leaked)}"
    return Job(done.returncode, done.stdout, done.stderr, seconds)
