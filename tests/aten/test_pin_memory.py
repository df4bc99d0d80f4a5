"""pin_memory= of the factory functions (TensorFactories.cpp, Distributions.cpp, Randperm.cpp,
tensor()). As PyTorch: pin_memory=True puts the result in page-locked host memory (c10py's
pinned allocator) -- which needs a CUDA device --, raises "pin_memory=True requires a CUDA or
other accelerator backend; ..." without one, and "Only dense CPU tensors can be pinned" for a
result on a CUDA device (checked before any device is touched, so that test runs anywhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import pytest
from ember.c10py import cuda

NO_ACCELERATOR = (
    r"pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available on this "
    r"system\."
)

_X = ea.ones(2, 3)

# name -> f(**options): every factory that takes pin_memory=, called with the options given
FACTORIES: dict[str, Callable[..., Any]] = {
    "empty": lambda **kw: ea.empty(2, 3, **kw),
    "empty_channels_last": lambda **kw: ea.empty(1, 2, 3, 4, memory_format=ea.channels_last, **kw),
    "empty_strided": lambda **kw: ea.empty_strided((2, 3), (1, 2), **kw),
    "zeros": lambda **kw: ea.zeros(2, 3, **kw),
    "ones": lambda **kw: ea.ones(2, 3, **kw),
    "full": lambda **kw: ea.full((2, 3), 1.5, **kw),
    "scalar_tensor": lambda **kw: ea.scalar_tensor(2.5, **kw),
    "arange": lambda **kw: ea.arange(6, **kw),
    "arange_start_step": lambda **kw: ea.arange(1.0, 4.0, 0.5, **kw),
    "linspace": lambda **kw: ea.linspace(0, 1, 5, **kw),
    "logspace": lambda **kw: ea.logspace(0, 1, 5, **kw),
    "eye": lambda **kw: ea.eye(3, **kw),
    "eye_m": lambda **kw: ea.eye(2, 3, **kw),
    "rand": lambda **kw: ea.rand(2, 3, **kw),
    "randn": lambda **kw: ea.randn(2, 3, **kw),
    "randint": lambda **kw: ea.randint(5, (2, 3), **kw),
    "randint_low": lambda **kw: ea.randint(2, 5, (2, 3), **kw),
    "randperm": lambda **kw: ea.randperm(6, **kw),
    "normal": lambda **kw: ea.normal(0.0, 1.0, (2, 3), **kw),
    "empty_like": lambda **kw: ea.empty_like(_X, **kw),
    "zeros_like": lambda **kw: ea.zeros_like(_X, **kw),
    "ones_like": lambda **kw: ea.ones_like(_X, **kw),
    "full_like": lambda **kw: ea.full_like(_X, 7, **kw),
    "rand_like": lambda **kw: ea.rand_like(_X, **kw),
    "randn_like": lambda **kw: ea.randn_like(_X, **kw),
    "randint_like": lambda **kw: ea.randint_like(_X, 5, **kw),
    "new_empty": lambda **kw: _X.new_empty((2, 3), **kw),
    "new_empty_strided": lambda **kw: _X.new_empty_strided((2, 3), (1, 2), **kw),
    "new_zeros": lambda **kw: _X.new_zeros((2, 3), **kw),
    "new_ones": lambda **kw: _X.new_ones((2, 3), **kw),
    "new_full": lambda **kw: _X.new_full((2, 3), 4.0, **kw),
    "tensor": lambda **kw: ea.tensor([[1.0, 2.0], [3.0, 4.0]], **kw),
}
NAMES = sorted(FACTORIES)


@pytest.mark.parametrize("name", NAMES)
def test_pin_memory_false_and_none_allocate_as_usual(name: str) -> None:
    for kw in ({}, {"pin_memory": False}):
        t = FACTORIES[name](**kw)
        assert t.is_cpu and not t.is_pinned()


@pytest.mark.skipif(cuda.is_available(), reason="with a CUDA device pin_memory=True pins (test_pin_memory_pins)")
@pytest.mark.parametrize("name", NAMES)
def test_pin_memory_without_cuda_raises(name: str) -> None:
    with pytest.raises(RuntimeError, match=NO_ACCELERATOR):
        FACTORIES[name](pin_memory=True)


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="a CPU-only build registers no CUDA kernels to call")
@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("tensor",)])
def test_pin_memory_with_a_cuda_device_raises(name: str) -> None:
    """Only CPU results can be pinned; the check comes before the device is used, so a
    machine without a GPU gives the same error."""
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        FACTORIES[name](pin_memory=True, device="cuda")


@pytest.mark.cuda
def test_tensor_pin_memory_with_a_cuda_device_raises() -> None:
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        ea.tensor([1.0, 2.0], device="cuda", pin_memory=True)


def _values_equal(a: Any, b: Any) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype and bool((a == b).all())


@pytest.mark.cuda
@pytest.mark.parametrize("name", NAMES)
def test_pin_memory_pins(name: str) -> None:
    t = FACTORIES[name](pin_memory=True)
    assert t.is_cpu and t.is_pinned(), name
    plain = FACTORIES[name]()
    assert tuple(t.shape) == tuple(plain.shape) and t.dtype == plain.dtype
    assert tuple(t.stride()) == tuple(plain.stride())
    if not (
        name.startswith("rand") or name.startswith("empty") or name in ("normal", "new_empty", "new_empty_strided")
    ):
        assert _values_equal(t, plain), name


@pytest.mark.cuda
def test_pinned_factory_result_copies_to_cuda_asynchronously() -> None:
    t = ea.arange(1000, dtype=ea.float32, pin_memory=True)
    assert t.is_pinned()
    d = t.to("cuda", non_blocking=True)
    ea.cuda.synchronize()
    assert _values_equal(d.cpu(), ea.arange(1000, dtype=ea.float32))


@pytest.mark.cuda
def test_pinned_random_factories_draw_the_same_numbers() -> None:
    ea.manual_seed(3)
    a = ea.randn(100, pin_memory=True)
    ea.manual_seed(3)
    b = ea.randn(100)
    assert a.is_pinned() and _values_equal(a, b)
