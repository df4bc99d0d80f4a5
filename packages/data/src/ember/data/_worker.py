"""What runs inside a DataLoader worker process: seeding, WorkerInfo, the fetch loop.

The protocol between this loop and the main process is written out in dataloader.py
(``_MultiProcessingDataLoaderIter``); this file is the worker's half of it.
"""

from __future__ import annotations

import os
import queue
import random
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any

import ember.aten as ea
import numpy as np

from . import _fetch
from ._utils import ExceptionWrapper

__all__ = ["WorkerInfo", "get_worker_info"]

# How often a waiting worker checks that the main process is still alive (seconds).
MP_STATUS_CHECK_INTERVAL = 0.5


class WorkerInfo:
    """Who this worker is: ``id`` (0 .. num_workers-1), ``num_workers``, ``seed`` (the seed
    this worker's generators were given) and ``dataset`` (this process's copy of it).
    Read-only."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process: its :class:`WorkerInfo`; in the main process: None.

    Use it in ``IterableDataset.__iter__`` to shard the stream across workers, or in
    ``worker_init_fn`` to configure each worker's copy of the dataset.
    """
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first; echoed back."""

    seed: int | None = None


def _seed_worker(seed: int) -> None:
    """Seeds every generator a dataset might draw from: Python's, NumPy's global one and
    ember.aten's default generators."""

    random.seed(seed)
    ea.manual_seed(seed)
    # NumPy's legacy seed takes 32 bits: hash the 64-bit seed down with SeedSequence
    # rather than truncating it, so that neighbouring base seeds stay unrelated.
    np.random.seed(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0])


class _ManagerWatchdog:
    """Notices that the main process is gone (the worker is then re-parented)."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _send(data_queue: Any, idx: int, data: Any, worker_id: int) -> None:
    """Sends (idx, pickled data). Pickling here rather than in the queue's feeder thread
    means a batch that cannot be pickled (or shared: shared memory exhausted) reaches the
    main process as an exception instead of being dropped, which would leave it waiting;
    and the main process knows idx even if it fails to unpickle the batch."""
    try:
        payload = ForkingPickler.dumps(data)
    except Exception:
        payload = ForkingPickler.dumps(ExceptionWrapper(where=f"in DataLoader worker process {worker_id}"))
    data_queue.put((idx, bytes(payload)))


def _worker_loop(
    dataset_kind: int,
    dataset: Any,
    index_queue: Any,
    data_queue: Any,
    done_event: Any,
    auto_collation: bool,
    collate_fn: Any,
    drop_last: bool,
    base_seed: int,
    init_fn: Any,
    worker_id: int,
    num_workers: int,
    persistent_workers: bool,
    sharing_strategy: str,
    temp_dir: str | None = None,
) -> None:
    # See NOTE [ DataLoader worker protocol ] in dataloader.py.
    if temp_dir is not None:
        # multiprocessing's temp folder (the resource sharer's listener-* sockets) is one
        # the main process made and removes: a worker killed by a signal or by
        # terminate() runs no finalizer, and its own pymp-* folder would stay behind.
        import multiprocessing.process

        multiprocessing.process.current_process()._config["tempdir"] = temp_dir  # type: ignore[attr-defined]
    watchdog = _ManagerWatchdog()
    try:
        # inside the try: a worker that cannot import reports it to the main process
        import ember.aten as ea

        # (as above)
        from . import _multiprocessing

        # A spawned worker starts with the defaults: use the main process's strategy.
        _multiprocessing.set_sharing_strategy(sharing_strategy)
        # Workers run side by side: one intra-op thread each, or they oversubscribe the CPUs.
        ea.set_num_threads(1)
        seed = base_seed + worker_id
        _seed_worker(seed)

        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _fetch.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break  # shutting down, and the sentinel did not come (see the NOTE)
                continue
            if isinstance(r, _ResumeIteration):
                # A new epoch for persistent workers: a fresh fetcher (a fresh iterator of
                # an IterableDataset), then the acknowledgement.
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _fetch.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                # The sentinel: shutting down (or this worker's stream ended).
                assert done_event.is_set() or iteration_end
                break
            if done_event.is_set() or iteration_end:
                # Shutting down, or the stream ended: tasks still queued are not answered;
                # the sentinel follows.
                continue
            idx, index = r
            data: Any
            if init_exception is not None:
                data = init_exception  # every task answers it: this worker cannot fetch
            else:
                try:
                    assert fetcher is not None
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _fetch.ITERABLE:
                        data = _IterableDatasetStopIteration(worker_id)
                        # The main process sends no more tasks and, unless the workers
                        # are persistent, the sentinel.
                        iteration_end = True
                    else:
                        # The main process re-raises it (with this traceback).
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            _send(data_queue, idx, data, worker_id)
            del data, idx, index, r  # drop this worker's references before blocking again
    except KeyboardInterrupt:
        # Ctrl-C reaches the whole process group; the main process handles it.
        pass
    if done_event.is_set() or os.getppid() != watchdog.manager_pid:
        # Do not wait, at exit, for the main process to read what is left in the pipe.
        data_queue.cancel_join_thread()
        data_queue.close()
