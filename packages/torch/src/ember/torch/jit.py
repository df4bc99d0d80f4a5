"""torch.jit: ember has no TorchScript.

``script``, ``trace`` and the TorchScript file functions raise NotImplementedError
pointing to ember's graph capture (``ember.torch.compile`` / ``ember.fx``). The
decorators and probes that model code uses while *not* scripting (``torch.jit.ignore``,
``unused``, ``export``, ``is_scripting()``, ``is_tracing()``, ``annotate``, ``Final``)
behave as they do in eager PyTorch: no-ops and False.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar  # Final: torch.jit.Final is typing.Final in eager code

__all__ = [
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "freeze",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
]

_F = TypeVar("_F")


def _unsupported(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch.jit.{name}: ember has no TorchScript. Run the model eagerly, or capture it as a graph "
        "with ember.torch.compile(model) (ember.fx's graph capture and compiler, the ember-fx package)"
    )


def script(obj: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported: see the module docstring."""
    raise _unsupported("script")


def trace(func: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported: see the module docstring."""
    raise _unsupported("trace")


def trace_module(mod: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported: see the module docstring."""
    raise _unsupported("trace_module")


def save(m: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported (TorchScript archives); ember.torch.save writes checkpoints."""
    raise _unsupported("save")


def load(f: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported (TorchScript archives); ember.torch.load reads checkpoints."""
    raise _unsupported("load")


def freeze(mod: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported: see the module docstring."""
    raise _unsupported("freeze")


def optimize_for_inference(mod: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Not supported: see the module docstring."""
    raise _unsupported("optimize_for_inference")


class ScriptModule:
    """Not supported: ember has no TorchScript modules."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _unsupported("ScriptModule")


class ScriptFunction:
    """Not supported: ember has no TorchScript functions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _unsupported("ScriptFunction")


def is_scripting() -> bool:
    """False: ember code always runs eagerly."""
    return False


def is_tracing() -> bool:
    """False: ember code always runs eagerly."""
    return False


def _passthrough(fn: Any = None, **kwargs: Any) -> Any:
    if fn is None or not callable(fn):
        return lambda f: f  # used as @ignore(drop=True)
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """@torch.jit.ignore / @torch.jit.ignore(drop=True): the function, unchanged."""
    return _passthrough(drop if callable(drop) else None)


def unused(fn: _F) -> _F:
    """@torch.jit.unused: the function, unchanged."""
    return fn


def export(fn: _F) -> _F:
    """@torch.jit.export: the function, unchanged."""
    return fn


def annotate(the_type: Any, the_value: _F) -> _F:
    """torch.jit.annotate(type, value): the value (a hint for the TorchScript compiler)."""
    return the_value
