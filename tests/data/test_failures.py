"""How the DataLoader fails: each case runs in a subprocess of its own, under a deadline,
and is checked for leftover worker processes and /dev/shm segments afterwards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import data_helpers as h
import pytest

HELPERS_DIR = os.path.dirname(os.path.abspath(h.__file__))
SCRIPT_DEADLINE = 60  # seconds

PRELUDE = f"""
import gc, json, os, signal, sys, time
sys.path.insert(0, {HELPERS_DIR!r})
import data_helpers as h
import ember.aten as ea
import ember.data as ed
from ember.data import DataLoader
result = {{"main_pid": os.getpid()}}

def wait_for_no_children(limit=10.0):
    deadline = time.monotonic() + limit
    while h.worker_pids() and time.monotonic() < deadline:
        time.sleep(0.02)
    return h.worker_pids()
"""
EPILOGUE = """
print("RESULT " + json.dumps(result), flush=True)
"""


def run_script(body: str, *, timeout: float = SCRIPT_DEADLINE) -> tuple[dict, subprocess.CompletedProcess]:
    """Runs PRELUDE + body in a fresh interpreter (own session, so a process-group signal
    stays inside it). Afterwards no process of it may remain, nor any shm segment named
    after its pid or the worker pids it reported."""
    marker = uuid.uuid4().hex
    env = dict(os.environ, EMBER_DATA_TEST_MARKER=marker)
    code = PRELUDE + textwrap.dedent(body) + EPILOGUE
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"script exceeded its {timeout} s deadline\nstdout:\n{out}\nstderr:\n{err}")
    completed = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    deadline = time.monotonic() + 10
    while h.processes_with_env(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = h.processes_with_env(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"processes of the script outlived it\nstderr:\n{err}"
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    result = json.loads(lines[-1][len("RESULT ") :]) if lines else {}
    pids = [proc.pid, *result.get("pids", [])]
    segments = [p for p in h.shm_entries() if any(os.path.basename(p).startswith(f"ember_{pid}_") for pid in pids)]
    assert segments == [], f"shared-memory segments left behind: {segments}"
    return result, completed


@pytest.mark.parametrize("sig,name", [(signal.SIGKILL, "Killed"), (signal.SIGTERM, "Terminated")])
def test_worker_killed_by_a_signal_raises_quickly(sig, name) -> None:
    result, proc = run_script(f"""
        loader = DataLoader(h.SuicideDataset(bad=9, sig={int(sig)}), batch_size=2, num_workers=2)
        it = iter(loader)
        result["pids"] = [w.pid for w in it._workers]
        t = time.monotonic()
        try:
            for _ in it:
                pass
        except RuntimeError as e:
            result["error"] = str(e)
        result["elapsed"] = time.monotonic() - t
        del it
        result["children"] = wait_for_no_children()
    """)
    assert proc.returncode == 0, proc.stderr
    worker = result["pids"][0]  # index 9 is in batch 4, which goes to worker 0
    assert result["error"] == f"DataLoader worker (pid {worker}) is killed by signal: {name}. "
    assert result["elapsed"] < 5
    assert result["children"] == []


def test_worker_exiting_with_an_error_code_is_reported() -> None:
    result, proc = run_script("""
        class Exits(ed.Dataset):
            def __len__(self): return 10
            def __getitem__(self, i):
                if i == 3: os._exit(3)
                return i
        it = iter(DataLoader(Exits(), num_workers=1))
        result["pids"] = [w.pid for w in it._workers]
        try:
            list(it)
        except RuntimeError as e:
            result["error"] = str(e)
    """)
    assert proc.returncode == 0, proc.stderr
    assert result["error"].startswith(
        f"DataLoader worker (pid {result['pids'][0]}) exited unexpectedly with exit code 3. Details are lost"
    )


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_exception_in_getitem_keeps_its_type_and_the_worker_traceback(context) -> None:
    result, proc = run_script(f"""
        loader = DataLoader(h.FailingDataset(bad=5, exc=h.DatasetError), batch_size=2, num_workers=2,
                            multiprocessing_context={context!r})
        try:
            for _ in loader:
                pass
        except h.DatasetError as e:
            result["type"] = type(e).__qualname__
            result["error"] = str(e)
        result["children"] = wait_for_no_children()
    """)
    assert proc.returncode == 0, proc.stderr
    assert result["type"] == "DatasetError"
    text = result["error"]
    assert text.startswith("Caught DatasetError in DataLoader worker process 0.\nOriginal Traceback (most recent call")
    assert 'data_helpers.py", line' in text and "in __getitem__" in text
    assert 'raise self.exc(f"index {i} is bad")' in text and text.rstrip().endswith("DatasetError: index 5 is bad")
    assert result["children"] == []


def test_timeout_raises_after_the_given_time() -> None:
    result, proc = run_script("""
        it = iter(DataLoader(h.SlowDataset(delay=30), num_workers=1, timeout=1))
        result["pids"] = [w.pid for w in it._workers]
        t = time.monotonic()
        try:
            next(it)
        except RuntimeError as e:
            result["error"] = str(e)
        result["elapsed"] = time.monotonic() - t
        t = time.monotonic()
        del it  # the worker is busy sleeping: shutdown must not wait for it
        result["shutdown"] = time.monotonic() - t
        result["children"] = wait_for_no_children()
    """)
    assert proc.returncode == 0, proc.stderr
    assert result["error"] == "DataLoader timed out after 1 seconds"
    assert 0.9 < result["elapsed"] < 4
    assert result["shutdown"] < 5 and result["children"] == []


# Ways to leave a loop early; each function gets a fresh loader and returns its worker pids.
EARLY_EXITS = """
# Ctrl-C must raise KeyboardInterrupt here even when the test runs in a background job,
# whose SIGINT is ignored from the start (then Python installs no handler of its own)
signal.signal(signal.SIGINT, signal.default_int_handler)

def leave_by_break(loader):
    for i, batch in enumerate(loader):
        pids = h.worker_pids()
        if i == 2:
            break
    return pids

def leave_by_del(loader):
    it = iter(loader)
    pids = [w.pid for w in it._workers]
    held = [next(it) for _ in range(3)]
    del it, held
    return pids

def leave_by_gc(loader):
    it = iter(loader)
    pids = [w.pid for w in it._workers]
    next(it)
    it.cycle = [it]  # only the garbage collector can free it now
    del it
    gc.collect()
    return pids

def leave_by_exception(loader):
    try:
        for i, batch in enumerate(loader):
            pids = h.worker_pids()
            if i == 2:
                raise ValueError("stop")
    except ValueError:
        pass
    return pids

def leave_by_KeyboardInterrupt(loader):
    try:
        for i, batch in enumerate(loader):
            pids = h.worker_pids()
            if i == 2:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        return pids

def leave_by_CtrlC(loader):
    try:
        for i, batch in enumerate(loader):
            pids = h.worker_pids()
            if i == 2:
                os.killpg(os.getpgrp(), signal.SIGINT)  # what a terminal's Ctrl-C does
                time.sleep(5)
    except KeyboardInterrupt:
        return pids
"""
HOWS = ["break", "del", "gc", "exception", "KeyboardInterrupt", "CtrlC"]


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_leaving_early_stops_the_workers_and_frees_shared_memory(strategy) -> None:
    result, proc = run_script(
        EARLY_EXITS
        + textwrap.dedent(f"""
        ed.set_sharing_strategy({strategy!r})
        result["pids"] = []
        for how in {HOWS!r}:
            t = time.monotonic()
            pids = globals()["leave_by_" + how](DataLoader(h.ImageDataset(1024), batch_size=16, num_workers=2))
            children = wait_for_no_children()
            stopped_in = time.monotonic() - t
            gc.collect()
            shm = sorted(p for p in h.shm_entries() if any(f"ember_{{pid}}_" in p for pid in [os.getpid(), *pids]))
            result[how] = dict(pids=pids, children=children, stopped_in=stopped_in, shm=shm)
            result["pids"] += pids
    """)
    )
    assert proc.returncode == 0, proc.stderr
    for how in HOWS:
        r = result[how]
        assert len(r["pids"]) == 2, how
        assert r["children"] == [] and r["shm"] == [], how
        assert r["stopped_in"] < 8, how


def test_workers_exit_when_the_main_process_is_killed() -> None:
    marker_result, proc = run_script("""
        loader = DataLoader(h.RangeDataset(100), num_workers=2, persistent_workers=True)
        it = iter(loader)
        next(it)
        print("RESULT " + json.dumps({"pids": [w.pid for w in it._workers]}), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    # run_script has already waited for every process of the script to end
    assert proc.returncode == -signal.SIGKILL
    assert len(marker_result["pids"]) == 2


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_shared_memory_exhausted_is_an_error_that_says_how_to_fix_it(strategy) -> None:
    # A file-size limit makes growing a shared-memory segment past 1 MiB fail, as a full
    # /dev/shm would (without filling the machine's memory).
    result, proc = run_script(f"""
        import resource
        ed.set_sharing_strategy({strategy!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        ds = h.BigSampleDataset(nbytes=1 << 20)
        result["single_process_ok"] = len(list(DataLoader(ds, batch_size=2))) == 2
        it = iter(DataLoader(ds, batch_size=2, num_workers=1))
        result["pids"] = [w.pid for w in it._workers]
        try:
            next(it)
        except MemoryError as e:
            result["type"] = type(e).__name__
            result["error"] = str(e)
        del it
        result["children"] = wait_for_no_children()
    """)
    assert proc.returncode == 0, proc.stderr
    assert result["single_process_ok"]
    assert result["type"] == "OutOfMemoryError"
    text = result["error"]
    assert "Caught OutOfMemoryError in DataLoader worker process 0" in text
    assert "unable to allocate 2097152 bytes of shared memory" in text
    assert "--shm-size" in text and "num_workers=0" in text
    assert result["children"] == []
