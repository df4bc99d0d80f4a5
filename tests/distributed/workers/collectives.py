"""One rank of the collective matrix: run every case, save this rank's outputs.

    python -m ember.distributed.run --nproc-per-node N collectives.py OUT_DIR

Writes OUT_DIR/rank-R.npz (tensors, keyed by case) and OUT_DIR/rank-R.json (objects,
ranks, async ordering facts). The test process checks them against NumPy.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

import ember.aten as ea
import ember.distributed as dist
import numpy as np
from cases import DTYPES, LAYOUTS, OPS, SHAPE, salt, value


def tensor(x: np.ndarray, layout: str) -> ea.Tensor:
    """An ember tensor with x's values, contiguous or as a non-contiguous transposed view."""
    if layout == "contiguous":
        return ea.from_numpy(np.ascontiguousarray(x))
    t = ea.from_numpy(np.ascontiguousarray(x.T)).t()
    assert not t.is_contiguous() and list(t.shape) == list(x.shape)
    return t


def main() -> None:
    out_dir = Path(sys.argv[1])
    dist.init_process_group("mpi", timeout=timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    res: dict[str, np.ndarray] = {}
    facts: dict[str, object] = {"rank": rank, "world_size": n, "backend": dist.get_backend()}

    for dt in DTYPES:
        for lay in LAYOUTS:
            for op in OPS:
                t = tensor(value(rank, dt, SHAPE, salt("all_reduce", op, dt, lay)), lay)
                assert dist.all_reduce(t, op=getattr(dist.ReduceOp, op)) is None
                res[f"all_reduce/{op}/{dt}/{lay}"] = t.numpy().copy()

                t = tensor(value(rank, dt, SHAPE, salt("reduce", op, dt, lay)), lay)
                dist.reduce(t, dst=1 % n, op=getattr(dist.ReduceOp, op))
                res[f"reduce/{op}/{dt}/{lay}"] = t.numpy().copy()

                inp = tensor(value(rank, dt, (2 * n, 6), salt("reduce_scatter", op, dt, lay)), lay)
                out = ea.zeros(2, 6, dtype=getattr(ea, dt))
                dist.reduce_scatter_tensor(out, inp, op=getattr(dist.ReduceOp, op))
                res[f"reduce_scatter_tensor/{op}/{dt}/{lay}"] = out.numpy().copy()

            t = tensor(value(rank, dt, SHAPE, salt("broadcast", dt, lay)), lay)
            dist.broadcast(t, src=n - 1)
            res[f"broadcast/{dt}/{lay}"] = t.numpy().copy()

            t = tensor(value(rank, dt, SHAPE, salt("all_gather", dt, lay)), lay)
            outs = [ea.zeros(*SHAPE, dtype=getattr(ea, dt)) for _ in range(n)]
            dist.all_gather(outs, t)
            res[f"all_gather/{dt}/{lay}"] = np.stack([o.numpy() for o in outs])

            t = tensor(value(rank, dt, SHAPE, salt("all_gather_into_tensor", dt, lay)), lay)
            big = tensor(np.zeros((n * SHAPE[0], SHAPE[1]), dtype=dt), lay)  # output strided too
            dist.all_gather_into_tensor(big, t)
            res[f"all_gather_into_tensor/{dt}/{lay}"] = big.numpy().copy()

            inp = tensor(value(rank, dt, (2 * n, 3), salt("all_to_all_single", dt, lay)), lay)
            out = ea.zeros(2 * n, 3, dtype=getattr(ea, dt))
            dist.all_to_all_single(out, inp)
            res[f"all_to_all_single/{dt}/{lay}"] = out.numpy().copy()

            # uneven splits: rank r sends (j + 1) rows to rank j, so it receives (r + 1) from each
            rows_in = sum(j + 1 for j in range(n))
            inp = tensor(value(rank, dt, (rows_in, 3), salt("all_to_all_v", dt, lay)), lay)
            out = ea.zeros(n * (rank + 1), 3, dtype=getattr(ea, dt))
            dist.all_to_all_single(out, inp, [rank + 1] * n, [j + 1 for j in range(n)])
            res[f"all_to_all_v/{dt}/{lay}"] = out.numpy().copy()

            t = tensor(value(rank, dt, SHAPE, salt("gather", dt, lay)), lay)
            glist = [ea.zeros(*SHAPE, dtype=getattr(ea, dt)) for _ in range(n)] if rank == 0 else None
            dist.gather(t, glist, dst=0)
            if glist is not None:
                res[f"gather/{dt}/{lay}"] = np.stack([g.numpy() for g in glist])

            out = tensor(np.zeros(SHAPE, dtype=dt), lay)
            slist = (
                [tensor(value(j, dt, SHAPE, salt("scatter", dt, lay)), lay) for j in range(n)] if rank == 0 else None
            )
            dist.scatter(out, slist, src=0)
            res[f"scatter/{dt}/{lay}"] = out.numpy().copy()

            # a ring of send/recv, then the same with isend/irecv
            t = tensor(value(rank, dt, SHAPE, salt("p2p", dt, lay)), lay)
            got = tensor(np.zeros(SHAPE, dtype=dt), lay)
            if rank % 2 == 0:
                dist.send(t, dst=(rank + 1) % n)
                dist.recv(got, src=(rank - 1) % n)
            else:
                dist.recv(got, src=(rank - 1) % n)
                dist.send(t, dst=(rank + 1) % n)
            res[f"send_recv/{dt}/{lay}"] = got.numpy().copy()
            got2 = ea.zeros(*SHAPE, dtype=getattr(ea, dt))
            works = [dist.irecv(got2, src=(rank - 1) % n), dist.isend(t, dst=(rank + 1) % n)]
            for w in works:
                w.wait()
            res[f"isend_irecv/{dt}/{lay}"] = got2.numpy().copy()

    # recv from any source: rank 0 receives one message from each other rank
    if rank == 0:
        senders = []
        for _ in range(n - 1):
            buf = ea.zeros(1, dtype=ea.int64)
            senders.append(dist.recv(buf))
            assert buf.item() == 100 + senders[-1], (buf.item(), senders[-1])
        facts["any_source_senders"] = sorted(senders)
    else:
        dist.send(ea.tensor([100 + rank]), dst=0)

    # async: several collectives in flight, waited in reverse order
    tensors = [ea.full((1000,), float(rank + k)) for k in range(5)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    bt = ea.full((10,), float(rank))
    works.append(dist.broadcast(bt, src=0, async_op=True))
    facts["work_types"] = [type(w).__name__ for w in works]
    for w in reversed(works):
        assert w.wait()
        assert w.is_completed()
    facts["async_sums"] = [float(t[0].item()) for t in tensors]
    facts["async_all_equal"] = all(bool((t == t[0]).all().item()) for t in tensors)
    facts["async_broadcast"] = float(bt[0].item())

    # object collectives
    objs = [{"rank": rank, "tag": "x" * (rank + 1)}, [rank] * (rank + 2)] if rank == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    facts["broadcast_object_list"] = objs
    gathered: list[object] = [None] * n
    dist.all_gather_object(gathered, {"r": rank, "payload": list(range(rank))})
    facts["all_gather_object"] = gathered

    # a subgroup of the first and last rank
    members = [0, n - 1]
    sub = dist.new_group(members)
    facts["subgroup_rank"] = dist.get_rank(sub)
    facts["subgroup_size"] = dist.get_world_size(sub)
    st = ea.full((3,), float(rank + 1))
    dist.all_reduce(st, group=sub)
    facts["subgroup_all_reduce"] = float(st[0].item())
    dist.barrier()

    np.savez(out_dir / f"rank-{rank}.npz", **{k.replace("/", "|"): v for k, v in res.items()})
    (out_dir / f"rank-{rank}.json").write_text(json.dumps(facts))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
