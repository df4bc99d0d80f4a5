"""MNIST, FashionMNIST, KMNIST: 28x28 grey images in the IDX format (torchvision's layout).

Files live in ``root/<ClassName>/raw/`` under their original names, gzipped
(``train-images-idx3-ubyte.gz``) or not (``train-images-idx3-ubyte``). A sample is
``(image, target)``: image a ``(1, 28, 28)`` uint8 tensor (channels first, as
``torchvision.io`` decodes images), target an int, each passed through
``transform`` / ``target_transform`` when given.

IDX: a 4-byte magic number (two zero bytes, a type code, the number of dimensions),
then each dimension as a big-endian int32, then the values, big-endian, row-major.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from typing import Any, ClassVar

import ember.aten as ea
import numpy as np

from .utils import check_integrity, download_url
from .vision import VisionDataset

__all__ = ["KMNIST", "MNIST", "FashionMNIST", "read_idx"]

# IDX type code -> NumPy dtype (big-endian).
_IDX_TYPES: dict[int, np.dtype[Any]] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _open(path: str) -> Any:
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def read_idx(path: str) -> np.ndarray:
    """Reads an IDX file (gzipped if its name ends in .gz) into a native-endian array."""
    with _open(path) as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    code, ndim = data[2], data[3]
    if code not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">i4", count=ndim, offset=4))
    dtype = _IDX_TYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) - header != expected:
        raise ValueError(
            f"{path}: IDX header says {shape} of {dtype} ({expected} bytes), the file holds {len(data) - header}"
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return arr.astype(dtype.newbyteorder("="), copy=True)


class MNIST(VisionDataset):
    """The MNIST digits: 60,000 training and 10,000 test images.

    Args:
        root: directory holding ``MNIST/raw/`` (created by ``download=True``).
        train: the training set (else the test set).
        transform / target_transform: applied to the image tensor / the int target.
        download: fetch the files (verified by SHA-256) if they are not there yet.

    >>> ds = MNIST("data", train=True, download=True)
    >>> image, label = ds[0]      # uint8 tensor (1, 28, 28), int
    """

    mirrors: ClassVar[list[str]] = [
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
    ]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
        ("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        ("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        ("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
    ]
    classes: ClassVar[list[str]] = [
        "0 - zero",
        "1 - one",
        "2 - two",
        "3 - three",
        "4 - four",
        "5 - five",
        "6 - six",
        "7 - seven",
        "8 - eight",
        "9 - nine",
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
        prefix = "train" if train else "t10k"
        images = read_idx(self._find(f"{prefix}-images-idx3-ubyte"))
        labels = read_idx(self._find(f"{prefix}-labels-idx1-ubyte"))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"{self.__class__.__name__}: images {images.shape} and labels {labels.shape} do not match")
        self.data = ea.from_numpy(np.ascontiguousarray(images, dtype=np.uint8))
        self.targets = ea.from_numpy(labels.astype(np.int64))

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.classes)}

    def _find(self, stem: str) -> str:
        for name in (stem, stem + ".gz"):
            path = os.path.join(self.raw_folder, name)
            if os.path.isfile(path):
                return path
        raise RuntimeError(
            f"{self.__class__.__name__}: {stem}[.gz] not found in {self.raw_folder}. "
            "You can use download=True to download it"
        )

    def _check_exists(self) -> bool:
        return all(
            any(os.path.isfile(os.path.join(self.raw_folder, n)) for n in (f, f[: -len(".gz")]))
            for f, _ in self.resources
        )

    def download(self) -> None:
        """Fetches the files that are missing into ``raw_folder`` (each checked by SHA-256)."""
        for filename, sha256 in self.resources:
            path = os.path.join(self.raw_folder, filename)
            if os.path.isfile(path[: -len(".gz")]) or check_integrity(path, sha256):
                continue
            download_url([m + filename for m in self.mirrors], self.raw_folder, filename, sha256)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img = self.data[index].unsqueeze(0)
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's format and sizes, ten kinds of clothing."""

    mirrors: ClassVar[list[str]] = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
        ("train-labels-idx1-ubyte.gz", "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
        ("t10k-images-idx3-ubyte.gz", "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
        ("t10k-labels-idx1-ubyte.gz", "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
    ]
    classes: ClassVar[list[str]] = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: MNIST's format and sizes, ten cursive Japanese characters."""

    mirrors: ClassVar[list[str]] = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "51467d22d8cc72929e2a028a0428f2086b092bb31cfb79c69cc0a90ce135fde4"),
        ("train-labels-idx1-ubyte.gz", "e38f9ebcd0f3ebcdec7fc8eabdcdaef93bb0df8ea12bee65224341c8183d8e17"),
        ("t10k-images-idx3-ubyte.gz", "edd7a857845ad6bb1d0ba43fe7e794d164fe2dce499a1694695a792adfac43c5"),
        ("t10k-labels-idx1-ubyte.gz", "20bb9a0ef54c7db3efc55a92eef5582c109615df22683c380526788f98e42a1c"),
    ]
    classes: ClassVar[list[str]] = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
