"""Padding layers: constant/zero, reflection, replication and circular (1-3d).

``padding`` is an int (all sides) or a tuple in F.pad's order: (left, right) for 1d,
(left, right, top, bottom) for 2d, (..., front, back) for 3d.
"""

from __future__ import annotations

from typing import Any

from ember.aten import Tensor

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]

_sextuple = _ntuple(6, "_sextuple")


class _ConstantPadNd(Module):
    __constants__ = ("padding", "value")
    padding: tuple[int, ...]

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """ConstantPad1d(padding, value)"""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """ConstantPad2d(padding, value)"""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _quadruple(padding)


class ConstantPad3d(_ConstantPadNd):
    """ConstantPad3d(padding, value)"""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _sextuple(padding)


class ZeroPad1d(ConstantPad1d):
    """ZeroPad1d(padding)"""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """ZeroPad2d(padding)"""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """ZeroPad3d(padding)"""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ModePadNd(Module):
    __constants__ = ("padding",)
    padding: tuple[int, ...]
    mode: str = ""

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """ReflectionPad1d(padding): mirrors the input at its edges (edge not repeated)."""

    mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReflectionPad2d(_ModePadNd):
    """ReflectionPad2d(padding)"""

    mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReflectionPad3d(_ModePadNd):
    """ReflectionPad3d(padding)"""

    mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class ReplicationPad1d(_ModePadNd):
    """ReplicationPad1d(padding): repeats the edge values."""

    mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReplicationPad2d(_ModePadNd):
    """ReplicationPad2d(padding)"""

    mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ReplicationPad3d(_ModePadNd):
    """ReplicationPad3d(padding)"""

    mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class CircularPad1d(_ModePadNd):
    """CircularPad1d(padding): wraps the input around."""

    mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class CircularPad2d(_ModePadNd):
    """CircularPad2d(padding)"""

    mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class CircularPad3d(_ModePadNd):
    """CircularPad3d(padding)"""

    mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sextuple(padding)
