"""ember.aten.linalg: linear algebra operators (PyTorch's ``torch.linalg``).

Every function here is generated from native_functions.yaml (``python_module: linalg``)
into ``_generated/linalg.py``; this module is their public name.
"""

from __future__ import annotations

from ._generated.linalg import *  # noqa: F403
