"""ember.distributed: process groups, collectives and DistributedDataParallel.

PyTorch's ``torch.distributed`` on existing engines: MPI for CPU tensors (mpi4py over
MPICH, ``pip install 'ember-distributed[mpi]'``) and NCCL for CUDA tensors (loaded on
first use). Start N ranks with ``python -m ember.distributed.run --nproc-per-node N
script.py`` or ``mpiexec -n N python script.py``:

    >>> import ember.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = ea.ones(4) * dist.get_rank()
    >>> dist.all_reduce(t)                      # every rank: 0 + 1 + ... + (N-1)
    >>> model = dist.DistributedDataParallel(Net())
"""

from __future__ import annotations

from importlib import metadata as _metadata

from . import parallel
from ._types import Backend, DistBackendError, DistError, ReduceOp, default_pg_timeout
from .ddp import DistributedDataParallel
from .distributed_c10d import (
    GroupMember,
    ProcessGroup,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    irecv,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    isend,
    new_group,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)

try:
    __version__ = _metadata.version("ember-distributed")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "DistributedDataParallel",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_global_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "new_group",
    "parallel",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]
