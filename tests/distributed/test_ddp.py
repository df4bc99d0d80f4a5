"""DistributedDataParallel on 2 ranks equals one process training on the whole batch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_helpers import run_ranks

N = 2


_RESULTS: dict[str, tuple[list[dict], list[dict], dict | None]] = {}


def _run(mode: str, tmp_path: Path, n: int = N) -> tuple[list[dict], list[dict], dict | None]:
    """One job per mode for the whole module (several tests read the same run)."""
    if mode in _RESULTS:
        return _RESULTS[mode]
    done = run_ranks(n, "ddp.py", str(tmp_path), mode, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    facts = [json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in range(n)]
    if mode == "unused_error":
        _RESULTS[mode] = ([], facts, None)
    else:
        params = [dict(np.load(tmp_path / f"rank-{r}.npz")) for r in range(n)]
        _RESULTS[mode] = (params, facts, dict(np.load(tmp_path / "reference.npz")))
    return _RESULTS[mode]


@pytest.mark.parametrize("mode", ["plain", "no_sync", "unused"])
def test_ddp_matches_single_process_full_batch(mode: str, tmp_path: Path) -> None:
    params, facts, reference = _run(mode, tmp_path)
    assert reference is not None
    for r, p in enumerate(params):
        assert set(p) == set(reference)
        for name, want in reference.items():
            if name == "steps":
                continue
            np.testing.assert_allclose(p[name], want, rtol=2e-5, atol=2e-6, err_msg=f"rank {r} {name} ({mode})")
        # every rank's buffer is rank 0's (broadcast_buffers), whatever it started with
        assert p["steps"].tolist() == [0.0]
    # the parameters moved: the comparison is not between two untouched copies
    assert not np.allclose(params[0]["fc3.bias"], facts[0]["initial_fc3_bias"])


def test_ddp_buckets_are_launched_during_backward(tmp_path: Path) -> None:
    _, facts, _ = _run("plain", tmp_path)
    for f in facts:
        assert f["buckets"] >= 3
        log = f["launch_log"]
        launches = [i for i, (kind, _) in enumerate(log) if kind == "launch"]
        grads = [i for i, (kind, _) in enumerate(log) if kind == "grad"]
        assert len(launches) == f["buckets"]
        # the first bucket went out while later gradients were still to come (overlap)
        assert launches[0] < grads[-1]
        # buckets go out in bucket order
        assert [log[i][1] for i in launches] == list(range(f["buckets"]))


def test_ddp_state_dict_has_module_prefix_and_unused_grad_stays_none(tmp_path: Path) -> None:
    _, facts, _ = _run("unused", tmp_path)
    for f in facts:
        assert f["state_dict_keys"] and all(k.startswith("module.") for k in f["state_dict_keys"])
        assert "module.fc1.weight" in f["state_dict_keys"] and "module.steps" in f["state_dict_keys"]
        assert f["unused_grad_is_none"] is True


def test_ddp_unused_parameter_without_find_unused_parameters_is_an_error(tmp_path: Path) -> None:
    _, facts, _ = _run("unused_error", tmp_path)
    for f in facts:
        assert "Expected to have finished reduction in the prior iteration" in f["error"]
        assert "find_unused_parameters=True" in f["error"]


def test_distributed_sampler_reads_the_process_group(tmp_path: Path) -> None:
    _, facts, _ = _run("unused_error", tmp_path)
    total = N * 4
    for r, f in enumerate(facts):
        assert f["sampler"] == [N, r, list(range(r, total, N))]
