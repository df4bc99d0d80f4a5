"""ember.aten -- tensors and kernels (skeleton until the aten core issue lands).

It builds and links against ember.c10py's library and headers; no operators yet.
"""

from importlib import metadata as _metadata

import ember.c10py  # noqa: F401  (loads libember_c10 before our module needs it)

from . import _C  # noqa: F401

__version__ = _metadata.version("ember-aten")
__all__: list[str] = []
