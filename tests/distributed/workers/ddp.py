"""One rank of the DDP equivalence test (PyTorch's test_DistributedDataParallel idea).

N ranks each train on their shard of a global batch for K steps; rank 0 also trains a
plain copy of the (broadcast) initial model on the whole batch in one process. Every
rank saves its parameters; the test compares them with the single-process ones.

    ddp.py OUT_DIR MODE     MODE: plain | no_sync | unused | unused_error
"""

from __future__ import annotations

import copy
import json
import sys
from datetime import timedelta
from pathlib import Path

import ember.aten as ea
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
from ember.autograd import no_grad
from ember.data import DistributedSampler, TensorDataset

STEPS, LR, SHARD = 3, 0.1, 4


class Net(nn.Module):
    def __init__(self, with_unused: bool) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)
        if with_unused:
            self.unused = nn.Linear(4, 4)  # never in forward: find_unused_parameters' case
        self.register_buffer("steps", ea.zeros(1))

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def sgd(params: list, lr: float) -> None:
    with no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(p.grad * lr)
                p.grad = None


def main() -> None:
    out_dir, mode = Path(sys.argv[1]), sys.argv[2]
    dist.init_process_group("mpi", timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    X = ea.from_numpy(rng.standard_normal((n * SHARD, 8)).astype(np.float32))
    Y = ea.from_numpy(rng.standard_normal((n * SHARD, 4)).astype(np.float32))
    facts: dict[str, object] = {}

    ea.manual_seed(1234 + rank)  # different on purpose: DDP must broadcast rank 0's weights
    model = Net(with_unused=mode.startswith("unused"))
    model.steps.fill_(float(rank))
    ddp = dist.DistributedDataParallel(
        model, bucket_cap_mb=0.0002, find_unused_parameters=mode == "unused"
    )  # ~200 B buckets: several buckets, launched during backward
    facts["buckets"] = len(ddp._buckets)
    facts["state_dict_keys"] = sorted(ddp.state_dict().keys())
    facts["initial_fc3_bias"] = model.fc3.bias.detach().numpy().tolist()
    reference = copy.deepcopy(model) if rank == 0 else None  # rank 0's state after the broadcast

    # DistributedSampler takes rank and world size from the process group
    sampler = DistributedSampler(TensorDataset(X, Y), shuffle=False)
    facts["sampler"] = [sampler.num_replicas, sampler.rank, list(iter(sampler))]
    shard = slice(rank * SHARD, (rank + 1) * SHARD)
    x, y = X[shard], Y[shard]

    if mode == "unused_error":
        F.mse_loss(ddp(x), y).backward()
        try:
            ddp(x)
        except RuntimeError as e:
            facts["error"] = str(e)
        (out_dir / f"rank-{rank}.json").write_text(json.dumps(facts))
        return

    for step in range(STEPS):
        if mode == "no_sync":
            with ddp.no_sync():
                (F.mse_loss(ddp(x[:2]), y[:2]) / 2).backward()
            (F.mse_loss(ddp(x[2:]), y[2:]) / 2).backward()
        else:
            ddp._launch_log = []
            F.mse_loss(ddp(x), y).backward()
            if step == 0:
                facts["launch_log"] = ddp._launch_log
        if step == 0 and mode == "unused":
            facts["unused_grad_is_none"] = model.unused.weight.grad is None
        sgd(list(model.parameters()), LR)

    if reference is not None:
        for _ in range(STEPS):
            F.mse_loss(reference(X), Y).backward()
            sgd(list(reference.parameters()), LR)
        np.savez(out_dir / "reference.npz", **{k: v.detach().numpy() for k, v in reference.state_dict().items()})
    np.savez(out_dir / f"rank-{rank}.npz", **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    (out_dir / f"rank-{rank}.json").write_text(json.dumps(facts))


if __name__ == "__main__":
    main()
