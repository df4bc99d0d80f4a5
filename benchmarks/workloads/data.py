"""data: DataLoader throughput, ember vs PyTorch, on the same map-style dataset.

4096 float32 images of 3x32x32 (CIFAR-sized) with int labels, batch 64, default
collate. One call is one epoch: samples/second = 4096 / (time per call). With workers
the loader keeps them (persistent_workers=True), so the figure is steady-state
throughput -- batches collated in the workers and handed over through shared memory --
not process start-up.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N_SAMPLES = 4096
BATCH = 64


def _images() -> tuple[np.ndarray, list[int]]:
    images = np.random.default_rng(0).standard_normal((N_SAMPLES, 3, 32, 32), dtype=np.float32)
    return images, [i % 10 for i in range(N_SAMPLES)]


class _Images:
    """A map-style dataset: (image view, label), as a typical in-memory dataset."""

    def __init__(self, images: Any, labels: list[int]) -> None:
        self.images, self.labels = images, labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        return self.images[i], self.labels[i]


def _epoch(loader: Any) -> Any:
    def run() -> None:
        for _ in loader:
            pass

    return run


def _loaders(num_workers: int) -> dict[str, Any]:
    import ember.aten as ea
    from ember.data import DataLoader, Dataset

    images, labels = _images()
    kwargs = dict(batch_size=BATCH, num_workers=num_workers, persistent_workers=num_workers > 0)
    ember_ds = type("EmberImages", (_Images, Dataset), {})(ea.from_numpy(images), labels)
    fns = {"ember": _epoch(DataLoader(ember_ds, **kwargs))}
    try:
        import torch
        import torch.utils.data as tud
    except ImportError:
        return fns
    torch_ds = type("TorchImages", (_Images, tud.Dataset), {})(torch.from_numpy(images), labels)
    fns["torch"] = _epoch(tud.DataLoader(torch_ds, **kwargs))
    return fns


def loader_0_workers() -> dict[str, Any]:
    return _loaders(0)


def loader_2_workers() -> dict[str, Any]:
    return _loaders(2)


WORKLOADS = [
    (f"DataLoader 3x32x32 f32, batch {BATCH}, num_workers=0", f"epoch of {N_SAMPLES} samples", loader_0_workers),
    (f"DataLoader 3x32x32 f32, batch {BATCH}, num_workers=2", f"epoch of {N_SAMPLES} samples", loader_2_workers),
]
