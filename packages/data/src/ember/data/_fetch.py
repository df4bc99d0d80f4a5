"""Fetchers: turn what the sampler yields into a batch (PyTorch's ``_utils/fetch``).

A map-style fetcher indexes the dataset (``__getitems__`` for a whole batch when the
dataset has it); an iterable-style fetcher pulls the next samples from the dataset's
iterator. Both then apply collate_fn. The same code runs in the main process
(num_workers=0) and in each worker.
"""

from __future__ import annotations

from typing import Any

MAP = 0
ITERABLE = 1


class _MapDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(kind: int, dataset: Any, auto_collation: bool, collate_fn: Any, drop_last: bool) -> Any:
    if kind == MAP:
        return _MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
    return _IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
