"""Folder datasets: one sub-folder per class, one file per sample (torchvision's DatasetFolder).

    root/dog/xxx.npy
    root/dog/nested/xxy.npy
    root/cat/123.npy

Classes are the sub-folder names, sorted; ``class_to_idx`` numbers them in that order.
Samples are found by walking each class folder (sorted, following links). ``NpyFolder``
reads ``.npy`` arrays (``numpy.load`` with ``allow_pickle=False``) into tensors.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np

from .vision import VisionDataset

__all__ = ["DatasetFolder", "NpyFolder", "find_classes", "make_dataset", "npy_loader"]


def find_classes(directory: str) -> tuple[list[str], dict[str, int]]:
    """The class folders of `directory`, sorted, and their indices."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {cls_name: i for i, cls_name in enumerate(classes)}


def _has_file_allowed_extension(filename: str, extensions: str | tuple[str, ...]) -> bool:
    return filename.lower().endswith(extensions if isinstance(extensions, str) else tuple(extensions))


def make_dataset(
    directory: str,
    class_to_idx: dict[str, int] | None = None,
    extensions: str | tuple[str, ...] | None = None,
    is_valid_file: Callable[[str], bool] | None = None,
    allow_empty: bool = False,
) -> list[tuple[str, int]]:
    """(path, class_index) of every valid file under each class folder."""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    both_none = extensions is None and is_valid_file is None
    both_something = extensions is not None and is_valid_file is not None
    if both_none or both_something:
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if extensions is not None:
        exts = extensions

        def is_valid_file(x: str) -> bool:
            return _has_file_allowed_extension(x, exts)

    assert is_valid_file is not None
    instances = []
    available_classes = set()
    for target_class in sorted(class_to_idx.keys()):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_index))
                    available_classes.add(target_class)
    empty_classes = set(class_to_idx.keys()) - available_classes
    if empty_classes and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty_classes))}. "
        if extensions is not None:
            msg += f"Supported extensions are: {extensions if isinstance(extensions, str) else ', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(VisionDataset):
    """Samples ``(loader(path), class_index)`` from a folder-per-class tree.

    Attributes: ``classes``, ``class_to_idx``, ``samples`` (list of (path, class_index)),
    ``targets`` (the class indices).
    """

    def __init__(
        self,
        root: str,
        loader: Callable[[str], Any],
        extensions: tuple[str, ...] | None = None,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx, extensions, is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(
        directory: str,
        class_to_idx: dict[str, int],
        extensions: tuple[str, ...] | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> list[tuple[str, int]]:
        return make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

    def find_classes(self, directory: str) -> tuple[list[str], dict[str, int]]:
        return find_classes(directory)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


NPY_EXTENSIONS = (".npy",)


def npy_loader(path: str) -> Any:
    """A tensor holding the array in a .npy file (object arrays are refused: no unpickling)."""
    return ea.from_numpy(np.ascontiguousarray(np.load(path, allow_pickle=False)))


class NpyFolder(DatasetFolder):
    """A folder-per-class tree of ``.npy`` files (torchvision's ImageFolder for arrays).

    >>> ds = NpyFolder("data/train")          # data/train/cat/0001.npy, ...
    >>> x, y = ds[0]                           # tensor, class index
    """

    def __init__(
        self,
        root: str,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        loader: Callable[[str], Any] = npy_loader,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(
            root,
            loader,
            NPY_EXTENSIONS if is_valid_file is None else None,
            transform=transform,
            target_transform=target_transform,
            is_valid_file=is_valid_file,
            allow_empty=allow_empty,
        )
        self.imgs = self.samples
