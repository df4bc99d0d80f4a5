"""ember.fx.extension: what the layers above fx (ember.onnx) read of a capture in progress.

``ember.fx``'s own modules (``_capture``, ``_replay``, ...) are private to it; a layer above
uses these names (tests/test_layering.py checks it).
"""

from __future__ import annotations

from ._capture import _state
from .graph import Graph


def active_graph() -> Graph | None:
    """The graph the capture running on this thread is recording into, or None outside one."""
    active = _state.active
    return None if active is None else active.graph


__all__ = ["active_graph"]
