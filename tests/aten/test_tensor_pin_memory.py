"""Tensor.pin_memory() and the page-locked copy's layout. As PyTorch's (which allocates the
copy like empty_like): a dense, non-overlapping tensor keeps its strides (transposed,
permuted, channels-last), any other (a strided slice, an expanded tensor) is made contiguous.
Without a CUDA device it raises, whatever the layout."""

from __future__ import annotations

import re
from collections.abc import Callable

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import cuda as c10_cuda

no_gpu = pytest.mark.skipif(c10_cuda.is_available(), reason="checks the behaviour without a CUDA device")

_NO_DEVICE = rf"pin_memory: no CUDA device is available; {re.escape(c10_cuda.availability_error())}"

# name -> (tensor, strides the pinned copy must have)
KEEPS_STRIDES: dict[str, Callable[[], ea.Tensor]] = {
    "contiguous": lambda: ea.arange(24.0).reshape(2, 3, 4),
    "transposed": lambda: ea.arange(12.0).reshape(3, 4).t(),
    "permuted": lambda: ea.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "channels_last": lambda: ea.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=ea.channels_last),
}
MADE_CONTIGUOUS: dict[str, Callable[[], ea.Tensor]] = {
    "step_slice": lambda: ea.arange(12.0).reshape(3, 4)[:, ::2],
    "expanded": lambda: ea.arange(3.0).reshape(3, 1).expand(3, 4),
    "transposed_slice": lambda: ea.arange(20.0).reshape(4, 5)[:, 1:4].t(),
}


@no_gpu
@pytest.mark.parametrize("name", sorted(KEEPS_STRIDES) + sorted(MADE_CONTIGUOUS))
def test_pin_memory_without_cuda_raises_for_every_layout(name: str) -> None:
    t = {**KEEPS_STRIDES, **MADE_CONTIGUOUS}[name]()
    with pytest.raises(RuntimeError, match=_NO_DEVICE):
        t.pin_memory()
    assert t.is_pinned() is False


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(KEEPS_STRIDES))
def test_pin_memory_keeps_the_strides_of_a_dense_tensor(name: str) -> None:
    t = KEEPS_STRIDES[name]()
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned()
    assert tuple(p.shape) == tuple(t.shape) and tuple(p.stride()) == tuple(t.stride())
    assert p.data_ptr() != t.data_ptr() and p.storage_offset() == 0
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    assert p.pin_memory() is p


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(MADE_CONTIGUOUS))
def test_pin_memory_makes_a_non_dense_tensor_contiguous(name: str) -> None:
    t = MADE_CONTIGUOUS[name]()
    p = t.pin_memory()
    assert p.is_pinned() and p.is_contiguous()
    np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.cuda
def test_pinned_transposed_copy_moves_to_cuda() -> None:
    t = ea.arange(12.0).reshape(3, 4).t()
    d = t.pin_memory().to("cuda", non_blocking=True)
    ea.cuda.synchronize()
    np.testing.assert_array_equal(d.cpu().numpy(), t.numpy())
