"""ember.aten.special: special functions (PyTorch's ``torch.special``).

Every function here is generated from native_functions.yaml (``python_module: special``)
into ``_generated/special.py``; this module is their public name.
"""

from __future__ import annotations

from ._generated.special import *  # noqa: F403
