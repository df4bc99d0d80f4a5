"""ember.data tests: a deadline on every test, and a check that no test leaves worker
processes or shared-memory segments behind."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import data_helpers

# Seconds: a test past SOFT_DEADLINE fails (TimeoutError raised in it); past HARD_DEADLINE
# the whole run is stopped with every thread's traceback (a hang inside C code).
SOFT_DEADLINE = 60
HARD_DEADLINE = 90


def _on_alarm(signum, frame):
    raise TimeoutError(f"test exceeded its {SOFT_DEADLINE} s deadline")


@pytest.fixture(autouse=True)
def deadline():
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(SOFT_DEADLINE)
    faulthandler.dump_traceback_later(HARD_DEADLINE, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _ours(path: str) -> bool:
    # /dev/shm/ember_<pid>_<n>: made by this process, or by one that is gone (a worker).
    # Live processes of other test runs on the machine are not this test's business.
    try:
        pid = int(os.path.basename(path).split("_")[1])
    except (IndexError, ValueError):
        return False
    return pid == os.getpid() or not os.path.exists(f"/proc/{pid}")


@pytest.fixture(autouse=True)
def no_leaks():
    """After each test: no child process of this one alive, no new /dev/shm/ember_* of ours."""
    import gc

    before = data_helpers.shm_entries()
    yield
    gc.collect()  # iterators in reference cycles (tracebacks) shut their workers down
    deadline = time.monotonic() + 10
    while data_helpers.worker_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert data_helpers.worker_pids() == [], "worker processes outlived the test"
    leaked = {p for p in data_helpers.shm_entries() - before if _ours(p)}
    assert not leaked, f"shared-memory segments left behind: {sorted(leaked)}"
