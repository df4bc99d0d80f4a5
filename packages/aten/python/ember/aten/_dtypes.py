"""dtype objects (the c10py singletons) under PyTorch's names and aliases."""

from __future__ import annotations

from typing import Any

import ember.c10py as _c10

from . import _C

dtype = _c10.dtype
bool = _c10.bool
uint8 = _c10.uint8
int8 = _c10.int8
int16 = _c10.int16
int32 = _c10.int32
int64 = _c10.int64
float16 = _c10.float16
bfloat16 = _c10.bfloat16
float32 = _c10.float32
float64 = _c10.float64
# PyTorch's aliases
short = int16
int = int32
long = int64
half = float16
float = float32
double = float64

ALL: tuple[_c10.dtype, ...] = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)

_NUMPY_NAMES = {
    "bool": "bool",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
}


def get_default_dtype() -> Any:
    """The dtype of Python floats turned into tensors (float32 unless changed)."""
    return _C._get_default_dtype()


def set_default_dtype(d: Any) -> None:
    """Sets the default floating-point dtype (float32 or float64, or float16/bfloat16)."""
    if not isinstance(d, dtype):
        raise TypeError(f"set_default_dtype: expected a dtype, got {type(d).__name__}")
    _C._set_default_dtype(d)


def to_numpy_dtype(d: Any) -> Any:
    import numpy as np

    name = _NUMPY_NAMES.get(d._name)
    if name is None:
        raise TypeError(f"Got unsupported ScalarType {d._name} (NumPy has no {d._name} dtype)")
    return np.dtype(name)


def from_numpy_dtype(npd: Any) -> Any:
    import numpy as np

    npd = np.dtype(npd)
    name = "bool" if npd == np.bool_ else npd.name
    for d in ALL:
        if d._name == name:
            return d
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{npd.type.__name__}. The only supported types are: float64, float32, "
        "float16, int64, int32, int16, int8, uint8, and bool."
    )
