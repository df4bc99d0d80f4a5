"""default_collate / default_convert: samples -> batches (PyTorch's ``_utils/collate``).

``default_collate`` turns a list of samples into one batch of the same structure:
tensors are stacked along a new first dimension, NumPy arrays and numbers become
tensors, strings stay lists, and mappings, named tuples and sequences are collated
field by field (recursively). ``collate(batch, collate_fn_map=...)`` is the engine,
dispatching on the type of the first element, so users can extend it with their own types.

Inside a DataLoader worker the stacked batch is allocated directly in shared memory:
it then crosses to the main process without a copy (see _multiprocessing.py).
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
from ember.aten import Tensor

from . import _multiprocessing, _worker

__all__ = ["collate", "default_collate", "default_convert"]

# NumPy dtypes that cannot become tensors: strings, bytes, objects.
_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data: Any) -> Any:
    """Converts NumPy arrays and scalars (also inside mappings and sequences) to tensors,
    leaving everything else as is. The collate_fn used when automatic batching is off
    (``batch_size=None``).

    >>> default_convert(np.array([0, 1]))
    tensor([0, 1])
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ea.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return ea.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(converted)
            return clone
        try:
            return type(data)(converted)  # type: ignore[call-arg]
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as PyTorch (backwards compatibility)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted_list = [default_convert(d) for d in data]
        if isinstance(data, list):
            return converted_list
        try:
            return type(data)(converted_list)  # type: ignore[call-arg]
        except TypeError:
            return converted_list
    return data


def collate(batch: list[Any], *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collates `batch` by the type of its first element: ``collate_fn_map`` maps a type
    (or tuple of types) to ``fn(batch, *, collate_fn_map)``; containers recurse.

    >>> my_map = {**default_collate_fn_map, MyType: collate_my_type}
    >>> collate(batch, collate_fn_map=my_map)
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            # Keeps the mapping's type and any state it carries (an OrderedDict, a defaultdict).
            clone = copy.copy(elem)
            clone.update(fields)
            return clone
        try:
            return elem_type(fields)  # type: ignore[call-arg]
        except TypeError:
            return fields
    if _is_namedtuple(elem):
        return elem_type(
            *(collate(list(samples), collate_fn_map=collate_fn_map) for samples in zip(*batch, strict=True))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=True))
        if isinstance(elem, tuple):
            return [collate(list(samples), collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                seq_clone: Any = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    seq_clone[i] = collate(list(samples), collate_fn_map=collate_fn_map)
                return seq_clone
            return elem_type([collate(list(samples), collate_fn_map=collate_fn_map) for samples in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [collate(list(samples), collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _stack(batch: list[Tensor]) -> Tensor:
    """``stack(batch, 0)``, into shared memory when running in a DataLoader worker."""
    elem = batch[0]
    if _worker.get_worker_info() is not None and elem.device.type == "cpu":
        sizes = (len(batch), *elem.shape)
        return ea.stack(batch, 0, out=_multiprocessing.new_shared_tensor(sizes, elem.dtype))
    return ea.stack(batch, 0)


def collate_tensor_fn(batch: list[Tensor], *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return _stack(batch)


def collate_numpy_array_fn(batch: list[np.ndarray], *, collate_fn_map: CollateFnMap | None = None) -> Any:
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([ea.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list[np.generic], *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return ea.as_tensor(np.array(batch))


def collate_float_fn(batch: list[float], *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return ea.tensor(batch, dtype=ea.float64)


def collate_int_fn(batch: list[int], *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    return ea.tensor(batch)


def collate_str_fn(batch: list[str | bytes], *, collate_fn_map: CollateFnMap | None = None) -> list[str | bytes]:
    return batch


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    # np.str_ / np.bytes_ are str / bytes subclasses: the string rule below takes them.
    (np.bool_, np.number): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list[Any]) -> Any:
    """Stacks a list of samples into a batch, keeping the samples' structure.

    ======================================  ==============================================
    sample element                          batch
    ======================================  ==============================================
    Tensor of shape S                       Tensor of shape (B, *S)
    NumPy array / NumPy scalar              Tensor (stacked) / Tensor of shape (B,)
    float / int / bool                      float64 / int64 / bool Tensor of shape (B,)
    str, bytes                              list of them
    Mapping {k: v}                          same mapping type, {k: default_collate(vs)}
    NamedTuple                              same named tuple of collated fields
    tuple / other Sequence                  list / same type of collated positions
    ======================================  ==============================================

    >>> default_collate([(0, "a"), (1, "b")])
    [tensor([0, 1]), ['a', 'b']]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
