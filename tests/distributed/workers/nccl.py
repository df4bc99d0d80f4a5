"""CUDA tensors through NCCL (run on a GPU machine): one rank per GPU, or the clear
error NCCL's one-GPU-per-rank rule gets when there are more ranks than GPUs.

    nccl.py OUT_DIR
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from pathlib import Path

import ember.aten as ea
import ember.distributed as dist
import numpy as np
from ember.aten import cuda


def main() -> None:
    out = Path(sys.argv[1])
    dist.init_process_group("nccl", timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    cuda.set_device(local % cuda.device_count())
    facts: dict[str, object] = {"rank": rank}
    try:
        # a CUDA tensor on an MPI group is refused
        mpi = dist.new_group(list(range(n)), backend="mpi")
        try:
            dist.all_reduce(ea.ones(3, device="cuda"), group=mpi)
        except ValueError as e:
            facts["cuda_on_mpi"] = str(e)
        results = {}
        for dt in ("float32", "float64", "int64"):
            for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
                x = np.arange(12, dtype=dt).reshape(3, 4) * (rank + 1) - rank
                t = ea.from_numpy(x).to("cuda")
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                results[f"all_reduce/{op}/{dt}"] = t.cpu().numpy()
            t = ea.from_numpy(np.full((5,), rank, dtype=dt)).to("cuda")
            w = dist.broadcast(t, src=n - 1, async_op=True)
            w.wait()
            results[f"broadcast/{dt}"] = t.cpu().numpy()
            big = ea.zeros(n * 4, dtype=getattr(ea, dt), device="cuda")
            dist.all_gather_into_tensor(big, ea.full((4,), rank, dtype=getattr(ea, dt), device="cuda"))
            results[f"all_gather_into_tensor/{dt}"] = big.cpu().numpy()
        np.savez(out / f"rank-{rank}.npz", **{k.replace("/", "|"): v for k, v in results.items()})
    except RuntimeError as e:
        facts["error"] = str(e)
    (out / f"rank-{rank}.json").write_text(json.dumps(facts))


if __name__ == "__main__":
    main()
