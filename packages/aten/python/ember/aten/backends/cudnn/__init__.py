"""Convolution settings (``torch.backends.cudnn``).

ember has no cuDNN: its CUDA convolutions are im2col + cuBLAS products.
``allow_tf32`` (default ``True``, as PyTorch's) lets those products use TF32 for
float32, as cuDNN convolutions do in PyTorch. ``is_available()`` is ``False``.
"""

from __future__ import annotations

import sys
import types

from ember.aten import _C

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

# PyTorch's other cuDNN flags, which training scripts set and log
# (``torch.backends.cudnn.benchmark = True``): kept with PyTorch's defaults, with no
# effect in ember -- its convolutions have no algorithm search and are deterministic.
enabled = True
benchmark = False
deterministic = False


def is_available() -> bool:
    """Whether cuDNN is available: never, in ember (convolutions use cuBLAS)."""
    return False


def version() -> int | None:
    """cuDNN's version: ``None`` (ember does not use cuDNN)."""
    return None


class _CudnnModule(types.ModuleType):
    # a module whose allow_tf32 attribute reads and writes the C++ flag, as PyTorch's
    @property
    def allow_tf32(self) -> bool:
        return bool(_C._get_cudnn_allow_tf32())

    @allow_tf32.setter
    def allow_tf32(self, value: object) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cudnn expects a bool, but got {type(value).__name__}")
        _C._set_cudnn_allow_tf32(value)


sys.modules[__name__].__class__ = _CudnnModule
