"""ember.aten.sparse: functions of sparse COO tensors (PyTorch's ``torch.sparse``).

The tensors and their kernels are in _sparse.py (registered for the Python dispatch key
when ember.aten is imported).
"""

from __future__ import annotations

from ._sparse import sparse_addmm as addmm
from ._sparse import sparse_coo_tensor
from ._sparse import sparse_mm as mm
from ._sparse import sparse_sum as sum

__all__ = ["addmm", "mm", "sparse_coo_tensor", "sum"]
