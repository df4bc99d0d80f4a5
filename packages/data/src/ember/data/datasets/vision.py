"""VisionDataset: the common part of file-backed datasets (root, transforms, repr)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..dataset import Dataset

__all__ = ["VisionDataset"]


class VisionDataset(Dataset[Any]):
    """A dataset read from files under `root`; ``transform`` applies to the input,
    ``target_transform`` to the target (torchvision's base class, less the joint
    ``transforms``)."""

    _repr_indent = 4

    def __init__(
        self,
        root: str | os.PathLike[str],
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
    ) -> None:
        self.root = os.path.expanduser(os.fspath(root))
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}", f"Root location: {self.root}"]
        body += self.extra_repr().splitlines()
        if self.transform is not None:
            body.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            body.append(f"Target transform: {self.target_transform!r}")
        return "\n".join([head] + [" " * self._repr_indent + line for line in body])
