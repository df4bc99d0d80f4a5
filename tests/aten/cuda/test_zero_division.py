"""Integer division by zero on CUDA (csrc/native/cuda/BinaryOps.cu).

As on the CPU, `div` (trunc / floor), `floor_divide`, `remainder` and `fmod` of integer
tensors by zero raise "ZeroDivisionError" (RuntimeError). A zero Python number or 0-dim
CPU tensor divisor raises at once. A divisor on the device is checked by the kernel
itself, which reports the zero through the device-error slot (the mechanism of
device-side index errors) instead of synchronising on every call: the error is raised
at the next check point -- a device-to-host copy, ember.aten.cuda.synchronize(), or the
next launch of a kernel that can report -- and reading it clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

pytestmark = pytest.mark.cuda

INT_DTYPES = [ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64]

DIVISIONS: list[Callable[[Any, Any], Any]] = [
    lambda x, y: ea.div(x, y, rounding_mode="trunc"),
    lambda x, y: ea.div(x, y, rounding_mode="floor"),
    ea.floor_divide,
    ea.remainder,
    ea.fmod,
]
IDS = ["div_trunc", "div_floor", "floor_divide", "remainder", "fmod"]


def as_list(t: Any) -> list[Any]:
    return np.asarray(t.cpu()).tolist()


@pytest.mark.parametrize("fn", DIVISIONS, ids=IDS)
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_device_zero_divisor_is_raised_at_the_next_check_point(fn: Callable[[Any, Any], Any], dtype: Any) -> None:
    a = ea.tensor([7, 8, 9], dtype=dtype, device="cuda")
    z = ea.tensor([1, 0, 3], dtype=dtype, device="cuda")
    r = fn(a, z)  # no synchronisation, no error yet
    assert r.shape == (3,) and r.is_cuda
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.cuda.synchronize()
    ea.cuda.synchronize()  # reading the error cleared it
    # a device-to-host copy is a check point too
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, z).cpu()
    assert as_list(fn(a, z + 1)) == as_list(fn(a.cpu(), z.cpu() + 1))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_broadcast_and_strided_zero_divisors(dtype: Any) -> None:
    a = ea.tensor([[5, 6], [7, 8]], dtype=dtype, device="cuda")
    zero = ea.tensor([0, 1], dtype=dtype, device="cuda")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.remainder(a, zero[:1].expand(2, 2)).cpu()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.floor_divide(a, zero.view(2, 1)).cpu()  # broadcast along dim 1
    ones = np.ones((3, 5), dtype=np.int64)
    ones[2, 4] = 0
    big = ea.tensor(ones.tolist(), dtype=dtype, device="cuda").t()  # a transposed divisor, one zero
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.fmod(ea.ones((5, 3), dtype=dtype, device="cuda"), big).cpu()


def test_error_surfaces_before_the_next_reporting_launch() -> None:
    a = ea.tensor([4, 5], dtype=ea.int64, device="cuda")
    ea.floor_divide(a, ea.tensor([0, 1], dtype=ea.int64, device="cuda"))
    # the next integer division checks the slot before it launches: the earlier error first
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.floor_divide(a, ea.tensor([2, 2], dtype=ea.int64, device="cuda"))
    assert as_list(ea.floor_divide(a, ea.tensor([2, 2], dtype=ea.int64, device="cuda"))) == [2, 2]


@pytest.mark.parametrize("fn", DIVISIONS, ids=IDS)
def test_host_zero_divisors_raise_at_once(fn: Callable[[Any, Any], Any]) -> None:
    a = ea.tensor([1, 2, 3], dtype=ea.int32, device="cuda")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, 0)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, ea.tensor(0, dtype=ea.int32))  # a 0-dim CPU tensor
    ea.cuda.synchronize()  # nothing was left pending on the device


def test_in_place_and_out_variants_report_too() -> None:
    a = ea.tensor([3, 4], dtype=ea.int16, device="cuda")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a.remainder_(ea.tensor([0, 3], dtype=ea.int16, device="cuda"))
        ea.cuda.synchronize()
    out = ea.empty((2,), dtype=ea.int16, device="cuda")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ea.fmod(a, ea.tensor([2, 0], dtype=ea.int16, device="cuda"), out=out)
        ea.cuda.synchronize()


def test_floats_and_empty_tensors_never_report() -> None:
    x = ea.tensor([1.0, -1.0, 0.0], device="cuda")
    z = ea.zeros(3, device="cuda")
    r = ea.div(x, z, rounding_mode="floor")
    got = as_list(r)
    assert got[0] == float("inf") and got[1] == float("-inf") and np.isnan(got[2])
    np.testing.assert_array_equal(np.asarray(ea.remainder(x, z).cpu()), np.asarray(ea.remainder(x.cpu(), z.cpu())))
    e = ea.ones((0,), dtype=ea.int64, device="cuda")
    assert ea.floor_divide(e, ea.zeros((0,), dtype=ea.int64, device="cuda")).shape == (0,)
    ea.cuda.synchronize()
