"""ember.nn.extension: what the layers above nn (optim's swa_utils, onnx) use of its internals.

``ember.nn``'s underscore modules and classes are private to it; a layer above uses these
names (tests/test_layering.py checks it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _functional_rnn
from .modules.batchnorm import _BatchNorm as BatchNormBase
from .modules.batchnorm import _NormBase as NormBase

# NormBase: every norm layer with running statistics (BatchNorm*, InstanceNorm*, SyncBatchNorm);
# BatchNormBase: the BatchNorm layers among them (PyTorch's torch.nn.modules.batchnorm._BatchNorm).


@contextlib.contextmanager
def fused_rnn(enabled: bool) -> Iterator[None]:
    """LSTM / GRU run as one fused aten operator per layer (``enabled``) or step by step (the
    cells' aten ops, which an exporter can lower one by one). Process-wide, restored on exit."""
    prev = _functional_rnn.use_fused
    _functional_rnn.use_fused = enabled
    try:
        yield
    finally:
        _functional_rnn.use_fused = prev


__all__ = ["BatchNormBase", "NormBase", "fused_rnn"]
