"""``ember.distributed.parallel.DistributedDataParallel`` (PyTorch's ``torch.nn.parallel`` spelling)."""

from __future__ import annotations

from .ddp import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
