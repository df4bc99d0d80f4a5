"""Running hostile code where a crash cannot take pytest down: the reliability tests' runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest


def run_isolated(code: str, timeout: float = 60) -> str:
    """Runs `code` in a fresh interpreter in its own session; a crash (a signal), a non-zero
    exit or a hang past `timeout` fails the test, and nothing of it outlives the test."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # forked children included
        out, err = proc.communicate()
        pytest.fail(f"hung past {timeout} s\nstdout: {out}\nstderr: {err[-3000:]}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {out}\nstderr: {err[-3000:]}"
    return out
