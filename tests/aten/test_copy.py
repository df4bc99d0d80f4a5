"""copy_, clone, fill_, zero_, Tensor.to / type() / float() and friends.

copy_ is checked against NumPy across every (source layout x destination layout x
dtype pair), with broadcasting, on every CPU capability; the overlap rules and the
conversions' edge values follow PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.core import ALL_DTYPES, make_array, np_dtype, tensor_from, to_numpy


def _layouts(shape: tuple[int, int, int]) -> list[tuple[str, Callable[[ea.Tensor], ea.Tensor]]]:
    """Ways to hold a (2, 3, 4) array: functions that turn a contiguous tensor into an equal one."""

    def transposed(t: ea.Tensor) -> ea.Tensor:
        return t.permute(2, 0, 1).clone(memory_format=ea.contiguous_format).permute(1, 2, 0)

    def strided(t: ea.Tensor) -> ea.Tensor:
        big = ea.empty((shape[0], shape[1] * 2, shape[2] * 3), dtype=t.dtype)
        v = big[:, ::2, ::3]
        v.copy_(t)
        return v

    def offset(t: ea.Tensor) -> ea.Tensor:
        big = ea.empty((t.numel() + 5,), dtype=t.dtype)
        v = big[5:].view(shape)
        v.copy_(t)
        return v

    return [("contiguous", lambda t: t), ("transposed", transposed), ("strided", strided), ("offset", offset)]


SHAPE = (2, 3, 4)
LAYOUTS = _layouts(SHAPE)


def _np_cast(a: np.ndarray, dtype: Any) -> np.ndarray:
    """NumPy's cast with PyTorch's rules for the cases C leaves undefined (float -> unsigned via int64)."""
    if dtype == ea.bool:
        return a != 0
    if a.dtype.kind == "f" and dtype in (ea.uint8, ea.int8, ea.int16, ea.int32):
        return a.astype(np.int64).astype(np_dtype(dtype))
    return a.astype(np_dtype(dtype))


@pytest.mark.parametrize("src_dtype", ALL_DTYPES, ids=lambda d: d._name)
@pytest.mark.parametrize("dst_dtype", ALL_DTYPES, ids=lambda d: d._name)
def test_copy_between_dtypes(src_dtype: Any, dst_dtype: Any, capability: str) -> None:
    a = make_array(SHAPE, src_dtype, low=-100 if src_dtype != ea.uint8 else 0, high=100)
    src = tensor_from(a, src_dtype)
    ref_src = to_numpy(src)
    for sname, smake in LAYOUTS:
        for dname, dmake in LAYOUTS:
            dst = dmake(ea.zeros(SHAPE, dtype=dst_dtype))
            r = dst.copy_(smake(src))
            assert r is dst
            got = to_numpy(dst)
            expected = _np_cast(ref_src, dst_dtype if dst_dtype != ea.bfloat16 else ea.float32)
            if dst_dtype in (ea.float16, ea.bfloat16):
                np.testing.assert_allclose(got, expected, rtol=1e-2, err_msg=f"{sname} -> {dname}")
            else:
                np.testing.assert_array_equal(got, expected, err_msg=f"{sname} -> {dname}")


@pytest.mark.parametrize(
    ("dst_shape", "src_shape"),
    [((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3, 4), ()), ((2, 3, 4), (1, 3, 1)), ((0, 4), (4,))],
)
def test_copy_broadcasts_the_source(dst_shape: tuple[int, ...], src_shape: tuple[int, ...]) -> None:
    src = ea.arange(int(np.prod(src_shape)), dtype=ea.float32).reshape(src_shape)
    dst = ea.zeros(dst_shape, dtype=ea.float64)
    dst.copy_(src)
    np.testing.assert_array_equal(dst.numpy(), np.broadcast_to(src.numpy(), dst_shape))
    # an expanded (stride 0) source, into a transposed destination, is the same thing
    dst2 = ea.zeros(tuple(reversed(dst_shape))).permute(*reversed(range(len(dst_shape))))
    dst2.copy_(src.expand(dst_shape))
    np.testing.assert_array_equal(dst2.numpy(), np.broadcast_to(src.numpy(), dst_shape))


def test_copy_errors() -> None:
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        ea.zeros(3).copy_(ea.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\)"):
        ea.zeros(2, 3).copy_(ea.zeros(4))
    with pytest.raises(RuntimeError, match=r"size of tensor a \(0\) must match the size of tensor b \(2\)"):
        ea.zeros(0).copy_(ea.zeros(2))
    x = ea.arange(6.0)
    with pytest.raises(
        RuntimeError,
        match="some elements of the input tensor and the written-to tensor refer to a single memory location",
    ):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        ea.zeros(1, 3).expand(2, 3).copy_(ea.ones(2, 3))
    # copying a tensor onto itself (same geometry) is allowed and a no-op
    y = ea.arange(4.0)
    y.copy_(y)
    y.copy_(y[:])
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_copy_bumps_version_and_returns_self() -> None:
    x = ea.zeros(3)
    v = x[1:]
    r = v.copy_(ea.ones(2))
    assert r is v and x._version == 1 and v._version == 1
    assert x.tolist() == [0.0, 1.0, 1.0]


def test_copy_conversion_edge_values() -> None:
    f = ea.tensor([-1.0, 255.0, 256.0, 0.5, -0.5, 1e10])
    assert f.to(ea.uint8).tolist()[:5] == [255, 255, 0, 0, 0]
    assert ea.tensor([0.0, -0.0, 0.1, float("nan")]).to(ea.bool).tolist() == [False, False, True, True]
    assert ea.tensor([1e-8]).half().item() == pytest.approx(1e-8, rel=0.2, abs=6e-8)
    assert ea.tensor([65520.0]).half().item() == float("inf")
    assert ea.tensor([3.0e38]).bfloat16().item() == pytest.approx(3.0e38, rel=1e-2)
    assert ea.tensor([2**40 + 1], dtype=ea.int64).to(ea.int32).item() == 1
    assert ea.tensor([True, False]).to(ea.float32).tolist() == [1.0, 0.0]


@pytest.mark.parametrize("n", [1, 7, 33, 1000])
def test_transposed_copy_blocks(n: int, capability: str) -> None:
    for dtype in (ea.uint8, ea.int16, ea.float32, ea.float64):
        a = make_array((n, n + 3), dtype)
        t = tensor_from(a, dtype)
        np.testing.assert_array_equal(to_numpy(t.t().contiguous()), a.T)
        out = ea.empty((n + 3, n), dtype=dtype).t()  # a transposed destination
        out.copy_(t)
        np.testing.assert_array_equal(to_numpy(out), a)


def test_clone_memory_formats() -> None:
    x = ea.arange(24.0).reshape(2, 3, 4)
    t = x.transpose(0, 2)
    c = t.clone()
    assert c.stride() == t.stride() and c._base is None  # preserve: dense input keeps its strides
    assert t.clone(memory_format=ea.contiguous_format).is_contiguous()
    s = x[:, :, ::2]  # not dense: preserve gives dense strides in the same order
    assert s.clone().is_contiguous()
    ts = x.transpose(0, 2)[::2]
    assert ts.clone().stride() == (1, 2, 6)
    np.testing.assert_array_equal(ts.clone().numpy(), ts.numpy())
    n = ea.arange(120.0).reshape(2, 3, 4, 5)
    cl = n.clone(memory_format=ea.channels_last)
    assert cl.is_contiguous(memory_format=ea.channels_last)
    np.testing.assert_array_equal(cl.numpy(), n.numpy())
    assert cl.clone().is_contiguous(memory_format=ea.channels_last)
    assert ea.clone(n.unsqueeze(0), memory_format=ea.channels_last_3d).is_contiguous(memory_format=ea.channels_last_3d)


def test_fill_and_zero() -> None:
    x = ea.zeros(2, 3, dtype=ea.int32)
    assert x.fill_(7) is x and x._version == 1
    assert x.tolist() == [[7] * 3] * 2
    x.fill_(ea.tensor(3))  # 0-dim tensor overload
    assert x.tolist() == [[3] * 3] * 2 and x._version == 2
    with pytest.raises(
        RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions"
    ):
        x.fill_(ea.tensor([1]))
    ea.fill_(x[:, 1], 9)
    assert x.tolist() == [[3, 9, 3]] * 2
    assert x.t().zero_().tolist() == [[0, 0]] * 3 and x.tolist() == [[0] * 3] * 2
    assert ea.zeros(2).fill_(True).tolist() == [1.0, 1.0]
    b = ea.zeros(3, dtype=ea.bool).fill_(2)
    assert b.tolist() == [True] * 3
    h = ea.zeros(2, dtype=ea.float16).fill_(1.5)
    assert h.tolist() == [1.5, 1.5]


@pytest.mark.parametrize(
    ("dtype", "ok", "bad", "name"),
    [
        (ea.int8, [127, -128, 1.9], [128, -129, 1e3, float("nan")], "int8_t"),
        (ea.uint8, [255, -1, -255], [256, -256], "uint8_t"),
        (ea.int16, [32767], [40000], "int16_t"),
        (ea.int32, [2**31 - 1, -(2**31)], [2**31, 1e10], "int"),
        (ea.int64, [2**63 - 1, 1e18], [1e19, float("inf")], "int64_t"),
        (ea.float16, [65504.0, float("inf"), float("nan")], [1e5, -70000], "c10::Half"),
        (ea.float32, [3e38, float("-inf")], [1e39], "float"),
        (ea.bool, [2, -1.5, float("nan")], [], ""),
    ],
)
def test_fill_value_must_fit_the_dtype(dtype: Any, ok: list[Any], bad: list[Any], name: str) -> None:
    for v in ok:
        ea.zeros(1, dtype=dtype).fill_(v)
        ea.full((1,), v, dtype=dtype)
    for v in bad:
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} without overflow"):
            ea.zeros(1, dtype=dtype).fill_(v)
        with pytest.raises(RuntimeError, match="without overflow"):
            ea.full((2,), v, dtype=dtype)
    assert ea.zeros(1, dtype=ea.uint8).fill_(-1).item() == 255


# ---- Tensor.to ---------------------------------------------------------------------------------


def test_to_forms() -> None:
    x = ea.arange(6.0).reshape(2, 3)
    assert x.to(ea.float32) is x
    assert x.to("cpu") is x and x.to(ea.device("cpu")) is x
    y = x.to(ea.int64)
    assert y.dtype == ea.int64 and y.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert x.to("cpu", ea.float64).dtype == ea.float64
    assert x.to(device="cpu", dtype=ea.float16).dtype == ea.float16
    assert x.to(dtype=ea.bfloat16).dtype == ea.bfloat16
    other = ea.zeros(1, dtype=ea.int16)
    assert x.to(other).dtype == ea.int16
    c = x.to(ea.float32, copy=True)
    assert c is not x and c.untyped_storage().data_ptr != x.untyped_storage().data_ptr
    assert x.to(ea.float32, False, True) is not x  # positional non_blocking, copy
    t = x.t()
    assert t.to(ea.float64).stride() == t.stride()  # preserve_format
    assert t.to(memory_format=ea.contiguous_format).is_contiguous()
    assert x.to(ea.float32, non_blocking=True) is x
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        x.to(foo=1)
    with pytest.raises(TypeError):
        x.to(ea.float32, False, False, 1)


def test_dtype_shortcuts_and_type() -> None:
    x = ea.tensor([1.5, -2.5])
    for name, dtype in [
        ("float", ea.float32),
        ("double", ea.float64),
        ("half", ea.float16),
        ("bfloat16", ea.bfloat16),
        ("int", ea.int32),
        ("long", ea.int64),
        ("short", ea.int16),
        ("char", ea.int8),
        ("byte", ea.uint8),
        ("bool", ea.bool),
    ]:
        assert getattr(x, name)().dtype == dtype
    assert x.float() is x
    assert x.int().tolist() == [1, -2]
    assert x.type() == "ember.aten.FloatTensor"
    assert x.long().type() == "ember.aten.LongTensor"
    assert x.type(ea.float64).dtype == ea.float64
    assert x.type("torch.IntTensor").dtype == ea.int32
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.FooTensor")
