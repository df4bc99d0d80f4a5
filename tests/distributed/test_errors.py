"""Clear errors: before init, unknown backends, bad arguments to every collective."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import ember.aten as ea
import ember.distributed as dist
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dist_helpers import run_ranks

NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


@pytest.mark.parametrize(
    "call",
    [
        lambda: dist.all_reduce(ea.ones(3)),
        lambda: dist.broadcast(ea.ones(3), src=0),
        lambda: dist.barrier(),
        lambda: dist.get_rank(),
        lambda: dist.get_world_size(),
        lambda: dist.new_group([0]),
        lambda: dist.all_gather_object([None], 1),
        lambda: dist.destroy_process_group(),
    ],
    ids=[
        "all_reduce",
        "broadcast",
        "barrier",
        "get_rank",
        "get_world_size",
        "new_group",
        "all_gather_object",
        "destroy",
    ],
)
def test_before_init_process_group(call) -> None:
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match=NOT_INIT):
        call()


@pytest.mark.parametrize(
    "backend,message",
    [
        ("tpu", "Invalid backend: 'tpu' \\(ember has mpi, nccl\\)"),
        ("gloo", "'gloo' is not part of ember; use 'mpi'"),
        ("", "Invalid backend: ''"),
    ],
)
def test_unknown_backend(backend: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dist.init_process_group(backend)
    assert not dist.is_initialized()


def test_rendezvous_urls_and_timeouts_are_checked_before_joining() -> None:
    with pytest.raises(ValueError, match=re.escape("init_method='tcp://127.0.0.1:23456' is not supported")):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:23456")
    with pytest.raises(TypeError, match=re.escape("timeout must be a datetime.timedelta, got int")):
        dist.init_process_group("mpi", timeout=30)
    assert not dist.is_initialized()


def test_backend_names() -> None:
    assert dist.Backend("MPI") == "mpi" == dist.Backend.MPI
    assert dist.Backend("nccl") == dist.Backend.NCCL
    assert [op.name for op in dist.ReduceOp] == ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    assert dist.is_available() and dist.is_mpi_available()


@pytest.fixture(scope="module")
def errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("errors") / "errors.json"
    job = run_ranks(2, "errors.py", str(out), timeout=120)
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    return json.loads(out.read_text())


EXPECTED = {
    "float16_all_reduce": "TypeError: all_reduce: the MPI backend cannot reduce ember.aten.float16 tensors",
    "op_not_reduceop": "TypeError: all_reduce: op must be a ReduceOp",
    "not_a_tensor": "TypeError: all_reduce: tensor must be an ember tensor, got list",
    "broadcast_src_outside": "ValueError: broadcast: src=5 is not a rank of this group (its ranks are [0, 1])",
    "all_gather_list_length": "ValueError: all_gather: tensor_list has 1 tensors, the group has 2 ranks",
    "all_gather_list_shape": (
        "ValueError: all_gather: tensor_list[1] is a ember.aten.float32 tensor of shape [4], expected"
    ),
    "all_gather_into_tensor_size": "ValueError: all_gather_into_tensor: output_tensor has 5 elements, expected 2 x 3",
    "reduce_scatter_size": "ValueError: reduce_scatter_tensor: input has 5 elements, expected 2 x 3",
    "all_to_all_indivisible": "ValueError: all_to_all_single: input dim 0 (3) is not divisible by the world size 2",
    "all_to_all_bad_splits": (
        "ValueError: all_to_all_single: input_split_sizes=[3, 3] must be 2 sizes summing to dim 0 (4)"
    ),
    "send_to_self": "ValueError: isend: dst=",
    "gather_without_list": "ValueError: gather: the destination rank needs gather_list of 2 tensors, got None",
    "double_init": "ValueError: trying to initialize the default process group twice!",
    "new_group_bad_rank": "ValueError: new_group: rank 7 is not in the world of 2 ranks",
    "all_gather_object_slots": "ValueError: all_gather_object: object_list has 1 slots, the group has 2 ranks",
    "cpu_tensor_on_nccl": "ValueError: all_reduce: the NCCL backend takes CUDA tensors, got a tensor on cpu",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_bad_arguments_in_a_group(errors: dict[str, str], case: str) -> None:
    assert errors[case].startswith(EXPECTED[case]), errors[case]


def test_group_still_works_after_the_errors(errors: dict[str, str]) -> None:
    assert errors["still_works"] == [2.0, 2.0, 2.0]


def test_distributed_sampler_without_a_process_group() -> None:
    from ember.data import DistributedSampler, TensorDataset

    ds = TensorDataset(ea.arange(10))
    with pytest.raises(
        RuntimeError, match=re.escape("pass num_replicas and rank, or call ember.distributed.init_process_group")
    ):
        DistributedSampler(ds)
    # explicit arguments still work without a group
    assert list(DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)) == [1, 4, 7, 0]


@pytest.mark.parametrize(
    "backend,device,message",
    [
        ("mpi", "cuda", "all_reduce: the MPI backend takes CPU tensors, got a tensor on cuda (use backend='nccl'"),
        ("nccl", "cpu", "all_reduce: the NCCL backend takes CUDA tensors, got a tensor on cpu (use backend='mpi')"),
    ],
)
def test_device_and_backend_must_agree(backend: str, device: str, message: str) -> None:
    """The check every tensor collective makes first (here without a GPU: only the
    tensor's device type is read; the GPU tests run it with real CUDA tensors)."""
    from types import SimpleNamespace

    from ember.distributed import distributed_c10d as c10d

    group = SimpleNamespace(_backend=backend)
    tensor = SimpleNamespace(device=SimpleNamespace(type=device))
    with pytest.raises(ValueError, match=re.escape(message)):
        c10d._engine(group, [tensor], "all_reduce")  # type: ignore[arg-type]
