"""Anomaly detection: ``detect_anomaly()`` / ``set_detect_anomaly(mode)``.

While enabled, every recorded node keeps the Python traceback of the forward call
that created it (``node.metadata["traceback_"]``), and the engine checks each
gradient a node returns: a NaN raises ``RuntimeError("Function 'DivBackward0'
returned nan values in its 0th output.")`` naming the node and showing where the
forward operation was called. An error raised inside a node's backward is reported
the same way (a warning with the forward traceback, then the error). The state is
global (not per thread), as in PyTorch.
"""

from __future__ import annotations

import traceback
import warnings
from typing import Any

from .grad_mode import _DecoratorContextManager


class _AnomalyState:
    enabled = False
    check_nan = True


_anomaly = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly.check_nan


def _set(mode: bool, check_nan: bool) -> None:
    _anomaly.enabled = bool(mode)
    _anomaly.check_nan = bool(check_nan)


class detect_anomaly(_DecoratorContextManager):
    """Context manager / decorator enabling anomaly detection for the forward and the backward pass."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.",
            stacklevel=2,
        )

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)

    def __enter__(self) -> None:
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: sets it now; as a context manager, restores it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)


def record_trace(node: Any) -> None:
    """Called for every node created while anomaly detection is on."""
    node.metadata["traceback_"] = traceback.format_stack()[:-2]


def forward_trace(node: Any) -> str:
    m = node._metadata
    tb = m.get("traceback_") if m else None
    if not tb:
        return ""
    return "".join(tb)


def report_error(node: Any) -> None:
    tb = forward_trace(node)
    if tb:
        warnings.warn(
            f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}", stacklevel=2
        )


def check_nan(node: Any, outputs: Any) -> None:
    for i, g in enumerate(outputs):
        if g is not None and g.is_floating_point() and bool(g.isnan().any()):
            tb = forward_trace(node)
            msg = f"Function '{node.name()}' returned nan values in its {i}th output."
            if tb:
                msg += f"\nTraceback of forward call that caused the error:\n{tb}"
            report_error(node)
            raise RuntimeError(msg)
