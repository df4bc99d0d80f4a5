"""A tensor's bytes as a NumPy array over the same memory: how tensors reach MPI.

MPI reads and writes through the buffer protocol. A contiguous CPU tensor is handed over
as a zero-copy NumPy view of its storage (built from ``data_ptr()``, so every dtype works,
bfloat16 included); a non-contiguous one goes through one contiguous copy, made in one
named place (:func:`contiguous_for`), and the result is copied back.
"""

from __future__ import annotations

import ctypes
from typing import Any

import ember.aten as ea
import numpy as np

# dtypes MPI can reduce (its predefined datatypes follow from NumPy's); the others
# (float16, bfloat16, bool) still move through broadcast/gather/... as raw bytes.
_REDUCIBLE = {
    ea.float32: np.float32,
    ea.float64: np.float64,
    ea.int8: np.int8,
    ea.int16: np.int16,
    ea.int32: np.int32,
    ea.int64: np.int64,
    ea.uint8: np.uint8,
}


def byte_view(t: Any) -> np.ndarray:
    """The bytes of contiguous CPU tensor ``t`` (no copy). The caller keeps ``t`` alive."""
    nbytes = t.numel() * t.element_size()
    if nbytes == 0:
        return np.empty(0, dtype=np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(t.data_ptr()))


def typed_view(t: Any, op: str) -> np.ndarray:
    """``t``'s elements as a NumPy array of the same dtype, for a reduction."""
    np_dtype = _REDUCIBLE.get(t.dtype)
    if np_dtype is None:
        names = ", ".join(str(d).rsplit(".", 1)[-1] for d in _REDUCIBLE)
        raise TypeError(f"{op}: the MPI backend cannot reduce {t.dtype} tensors (it reduces {names})")
    return byte_view(t).view(np_dtype)


def contiguous_for(t: Any) -> Any:
    """``t`` itself when contiguous, else a contiguous copy (the caller copies back)."""
    return t if t.is_contiguous() else t.contiguous()


def check_tensor(t: Any, op: str, name: str = "tensor") -> None:
    if not isinstance(t, ea.Tensor):
        raise TypeError(f"{op}: {name} must be an ember tensor, got {type(t).__name__}")
