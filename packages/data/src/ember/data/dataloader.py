"""DataLoader: batches from a dataset, in the main process or in worker processes.

PyTorch's ``torch.utils.data.dataloader``: the same arguments, defaults, errors and
``len()`` rules. The iterator classes:

- ``_SingleProcessDataLoaderIter`` (num_workers=0): sampler -> fetcher -> batch.
- ``_MultiProcessingDataLoaderIter`` (num_workers>0): the protocol below.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.context
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing import util as mp_util
from multiprocessing.reduction import ForkingPickler
from typing import Any, Generic, TypeVar

import ember.aten as ea
from ember.c10py import cuda

from . import _collate, _fetch, _multiprocessing, _pin_memory, _worker
from ._utils import ExceptionWrapper
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

default_collate = _collate.default_collate
default_convert = _collate.default_convert
get_worker_info = _worker.get_worker_info

# How often the main process, while waiting for a batch, checks that its workers are alive
# (seconds): a worker killed by a signal is reported within this time.
MP_STATUS_CHECK_INTERVAL = 0.2


class _DatasetKind:
    Map = _fetch.MAP
    Iterable = _fetch.ITERABLE


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


def _get_distributed_settings() -> tuple[int, int]:
    return 1, 0  # ember has no process-group package: one replica, rank 0


class DataLoader(Generic[T_co]):
    """Iterates over `dataset` in batches.

    Arguments (PyTorch's, with the same defaults): ``batch_size=1`` (None turns automatic
    batching off: the loader yields single samples, passed through ``default_convert``),
    ``shuffle`` (a RandomSampler), ``sampler`` / ``batch_sampler`` (custom index order),
    ``num_workers`` (worker processes; 0 loads in the main process), ``collate_fn``
    (default: :func:`default_collate`), ``pin_memory`` (page-locked batches when CUDA is
    available), ``drop_last``, ``timeout`` (seconds to wait for a batch from the workers;
    0 waits forever), ``worker_init_fn(worker_id)``, ``multiprocessing_context`` (a start
    method name or context; default: multiprocessing's default, 'fork' on Linux),
    ``generator`` (seeds the shuffle and the workers' base seed), ``prefetch_factor``
    (batches in flight per worker, default 2 with workers), ``persistent_workers`` (keep
    workers across epochs), ``in_order`` (False yields batches as they are ready).

    >>> loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, num_workers=2)
    >>> for xb, yb in loader: ...
    """

    dataset: Dataset[T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler[Any] | Iterable[Any]
    prefetch_factor: int | None
    _iterator: _BaseDataLoaderIter | None
    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[Sequence[Any]] | Iterable[Sequence[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            # The dataset decides the order and the end: no shuffle, no sampler.
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                    f"batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
                )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = _collate.default_collate if self._auto_collation else _collate.default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called: int | None = None
        self._iterator = None
        self.check_worker_number_rationality()

    # ---- configuration -----------------------------------------------------------------

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context: Any) -> None:
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method in "
                            f"{valid_start_methods!r}, but got multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading (num_workers > 0), but "
                    f"got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        # What the fetcher is handed: lists of indices with automatic batching, else single indices.
        return self.batch_sampler if self._auto_collation else self.sampler

    # ---- iteration ---------------------------------------------------------------------

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        # Persistent workers: one iterator (and one set of workers) for the loader's life,
        # reset at the start of each epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            # The dataset's own length, in batches; with workers the real count can differ
            # (each worker drops its own last partial batch, or the dataset is not sharded):
            # the iterator warns when more samples arrive than this promised.
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def _get_shared_seed(self) -> int:
        # The workers' base seed: one int64 drawn from `generator` (or the default one).
        return int(ea.empty((), dtype=ea.int64).random_(generator=self.generator).item())

    def check_worker_number_rationality(self) -> None:
        """Warns when more workers are asked for than this process may use CPUs."""
        if self.num_workers == 0:
            return
        try:
            max_num_worker_suggest = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            max_num_worker_suggest = os.cpu_count() or 0
        if max_num_worker_suggest and self.num_workers > max_num_worker_suggest:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested max "
                f"number of worker in current system is {max_num_worker_suggest}, which is smaller than what this "
                "DataLoader is going to create. Please be aware that excessive worker creation might get "
                "DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze "
                "if necessary.",
                UserWarning,
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader[Any]) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._world_size, self._rank = _get_distributed_settings()
        self._pin_memory = loader.pin_memory and _pin_memory.is_pin_memory_available()
        if loader.pin_memory and not self._pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                "won't be used.",
                UserWarning,
                stacklevel=3,
            )
        self._pin_memory_device = loader.pin_memory_device
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter: Iterator[Any] | None = iter(self._index_sampler)
        self._base_seed = loader._get_shared_seed()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader[Any], first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        assert self._sampler_iter is not None
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if (
            self._dataset_kind == _DatasetKind.Iterable
            and self._IterableDataset_len_called is not None
            and self._num_yielded > self._IterableDataset_len_called
        ):
            warn_msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called} "
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                warn_msg += (
                    "For multiprocessing data-loading, this could be caused by not properly configuring the "
                    "IterableDataset replica at each worker. Please see the IterableDataset documentation "
                    "(get_worker_info) for examples."
                )
            warnings.warn(warn_msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        assert self._num_workers == 0  # (timeout only applies to waiting for workers)
        self._dataset_fetcher = _fetch.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
        if self._pin_memory:
            data = _pin_memory.pin_memory(data, self._pin_memory_device)
        return data


class _ReceiveError(ExceptionWrapper):
    """A batch that arrived but could not be unpickled -- typically because its worker died
    before the main process fetched the batch's file descriptors from it."""


def _decode(r: tuple[Any, Any]) -> tuple[Any, Any]:
    """A worker's (idx, payload) -> (idx, data): unpickling maps the batch's shared memory."""
    idx, payload = r
    if not isinstance(payload, bytes):
        return r  # (_ResumeIteration, None), or the pinning thread's wake-up (None, None)
    try:
        return idx, ForkingPickler.loads(payload)
    except Exception:
        return idx, _ReceiveError(where="in the main process, receiving a batch from a DataLoader worker")


# NOTE [ DataLoader worker protocol ]
#
# Processes and queues
#   main process: the iterator below (and, with pin_memory, a pinning thread).
#   N workers:    _worker._worker_loop, each with its own copy of the dataset.
#   index_queues[w] (one per worker)  main -> worker w:
#       (send_idx, indices)              a task: fetch + collate these indices
#       _ResumeIteration(seed)           persistent workers only: a new epoch starts
#       None                             the sentinel: exit
#   worker_result_queue (one, shared)  workers -> main:
#       (send_idx, payload)              payload = bytes: the batch, an ExceptionWrapper or
#                                        _IterableDatasetStopIteration, pickled by the worker
#                                        itself (what cannot be pickled arrives as an error).
#                                        Pickling puts each tensor's storage in shared memory
#                                        (a batch is collated straight into it) and sends a
#                                        handle (fd or name), not its bytes: see
#                                        _multiprocessing.py. Unpickling (_decode, in the main
#                                        process) maps the memory.
#       (_ResumeIteration, None)         the acknowledgement of a resume
#   workers_done_event                 set by the main process when shutting down.
#
# Task flow and order
#   Tasks go round robin to the active workers; at most prefetch_factor * N are out at a
#   time. Priming sends prefetch_factor * N tasks; each batch the main process takes off
#   the result queue lets it send one more. Results arrive in any order: task_info maps
#   send_idx -> (worker,) while pending and (worker, data) once it has arrived early;
#   batches are yielded in send_idx order (rcvd_idx is the next one to yield), the early
#   ones waiting in task_info -- the reorder buffer. With in_order=False a batch is
#   yielded as soon as it arrives, and tasks go to the workers with the fewest pending.
#   An IterableDataset's worker answers _IterableDatasetStopIteration when its stream
#   ends; it is then marked inactive (and, unless persistent, sent the sentinel) and the
#   tasks it still had are skipped.
#
# Waiting and failures
#   The main process waits on the result queue in steps of MP_STATUS_CHECK_INTERVAL; after
#   each empty step it checks that every active worker is alive, so a worker that died
#   (killed by a signal, os._exit, ...) raises RuntimeError naming its pid and how it
#   died, instead of a hang. timeout > 0 bounds the whole wait ("DataLoader timed out
#   after N seconds"). An exception in a worker travels as an ExceptionWrapper and is
#   re-raised, with the worker's traceback, when its batch's turn comes.
#   Workers wait on their index queue in steps too, and exit if the main process is gone
#   (their parent pid changes) or workers_done_event is set without a sentinel coming.
#
# Shutdown (_shutdown_workers; at the end of an epoch unless persistent, on worker
# failure, on __del__ -- break, garbage collection, KeyboardInterrupt unwinding)
#   1. set workers_done_event: workers stop answering tasks;
#   2. stop the pinning thread (its event + a wake-up item on the result queue);
#   3. the sentinel None to every worker's index queue;
#   4. join each worker (bounded), then terminate whatever is still alive;
#   5. close the queues without waiting for their feeder threads.
#   Batches still in the result queue are never unpickled: what their workers held for
#   them (a duplicate fd, or a segment reference) is let go when those workers exit.
#   The memory of batches already yielded is released when the user drops them.


# The processes, queues and event of every multi-process iterator not yet shut down. Held
# here so that when an iterator is garbage collected as part of a reference cycle, these
# are not garbage with it: the collector would first run their own finalizers (closing the
# index queues' feeder threads) and the iterator's __del__ could then no longer send the
# workers their sentinel.
_live_worker_resources: dict[int, tuple[Any, ...]] = {}


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes, per-worker index queues, one result queue and a reorder buffer:
    see NOTE [ DataLoader worker protocol ] above."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        assert self._num_workers > 0
        assert self._prefetch_factor is not None and self._prefetch_factor > 0

        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._worker_pids_set = False
        self._shutdown = False
        self._workers_done_event = ctx.Event()

        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        _live_worker_resources[id(self)] = (
            self._index_queues,
            self._workers,
            self._worker_result_queue,
            self._workers_done_event,
        )
        self._workers_status = [True for _ in range(self._num_workers)]
        # One multiprocessing temp folder per worker, made and removed here (at shutdown, or
        # at exit at the latest), since a worker that dies runs no finalizer: see _worker_loop.
        # As short as multiprocessing's own (a listener socket's path must fit AF_UNIX).
        self._worker_temp_dirs: list[tuple[str, Any]] = []  # (folder, its remover)
        try:
            for i in range(self._num_workers):
                d = tempfile.mkdtemp(prefix="pymp-")
                remove = mp_util.Finalize(
                    None, shutil.rmtree, args=(d,), kwargs={"ignore_errors": True}, exitpriority=-100
                )
                self._worker_temp_dirs.append((d, remove))
                index_queue = ctx.Queue()
                # Nothing left in an index queue matters once the loader is gone.
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker._worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        index_queue,
                        self._worker_result_queue,
                        self._workers_done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        self._worker_init_fn,
                        i,
                        self._num_workers,
                        self._persistent_workers,
                        _multiprocessing.get_sharing_strategy(),
                        self._worker_temp_dirs[i][0],
                    ),
                )
                w.daemon = True
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise

        if self._pin_memory:
            self._pin_memory_thread_done_event = threading.Event()
            self._data_queue: Any = queue.Queue()
            pin_memory_thread = threading.Thread(
                target=_pin_memory._pin_memory_loop,
                args=(
                    self._worker_result_queue,
                    self._data_queue,
                    cuda.current_device(),
                    self._pin_memory_thread_done_event,
                    _decode,
                ),
            )
            pin_memory_thread.daemon = True
            pin_memory_thread.start()
            self._pin_memory_thread = pin_memory_thread
        else:
            self._data_queue = self._worker_result_queue
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader[Any], first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._workers_status = [True for _ in range(self._num_workers)]
        if not first_iter:
            # Persistent workers, a new epoch: each worker answers the resume after the
            # tasks it still had; those stale results are received and dropped.
            for idx in range(self._num_workers):
                self._index_queues[idx].put(_worker._ResumeIteration())
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _worker._ResumeIteration):
                    assert return_data is None
                    resume_iteration_cnt -= 1
        self._send_idx = 0  # idx of the next task to send to workers
        self._rcvd_idx = 0  # idx of the next task to yield
        # send_idx -> (worker_id,) while pending, (worker_id, data) once arrived out of order.
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._workers_num_tasks = [0 for _ in range(self._num_workers)]
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):  # type: ignore[operator]
            self._try_put_index()

    # ---- receiving ---------------------------------------------------------------------

    def _check_workers(self, cause: BaseException | None = None) -> None:
        """Raises RuntimeError if a worker that should be alive has exited."""
        failed = [(wid, w) for wid, w in enumerate(self._workers) if self._workers_status[wid] and not w.is_alive()]
        if not failed:
            return
        messages = []
        for wid, w in failed:
            code = w.exitcode
            if code is not None and code < 0:
                try:
                    name = signal.strsignal(-code) or f"signal {-code}"
                except ValueError:
                    name = f"signal {-code}"
                msg = f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
                if -code == signal.SIGBUS:
                    msg += (
                        "It is possible that dataloader's workers are out of shared memory. Please try to raise "
                        "your shared memory limit."
                    )
            elif code:
                msg = (
                    f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. Details are lost "
                    "due to multiprocessing. Rerunning with num_workers=0 may give better error trace."
                )
            else:
                msg = f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly"
            messages.append(msg)
            self._mark_worker_as_unavailable(wid)
        # The loader cannot go on with a worker missing: let the others go now rather than
        # when this iterator is garbage collected.
        self._shutdown_workers()
        raise RuntimeError("\n".join(messages)) from cause

    def _try_get_data(self, timeout: float) -> tuple[bool, Any]:
        try:
            r = self._data_queue.get(timeout=timeout)
        except queue.Empty:
            self._check_workers()
            if self._pin_memory and not self._pin_memory_thread.is_alive():
                raise RuntimeError("Pin memory thread exited unexpectedly") from None
            return False, None
        if not self._pin_memory:
            r = _decode(r)
        if isinstance(r[1], _ReceiveError) and r[0] in self._task_info:
            # If its worker is dying, say so rather than report the broken hand-over.
            self._workers[self._task_info[r[0]][0]].join(timeout=1.0)
            self._check_workers()
        return True, r

    def _get_data(self) -> Any:
        # Waits in short steps, checking the workers between steps (see the NOTE).
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                success, data = self._try_get_data(min(left, MP_STATUS_CHECK_INTERVAL))
                if success:
                    return data
        while True:
            success, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if success:
                return data

    def _next_data(self) -> Any:
        if self._shutdown:
            raise StopIteration
        while True:
            # Skip tasks whose worker stopped (an IterableDataset worker whose stream ended):
            # their results will never come.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                # Every task sent has been answered and the sampler is exhausted.
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            # The next batch in order may already be in the reorder buffer.
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._workers_num_tasks[data.worker_id] -= 1
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    # Yield it now; the task keeps no slot in the reorder buffer.
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                # Early: park it in the reorder buffer.
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # ---- sending -----------------------------------------------------------------------

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers  # type: ignore[operator]
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        active = [w for w in range(self._num_workers) if self._workers_status[w]]
        if not active:
            return  # every worker's stream ended (IterableDataset)
        if self._in_order:
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            while not self._workers_status[worker_queue_idx]:
                worker_queue_idx = next(self._worker_queue_idx_cycle)
        else:
            # The least busy worker: a slow one does not hold batches back.
            worker_queue_idx = min(active, key=lambda w: self._workers_num_tasks[w])
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    # ---- shutdown ----------------------------------------------------------------------

    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        # Sends the sentinel to one worker (its stream ended, or it died, or shutdown).
        assert self._workers_status[worker_id] or (self._persistent_workers and shutdown)
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        # See NOTE [ DataLoader worker protocol ]: Shutdown. Safe to call more than once,
        # and on a half-constructed iterator.
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            if hasattr(self, "_pin_memory_thread"):
                self._pin_memory_thread_done_event.set()
                self._worker_result_queue.put((None, None))  # wakes the thread if it is waiting
                self._pin_memory_thread.join()
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    if self._workers[worker_id].is_alive():
                        self._mark_worker_as_unavailable(worker_id, shutdown=True)
            # A worker busy in __getitem__ sees the sentinel when it is done; past the
            # deadline it is terminated below.
            deadline = time.monotonic() + 2 * _worker.MP_STATUS_CHECK_INTERVAL
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
                    if w.is_alive():
                        w.kill()
                        w.join()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
            _live_worker_resources.pop(id(self), None)
            for _, remove_temp_dir in getattr(self, "_worker_temp_dirs", ()):
                remove_temp_dir()  # runs once, and leaves the exit registry

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # at interpreter exit, modules may already be torn down
            pass
