"""Prints torchrun's variables and the process group's view, one JSON line per rank."""

from __future__ import annotations

import json
import os
import sys

import ember.distributed as dist

dist.init_process_group(backend="mpi", init_method="env://")
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
facts = {"rank": dist.get_rank(), "size": dist.get_world_size(), "argv": sys.argv[1:], "name": __name__}
print("ENV " + json.dumps({"env": {k: os.environ.get(k) for k in keys}, **facts}), flush=True)
dist.destroy_process_group()
if sys.argv[1:] == ["--exit-code", "7"] and facts["rank"] == 1:
    sys.exit(7)
