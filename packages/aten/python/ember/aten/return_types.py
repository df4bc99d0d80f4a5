"""ember.aten.return_types: the named tuples operators return (PyTorch's ``torch.return_types``).

``max(t, dim)`` returns ``return_types.max(values, indices)``; each type is generated from
its operator's named returns in native_functions.yaml into ``_generated/return_types.py``.
"""

from __future__ import annotations

from ._generated.return_types import *  # noqa: F403
