"""ember.vision.datasets: the dataset readers ember.data ships (MNIST, FashionMNIST, KMNIST,
CIFAR10, CIFAR100, DatasetFolder, NpyFolder, VisionDataset), under torchvision's module name."""

from __future__ import annotations

from ember.data.datasets import (
    CIFAR10,
    CIFAR100,
    KMNIST,
    MNIST,
    DatasetFolder,
    FashionMNIST,
    NpyFolder,
    VisionDataset,
)

__all__ = ["CIFAR10", "CIFAR100", "KMNIST", "MNIST", "DatasetFolder", "FashionMNIST", "NpyFolder", "VisionDataset"]
