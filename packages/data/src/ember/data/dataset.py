"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable-style (``__iter__``).

PyTorch's ``torch.utils.data.dataset``: ``Dataset``, ``IterableDataset``,
``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``,
``Subset`` and ``random_split``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import ember.aten as ea
from ember.aten import Tensor

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset(Generic[T_co]):
    """A map from keys (usually ints) to samples: subclasses define ``__getitem__`` and,
    for samplers that need it, ``__len__``. ``__getitems__(indices)``, if defined, fetches
    a whole batch at once.

    >>> class Squares(Dataset):
    ...     def __len__(self): return 10
    ...     def __getitem__(self, i): return i * i
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])

    # No __len__ here: a default could not be right, and `len()` must fail with a
    # TypeError for datasets that have none (DataLoader relies on that).


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker holds a copy of the dataset and iterates it;
    use :func:`get_worker_info` inside ``__iter__`` to give each worker its own shard,
    or every sample is produced ``num_workers`` times.

    >>> class Range(IterableDataset):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
    ...         return iter(range(start, self.n, step))
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Sample i is ``tuple(t[i] for t in tensors)``; all tensors share their first dimension.

    >>> ds = TensorDataset(ember.aten.zeros(5, 3), ember.aten.arange(5))
    >>> x, y = ds[2]
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        assert all(tensors[0].size(0) == tensor.size(0) for tensor in tensors), "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset[T_co]):
    """Several datasets of equal length side by side: sample i is ``(a[i], b[i])`` for
    ``StackDataset(a, b)``, or ``{"x": a[i], "y": b[i]}`` for ``StackDataset(x=a, y=b)``."""

    _length: int

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                    "but both types are given."
                )
            self._length = len(args[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in args):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets: tuple[Dataset[Any], ...] | dict[str, Dataset[Any]] = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])  # type: ignore[arg-type]
            if any(self._length != len(dataset) for dataset in tmp):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        # Each nested dataset fetches the whole batch at once when it can.
        def column(dataset: Dataset[Any]) -> list[Any]:
            getitems = getattr(dataset, "__getitems__", None)
            if callable(getitems):
                items = getitems(indices)
                if len(items) != len(indices):
                    raise ValueError(
                        f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}"
                    )
                return list(items)
            return [dataset[i] for i in indices]

        if isinstance(self.datasets, dict):
            columns = {k: column(d) for k, d in self.datasets.items()}
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        cols = [column(d) for d in self.datasets]
        return [tuple(col[j] for col in cols) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after the other: index ``len(a) + j`` is ``b[j]``."""

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset[Any]):
    """Iterable datasets one after the other (chained lazily, as itertools.chain)."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order."""

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[idx] for idx in indices])  # type: ignore[no-any-return]
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T], lengths: Sequence[int | float], generator: Any = ea.default_generator
) -> list[Subset[T]]:
    """Splits `dataset` into non-overlapping random subsets of the given lengths, or of the
    given fractions of ``len(dataset)`` (floors, then the remainder handed out one by one,
    round robin). Reproducible under ``generator=`` (default: the default generator).

    >>> train, val = random_split(range(10), [0.8, 0.2], generator=ember.aten.Generator().manual_seed(0))
    """
    n = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(n * frac))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    sizes = [int(x) for x in lengths]
    indices = ea.randperm(sum(sizes), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(sizes), sizes, strict=True)
    ]
