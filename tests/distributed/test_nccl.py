"""NCCL: never loaded by an import, a clear error without the library, and (on a GPU
machine, ``-m cuda``) CUDA collectives against NumPy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_helpers import run_ranks


def test_importing_never_loads_nccl() -> None:
    code = (
        "import ember.distributed as dist, ember.distributed._nccl as n\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert n._lib is None and 'libnccl' not in maps, 'NCCL loaded by import'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_missing_nccl_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ember.distributed import _nccl

    monkeypatch.setattr(_nccl, "_lib", None)
    monkeypatch.setenv("EMBER_NCCL_LIBRARY", str(tmp_path / "libnccl.so.2"))
    with pytest.raises(
        RuntimeError, match=r"NCCL library not found at .*libnccl\.so\.2: pip install 'ember-distributed\[nccl\]'"
    ):
        _nccl.load()


def test_nccl_loads_lazily_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the nvidia-nccl-cu13 wheel: dlopen works without a GPU and reports NCCL's
    version; without it: the error says what to install."""
    from ember.distributed import _nccl

    monkeypatch.delenv("EMBER_NCCL_LIBRARY", raising=False)
    monkeypatch.setattr(_nccl, "_lib", None)
    if _nccl.library_path() is None:
        with pytest.raises(RuntimeError, match="pip install 'ember-distributed\\[nccl\\]'"):
            _nccl.load()
    else:
        assert _nccl.version() >= 22700


@pytest.mark.cuda
def test_nccl_collectives_on_the_gpu(tmp_path: Path) -> None:
    from ember.aten import cuda

    n = 2
    job = run_ranks(n, "nccl.py", str(tmp_path), timeout=300)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    facts = [json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in range(n)]
    for f in facts:
        assert "the MPI backend takes CPU tensors, got a tensor on cuda" in f["cuda_on_mpi"]
    if cuda.device_count() < n:
        # NCCL allows one rank per GPU: two ranks on one GPU get ember's clear error
        for f in facts:
            assert "both use cuda:0 on one host; NCCL needs one GPU per rank" in f["error"]
        return
    sys.path.insert(0, str(Path(__file__).parent / "workers"))
    from cases import reduce_np

    for r in range(n):
        got = dict(np.load(tmp_path / f"rank-{r}.npz"))
        for dt in ("float32", "float64", "int64"):
            inputs = np.stack([np.arange(12, dtype=dt).reshape(3, 4) * (k + 1) - k for k in range(n)])
            for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
                np.testing.assert_allclose(got[f"all_reduce|{op}|{dt}"], reduce_np(op, inputs), rtol=1e-6)
            np.testing.assert_array_equal(got[f"broadcast|{dt}"], np.full(5, n - 1, dtype=dt))
            np.testing.assert_array_equal(got[f"all_gather_into_tensor|{dt}"], np.repeat(np.arange(n), 4).astype(dt))
