"""``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from typing import Any

from ember.aten import Tensor

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten(start_dim=1, end_dim=-1): (N, *dims) -> (N, prod(dims)) by default."""

    __constants__ = ("start_dim", "end_dim")

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _require_tuple_int(input: Any) -> None:
    if isinstance(input, (tuple, list)):
        for idx, elem in enumerate(input):
            if not isinstance(elem, int):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type {type(elem).__name__} "
                    f"at pos {idx}"
                )
        return
    raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}")


class Unflatten(Module):
    """Unflatten(dim, unflattened_size): splits dim ``dim`` into ``unflattened_size``."""

    __constants__ = ("dim", "unflattened_size")

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            _require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
