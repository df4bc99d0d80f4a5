"""Process groups and collectives (PyTorch's ``torch.distributed.distributed_c10d``).

The world
---------
``init_process_group`` joins the MPI world that ``mpiexec`` (or ``python -m
ember.distributed.run``, which runs MPICH's mpiexec) started: MPI, not ember, decides
ranks and sizes; ``rank=``/``world_size=``/``RANK``/``WORLD_SIZE`` are checked against
it. Every group (the default one and each ``new_group``) owns a duplicated MPI
communicator, so traffic of different groups never mixes. A group whose backend is
``nccl`` also gets an NCCL communicator, created on its first CUDA collective (its
unique id travels over the group's MPI communicator); barrier and the object
collectives of such a group run over MPI.

Faults (the protocol every collective follows)
-----------------------------------------------
1. The collective is issued as nonblocking requests (MPI) or enqueued on a stream
   (NCCL) and wrapped in a ``Work``.
2. ``Work.wait()`` polls: complete -> done; a peer on this host whose process is gone
   (pids are exchanged at init) -> DistBackendError naming that rank; past the group's
   timeout -> DistBackendError naming the collective, its sequence number and the ranks.
3. A failure marks the world broken: later collectives fail at once, and at exit the
   process leaves with status 1 without ``MPI_Finalize`` (which would wait forever for
   the dead rank). Hydra (mpiexec) then stops the other ranks.
4. ``MPI_Init`` itself waits for every rank; a watchdog process ends the process with a
   message naming the ranks that never joined when that takes longer than the timeout.

Debug mode (``TORCH_DISTRIBUTED_DEBUG=DETAIL``, as PyTorch): before each tensor
collective the ranks exchange (collective, dtype, shape) and a mismatch is a ValueError
naming both ranks' tensors, instead of an engine error or a wrong result.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import socket
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import ember.aten as ea
import numpy as np

from . import _mpi, _status
from ._buffers import check_tensor, contiguous_for
from ._types import Backend, DistBackendError, ReduceOp, default_pg_timeout

__all__ = [
    "GroupMember",
    "ProcessGroup",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "get_backend",
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
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
_MAX_DIMS = 8  # shapes compared in debug mode


class _NonGroupMember:
    """``GroupMember.NON_GROUP_MEMBER``: what ``new_group`` returns to ranks outside it."""

    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonGroupMember()


# ---------------------------------------------------------------------------
# The world: MPI, the peers' pids, the fault state
# ---------------------------------------------------------------------------


class _World:
    def __init__(self, mpi: Any, comm: Any, timeout_s: float, status: _status.StatusRecord) -> None:
        self.MPI = mpi
        self.comm = comm  # a Dup of COMM_WORLD: ember's own traffic, never the user's
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout_s = timeout_s
        self.status = status
        self.pids: list[int] = []
        self.hosts: list[int] = []
        self.broken: str | None = None
        self.pending = 0

    def dead_peers(self, ranks: Sequence[int]) -> list[tuple[int, int]]:
        """(rank, pid) of the given ranks that run on this host and are no longer alive."""
        here = self.hosts[self.rank] if self.hosts else None
        dead = []
        for r in ranks:
            if r == self.rank or not self.hosts or self.hosts[r] != here:
                continue
            if not _alive(self.pids[r]):
                dead.append((r, self.pids[r]))
        return dead


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")  # a zombie is dead: its parent has not reaped it yet


_world: _World | None = None
_default_pg: ProcessGroup | None = None
_groups: list[ProcessGroup] = []
_crashed = False


def _host_id() -> int:
    return zlib.crc32(socket.gethostname().encode())


def _debug_detail() -> bool:
    return os.environ.get("TORCH_DISTRIBUTED_DEBUG", os.environ.get("EMBER_DISTRIBUTED_DEBUG", "")).upper() == "DETAIL"


# ---------------------------------------------------------------------------
# Work
# ---------------------------------------------------------------------------


class Work:
    """The handle of an ``async_op=True`` collective (``torch.distributed.Work``).

    ``wait()`` blocks until the collective is done (raising DistBackendError when a rank
    died or the timeout passed); ``is_completed()`` tests without blocking. Collectives of
    one group complete correctly in any order of ``wait()`` calls.
    """

    def __init__(
        self,
        pg: ProcessGroup,
        name: str,
        seq: int,
        poll: Callable[[], bool],
        finish: Callable[[], None] | None,
        outputs: list[Any],
        keep: Sequence[Any] = (),
        on_timeout: Callable[[], None] | None = None,
    ) -> None:
        self._pg = pg
        self._name = name
        self._seq = seq
        self._poll = poll
        self._finish = finish
        self._outputs = outputs
        self._keep = keep  # tensors whose memory the engine uses until completion
        self._on_timeout = on_timeout
        self._done = False
        self._started = time.monotonic()

    def is_completed(self) -> bool:
        if not self._done and self._poll():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def wait(self, timeout: timedelta | None = None) -> bool:
        if self._done:
            return True
        limit = self._pg._timeout_s if timeout is None else timeout.total_seconds()
        self._pg._poll_until(self._poll, self._started + limit, self._name, self._seq, self._on_timeout)
        self._complete()
        return True

    def result(self) -> list[Any]:
        return self._outputs

    def exception(self) -> BaseException | None:
        return None

    def _complete(self) -> None:
        if self._done:
            return
        self._done = True
        if self._finish is not None:
            self._finish()
        self._keep = ()
        world = self._pg._world
        world.pending -= 1
        if world.pending == 0 and world.broken is None:
            world.status.set(_status.READY, self._seq, self._name)

    def __repr__(self) -> str:
        return f"Work({self._name}, seq={self._seq}, completed={self._done})"


# ---------------------------------------------------------------------------
# ProcessGroup
# ---------------------------------------------------------------------------


class ProcessGroup:
    """A set of ranks with their own communicator(s) (``torch.distributed.ProcessGroup``)."""

    def __init__(self, world: _World, comm: Any, ranks: list[int], backend: str, timeout_s: float) -> None:
        self._world = world
        self._comm = comm
        self._ranks = ranks  # global ranks, in group-rank order
        self._backend = backend
        self._timeout_s = timeout_s
        self._seq = 0
        self._nccl: Any = None

    def rank(self) -> int:
        return int(self._comm.Get_rank())

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._backend

    @property
    def ranks(self) -> list[int]:
        return list(self._ranks)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks}, rank={self.rank()})"

    # -- helpers shared by the collectives
    def _group_rank(self, global_rank: int, op: str, what: str) -> int:
        if not isinstance(global_rank, int) or isinstance(global_rank, bool):
            raise TypeError(f"{op}: {what} must be an int rank, got {type(global_rank).__name__}")
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            raise ValueError(
                f"{op}: {what}={global_rank} is not a rank of this group (its ranks are {self._ranks})"
            ) from None

    def _next_seq(self, name: str) -> int:
        world = self._world
        if world.broken is not None:
            raise DistBackendError(f"{name}: the process group is unusable after an earlier failure: {world.broken}")
        self._seq += 1
        world.pending += 1
        world.status.set(_status.IN_COLLECTIVE, self._seq, name)
        return self._seq

    def _poll_until(
        self,
        test: Callable[[], bool],
        deadline: float,
        name: str,
        seq: int,
        on_timeout: Callable[[], None] | None = None,
    ) -> None:
        world = self._world
        spins = 0
        next_check = time.monotonic() + 0.01
        while True:
            try:
                if test():
                    return
            except DistBackendError:
                raise
            except Exception as e:  # an engine error (MPI.Exception, NCCL's result code)
                self._fail(name, seq, f"the engine reported: {e}")
            spins += 1
            if spins > 200:
                time.sleep(min(0.001, 0.00002 * (spins - 200)))
            now = time.monotonic()
            if now < next_check:
                continue
            next_check = now + 0.01
            dead = world.dead_peers(self._ranks)
            if dead:
                who = ", ".join(f"rank {r} (pid {pid})" for r, pid in dead)
                if on_timeout is not None:
                    on_timeout()
                self._fail(name, seq, f"{who} exited while rank {world.rank} was waiting for it")
            if now >= deadline:
                if on_timeout is not None:
                    on_timeout()
                self._fail(
                    name,
                    seq,
                    f"timed out after {self._timeout_s:g} s waiting for the other ranks of {self._ranks}"
                    " (one of them died on another host, hangs, or called a different collective)",
                )

    def _fail(self, name: str, seq: int, why: str) -> None:
        world = self._world
        msg = f"{name} (sequence number {seq}) failed on rank {world.rank} of {world.size}: {why}"
        world.broken = msg
        world.status.set(_status.FAILED, seq, name)
        raise DistBackendError(msg)

    def _mpi_work(
        self,
        name: str,
        start: Callable[[], tuple[list[Any], Callable[[], None] | None]],
        outputs: list[Any],
        keep: Sequence[Any],
        after: Callable[[], None] | None = None,
    ) -> Work:
        seq = self._next_seq(name)
        MPI = self._world.MPI
        try:
            reqs, finish = start()
        except MPI.Exception as e:
            self._fail(name, seq, f"MPI refused it: {e.Get_error_string()}")
            raise  # unreachable: _fail raises

        def done() -> None:
            if finish is not None:
                finish()
            if after is not None:
                after()

        return Work(self, name, seq, lambda: bool(MPI.Request.Testall(reqs)), done, outputs, keep)

    def _debug_check(self, name: str, t: Any | None, extra: int = 0) -> None:
        """Compare (collective, dtype, shape) across the group before running ``name``."""
        record = np.zeros(4 + _MAX_DIMS, dtype=np.int64)
        record[0] = zlib.crc32(name.encode())
        record[3] = extra
        if t is not None:
            record[1] = zlib.crc32(str(t.dtype).encode())
            record[2] = t.dim()
            record[4 : 4 + min(t.dim(), _MAX_DIMS)] = list(t.shape)[:_MAX_DIMS]
        everyone = np.zeros((self.size(), record.size), dtype=np.int64)
        seq = self._seq
        req = _mpi.int64_allgather(self._comm, record, everyone)
        self._poll_until(lambda: bool(req.Test()), time.monotonic() + self._timeout_s, f"{name} (debug check)", seq)
        for r in range(self.size()):
            if not np.array_equal(everyone[r], record):
                mine, theirs = self.rank(), r
                raise ValueError(
                    f"{name}: ranks disagree (TORCH_DISTRIBUTED_DEBUG=DETAIL): rank {self._ranks[mine]} has "
                    f"{_describe(record, t)}, rank {self._ranks[theirs]} has {_describe(everyone[r], None)}"
                )


def _describe(record: np.ndarray, t: Any | None) -> str:
    if t is not None:
        return f"{t.dtype} tensor of shape {list(t.shape)}"
    ndim = int(record[2])
    return f"a tensor of shape {[int(s) for s in record[4 : 4 + min(ndim, _MAX_DIMS)]]} (dtype code {int(record[1])})"


# ---------------------------------------------------------------------------
# init / destroy
# ---------------------------------------------------------------------------


def is_available() -> bool:
    return True


def is_mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available() -> bool:
    # the NCCL backend (ctypes over libnccl) loads when asked for; it stands on this module
    from . import _nccl

    return _nccl.library_path() is not None


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return _default_pg is not None


def _env_int(*names: str) -> int | None:
    for n in names:
        v = os.environ.get(n)
        if v is not None and v.strip().lstrip("-").isdigit():
            return int(v)
    return None


def _import_mpi() -> Any:
    try:
        import mpi4py
    except ImportError:
        raise RuntimeError(
            "init_process_group: the MPI backend needs mpi4py and an MPI library: pip install 'ember-distributed[mpi]'"
        ) from None
    mpi4py.rc.initialize = False  # ember calls MPI_Init itself, under a watchdog
    mpi4py.rc.finalize = False  # and MPI_Finalize only when the world is healthy
    from mpi4py import MPI

    return MPI


def _init_mpi(MPI: Any, timeout_s: float, rank_guess: int, status: _status.StatusRecord) -> None:
    """MPI_Init waits for every rank of the job: bound it by the timeout.

    mpi4py holds the GIL inside MPI_Init, so no Python thread can watch it: a forked
    watchdog process does. It waits on a pipe; if the pipe is not written within the
    timeout it prints which ranks never joined and ends this process (SIGTERM), and
    Hydra then stops the job. If this process dies first the pipe closes and it leaves.
    """
    if MPI.Is_initialized():
        return
    status.phase(_status.JOINING)
    read_end, write_end = os.pipe()
    parent = os.getpid()
    child = os.fork()
    if child == 0:  # the watchdog
        os.close(write_end)
        code = 0
        try:
            ready, _, _ = select.select([read_end], [], [], timeout_s)
            if not ready:
                missing = _ranks_not_joined()
                who = f"rank(s) {missing} never called init_process_group" if missing else "not every rank joined"
                msg = (
                    f"ember.distributed: init_process_group timed out after {timeout_s:g} s on rank {rank_guess}: "
                    f"{who}\n"
                )
                os.write(2, msg.encode())
                status.set(_status.FAILED, 0, "init_process_group")
                _record_shared_memory(rank_guess, parent)  # MPI_Init may have made segments
                os.kill(parent, signal.SIGTERM)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(read_end)
    try:
        MPI.Init_thread(MPI.THREAD_SERIALIZED)
    finally:
        os.write(write_end, b"1")
        os.close(write_end)
        os.waitpid(child, 0)
    _record_shared_memory(rank_guess)


def _record_shared_memory(rank: int, pid: int | str = "self") -> None:
    """Names of MPICH's /dev/shm segments this rank maps, for the launcher to remove if
    the job dies before MPICH unlinks them itself (a killed rank cannot)."""
    run_dir = os.environ.get(_status.RUN_DIR_ENV)
    if not run_dir or not os.path.isdir(run_dir):
        return
    names = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                if "/dev/shm/" in line:
                    names.add(line.split("/dev/shm/", 1)[1].split()[0])
    except OSError:
        return
    with open(os.path.join(run_dir, f"rank-{rank}.shm"), "w") as f:
        f.write("\n".join(sorted(names)))


def _ranks_not_joined() -> list[int]:
    run_dir = os.environ.get(_status.RUN_DIR_ENV)
    size = _env_int("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
    if not run_dir or size is None:
        return []
    missing = []
    for r in range(size):
        rec = _status.read(run_dir, r)
        if rec is None or rec[1] < _status.JOINING:
            missing.append(r)
    return missing


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Joins the MPI world and creates the default process group.

    Args:
        backend: ``"mpi"`` (CPU tensors) or ``"nccl"`` (CUDA tensors); default ``"mpi"``.
        init_method: ``"env://"`` or None. The ranks come from mpiexec (or
            ``python -m ember.distributed.run``); other rendezvous URLs are refused.
        timeout: how long any collective (and joining) may wait; default 30 minutes.
        world_size, rank: if given (or set as WORLD_SIZE/RANK), checked against MPI's.

    >>> dist.init_process_group("mpi", timeout=timedelta(seconds=60))
    >>> dist.get_rank(), dist.get_world_size()
    """
    global _world, _default_pg
    if _default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else "mpi")
    if init_method not in (None, "env://"):
        raise ValueError(
            f"init_process_group: init_method={init_method!r} is not supported: ember's ranks come from mpiexec "
            "(or python -m ember.distributed.run); use init_method='env://' or None"
        )
    if store is not None:
        raise ValueError("init_process_group: store= is not supported: ember's ranks come from mpiexec")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"init_process_group: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    timeout_s = (timeout or default_pg_timeout).total_seconds()
    MPI = _import_mpi()
    rank_guess = _env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "RANK") or 0
    if _world is None:
        status = _status.StatusRecord(rank_guess)
        _init_mpi(MPI, timeout_s, rank_guess, status)
        MPI.COMM_WORLD.Set_errhandler(MPI.ERRORS_RETURN)
        comm = MPI.COMM_WORLD.Dup()
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        world = _World(MPI, comm, timeout_s, status)
        try:
            _check_world(world, rank, world_size)
        except ValueError:
            if world.size == 1:  # a lone process: finalize, so MPICH removes its shared memory
                MPI.Finalize()
            raise
        _exchange_pids(world)
        _world = world
        atexit.register(_shutdown)
        _install_excepthook()
    else:
        _world.timeout_s = timeout_s
        _check_world(_world, rank, world_size)
    comm = _world.comm.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    _default_pg = ProcessGroup(_world, comm, list(range(_world.size)), str(name), timeout_s)
    GroupMember.WORLD = _default_pg
    _groups.append(_default_pg)
    # what torchrun would have set, for code that reads the environment
    os.environ.setdefault("RANK", str(_world.rank))
    os.environ.setdefault("WORLD_SIZE", str(_world.size))
    _world.status.set(_status.READY, 0, "init_process_group")


def _check_world(world: _World, rank: int, world_size: int) -> None:
    for label, given, actual in (
        ("rank", rank, world.rank),
        ("world_size", world_size, world.size),
        ("RANK", _env_int("RANK"), world.rank),
        ("WORLD_SIZE", _env_int("WORLD_SIZE"), world.size),
    ):
        if given is not None and given != -1 and given != actual:
            raise ValueError(
                f"init_process_group: {label}={given} but MPI gives this process rank {world.rank} of "
                f"{world.size}: start the job with `python -m ember.distributed.run --nproc-per-node N` "
                "or `mpiexec -n N`"
            )


def _exchange_pids(world: _World) -> None:
    mine = np.array([os.getpid(), _host_id()], dtype=np.int64)
    everyone = np.zeros((world.size, 2), dtype=np.int64)
    req = world.comm.Iallgather(mine, everyone)
    deadline = time.monotonic() + world.timeout_s
    while not req.Test():
        if time.monotonic() > deadline:
            world.broken = "init_process_group timed out exchanging process ids"
            raise DistBackendError(f"init_process_group: rank {world.rank} {world.broken}")
        time.sleep(0.0005)
    world.pids = everyone[:, 0].tolist()
    world.hosts = everyone[:, 1].tolist()


def _install_excepthook() -> None:
    previous = sys.excepthook

    def hook(*args: Any) -> None:
        global _crashed
        _crashed = True
        previous(*args)

    sys.excepthook = hook


def _shutdown() -> None:
    """At exit: MPI_Finalize when every rank can get there, else leave without it."""
    world = _world
    if world is None or world.MPI.Is_finalized():
        return
    if world.broken is not None or _crashed:
        world.status.phase(_status.FAILED)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    req = world.comm.Ibarrier()
    deadline = time.monotonic() + world.timeout_s
    while not req.Test():
        if time.monotonic() > deadline or world.dead_peers(range(world.size)):
            world.status.phase(_status.FAILED)
            sys.stderr.write(f"ember.distributed: rank {world.rank}: the other ranks did not reach exit; leaving\n")
            sys.stderr.flush()
            os._exit(1)
        time.sleep(0.001)
    world.status.phase(_status.EXITED)
    world.MPI.Finalize()


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Forgets ``group`` (default: every group). MPI stays initialized until exit, so a
    later ``init_process_group`` works, as in PyTorch."""
    global _default_pg
    if group is None or group is _default_pg:
        if _default_pg is None:
            raise ValueError(_NOT_INITIALIZED)
        for g in _groups:
            _free(g)
        _groups.clear()
        _default_pg = None
        GroupMember.WORLD = None
        return
    _free(group)
    if group in _groups:
        _groups.remove(group)


def _free(g: ProcessGroup) -> None:
    if g._nccl is not None:
        g._nccl.destroy()
        g._nccl = None


# ---------------------------------------------------------------------------
# groups, ranks
# ---------------------------------------------------------------------------


def _get_default_group() -> ProcessGroup:
    if _default_pg is None:
        raise ValueError(_NOT_INITIALIZED)
    return _default_pg


def _resolve(group: Any) -> ProcessGroup | None:
    """The group to run on, or None when this rank is not in it (the collective is a no-op)."""
    default = _get_default_group()
    if group is None:
        return default
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group, got {type(group).__name__}")
    return group


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 outside the group."""
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group: Any = None) -> str:
    pg = _resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    return group._ranks[group_rank]


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    return group.ranks


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
) -> Any:
    """A group of ``ranks`` (global ranks; default all). Every rank of the world must call
    it, in the same order; ranks outside get ``GroupMember.NON_GROUP_MEMBER``."""
    default = _get_default_group()
    world = default._world
    members = sorted(set(range(world.size) if ranks is None else ranks))
    for r in members:
        if not isinstance(r, int) or not 0 <= r < world.size:
            raise ValueError(f"new_group: rank {r!r} is not in the world of {world.size} ranks")
    name = str(Backend(backend)) if backend is not None else default._backend
    timeout_s = timeout.total_seconds() if timeout is not None else default._timeout_s
    # MPI_Comm_split blocks: make sure every rank is here first (a polled barrier).
    seq = default._next_seq("new_group")
    req = world.comm.Ibarrier()
    default._poll_until(lambda: bool(req.Test()), time.monotonic() + default._timeout_s, "new_group", seq)
    world.pending -= 1
    MPI = world.MPI
    color = 0 if world.rank in members else MPI.UNDEFINED
    comm = world.comm.Split(color, world.rank)
    if world.rank not in members:
        return GroupMember.NON_GROUP_MEMBER
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(world, comm, members, name, timeout_s)
    _groups.append(pg)
    return pg


# ---------------------------------------------------------------------------
# the collectives
# ---------------------------------------------------------------------------


def _engine(pg: ProcessGroup, tensors: Sequence[Any], op: str) -> str:
    """'mpi' or 'nccl' for these tensors on this group; a clear error for the wrong device."""
    devices = {t.device.type for t in tensors if t is not None}
    if len(devices) > 1:
        raise ValueError(f"{op}: tensors must all be on one device type, got {sorted(devices)}")
    device = devices.pop() if devices else "cpu"
    if pg._backend == "mpi" and device != "cpu":
        raise ValueError(
            f"{op}: the MPI backend takes CPU tensors, got a tensor on {device} (use backend='nccl' for CUDA tensors)"
        )
    if pg._backend == "nccl" and device != "cuda":
        raise ValueError(f"{op}: the NCCL backend takes CUDA tensors, got a tensor on {device} (use backend='mpi')")
    return "nccl" if device == "cuda" else "mpi"


def _nccl_for(pg: ProcessGroup) -> Any:
    if pg._nccl is None:
        # the NCCL backend (ctypes over libnccl) loads when asked for; it stands on this module
        from . import _nccl

        pg._nccl = _nccl.NCCLCommunicator.create(pg)
    return pg._nccl


def _finish(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _copy_back(dst: Any, src: Any) -> Callable[[], None] | None:
    if dst is src:
        return None
    return lambda: dst.copy_(src)


def _check_op(op: Any, name: str) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}: op must be a ReduceOp (SUM, AVG, PRODUCT, MIN, MAX), got {op!r}")
    return op


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Work | None:
    """Reduces ``tensor`` across the group in place; every rank gets the result."""
    check_tensor(tensor, "all_reduce")
    op = _check_op(op, "all_reduce")
    pg = _resolve(group)
    if pg is None:
        return None
    if _debug_detail():
        pg._debug_check("all_reduce", tensor)
    if _engine(pg, [tensor], "all_reduce") == "nccl":
        return _finish(_nccl_for(pg).all_reduce(tensor, op), async_op)
    buf = contiguous_for(tensor)
    work = pg._mpi_work(
        "all_reduce", lambda: _mpi.all_reduce(pg._comm, buf, op), [tensor], [buf], _copy_back(tensor, buf)
    )
    return _finish(work, async_op)


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> Work | None:
    """Copies ``tensor`` of global rank ``src`` into ``tensor`` of every rank."""
    check_tensor(tensor, "broadcast")
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg._group_rank(src, "broadcast", "src")
    if _debug_detail():
        pg._debug_check("broadcast", tensor, root)
    if _engine(pg, [tensor], "broadcast") == "nccl":
        return _finish(_nccl_for(pg).broadcast(tensor, root), async_op)
    buf = contiguous_for(tensor)
    work = pg._mpi_work(
        "broadcast", lambda: _mpi.broadcast(pg._comm, buf, root), [tensor], [buf], _copy_back(tensor, buf)
    )
    return _finish(work, async_op)


def reduce(
    tensor: Any, dst: int = 0, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduces into ``tensor`` of global rank ``dst`` only (others' tensors are unchanged)."""
    check_tensor(tensor, "reduce")
    op = _check_op(op, "reduce")
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg._group_rank(dst, "reduce", "dst")
    if _debug_detail():
        pg._debug_check("reduce", tensor, root)
    if _engine(pg, [tensor], "reduce") == "nccl":
        return _finish(_nccl_for(pg).reduce(tensor, root, op), async_op)
    buf = contiguous_for(tensor)
    work = pg._mpi_work(
        "reduce", lambda: _mpi.reduce(pg._comm, buf, root, op), [tensor], [buf], _copy_back(tensor, buf)
    )
    return _finish(work, async_op)


def _check_same(tensors: Sequence[Any], like: Any, op: str, what: str) -> None:
    for i, t in enumerate(tensors):
        check_tensor(t, op, f"{what}[{i}]")
        if list(t.shape) != list(like.shape) or t.dtype != like.dtype:
            raise ValueError(
                f"{op}: {what}[{i}] is a {t.dtype} tensor of shape {list(t.shape)}, expected {like.dtype} "
                f"of shape {list(like.shape)} like the input"
            )


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None, async_op: bool = False) -> Work | None:
    """``tensor_list[i]`` gets rank i's ``tensor`` (one per rank of the group)."""
    check_tensor(tensor, "all_gather")
    pg = _resolve(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group has {pg.size()} ranks")
    _check_same(tensor_list, tensor, "all_gather", "tensor_list")
    if _debug_detail():
        pg._debug_check("all_gather", tensor)
    stacked = ea.empty([pg.size(), *tensor.shape], dtype=tensor.dtype, device=tensor.device)
    inp = contiguous_for(tensor)

    def scatter_out() -> None:
        for i, t in enumerate(tensor_list):
            t.copy_(stacked[i])

    if _engine(pg, [tensor], "all_gather") == "nccl":
        work = _nccl_for(pg).all_gather(stacked, inp, scatter_out)
        return _finish(work, async_op)
    work = pg._mpi_work(
        "all_gather", lambda: _mpi.all_gather_into(pg._comm, stacked, inp), tensor_list, [stacked, inp], scatter_out
    )
    return _finish(work, async_op)


def all_gather_into_tensor(
    output_tensor: Any, input_tensor: Any, group: Any = None, async_op: bool = False
) -> Work | None:
    """Concatenates every rank's ``input_tensor`` along dim 0 (or stacks: output shape
    ``[world_size, *input.shape]``) into ``output_tensor``."""
    check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _resolve(group)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError(
            f"all_gather_into_tensor: output dtype {output_tensor.dtype} differs from input dtype {input_tensor.dtype}"
        )
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(
            f"all_gather_into_tensor: output_tensor has {output_tensor.numel()} elements, expected "
            f"{pg.size()} x {input_tensor.numel()} (world size x input)"
        )
    if _debug_detail():
        pg._debug_check("all_gather_into_tensor", input_tensor)
    out = contiguous_for(output_tensor)
    inp = contiguous_for(input_tensor)
    if _engine(pg, [output_tensor, input_tensor], "all_gather_into_tensor") == "nccl":
        return _finish(_nccl_for(pg).all_gather(out, inp, _copy_back(output_tensor, out)), async_op)
    work = pg._mpi_work(
        "all_gather_into_tensor",
        lambda: _mpi.all_gather_into(pg._comm, out, inp),
        [output_tensor],
        [out, inp],
        _copy_back(output_tensor, out),
    )
    return _finish(work, async_op)


def reduce_scatter_tensor(
    output: Any, input: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduces ``input`` (world_size equal chunks along dim 0) and gives rank i chunk i."""
    check_tensor(output, "reduce_scatter_tensor", "output")
    check_tensor(input, "reduce_scatter_tensor", "input")
    op = _check_op(op, "reduce_scatter_tensor")
    pg = _resolve(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError(f"reduce_scatter_tensor: output dtype {output.dtype} differs from input dtype {input.dtype}")
    if input.numel() != output.numel() * pg.size():
        raise ValueError(
            f"reduce_scatter_tensor: input has {input.numel()} elements, expected {pg.size()} x {output.numel()} "
            "(world size x output)"
        )
    if _debug_detail():
        pg._debug_check("reduce_scatter_tensor", input)
    out = contiguous_for(output)
    inp = contiguous_for(input)
    if _engine(pg, [output, input], "reduce_scatter_tensor") == "nccl":
        return _finish(_nccl_for(pg).reduce_scatter(out, inp, op, _copy_back(output, out)), async_op)
    work = pg._mpi_work(
        "reduce_scatter_tensor",
        lambda: _mpi.reduce_scatter(pg._comm, out, inp, op),
        [output],
        [out, inp],
        _copy_back(output, out),
    )
    return _finish(work, async_op)


def all_to_all_single(
    output: Any,
    input: Any,
    output_split_sizes: Sequence[int] | None = None,
    input_split_sizes: Sequence[int] | None = None,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Rank i sends its j-th split of ``input`` (along dim 0) to rank j, which stores it as
    its i-th split of ``output``. Equal splits unless split sizes are given."""
    check_tensor(output, "all_to_all_single", "output")
    check_tensor(input, "all_to_all_single", "input")
    pg = _resolve(group)
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise ValueError(f"all_to_all_single: output dtype {output.dtype} differs from input dtype {input.dtype}")
    in_splits = _splits(input, input_split_sizes, n, "input")
    out_splits = _splits(output, output_split_sizes, n, "output")
    row_in = input.numel() // max(input.shape[0], 1) * input.element_size() if input.dim() else input.element_size()
    row_out = (
        output.numel() // max(output.shape[0], 1) * output.element_size() if output.dim() else output.element_size()
    )
    if _debug_detail():
        pg._debug_check("all_to_all_single", None)
    if _engine(pg, [output, input], "all_to_all_single") == "nccl":
        raise NotImplementedError("all_to_all_single: not yet implemented on the NCCL backend")
    out = contiguous_for(output)
    inp = contiguous_for(input)
    work = pg._mpi_work(
        "all_to_all_single",
        lambda: _mpi.all_to_all(pg._comm, out, inp, [s * row_out for s in out_splits], [s * row_in for s in in_splits]),
        [output],
        [out, inp],
        _copy_back(output, out),
    )
    return _finish(work, async_op)


def _splits(t: Any, sizes: Sequence[int] | None, n: int, what: str) -> list[int]:
    rows = t.shape[0] if t.dim() else 1
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single: {what} dim 0 ({rows}) is not divisible by the world size {n}")
        return [rows // n] * n
    sizes = list(sizes)
    if len(sizes) != n or sum(sizes) != rows or any(s < 0 for s in sizes):
        raise ValueError(f"all_to_all_single: {what}_split_sizes={sizes} must be {n} sizes summing to dim 0 ({rows})")
    return sizes


def gather(
    tensor: Any, gather_list: list[Any] | None = None, dst: int = 0, group: Any = None, async_op: bool = False
) -> Work | None:
    """Global rank ``dst`` gets every rank's ``tensor`` in ``gather_list``."""
    check_tensor(tensor, "gather")
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg._group_rank(dst, "gather", "dst")
    is_root = pg.rank() == root
    if is_root:
        if gather_list is None or len(gather_list) != pg.size():
            got = "None" if gather_list is None else f"{len(gather_list)} tensors"
            raise ValueError(f"gather: the destination rank needs gather_list of {pg.size()} tensors, got {got}")
        _check_same(gather_list, tensor, "gather", "gather_list")
    elif gather_list:
        raise ValueError("gather: gather_list must be None or empty on non-destination ranks")
    if _debug_detail():
        pg._debug_check("gather", tensor, root)
    _engine(pg, [tensor], "gather")
    if pg._backend == "nccl":
        raise NotImplementedError("gather: not yet implemented on the NCCL backend")
    inp = contiguous_for(tensor)
    stacked = ea.empty([pg.size(), *tensor.shape], dtype=tensor.dtype) if is_root else None

    def scatter_out() -> None:
        if stacked is not None and gather_list is not None:
            for i, t in enumerate(gather_list):
                t.copy_(stacked[i])

    work = pg._mpi_work(
        "gather",
        lambda: _mpi.gather_into(pg._comm, inp, stacked, root),
        list(gather_list or []),
        [inp, stacked],
        scatter_out,
    )
    return _finish(work, async_op)


def scatter(
    tensor: Any, scatter_list: list[Any] | None = None, src: int = 0, group: Any = None, async_op: bool = False
) -> Work | None:
    """Rank i gets ``scatter_list[i]`` of global rank ``src`` in ``tensor``."""
    check_tensor(tensor, "scatter")
    pg = _resolve(group)
    if pg is None:
        return None
    root = pg._group_rank(src, "scatter", "src")
    is_root = pg.rank() == root
    if is_root:
        if scatter_list is None or len(scatter_list) != pg.size():
            got = "None" if scatter_list is None else f"{len(scatter_list)} tensors"
            raise ValueError(f"scatter: the source rank needs scatter_list of {pg.size()} tensors, got {got}")
        _check_same(scatter_list, tensor, "scatter", "scatter_list")
    elif scatter_list:
        raise ValueError("scatter: scatter_list must be None or empty on non-source ranks")
    if _debug_detail():
        pg._debug_check("scatter", tensor, root)
    _engine(pg, [tensor], "scatter")
    if pg._backend == "nccl":
        raise NotImplementedError("scatter: not yet implemented on the NCCL backend")
    out = contiguous_for(tensor)
    stacked = ea.stack(list(scatter_list)) if is_root and scatter_list is not None else None
    work = pg._mpi_work(
        "scatter",
        lambda: _mpi.scatter_from(pg._comm, out, stacked, root),
        [tensor],
        [out, stacked],
        _copy_back(tensor, out),
    )
    return _finish(work, async_op)


def isend(tensor: Any, dst: int, group: Any = None, tag: int = 0) -> Work | None:
    """Sends ``tensor`` to global rank ``dst`` without blocking."""
    check_tensor(tensor, "isend")
    pg = _resolve(group)
    if pg is None:
        return None
    peer = pg._group_rank(dst, "isend", "dst")
    if peer == pg.rank():
        raise ValueError(f"isend: dst={dst} is this process's own rank")
    if _engine(pg, [tensor], "isend") == "nccl":
        return _nccl_for(pg).send(tensor, peer)
    buf = tensor.contiguous()  # a snapshot: the caller may change tensor before the send completes
    return pg._mpi_work("send", lambda: (_mpi.send(pg._comm, buf, peer, tag), None), [], [buf])


def irecv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0) -> Work | None:
    """Receives into ``tensor`` from global rank ``src`` (any rank when None) without blocking."""
    check_tensor(tensor, "irecv")
    pg = _resolve(group)
    if pg is None:
        return None
    peer = None if src is None else pg._group_rank(src, "irecv", "src")
    if peer is not None and peer == pg.rank():
        raise ValueError(f"irecv: src={src} is this process's own rank")
    if _engine(pg, [tensor], "irecv") == "nccl":
        if peer is None:
            raise ValueError("irecv: the NCCL backend needs an explicit src")
        return _nccl_for(pg).recv(tensor, peer)
    buf = contiguous_for(tensor)
    return pg._mpi_work(
        "recv", lambda: (_mpi.recv(pg._comm, buf, peer, tag), None), [tensor], [buf], _copy_back(tensor, buf)
    )


def send(tensor: Any, dst: int, group: Any = None, tag: int = 0) -> None:
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def recv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0) -> int:
    """Receives into ``tensor``; returns the sender's global rank (-1 outside the group)."""
    pg = _resolve(group)
    if pg is None:
        return -1
    if src is not None:
        work = irecv(tensor, src, group, tag)
        assert work is not None
        work.wait()
        return src
    # any source: probe (nonblocking, polled) to learn the sender, then receive from it
    MPI = pg._world.MPI
    status = MPI.Status()
    seq = pg._next_seq("recv")
    pg._poll_until(
        lambda: bool(pg._comm.Iprobe(source=MPI.ANY_SOURCE, tag=tag, status=status)),
        time.monotonic() + pg._timeout_s,
        "recv",
        seq,
    )
    pg._world.pending -= 1
    sender = pg._ranks[status.Get_source()]
    work = irecv(tensor, sender, group, tag)
    assert work is not None
    work.wait()
    return sender


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Waits until every rank of the group reaches it."""
    pg = _resolve(group)
    if pg is None:
        return None
    return _finish(pg._mpi_work("barrier", lambda: (_mpi.barrier(pg._comm), None), [], []), async_op)


# ---------------------------------------------------------------------------
# object collectives (pickle, as PyTorch; only unpickle data from ranks you trust)
# ---------------------------------------------------------------------------


def _run_blocking(pg: ProcessGroup, name: str, start: Callable[[], Any]) -> None:
    seq = pg._next_seq(name)
    req = start()
    pg._poll_until(lambda: bool(req.Test()), time.monotonic() + pg._timeout_s, name, seq)
    pg._world.pending -= 1
    if pg._world.pending == 0:
        pg._world.status.set(_status.READY, seq, name)


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None, device: Any = None) -> None:
    """Every rank's ``object_list`` becomes global rank ``src``'s (in place)."""
    pg = _resolve(group)
    if pg is None:
        return
    root = pg._group_rank(src, "broadcast_object_list", "src")
    n = len(object_list)
    if pg.rank() == root:
        blobs = [pickle.dumps(o) for o in object_list]
        sizes = np.array([len(b) for b in blobs], dtype=np.int64)
    else:
        blobs = []
        sizes = np.zeros(n, dtype=np.int64)
    _run_blocking(pg, "broadcast_object_list", lambda: _mpi.bytes_bcast(pg._comm, sizes, root))
    data = (
        np.frombuffer(b"".join(blobs), dtype=np.uint8).copy() if blobs else np.zeros(int(sizes.sum()), dtype=np.uint8)
    )
    _run_blocking(pg, "broadcast_object_list", lambda: _mpi.bytes_bcast(pg._comm, data, root))
    if pg.rank() != root:
        offset = 0
        raw = data.tobytes()
        for i, size in enumerate(sizes.tolist()):
            object_list[i] = pickle.loads(raw[offset : offset + size])
            offset += size


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` (the list must have one slot per rank)."""
    pg = _resolve(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(
            f"all_gather_object: object_list has {len(object_list)} slots, the group has {pg.size()} ranks"
        )
    blob = np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy()
    sizes = np.zeros(pg.size(), dtype=np.int64)
    mine = np.array([blob.size], dtype=np.int64)
    _run_blocking(pg, "all_gather_object", lambda: _mpi.int64_allgather(pg._comm, mine, sizes))
    out = np.zeros(int(sizes.sum()), dtype=np.uint8)
    counts = sizes.tolist()
    _run_blocking(pg, "all_gather_object", lambda: _mpi.bytes_allgatherv(pg._comm, blob, out, counts))
    raw = out.tobytes()
    offset = 0
    for i, size in enumerate(counts):
        object_list[i] = pickle.loads(raw[offset : offset + size])
        offset += size
