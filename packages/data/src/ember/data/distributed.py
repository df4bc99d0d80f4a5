"""DistributedSampler: each of ``num_replicas`` processes gets its own slice of the dataset.

PyTorch's ``torch.utils.data.distributed``. ember has no process-group package yet, so
``num_replicas`` and ``rank`` must be given explicitly (as PyTorch requires when
``torch.distributed`` is unavailable).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, TypeVar

import ember.aten as ea

from .dataset import Dataset
from .sampler import Sampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DistributedSampler"]


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
            raise RuntimeError("Requires distributed package to be available")
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
