"""ember.nn: modules, layers, losses, initialisation and functional (PyTorch's torch.nn).

    >>> import ember.aten as ea
    >>> from ember import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> net(ea.randn(3, 4)).shape
    ember.aten.Size([3, 2])

``Module`` (modules/module.py) keeps parameters, buffers and submodules in ordered
dicts filled by attribute assignment; ``functional`` holds the functions the layers
call, each over aten operators; ``init`` the initialisers.
"""

from importlib import metadata as _metadata

import ember.autograd as _autograd

from . import functional, init, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__version__ = _metadata.version("ember-nn")
__all__ = [
    *_modules_all,
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "init",
    "utils",
]
