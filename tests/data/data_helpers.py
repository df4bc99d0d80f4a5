"""Datasets and checks shared by the ember.data tests.

A module of its own (put on sys.path by conftest.py) so that worker processes started
with 'spawn' -- which import what they unpickle -- and the subprocess scripts of
test_failures.py can import these classes.
"""

from __future__ import annotations

import glob
import os
import random
import signal
import time

import ember.aten as ea
import numpy as np
from ember.data import Dataset, IterableDataset, get_worker_info

SHM_GLOB = "/dev/shm/ember_*"


class RangeDataset(Dataset):
    """Sample i: (float32 tensor [i, i, i], i)."""

    def __init__(self, n: int = 20, width: int = 3) -> None:
        self.n = n
        self.width = width

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return ea.tensor([float(i)] * self.width), i


class ImageDataset(Dataset):
    """n float32 images of shape (3, 32, 32) (the benchmark's samples), deterministic."""

    def __init__(self, n: int = 256) -> None:
        self.images = ea.from_numpy(np.random.default_rng(0).standard_normal((n, 3, 32, 32), dtype=np.float32))
        self.labels = [i % 10 for i in range(n)]

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        return self.images[i], self.labels[i]


class RandomDrawDataset(Dataset):
    """Sample i: what the worker's generators give (Python, NumPy, ember.aten) + the worker id."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        g = ea.default_generator
        return {
            "py": random.random(),
            "np": float(np.random.rand()),
            "ember": list(g._get_state()),
            "worker": wid,
            "seed": -1 if info is None else info.seed,
        }


class ShardedStream(IterableDataset):
    """0..n-1 split between the workers by get_worker_info() (contiguous shards)."""

    def __init__(self, n: int = 10) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = -(-self.n // info.num_workers)
        start = info.id * per
        return iter(range(start, min(start + per, self.n)))


class UnshardedStream(IterableDataset):
    def __init__(self, n: int = 5) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        return iter(range(self.n))


class DatasetError(Exception):
    """An exception type of the user's, for the re-raise tests."""


class FailingDataset(Dataset):
    """Raises `exc` at index `bad`."""

    def __init__(self, bad: int = 5, exc: type[BaseException] = ValueError, n: int = 12) -> None:
        self.bad, self.exc, self.n = bad, exc, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if i == self.bad:
            raise self.exc(f"index {i} is bad")
        return i


class SlowDataset(Dataset):
    """Sleeps `delay` seconds in every __getitem__."""

    def __init__(self, delay: float, n: int = 8) -> None:
        self.delay, self.n = delay, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        time.sleep(self.delay)
        return i


class SlowFirstDataset(Dataset):
    """Index 0 is fetched only after index 3 (round robin over two workers: after batch 1
    was sent), so later batches are ready first. Each fetch leaves a file in `folder`."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int):
        if i == 0 and get_worker_info() is not None:
            deadline = time.monotonic() + 20
            while not os.path.exists(os.path.join(self.folder, "3")) and time.monotonic() < deadline:
                time.sleep(0.01)
        open(os.path.join(self.folder, str(i)), "w").close()
        return i


class SuicideDataset(Dataset):
    """The worker that fetches index `bad` kills itself with `sig`."""

    def __init__(self, bad: int = 9, sig: int = signal.SIGKILL, n: int = 40) -> None:
        self.bad, self.sig, self.n = bad, sig, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if i == self.bad and get_worker_info() is not None:
            os.kill(os.getpid(), self.sig)
            time.sleep(10)
        return ea.tensor([float(i)])


class BigSampleDataset(Dataset):
    """Samples of `nbytes` bytes each (float32)."""

    def __init__(self, nbytes: int, n: int = 4) -> None:
        self.numel, self.n = nbytes // 4, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return ea.from_numpy(np.full(self.numel, i, dtype=np.float32))


def shm_entries() -> set[str]:
    return set(glob.glob(SHM_GLOB))


def child_pids(pid: int | None = None) -> list[int]:
    """Live (non-zombie) processes whose parent is `pid` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def helper_processes() -> set[int]:
    """multiprocessing's own long-lived helpers (the resource tracker and forkserver that
    'spawn'/'forkserver' contexts start): children of ours, but not DataLoader workers."""
    from multiprocessing import forkserver, resource_tracker

    pids = {getattr(resource_tracker._resource_tracker, "_pid", None)}
    pids.add(getattr(forkserver._forkserver, "_forkserver_pid", None))
    return {p for p in pids if p}


def worker_pids() -> list[int]:
    """Live children of this process other than multiprocessing's helpers."""
    return [p for p in child_pids() if p not in helper_processes()]


def processes_with_env(marker: str) -> list[int]:
    """Pids of live processes whose environment holds `marker` (workers inherit it)."""
    out = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if needle in env and stat[stat.rindex(")") + 2] != "Z":
            out.append(int(entry))
    return out


# ---- process targets for test_multiprocessing.py -----------------------------------------


def echo_and_modify(q_in, q_out):
    t = q_in.get()
    q_out.put((t.shape, t.stride(), t.storage_offset(), t.untyped_storage().is_shared(), t.tolist()))
    q_in.get()
    t.fill_(7)  # visible to the sender: the memory is shared
    q_out.put(ea.tensor([1.5, 2.5]))  # and back the other way
    q_in.get()  # wait until the parent has looked


def send_temporary(q, done):
    q.put(ea.tensor([1.0, 2.0, 3.0]))  # dropped by the sender at once
    q.put(ea.tensor([4.0]))  # never received
    done.wait(30)
