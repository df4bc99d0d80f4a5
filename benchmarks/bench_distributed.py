"""ember.distributed's benchmarks: all_reduce bandwidth and DDP step time.

    python benchmarks/bench_distributed.py [--sizes-mb 1,4,16,64,256] [--no-torch] [--json PATH]

1. all_reduce of float32 tensors of 1-256 MB on 2 ranks (ember over MPICH, started with
   ``python -m ember.distributed.run``), next to ``torch.distributed`` with gloo on the
   same machine over loopback when PyTorch is installed: median seconds per call and the
   bus bandwidth ``size * 2 (n - 1) / n / time`` (what each link carries).
2. One DDP training step (forward, backward with bucketed all-reduce, AdamW step) of the
   demo CNN (examples/cnn_digits.py) on a batch of 64 per rank, at 1 and 2 ranks.

The driver prints one table with the machine's load (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


# -- the rank workers -----------------------------------------------------------------


def worker_ember_allreduce(sizes_mb: list[float], repeat: int, out: Path) -> None:
    import ember.aten as ea
    import ember.distributed as dist

    dist.init_process_group("mpi")
    rows = []
    for mb in sizes_mb:
        t = ea.ones(int(mb * 1024 * 1024 / 4))
        dist.all_reduce(t)  # warm up (first touch, MPI's shared-memory setup)
        times = []
        for _ in range(repeat):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        rows.append({"mb": mb, "seconds": statistics.median(times)})
    if dist.get_rank() == 0:
        out.write_text(json.dumps(rows))
    dist.destroy_process_group()


def worker_torch_allreduce(rank: int, port: int, sizes_mb: list[float], repeat: int, out: Path) -> None:
    import torch
    import torch.distributed as tdist

    torch.set_num_threads(1)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    rows = []
    for mb in sizes_mb:
        t = torch.ones(int(mb * 1024 * 1024 / 4))
        tdist.all_reduce(t)
        times = []
        for _ in range(repeat):
            tdist.barrier()
            start = time.perf_counter()
            tdist.all_reduce(t)
            times.append(time.perf_counter() - start)
        rows.append({"mb": mb, "seconds": statistics.median(times)})
    if rank == 0:
        out.write_text(json.dumps(rows))
    tdist.destroy_process_group()


def worker_ddp_step(steps: int, out: Path) -> None:
    import ember.aten as ea
    import ember.distributed as dist
    import ember.nn.functional as F
    import ember.optim as optim

    sys.path.insert(0, str(ROOT / "examples"))
    from cnn_digits import make_model

    dist.init_process_group("mpi")
    ea.manual_seed(0)
    model = dist.DistributedDataParallel(make_model())
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    x = ea.randn(64, 1, 8, 8)
    y = ea.randint(0, 10, (64,))
    times = []
    for i in range(steps + 2):
        dist.barrier()
        start = time.perf_counter()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= 2:  # the first two steps allocate
            times.append(time.perf_counter() - start)
    if dist.get_rank() == 0:
        out.write_text(json.dumps({"ranks": dist.get_world_size(), "seconds": statistics.median(times)}))
    dist.destroy_process_group()


# -- the driver -------------------------------------------------------------------------


def _launch(nproc: int, *args: str) -> None:
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), str(HERE), *args]
    subprocess.run(cmd, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes-mb", default="1,4,16,64,256")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--json", default=None)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    sizes = [float(s) for s in args.sizes_mb.split(",")]
    if args.worker == "ember":
        worker_ember_allreduce(sizes, args.repeat, Path(args.out))
        return 0
    if args.worker == "torch":
        worker_torch_allreduce(args.rank, args.port, sizes, args.repeat, Path(args.out))
        return 0
    if args.worker == "ddp":
        worker_ddp_step(args.steps, Path(args.out))
        return 0

    load_before = _load()
    tmp = Path(tempfile.mkdtemp(prefix="bench-dist-"))
    common = ["--sizes-mb", args.sizes_mb, "--repeat", str(args.repeat)]
    _launch(2, "--worker", "ember", "--out", str(tmp / "ember.json"), *common)
    ember_rows = json.loads((tmp / "ember.json").read_text())
    torch_rows = None
    if not args.no_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("(PyTorch not installed: no torch.distributed/gloo column)")
        else:
            port = _free_port()
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        str(HERE),
                        "--worker",
                        "torch",
                        "--rank",
                        str(r),
                        "--port",
                        str(port),
                        "--out",
                        str(tmp / "torch.json"),
                        *common,
                    ]
                )
                for r in range(2)
            ]
            if all(pr.wait() == 0 for pr in procs):
                torch_rows = json.loads((tmp / "torch.json").read_text())
    ddp = []
    for n in (1, 2):
        _launch(n, "--worker", "ddp", "--steps", str(args.steps), "--out", str(tmp / f"ddp{n}.json"))
        ddp.append(json.loads((tmp / f"ddp{n}.json").read_text()))
    load_after = _load()

    print(f"\nall_reduce, float32, 2 ranks on this machine (load before {load_before}, after {load_after})")
    print(f"{'size':>8} {'ember s':>10} {'ember GB/s':>11} {'gloo s':>10} {'gloo GB/s':>10} {'ember/gloo':>11}")
    for i, row in enumerate(ember_rows):
        mb, s = row["mb"], row["seconds"]
        bus = mb * 1024 * 1024 / s / 1e9  # 2 (n - 1) / n = 1 at n = 2
        line = f"{mb:>6g}MB {s:>10.5f} {bus:>11.2f}"
        if torch_rows:
            ts = torch_rows[i]["seconds"]
            line += f" {ts:>10.5f} {mb * 1024 * 1024 / ts / 1e9:>10.2f} {s / ts:>11.2f}"
        print(line)
    print("\nDDP step of the demo CNN, batch 64 per rank (forward + backward + AdamW)")
    for row in ddp:
        print(f"  {row['ranks']} rank(s): {row['seconds'] * 1e3:8.2f} ms per step")
    print(f"  2 ranks / 1 rank: {ddp[1]['seconds'] / ddp[0]['seconds']:.2f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"load": [load_before, load_after], "all_reduce": ember_rows, "gloo": torch_rows, "ddp": ddp}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
