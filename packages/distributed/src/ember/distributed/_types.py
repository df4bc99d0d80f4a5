"""The small public types: Backend, ReduceOp, the errors (PyTorch's names)."""

from __future__ import annotations

import enum
from datetime import timedelta
from typing import ClassVar

__all__ = ["Backend", "DistBackendError", "DistError", "ReduceOp", "default_pg_timeout"]

# PyTorch's default: 30 minutes for every collective.
default_pg_timeout = timedelta(minutes=30)


class DistError(RuntimeError):
    """Base of the errors raised by ember.distributed (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed in the engine: a rank died, timed out or disagreed."""


class Backend(str):
    """A backend name: ``Backend("mpi")``, ``Backend.MPI``, ``Backend.NCCL``.

    ember talks to existing engines only: MPI (CPU tensors, through mpi4py) and NCCL
    (CUDA tensors, loaded on first use). Any other name is a ValueError.
    """

    UNDEFINED = "undefined"
    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"
    backend_list: ClassVar[list[str]] = ["mpi", "nccl"]

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {type(name).__name__}")
        value = name.lower()
        if value == "gloo":
            raise ValueError(
                "Invalid backend: 'gloo' is not part of ember; use 'mpi' for CPU tensors "
                "(pip install ember-distributed[mpi])"
            )
        if value not in cls.backend_list:
            raise ValueError(f"Invalid backend: '{name}' (ember has {', '.join(cls.backend_list)})")
        return str.__new__(cls, value)


class ReduceOp(enum.Enum):
    """How a reduction combines the ranks' values. AVG is SUM divided by the group size
    (integer tensors: truncated toward zero, as NCCL's ncclAvg)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"
