"""Bad arguments inside an initialised group: each must be a clear Python exception.

errors.py OUT_JSON     (2 ranks) -> {case: "ExceptionType: message"}
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta

import ember.aten as ea
import ember.distributed as dist

CASES = {
    "float16_all_reduce": lambda: dist.all_reduce(ea.ones(3, dtype=ea.float16)),
    "op_not_reduceop": lambda: dist.all_reduce(ea.ones(3), op="sum"),
    "not_a_tensor": lambda: dist.all_reduce([1.0, 2.0]),
    "broadcast_src_outside": lambda: dist.broadcast(ea.ones(3), src=5),
    "all_gather_list_length": lambda: dist.all_gather([ea.ones(3)], ea.ones(3)),
    "all_gather_list_shape": lambda: dist.all_gather([ea.ones(3), ea.ones(4)], ea.ones(3)),
    "all_gather_into_tensor_size": lambda: dist.all_gather_into_tensor(ea.ones(5), ea.ones(3)),
    "reduce_scatter_size": lambda: dist.reduce_scatter_tensor(ea.ones(3), ea.ones(5)),
    "all_to_all_indivisible": lambda: dist.all_to_all_single(ea.ones(3), ea.ones(3)),
    "all_to_all_bad_splits": lambda: dist.all_to_all_single(ea.ones(4), ea.ones(4), [1, 1], [3, 3]),
    "send_to_self": lambda: dist.send(ea.ones(3), dst=dist.get_rank()),
    "gather_without_list": lambda: dist.gather(ea.ones(3), None, dst=dist.get_rank()),
    "double_init": lambda: dist.init_process_group("mpi"),
    "new_group_bad_rank": lambda: dist.new_group([0, 7]),
    "all_gather_object_slots": lambda: dist.all_gather_object([None], 1),
}


def main() -> None:
    dist.init_process_group("mpi", timeout=timedelta(seconds=30))
    out = {}
    for name, fn in CASES.items():
        try:
            fn()
            out[name] = "no error"
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"
    # a CPU tensor on an NCCL group is refused before NCCL is ever loaded
    g = dist.new_group([0, 1], backend="nccl")
    try:
        dist.all_reduce(ea.ones(3), group=g)
        out["cpu_tensor_on_nccl"] = "no error"
    except Exception as e:
        out["cpu_tensor_on_nccl"] = f"{type(e).__name__}: {e}"
    # after all of these the group still works
    t = ea.ones(3)
    dist.all_reduce(t)
    out["still_works"] = t.tolist()
    if dist.get_rank() == 0:
        with open(sys.argv[1], "w") as f:
            json.dump(out, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
