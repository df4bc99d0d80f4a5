"""The MPI engine: every collective as one or two nonblocking MPI calls.

Why nonblocking only: a blocking MPI call whose peer died never returns (MPI has no
timeout), and a Python signal handler cannot run while C is blocked. So every collective
is an ``MPI_I*`` request, and :meth:`ProcessGroup._poll` tests it in a loop against the
deadline and the liveness of the group's other ranks; a failure raises
``DistBackendError`` naming the rank and the collective, and marks the world broken so
that the process later exits without ``MPI_Finalize`` (which would wait for the dead).

Each function here takes contiguous CPU tensors (the caller made them so) and returns
``(requests, finish)``: ``finish()`` runs once the requests complete (AVG's division,
copies into a tensor list). Buffers are zero-copy NumPy views (see _buffers.py); the Work
holds the tensors until then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._buffers import byte_view, typed_view
from ._types import ReduceOp

Finish = Callable[[], None] | None


def _mpi() -> Any:
    from mpi4py import MPI

    return MPI


def _mpi_op(op: ReduceOp) -> Any:
    MPI = _mpi()
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,  # then divided by the group size in finish()
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
    }[op]


def _average(t: Any, n: int) -> None:
    if t.dtype.is_floating_point:
        t.div_(n)
    else:
        t.div_(n, rounding_mode="trunc")


def _avg_finish(op: ReduceOp, t: Any, n: int) -> Finish:
    return (lambda: _average(t, n)) if op is ReduceOp.AVG else None


def all_reduce(comm: Any, t: Any, op: ReduceOp) -> tuple[list[Any], Finish]:
    MPI = _mpi()
    buf = typed_view(t, "all_reduce")
    req = comm.Iallreduce(MPI.IN_PLACE, buf, _mpi_op(op))
    return [req], _avg_finish(op, t, comm.Get_size())


def broadcast(comm: Any, t: Any, root: int) -> tuple[list[Any], Finish]:
    return [comm.Ibcast(byte_view(t), root=root)], None


def reduce(comm: Any, t: Any, root: int, op: ReduceOp) -> tuple[list[Any], Finish]:
    MPI = _mpi()
    buf = typed_view(t, "reduce")
    if comm.Get_rank() == root:
        req = comm.Ireduce(MPI.IN_PLACE, buf, _mpi_op(op), root=root)
        return [req], _avg_finish(op, t, comm.Get_size())
    return [comm.Ireduce(buf, None, _mpi_op(op), root=root)], None


def all_gather_into(comm: Any, out: Any, inp: Any) -> tuple[list[Any], Finish]:
    return [comm.Iallgather(byte_view(inp), byte_view(out))], None


def reduce_scatter(comm: Any, out: Any, inp: Any, op: ReduceOp) -> tuple[list[Any], Finish]:
    req = comm.Ireduce_scatter_block(
        typed_view(inp, "reduce_scatter_tensor"), typed_view(out, "reduce_scatter_tensor"), _mpi_op(op)
    )
    return [req], _avg_finish(op, out, comm.Get_size())


def all_to_all(
    comm: Any, out: Any, inp: Any, out_counts: Sequence[int], in_counts: Sequence[int]
) -> tuple[list[Any], Finish]:
    """Counts are in bytes per rank; displacements follow from them."""
    MPI = _mpi()
    send = [byte_view(inp), (list(in_counts), _displacements(in_counts)), MPI.BYTE]
    recv = [byte_view(out), (list(out_counts), _displacements(out_counts)), MPI.BYTE]
    return [comm.Ialltoallv(send, recv)], None


def _displacements(counts: Sequence[int]) -> list[int]:
    return [0, *np.cumsum(counts)[:-1].tolist()] if len(counts) else []


def gather_into(comm: Any, inp: Any, out: Any | None, root: int) -> tuple[list[Any], Finish]:
    recv = byte_view(out) if out is not None else None
    return [comm.Igather(byte_view(inp), recv, root=root)], None


def scatter_from(comm: Any, out: Any, inp: Any | None, root: int) -> tuple[list[Any], Finish]:
    send = byte_view(inp) if inp is not None else None
    return [comm.Iscatter(send, byte_view(out), root=root)], None


def send(comm: Any, t: Any, peer: int, tag: int) -> list[Any]:
    return [comm.Isend(byte_view(t), dest=peer, tag=tag)]


def recv(comm: Any, t: Any, peer: int | None, tag: int) -> list[Any]:
    MPI = _mpi()
    source = MPI.ANY_SOURCE if peer is None else peer
    return [comm.Irecv(byte_view(t), source=source, tag=tag)]


def barrier(comm: Any) -> list[Any]:
    return [comm.Ibarrier()]


def bytes_bcast(comm: Any, data: np.ndarray, root: int) -> Any:
    return comm.Ibcast(data, root=root)


def int64_allgather(comm: Any, mine: np.ndarray, out: np.ndarray) -> Any:
    return comm.Iallgather(mine, out)


def bytes_allgatherv(comm: Any, mine: np.ndarray, out: np.ndarray, counts: Sequence[int]) -> Any:
    MPI = _mpi()
    return comm.Iallgatherv([mine, MPI.BYTE], [out, (list(counts), _displacements(counts)), MPI.BYTE])
