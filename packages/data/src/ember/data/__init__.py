"""ember.data: datasets, samplers and the DataLoader (PyTorch's ``torch.utils.data``).

    >>> import ember.aten as ea
    >>> from ember.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(ea.zeros(100, 3), ea.zeros(100))
    >>> for x, y in DataLoader(ds, batch_size=32, shuffle=True, num_workers=2):
    ...     pass

Worker processes hand batches to the main process through shared memory: importing
this package registers pickling reductions for ember.aten tensors with
``multiprocessing`` (see ``_multiprocessing.py``). Readers for standard dataset files
are in ``ember.data.datasets``. This layer needs ember.aten only.
"""

from importlib import metadata as _metadata

from . import _multiprocessing
from ._collate import collate, default_collate, default_convert
from ._multiprocessing import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

_multiprocessing.init_reductions()


def __getattr__(name: str) -> object:
    # ember.data.datasets is imported on first use (it is not needed to load data).
    if name == "datasets":
        import importlib

        return importlib.import_module(".datasets", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = _metadata.version("ember-data")
__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "collate",
    "default_collate",
    "default_convert",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "get_worker_info",
    "random_split",
    "set_sharing_strategy",
]
