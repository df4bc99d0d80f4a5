"""A rank that dies, hangs or never joins; mismatched tensors in debug mode.

    faults.py MODE TIMEOUT_S [OUT_DIR]     MODE: kill | exit | hang | nojoin | mismatch

Rank 0 prints ``CAUGHT <seconds> <error>`` when its collective raises.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta

import ember.aten as ea
import ember.distributed as dist


def main() -> None:
    mode, timeout_s = sys.argv[1], float(sys.argv[2])
    if mode == "nojoin" and os.environ["RANK"] == "1":
        time.sleep(60)  # never calls init_process_group
    dist.init_process_group("mpi", timeout=timedelta(seconds=timeout_s))
    rank = dist.get_rank()
    dist.barrier()
    big = ea.ones(4 * 1024 * 1024)  # 16 MB: the collective takes a while
    if rank == 1 and mode in ("kill", "exit"):
        work = dist.all_reduce(big, async_op=True)  # in the middle of the collective...
        work.is_completed()
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)
    if rank == 1 and mode == "hang":
        time.sleep(60)  # alive, but never takes part
    if mode == "mismatch":
        t = ea.ones(4 + rank)
        try:
            dist.all_reduce(t)
        except ValueError as e:  # to a file: the ranks' stdout lines may interleave
            with open(os.path.join(sys.argv[3], f"rank-{rank}.txt"), "w") as f:
                f.write(f"MISMATCH rank {rank}: {e}")
        dist.destroy_process_group()
        return
    start = time.monotonic()
    try:
        dist.all_reduce(big)
    except dist.DistBackendError as e:
        print(f"CAUGHT {time.monotonic() - start:.2f} {e}", flush=True)
        try:
            dist.broadcast(big, src=0)
        except dist.DistBackendError as e2:
            print(f"AFTER {e2}", flush=True)
        raise SystemExit(1) from None
    print("NO ERROR", flush=True)


if __name__ == "__main__":
    main()
