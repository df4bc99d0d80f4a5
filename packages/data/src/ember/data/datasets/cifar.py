"""CIFAR-10 and CIFAR-100 from their *binary* distributions (never the pickled ones).

A record of the binary files is the label byte(s) -- CIFAR-10: the class; CIFAR-100:
the coarse then the fine class -- followed by 3072 pixel bytes: the 1024 red values of
the 32x32 image row by row, then green, then blue. A sample is ``(image, target)``:
image a ``(3, 32, 32)`` uint8 tensor (channels first), target an int.

Layout (as the archives extract): ``root/cifar-10-batches-bin/{data_batch_1..5,
test_batch}.bin`` + ``batches.meta.txt``; ``root/cifar-100-binary/{train,test}.bin`` +
``{fine,coarse}_label_names.txt``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

import ember.aten as ea
import numpy as np

from .utils import check_integrity, download_and_extract_archive, extract_archive
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "read_cifar_binary"]

_PIXELS = 3 * 32 * 32


def read_cifar_binary(path: str, label_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """-> (images uint8 (N, 3, 32, 32), labels uint8 (N, label_bytes)) from one .bin file."""
    raw = np.fromfile(path, dtype=np.uint8)
    record = label_bytes + _PIXELS
    if raw.size % record:
        raise ValueError(f"{path}: {raw.size} bytes is not a whole number of {record}-byte CIFAR records")
    records = raw.reshape(-1, record)
    return records[:, label_bytes:].reshape(-1, 3, 32, 32).copy(), records[:, :label_bytes].copy()


def _read_names(path: str) -> list[str]:
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


class CIFAR10(VisionDataset):
    """CIFAR-10: 50,000 training and 10,000 test 32x32 colour images in 10 classes.

    ``data`` is the (N, 32, 32, 3) uint8 array (torchvision's layout); ``targets`` the
    list of labels. ``download=True`` fetches ``cifar-10-binary.tar.gz`` (checked by
    SHA-256) and extracts it.

    >>> ds = CIFAR10("data", train=False, download=True)
    >>> image, label = ds[0]      # uint8 tensor (3, 32, 32), int
    """

    base_folder = "cifar-10-batches-bin"
    urls: ClassVar[list[str]] = ["https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"]
    filename = "cifar-10-binary.tar.gz"
    tgz_sha256 = "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd"
    train_list: ClassVar[list[str]] = [f"data_batch_{i}.bin" for i in range(1, 6)]
    test_list: ClassVar[list[str]] = ["test_batch.bin"]
    meta_file = "batches.meta.txt"
    label_bytes = 1
    default_classes: ClassVar[list[str]] = [
        "airplane",
        "automobile",
        "bird",
        "cat",
        "deer",
        "dog",
        "frog",
        "horse",
        "ship",
        "truck",
    ]

    def __init__(
        self,
        root: str,
        train: bool = True,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        images, labels = [], []
        for name in self.train_list if train else self.test_list:
            x, y = read_cifar_binary(os.path.join(self.root, self.base_folder, name), self.label_bytes)
            images.append(x)
            labels.append(y)
        chw = np.concatenate(images)
        label_columns = np.concatenate(labels)
        self._chw = ea.from_numpy(chw)
        self.data = chw.transpose(0, 2, 3, 1)  # a view: (N, 32, 32, 3), as torchvision
        self._set_targets(label_columns)
        self.classes = _read_names(os.path.join(self.root, self.base_folder, self.meta_file)) or list(
            self.default_classes
        )
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def _set_targets(self, label_columns: np.ndarray) -> None:
        self.targets = label_columns[:, 0].astype(np.int64).tolist()

    def _check_exists(self) -> bool:
        folder = os.path.join(self.root, self.base_folder)
        return all(os.path.isfile(os.path.join(folder, n)) for n in self.train_list + self.test_list)

    def download(self) -> None:
        """Fetches and extracts the binary archive unless its files are already there."""
        if self._check_exists():
            return
        archive = os.path.join(self.root, self.filename)
        if check_integrity(archive, self.tgz_sha256):
            extract_archive(archive, self.root)
            return
        download_and_extract_archive(self.urls, self.root, filename=self.filename, sha256=self.tgz_sha256)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img = self._chw[index]
        target = self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.targets)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: CIFAR-10's sizes, 100 fine classes in 20 coarse ones. ``targets`` are the
    fine labels (as torchvision); ``coarse_targets`` the coarse ones."""

    base_folder = "cifar-100-binary"
    urls: ClassVar[list[str]] = ["https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz"]
    filename = "cifar-100-binary.tar.gz"
    tgz_sha256 = "58a81ae192c23a4be8b1804d68e518ed807d710a4eb253b1f2a199162a40d8ec"
    train_list: ClassVar[list[str]] = ["train.bin"]
    test_list: ClassVar[list[str]] = ["test.bin"]
    meta_file = "fine_label_names.txt"
    label_bytes = 2
    default_classes: ClassVar[list[str]] = [str(i) for i in range(100)]

    def _set_targets(self, label_columns: np.ndarray) -> None:
        self.coarse_targets = label_columns[:, 0].astype(np.int64).tolist()
        self.targets = label_columns[:, 1].astype(np.int64).tolist()
        self.coarse_classes = _read_names(os.path.join(self.root, self.base_folder, "coarse_label_names.txt"))
