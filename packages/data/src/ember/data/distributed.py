"""DistributedSampler: each of ``num_replicas`` processes gets its own slice of the dataset.

PyTorch's ``torch.utils.data.distributed``. Without ``num_replicas``/``rank`` they come
from the default process group of ``ember.distributed`` when that layer is imported and
initialised. ember-data does not depend on ember-distributed (a lower layer never imports
a higher one): it only looks the module up in ``sys.modules``, so nothing is imported
here, and code that uses a process group has necessarily imported it already.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any, TypeVar

import ember.aten as ea

from .dataset import Dataset
from .sampler import Sampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DistributedSampler"]


def _initialized_process_group() -> Any:
    """``ember.distributed`` if it is imported and its default group initialised, else None."""
    dist = sys.modules.get("ember.distributed")
    if dist is None or not dist.is_initialized():
        return None
    return dist


class DistributedSampler(Sampler[T_co]):
    """Indices ``rank, rank + num_replicas, ...`` of a (shuffled, padded) index list.

    Shuffling uses ``seed + epoch`` so that every replica draws the same permutation:
    call :meth:`set_epoch` before each epoch, or every epoch has the same order. Without
    ``drop_last`` the list is padded by repeating its start so that it divides evenly;
    with it, the tail is dropped.

    >>> sampler = DistributedSampler(ds, num_replicas=2, rank=0)
    >>> for epoch in range(3):
    ...     sampler.set_epoch(epoch)
    ...     for batch in DataLoader(ds, sampler=sampler): ...
    """

    def __init__(
        self,
        dataset: Dataset[Any],
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            dist = _initialized_process_group()
            if dist is None:
                raise RuntimeError(
                    "Requires distributed package to be available: pass num_replicas and rank, or call "
                    "ember.distributed.init_process_group first"
                )
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.drop_last and n % self.num_replicas != 0:
            # Drop the tail so that every replica gets the same amount of (distinct) data.
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            g = ea.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ea.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank : self.total_size : self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch: with ``shuffle=True`` each epoch then has its own order."""
        self.epoch = epoch
