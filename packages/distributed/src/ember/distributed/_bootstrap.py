"""What each rank runs under the launcher: torchrun's variables from MPI's, then the script.

``python -m ember.distributed.run`` starts ``mpiexec -n N python -m
ember.distributed._bootstrap script.py ARGS``. Hydra gives each process PMI_RANK,
PMI_SIZE and MPI_LOCALRANKID (Open MPI's mpirun: OMPI_COMM_WORLD_*); this turns them into
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK and ROLE_RANK as torchrun sets
them, writes the rank's status record (pid, phase) for the launcher, and runs the
script as ``__main__``.
"""

from __future__ import annotations

import os
import runpy
import sys

from . import _status


def _first(*names: str, default: str | None = None) -> str | None:
    for n in names:
        if n in os.environ:
            return os.environ[n]
    return default


def torchrun_environment() -> dict[str, str]:
    rank = _first("PMI_RANK", "OMPI_COMM_WORLD_RANK", "RANK", default="0")
    size = _first("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default="1")
    local_rank = _first("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", default=rank)
    local_size = _first("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", default=size)
    assert rank is not None and size is not None and local_rank is not None and local_size is not None
    return {
        "RANK": rank,
        "WORLD_SIZE": size,
        "LOCAL_RANK": local_rank,
        "LOCAL_WORLD_SIZE": local_size,
        "GROUP_RANK": "0",
        "ROLE_RANK": rank,
        "ROLE_WORLD_SIZE": size,
        "MASTER_ADDR": os.environ.get("MASTER_ADDR", "127.0.0.1"),
        "MASTER_PORT": os.environ.get("MASTER_PORT", "29500"),
    }


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m ember.distributed._bootstrap [-m module | script.py] [args...]")
    env = torchrun_environment()
    os.environ.update(env)
    _status.StatusRecord(int(env["RANK"]))  # the launcher learns this rank's pid
    if argv[0] == "-m":
        if len(argv) < 2:
            sys.exit("ember.distributed._bootstrap: -m needs a module name")
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
