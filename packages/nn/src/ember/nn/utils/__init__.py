"""ember.nn.utils: gradient clipping, parameter/vector conversion, parametrizations, fusion."""

from . import hooks

__all__ = ["hooks"]
