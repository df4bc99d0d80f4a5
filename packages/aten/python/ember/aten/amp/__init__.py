"""ember.aten.amp: automatic mixed precision (PyTorch's torch.amp).

``autocast`` (the AutocastCPU / AutocastCUDA dispatch keys, autocast_mode.py),
``GradScaler`` (dynamic loss scaling, grad_scaler.py), and ``custom_fwd`` / ``custom_bwd``
for custom autograd Functions.
"""

from __future__ import annotations

from .autocast_mode import (
    AUTOCAST_POLICIES,
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    registered_policies,
)
from .grad_scaler import GradScaler, OptState

__all__ = [
    "AUTOCAST_POLICIES",
    "GradScaler",
    "OptState",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
    "registered_policies",
]
