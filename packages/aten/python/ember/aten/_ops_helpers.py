"""Small helpers the Tensor class needs that are not operators."""

from __future__ import annotations

from typing import Any

from . import _memory_format as _mf


def is_contiguous_format(t: Any, memory_format: Any) -> bool:
    """Tensor.is_contiguous(memory_format=...): channels_last(_3d) means C innermost, then W, H, (D), N."""
    impl = t._impl
    if memory_format in (_mf.contiguous_format, _mf.preserve_format):
        return impl.is_contiguous
    nd = 4 if memory_format == _mf.channels_last else 5
    if impl.dim != nd:
        return False
    order = (1, 3, 2, 0) if nd == 4 else (1, 4, 3, 2, 0)
    sizes, strides = impl.sizes, impl.strides
    expected = 1
    for d in order:
        if sizes[d] == 0:
            return True
        if sizes[d] != 1 and strides[d] != expected:
            return False
        expected *= sizes[d]
    return True
