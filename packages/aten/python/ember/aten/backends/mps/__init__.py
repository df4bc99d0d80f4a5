"""Apple's Metal backend (``torch.backends.mps``): ember has none.

Training scripts probe it to pick a device (``"mps" if
torch.backends.mps.is_available() else "cpu"``), so the probes exist and say no.
"""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos_or_newer"]


def is_available() -> bool:
    """Whether an MPS device can be used: never, in ember."""
    return False


def is_built() -> bool:
    """Whether ember was built with MPS support: never."""
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    """PyTorch's macOS version probe; False without an MPS backend."""
    return False
