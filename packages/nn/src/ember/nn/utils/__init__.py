"""ember.nn.utils: gradient clipping, parameter/vector conversion, parametrizations, fusion."""

from . import hooks, rnn

__all__ = ["hooks", "rnn"]
