"""Readers for standard dataset files (PyTorch's ``torchvision.datasets``, file formats only).

- ``MNIST``, ``FashionMNIST``, ``KMNIST``: IDX files, gzipped or not;
- ``CIFAR10``, ``CIFAR100``: the binary distributions (no unpickling of downloaded data);
- ``DatasetFolder`` / ``NpyFolder``: a folder per class of ``.npy`` files.

``download=True`` fetches missing files from a list of mirrors, verifies their SHA-256
and resumes interrupted downloads (``utils.download_url``).
"""

from .cifar import CIFAR10, CIFAR100
from .folder import DatasetFolder, NpyFolder
from .mnist import KMNIST, MNIST, FashionMNIST
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "KMNIST", "MNIST", "DatasetFolder", "FashionMNIST", "NpyFolder", "VisionDataset"]
