"""ember.aten.signal: PyTorch's ``torch.signal`` (the ``windows`` submodule)."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
