"""Every collective x ReduceOp x dtype x layout on 2 and 4 ranks, against NumPy on every rank.

Each world size runs one job (workers/collectives.py) that performs the whole table and
saves each rank's outputs; the tests rebuild every rank's input and compare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "workers"))
sys.path.insert(0, str(Path(__file__).parent))
from cases import DTYPES, LAYOUTS, OPS, SHAPE, reduce_np, salt, value
from dist_helpers import run_ranks

WORLD_SIZES = [2, 4]


@pytest.fixture(scope="module", params=WORLD_SIZES, ids=lambda n: f"{n}ranks")
def job(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list, list]:
    n = request.param
    out = tmp_path_factory.mktemp(f"collectives{n}")
    done = run_ranks(n, "collectives.py", str(out), timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    tensors = [dict(np.load(out / f"rank-{r}.npz")) for r in range(n)]
    facts = [json.loads((out / f"rank-{r}.json").read_text()) for r in range(n)]
    return n, tensors, facts


def _get(tensors: dict, key: str) -> np.ndarray:
    return tensors[key.replace("/", "|")]


def _close(got: np.ndarray, want: np.ndarray, dt: str) -> None:
    assert got.dtype == np.dtype(dt), (got.dtype, dt)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dt == "int64":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6 if dt == "float32" else 1e-12, atol=1e-6)


TABLE = [(op, dt, lay) for op in OPS for dt in DTYPES for lay in LAYOUTS]
PLAIN = [(dt, lay) for dt in DTYPES for lay in LAYOUTS]


@pytest.mark.parametrize("op,dt,lay", TABLE)
def test_all_reduce(job, op: str, dt: str, lay: str) -> None:
    n, tensors, _ = job
    want = reduce_np(op, np.stack([value(r, dt, SHAPE, salt("all_reduce", op, dt, lay)) for r in range(n)]))
    for r in range(n):
        _close(_get(tensors[r], f"all_reduce/{op}/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("op,dt,lay", TABLE)
def test_reduce(job, op: str, dt: str, lay: str) -> None:
    n, tensors, _ = job
    inputs = [value(r, dt, SHAPE, salt("reduce", op, dt, lay)) for r in range(n)]
    dst = 1 % n
    for r in range(n):
        want = reduce_np(op, np.stack(inputs)) if r == dst else inputs[r]  # others unchanged
        _close(_get(tensors[r], f"reduce/{op}/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("op,dt,lay", TABLE)
def test_reduce_scatter_tensor(job, op: str, dt: str, lay: str) -> None:
    n, tensors, _ = job
    full = reduce_np(op, np.stack([value(r, dt, (2 * n, 6), salt("reduce_scatter", op, dt, lay)) for r in range(n)]))
    for r in range(n):
        _close(_get(tensors[r], f"reduce_scatter_tensor/{op}/{dt}/{lay}"), full[2 * r : 2 * r + 2], dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_broadcast(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    want = value(n - 1, dt, SHAPE, salt("broadcast", dt, lay))
    for r in range(n):
        _close(_get(tensors[r], f"broadcast/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_all_gather(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    want = np.stack([value(r, dt, SHAPE, salt("all_gather", dt, lay)) for r in range(n)])
    for r in range(n):
        _close(_get(tensors[r], f"all_gather/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_all_gather_into_tensor(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    want = np.concatenate([value(r, dt, SHAPE, salt("all_gather_into_tensor", dt, lay)) for r in range(n)])
    for r in range(n):
        _close(_get(tensors[r], f"all_gather_into_tensor/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_all_to_all_single(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    inputs = [value(r, dt, (2 * n, 3), salt("all_to_all_single", dt, lay)) for r in range(n)]
    for r in range(n):
        want = np.concatenate([inputs[j][2 * r : 2 * r + 2] for j in range(n)])
        _close(_get(tensors[r], f"all_to_all_single/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_all_to_all_single_uneven_splits(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    rows = sum(j + 1 for j in range(n))
    inputs = [value(r, dt, (rows, 3), salt("all_to_all_v", dt, lay)) for r in range(n)]
    starts = np.cumsum([0] + [j + 1 for j in range(n)])
    for r in range(n):
        want = np.concatenate([inputs[j][starts[r] : starts[r + 1]] for j in range(n)])
        _close(_get(tensors[r], f"all_to_all_v/{dt}/{lay}"), want, dt)


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_gather(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    want = np.stack([value(r, dt, SHAPE, salt("gather", dt, lay)) for r in range(n)])
    _close(_get(tensors[0], f"gather/{dt}/{lay}"), want, dt)
    assert all(f"gather|{dt}|{lay}" not in tensors[r] for r in range(1, n))


@pytest.mark.parametrize("dt,lay", PLAIN)
def test_scatter(job, dt: str, lay: str) -> None:
    n, tensors, _ = job
    for r in range(n):
        _close(_get(tensors[r], f"scatter/{dt}/{lay}"), value(r, dt, SHAPE, salt("scatter", dt, lay)), dt)


@pytest.mark.parametrize("kind", ["send_recv", "isend_irecv"])
@pytest.mark.parametrize("dt,lay", PLAIN)
def test_point_to_point_ring(job, kind: str, dt: str, lay: str) -> None:
    n, tensors, _ = job
    for r in range(n):
        _close(_get(tensors[r], f"{kind}/{dt}/{lay}"), value((r - 1) % n, dt, SHAPE, salt("p2p", dt, lay)), dt)


def test_recv_from_any_source_returns_the_sender(job) -> None:
    n, _, facts = job
    assert facts[0]["any_source_senders"] == list(range(1, n))


def test_async_work_completes_in_any_wait_order(job) -> None:
    n, _, facts = job
    for f in facts:
        assert f["work_types"] == ["Work"] * 6
        assert f["async_sums"] == [float(sum(r + k for r in range(n))) for k in range(5)]
        assert f["async_all_equal"] is True
        assert f["async_broadcast"] == 0.0


def test_object_collectives(job) -> None:
    n, _, facts = job
    for f in facts:
        assert f["broadcast_object_list"] == [{"rank": 0, "tag": "x"}, [0, 0]]
        assert f["all_gather_object"] == [{"r": r, "payload": list(range(r))} for r in range(n)]


def test_ranks_and_subgroups(job) -> None:
    n, _, facts = job
    for r, f in enumerate(facts):
        assert (f["rank"], f["world_size"], f["backend"]) == (r, n, "mpi")
        member = r in (0, n - 1)
        assert f["subgroup_rank"] == ({0: 0, n - 1: 1}[r] if member else -1)
        assert f["subgroup_size"] == (2 if member else -1)
        # members sum 1 + n; non-members' tensors are untouched
        assert f["subgroup_all_reduce"] == (float(1 + n) if member else float(r + 1))
