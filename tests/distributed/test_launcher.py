"""``python -m ember.distributed.run`` sets torchrun's variables; the same script runs
under plain ``mpiexec -n N``; failures propagate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_helpers import _shm, run_ranks


def _ranks(out: Path) -> list[dict]:
    rows = [json.loads(p.read_text()) for p in out.glob("rank-*.json")]
    return sorted(rows, key=lambda r: r["rank"])


@pytest.mark.parametrize("launcher", ["run", "mpiexec"])
@pytest.mark.parametrize("n", [2, 4])
def test_torchrun_variables(launcher: str, n: int, tmp_path: Path) -> None:
    job = run_ranks(n, "env.py", str(tmp_path), "--lr", "0.1", launcher=launcher, timeout=120)
    assert job.returncode == 0, job.stdout + job.stderr
    rows = _ranks(tmp_path)
    assert [r["rank"] for r in rows] == list(range(n))
    for r in rows:
        assert r["size"] == n and r["argv"] == ["--lr", "0.1"] and r["name"] == "__main__"
        env = r["env"]
        assert env["RANK"] == str(r["rank"]) and env["WORLD_SIZE"] == str(n)
        if launcher == "run":
            assert env["LOCAL_RANK"] == str(r["rank"]) and env["LOCAL_WORLD_SIZE"] == str(n)
            assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "29500")


def test_a_failing_rank_fails_the_launcher(tmp_path: Path) -> None:
    job = run_ranks(2, "env.py", str(tmp_path), "--exit-code", "7", timeout=120)
    assert job.returncode == 7, (job.returncode, job.stderr)
    assert "ember.distributed.run: the job failed (exit status 7)" in job.stderr


def test_module_mode_and_flags() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nnodes", "2", "x.py"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "--nnodes=2: only single-node jobs" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "zero", "x.py"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "--nproc-per-node must be a number, 'cpu' or 'gpu', got 'zero'" in done.stderr


def test_world_size_mismatch_with_mpi_is_explained(tmp_path: Path) -> None:
    """A script started by a torchrun-style environment but without mpiexec: one MPI process."""
    script = tmp_path / "s.py"
    script.write_text("import ember.distributed as dist\ndist.init_process_group('mpi')\n")
    shm_before = _shm()
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "WORLD_SIZE": "2", "RANK": "0"},
        timeout=60,
    )
    assert done.returncode != 0
    assert "init_process_group: WORLD_SIZE=2 but MPI gives this process rank 0 of 1" in done.stderr
    assert not [f for f in _shm() - shm_before if "mpich" in f], "the lone process left shared memory behind"


def test_module_mode_runs_a_module_as_main(tmp_path: Path) -> None:
    """``-m env`` as ``python -m``: the module is found on PYTHONPATH (the workers folder)."""
    import os

    done = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", "-m", "env", str(tmp_path), "--x"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "workers"), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert done.returncode == 0, done.stderr
    rows = _ranks(tmp_path)
    assert [r["rank"] for r in rows] == [0, 1]
    assert all(r["name"] == "__main__" and r["argv"] == ["--x"] for r in rows)
