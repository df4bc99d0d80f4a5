"""The demo's CNN (examples/cnn_digits.py) trained on 2 processes with DistributedDataParallel.

    pip install 'ember-distributed[mpi]' scikit-learn
    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_digits.py --epochs 4

Each rank trains on its half of every epoch (DistributedSampler, which takes the rank and
world size from the process group); DDP averages the gradients during backward, so every
rank holds the same model after each step. The same script runs under
``mpiexec -n 2 python examples/ddp_digits.py``. Rank 0 evaluates and prints the test
accuracy; exit status 1 when it is below --target.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import timedelta
from pathlib import Path

import ember.aten as ea
import ember.autograd as autograd
import ember.data as data
import ember.distributed as dist
import ember.nn.functional as F
import ember.optim as optim

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cnn_digits import evaluate, load_digits_dataset, make_model


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=float, default=0.95)
    args = p.parse_args(argv)

    dist.init_process_group("mpi", timeout=timedelta(minutes=5))
    rank, world = dist.get_rank(), dist.get_world_size()
    t_start = time.perf_counter()
    ea.manual_seed(args.seed + rank)  # DDP broadcasts rank 0's weights at construction
    dataset = load_digits_dataset()
    n_test = len(dataset) // 5
    train_set, test_set = data.random_split(
        dataset, [len(dataset) - n_test, n_test], generator=ea.Generator().manual_seed(args.seed)
    )
    sampler = data.DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = data.DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    model = dist.DistributedDataParallel(make_model())
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)

    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        loss_sum, seen = 0.0, 0
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # gradients all-reduced bucket by bucket during backward
            optimizer.step()
            loss_sum += loss.item() * y.numel()
            seen += y.numel()
        # the mean training loss over every rank's samples
        stats = ea.tensor([loss_sum, float(seen)], dtype=ea.float64)
        dist.all_reduce(stats)
        if rank == 0:
            print(f"epoch {epoch:2d}: train loss {stats[0].item() / stats[1].item():.4f} ({world} ranks)", flush=True)

    # every rank holds the same weights: check it, then rank 0 evaluates
    with autograd.no_grad():
        first = model.module[0].weight.detach().clone()
        dist.broadcast(first, src=0)
        same = bool((first == model.module[0].weight).all().item())
    acc = evaluate(model.module, data.DataLoader(test_set, batch_size=256))
    status = 0
    if rank == 0:
        print(f"test accuracy: {acc:.4f}; replicas identical: {same}; total time {time.perf_counter() - t_start:.1f} s")
        if acc < args.target or not same:
            print(f"error: test accuracy {acc:.4f} below {args.target} or replicas differ", file=sys.stderr)
            status = 1
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
