"""Writes torchrun's variables and the process group's view to OUT_DIR/rank-R.json.

env.py OUT_DIR [args...]   (--exit-code 7: rank 1 exits with status 7)
"""

from __future__ import annotations

import json
import os
import sys

import ember.distributed as dist

dist.init_process_group(backend="mpi", init_method="env://")
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
facts = {"rank": dist.get_rank(), "size": dist.get_world_size(), "argv": sys.argv[2:], "name": __name__}
facts["env"] = {k: os.environ.get(k) for k in keys}
with open(os.path.join(sys.argv[1], f"rank-{facts['rank']}.json"), "w") as f:
    json.dump(facts, f)
dist.destroy_process_group()
if sys.argv[2:] == ["--exit-code", "7"] and facts["rank"] == 1:
    sys.exit(7)
