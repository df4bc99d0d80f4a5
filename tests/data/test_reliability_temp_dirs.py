"""DataLoader workers leave nothing in the temp folder (issue 25): a worker that dies by a
signal, exits abruptly or is terminated at shutdown runs no finalizer, and used to leave its
multiprocessing ``pymp-*`` folder (with the resource sharer's ``listener-*`` socket) behind.
Each case runs in a subprocess with a private TMPDIR, checked once the subprocess is gone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

import data_helpers as h
import pytest

HELPERS_DIR = os.path.dirname(os.path.abspath(h.__file__))

PRELUDE = f"""
import os, signal, sys, time
sys.path.insert(0, {HELPERS_DIR!r})
import data_helpers as h
import ember.aten as ea
from ember.data import DataLoader, Dataset
"""


def run_with_private_tmp(body: str, context: str) -> list[str]:
    """Runs body with a private TMPDIR; returns what is left in it afterwards. (A short
    path under /tmp, not pytest's tmp_path: a listener socket's path must fit AF_UNIX.)"""
    tmp = tempfile.mkdtemp(prefix="emb-rel-", dir="/tmp")
    try:
        env = dict(os.environ, TMPDIR=tmp, EMBER_TEST_CONTEXT=context)
        code = PRELUDE + textwrap.dedent(body)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=90)
        assert proc.returncode == 0, f"stdout: {proc.stdout}\nstderr: {proc.stderr[-3000:]}"
        assert "DONE" in proc.stdout, proc.stdout
        left = []
        for root, dirs, files in os.walk(tmp):
            left += [os.path.join(root, n) for n in dirs + files]
        return left
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_worker_killed_by_a_signal_leaves_no_temp_dir(context, sig) -> None:
    left = run_with_private_tmp(
        f"""
        loader = DataLoader(h.SuicideDataset(bad=9, sig={int(sig)}), batch_size=2, num_workers=2,
                            multiprocessing_context=os.environ["EMBER_TEST_CONTEXT"])
        try:
            for _ in loader:
                pass
        except RuntimeError as e:
            print("raised", "killed by signal" in str(e))
        print("DONE")
        """,
        context,
    )
    assert left == []


@pytest.mark.parametrize("context", ["fork"])  # (the dataset class lives in the script's __main__)
def test_workers_terminated_at_shutdown_leave_no_temp_dir(context) -> None:
    # the batches travel as shared-memory file descriptors (the resource sharer's listener
    # sockets live in the temp folder); the workers hang in __getitem__ and are terminated
    left = run_with_private_tmp(
        """
        class Slow(Dataset):
            def __len__(self):
                return 100
            def __getitem__(self, i):
                if i >= 8:
                    time.sleep(60)
                return ea.ones(1000) * i
        loader = DataLoader(Slow(), batch_size=2, num_workers=2,
                            multiprocessing_context=os.environ["EMBER_TEST_CONTEXT"])
        it = iter(loader)
        for _ in range(3):
            next(it)
        it._shutdown_workers()
        print("DONE")
        """,
        context,
    )
    assert left == []


def test_worker_exiting_abruptly_leaves_no_temp_dir() -> None:
    left = run_with_private_tmp(
        """
        class Exits(Dataset):
            def __len__(self):
                return 20
            def __getitem__(self, i):
                if i == 9:
                    os._exit(3)
                return ea.ones(1000) * i
        try:
            for _ in DataLoader(Exits(), batch_size=2, num_workers=2, multiprocessing_context="fork"):
                pass
        except RuntimeError:
            pass
        print("DONE")
        """,
        "fork",
    )
    assert left == []
