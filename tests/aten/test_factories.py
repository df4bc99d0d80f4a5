"""Factories: PyTorch's signatures (varargs sizes, TensorOptions keywords, requires_grad,
out=), dtype inference, arange's size computation and errors, and tensor() /
as_tensor() / from_numpy() with their copy-or-share rules."""

from __future__ import annotations

import gc
import warnings

import ember.aten as ea
import numpy as np
import pytest


@pytest.fixture
def float64_default():
    prev = ea.get_default_dtype()
    ea.set_default_dtype(ea.float64)
    try:
        yield
    finally:
        ea.set_default_dtype(prev)


# ---- zeros / ones / full / empty ----------------------------------------------------------------


@pytest.mark.parametrize("factory", [ea.zeros, ea.ones, ea.empty])
def test_size_forms(factory) -> None:
    for args, kwargs in [
        ((2, 3), {}),
        (((2, 3),), {}),
        (([2, 3],), {}),
        ((), {"size": (2, 3)}),
        ((ea.tensor(2), 3), {}),
    ]:
        t = factory(*args, **kwargs)
        assert t.shape == (2, 3) and t.dtype == ea.float32 and t.is_contiguous()
    assert factory(()).shape == ()
    assert factory(0).shape == (0,)
    assert factory(2, dtype=ea.int8, device="cpu", layout=ea.strided, pin_memory=False).dtype == ea.int8
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        factory(2, -1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        factory(sizes=(2,))
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        factory(2, size=(2,))


def test_values_and_out() -> None:
    assert ea.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert ea.ones(3, dtype=ea.int64).tolist() == [1, 1, 1]
    assert ea.full((2,), 7).tolist() == [7, 7]
    for factory, value in [(ea.zeros, 0), (ea.ones, 1)]:
        out = ea.empty(0, dtype=ea.int16)
        r = factory(2, 3, out=out)
        assert r is out and out.shape == (2, 3) and out.tolist() == [[value] * 3] * 2
    out = ea.empty(5)
    assert ea.full((2, 2), 2.5, out=out) is out and out.tolist() == [[2.5, 2.5], [2.5, 2.5]]


def test_empty_strided_and_scalar_tensor() -> None:
    e = ea.empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == ea.float32
    assert ea.empty_strided((2, 2), (0, 1), dtype=ea.int8).stride() == (0, 1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        ea.empty_strided((-1,), (1,))
    s = ea.scalar_tensor(3)
    assert s.shape == () and s.dtype == ea.float32 and s.item() == 3.0
    assert ea.scalar_tensor(True, dtype=ea.bool).item() is True
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the empty operator"):
        ea.empty(2, memory_format=ea.preserve_format)
    assert ea.empty(2, 3, 4, 5, memory_format=ea.channels_last).is_contiguous(memory_format=ea.channels_last)


def test_full_infers_dtype_from_fill_value(float64_default: None) -> None:
    assert ea.full((2,), True).dtype == ea.bool
    assert ea.full((2,), 3).dtype == ea.int64
    assert ea.full((2,), 2.5).dtype == ea.float64  # the default dtype
    assert ea.full((2,), 2.5, dtype=ea.float16).dtype == ea.float16
    assert ea.full((2,), 3, dtype=ea.float32).tolist() == [3.0, 3.0]
    assert ea.zeros(1).dtype == ea.float64


def test_requires_grad_keyword() -> None:
    for t in (
        ea.zeros(2, requires_grad=True),
        ea.ones((2,), requires_grad=True),
        ea.full((2,), 1.0, requires_grad=True),
        ea.empty(2, requires_grad=True),
        ea.arange(3.0, requires_grad=True),
        ea.linspace(0, 1, 3, requires_grad=True),
        ea.eye(2, requires_grad=True),
        ea.zeros_like(ea.ones(2), requires_grad=True),
        ea.ones(2).new_zeros(3, requires_grad=True),
        ea.tensor([1.0], requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf
    assert not ea.zeros(2).requires_grad
    with pytest.raises(RuntimeError, match=r"only Tensors of floating point.*dtype can require gradients"):
        ea.zeros(2, dtype=ea.int64, requires_grad=True)


# ---- *_like and new_* -----------------------------------------------------------------------------


def test_like_preserves_dense_layouts() -> None:
    x = ea.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
    for f in (ea.empty_like, ea.zeros_like, ea.ones_like):
        r = f(x)
        assert r.shape == x.shape and r.stride() == x.stride() and r.dtype == x.dtype
        assert f(x, memory_format=ea.contiguous_format).is_contiguous()
        assert f(x, dtype=ea.int8).stride() == x.stride()
    # a non-dense input: dense strides in the input's order
    s = ea.arange(48.0).reshape(4, 12)[:, ::2].t()  # (6, 4), strides (2, 12)
    assert ea.empty_like(s).stride() == (1, 6)
    # broadcast dims say nothing about order: contiguous
    e = ea.zeros(3, 1).expand(3, 4)
    assert ea.zeros_like(e).stride() == (4, 1)
    cl = ea.zeros_like(ea.zeros(2, 3, 4, 5), memory_format=ea.channels_last)
    assert cl.is_contiguous(memory_format=ea.channels_last)
    assert ea.full_like(ea.zeros(2, dtype=ea.int32), 7.9).tolist() == [7, 7]  # keeps self's dtype
    assert ea.full_like(ea.zeros(2), 7, dtype=ea.int64).dtype == ea.int64
    assert ea.ones_like(ea.zeros(2, 2), device="cpu").device.type == "cpu"


def test_new_factories() -> None:
    x = ea.zeros(2, dtype=ea.int32)
    for t in (
        x.new_empty(3, 4),
        x.new_zeros((3, 4)),
        x.new_ones([3, 4]),
        x.new_full((3, 4), 5.7),
        x.new_zeros(size=(3, 4)),
    ):
        assert t.shape == (3, 4) and t.dtype == ea.int32
    assert x.new_full((2,), 5.7).tolist() == [5, 5]
    assert x.new_ones(2, dtype=ea.float16).dtype == ea.float16
    assert x.new_zeros(()).shape == ()
    s = x.new_empty_strided((2, 3), (1, 2))
    assert s.stride() == (1, 2) and s.dtype == ea.int32
    n = x.new_tensor([1.5, 2.5])
    assert n.dtype == ea.int32 and n.tolist() == [1, 2]
    assert x.new_tensor([1.5], dtype=ea.float64).dtype == ea.float64
    assert ea.zeros(1).new_tensor([1.0], requires_grad=True).requires_grad
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        copy = x.new_tensor(x)
    assert copy.untyped_storage().data_ptr != x.untyped_storage().data_ptr


# ---- arange / linspace / logspace / eye --------------------------------------------------------------


def test_arange_dtype_inference_and_values(float64_default: None) -> None:
    assert ea.arange(5).dtype == ea.int64 and ea.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert ea.arange(1, 4).tolist() == [1, 2, 3]
    assert ea.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert ea.arange(5.0).dtype == ea.float64
    assert ea.arange(0, 5, 0.5).dtype == ea.float64
    assert ea.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert ea.arange(5, dtype=ea.float32).dtype == ea.float32
    assert ea.arange(end=3).tolist() == [0, 1, 2]
    assert ea.arange(start=1, end=3).tolist() == [1, 2]
    assert ea.arange(2, 2).shape == (0,)
    assert ea.arange(ea.tensor(3)).tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("start", "end", "step"),
    [(0, 1, 0.1), (0, 1, 0.3), (-1, 1, 0.25), (1, 0, -0.1), (0, 10, 3), (0, 1e-3, 1e-4), (0.5, 7.3, 0.7), (-5, 5, 1)],
)
def test_arange_size_matches_numpy(start: float, end: float, step: float) -> None:
    t = ea.arange(start, end, step, dtype=ea.float64)
    ref = np.arange(start, end, step, dtype=np.float64)
    assert t.shape == ref.shape
    np.testing.assert_allclose(t.numpy(), ref, rtol=1e-12, atol=1e-15)


def test_arange_errors() -> None:
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        ea.arange(0, 3, 0)
    with pytest.raises(ValueError, match="step must be nonzero"):
        ea.arange(0, 3, 0.5, dtype=ea.int64)  # the step truncates to 0 in int64: PyTorch's ValueError
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        ea.arange(0, -3, 1)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
        ea.arange(3, 0, 2)
    with pytest.raises(RuntimeError, match="unsupported range: inf -> 2"):
        ea.arange(float("inf"), 2, -1)
    with pytest.raises(RuntimeError, match="unsupported range"):
        ea.arange(0, float("nan"))
    with pytest.raises(RuntimeError, match="arange: not implemented for dtype bool"):
        ea.arange(3, dtype=ea.bool)


def test_arange_out() -> None:
    out = ea.empty(0, dtype=ea.int32)
    assert ea.arange(4, out=out) is out and out.tolist() == [0, 1, 2, 3]
    assert ea.arange(1, 7, 2, out=out) is out and out.tolist() == [1, 3, 5]
    f = ea.empty(10)
    ea.arange(0.0, 1.0, 0.25, out=f)
    assert f.tolist() == [0.0, 0.25, 0.5, 0.75]


def test_linspace_logspace() -> None:
    assert ea.linspace(0, 10, 5).dtype == ea.float32
    np.testing.assert_allclose(ea.linspace(-1, 1, 7).numpy(), np.linspace(-1, 1, 7, dtype=np.float32), rtol=1e-6)
    assert ea.linspace(3, 9, 1).tolist() == [3.0]
    assert ea.linspace(3, 9, 0).shape == (0,)
    t = ea.linspace(0, 1, 1001)
    assert t[0].item() == 0.0 and t[-1].item() == 1.0  # both ends exact
    assert ea.linspace(0, 10, 6, dtype=ea.int64).tolist() == [0, 2, 4, 6, 8, 10]
    np.testing.assert_allclose(ea.logspace(0, 3, 4).numpy(), [1, 10, 100, 1000], rtol=1e-6)
    np.testing.assert_allclose(ea.logspace(0, 4, 5, base=2).numpy(), [1, 2, 4, 8, 16])
    np.testing.assert_allclose(ea.logspace(0, 4, 5, 2.0, dtype=ea.float64).numpy(), [1, 2, 4, 8, 16])
    out = ea.empty(0)
    assert ea.linspace(0, 1, 3, out=out) is out and out.tolist() == [0.0, 0.5, 1.0]
    assert ea.logspace(0, 1, 2, out=out) is out and out.tolist() == [1.0, 10.0]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ea.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ea.logspace(0, 1, -2)


def test_eye() -> None:
    np.testing.assert_array_equal(ea.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(ea.eye(2, 4, dtype=ea.int64).numpy(), np.eye(2, 4))
    np.testing.assert_array_equal(ea.eye(4, m=2).numpy(), np.eye(4, 2))
    assert ea.eye(0).shape == (0, 0) and ea.eye(2, dtype=ea.bool).tolist() == [[True, False], [False, True]]
    out = ea.ones(7)
    assert ea.eye(2, out=out) is out and out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert ea.eye(2, 3, out=out) is out and out.shape == (2, 3)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        ea.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        ea.eye(2, -2)


# ---- tensor / as_tensor / from_numpy ------------------------------------------------------------------


def test_tensor_dtype_inference(float64_default: None) -> None:
    assert ea.tensor([True, False]).dtype == ea.bool
    assert ea.tensor([True, 2]).dtype == ea.int64
    assert ea.tensor([[1, 2], [3, 4]]).dtype == ea.int64
    assert ea.tensor([1, 2.5]).dtype == ea.float64
    assert ea.tensor([[True], [1.5]]).dtype == ea.float64
    assert ea.tensor([True, 1.5]).tolist() == [1.0, 1.5]
    assert ea.tensor(3).dtype == ea.int64 and ea.tensor(3).shape == ()
    assert ea.tensor([]).dtype == ea.float64 and ea.tensor([]).shape == (0,)
    assert ea.tensor([[], []]).shape == (2, 0)
    assert ea.tensor(((1, 2), (3, 4))).shape == (2, 2)
    assert ea.tensor([1, 2], dtype=ea.float16).dtype == ea.float16
    assert ea.tensor(np.float32(1.5)).dtype == ea.float32
    assert ea.tensor(np.int16(3)).dtype == ea.int16
    assert ea.tensor([np.int64(1), 2]).dtype == ea.int64
    # tensors and NumPy scalars inside the data keep their dtype, promoted with the rest
    i32 = ea.tensor(1, dtype=ea.int32)
    assert ea.tensor([i32, i32]).dtype == ea.int32
    assert ea.tensor([i32, 5]).dtype == ea.int64
    assert ea.tensor([ea.tensor(1.5, dtype=ea.float16), 2]).dtype == ea.float16
    assert ea.tensor([ea.tensor(1.5, dtype=ea.float16), 2.5]).dtype == ea.float64
    assert ea.tensor([np.float32(1.5), np.float32(2.0)]).dtype == ea.float32
    assert ea.tensor([np.float64(1.5), 2]).dtype == ea.float64
    assert ea.tensor([np.uint8(200), True]).tolist() == [200, 1]
    assert ea.tensor([np.array(2), np.array(3)]).dtype == ea.int64
    assert ea.tensor([[np.bool_(True)], [False]]).dtype == ea.bool


def test_tensor_errors() -> None:
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 3\)"):
        ea.tensor([[1, 2], [3, 4, 5]])
    with pytest.raises(TypeError, match="not a sequence"):  # PyTorch's error for a number where a row belongs
        ea.tensor([[1, 2], 3])
    with pytest.raises(ValueError, match="too many dimensions 'str'"):  # PyTorch 2.13's error
        ea.tensor(["a"])
    with pytest.raises(TypeError, match="invalid data type 'dict'"):  # PyTorch: "Could not infer dtype of dict"
        ea.tensor({1: 2})


def test_tensor_copies() -> None:
    a = np.arange(6.0).reshape(2, 3)
    t = ea.tensor(a)
    assert t.dtype == ea.float64
    a[0, 0] = 99
    assert t[0, 0].item() == 0.0
    x = ea.ones(2)
    with pytest.warns(UserWarning, match="sourceTensor.clone\\(\\).detach\\(\\)"):
        c = ea.tensor(x)
    c.zero_()
    assert x.tolist() == [1.0, 1.0]
    np.testing.assert_array_equal(ea.tensor(np.arange(6)[::-2]).numpy(), np.arange(6)[::-2])


@pytest.mark.parametrize(
    "npdtype", [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]
)
def test_from_numpy_shares_memory(npdtype) -> None:
    a = (np.arange(12) % 3).astype(npdtype).reshape(3, 4)
    t = ea.from_numpy(a)
    assert t.data_ptr() == a.__array_interface__["data"][0]
    assert t.shape == (3, 4) and t.stride() == (4, 1)
    np.testing.assert_array_equal(t.numpy(), a)
    t.zero_()
    assert not a.any()  # a write through the tensor is visible in the array
    a[1, 1] = 1
    assert t[1, 1].item() == 1


def test_from_numpy_strides_lifetime_and_errors() -> None:
    a = np.arange(24.0).reshape(4, 6)
    s = ea.from_numpy(a[:, ::2])
    assert s.stride() == (6, 2) and s.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(s.numpy(), a[:, ::2])
    tr = ea.from_numpy(a.T)
    assert tr.stride() == (1, 6)
    # negative strides: PyTorch's ValueError (tensor()/as_tensor() copy instead)
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        ea.from_numpy(a[::-1])
    np.testing.assert_array_equal(ea.as_tensor(a[::-1]).numpy(), a[::-1])
    # the tensor keeps the array's memory alive
    t = ea.from_numpy(np.full(1000, 3.0))
    gc.collect()
    assert t.tolist() == [3.0] * 1000
    assert ea.from_numpy(np.array(5.0)).shape == ()
    assert ea.from_numpy(np.zeros((0, 3))).shape == (0, 3)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        ea.from_numpy(ro)
    with pytest.raises(TypeError, match=r"expected np.ndarray"):
        ea.from_numpy([1, 2])
    with pytest.raises(TypeError, match=r"can't convert np.ndarray of type numpy.complex128"):
        ea.from_numpy(np.zeros(2, dtype=np.complex128))
    with pytest.raises(ValueError, match="byte order"):
        ea.from_numpy(np.zeros(2, dtype=">f4"))


def test_as_tensor_shares_when_it_can() -> None:
    a = np.arange(4.0)
    t = ea.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data
    a[0] = 7
    assert t[0].item() == 7.0
    c = ea.as_tensor(a, dtype=ea.float32)  # another dtype: a copy
    assert c.dtype == ea.float32 and c.data_ptr() != a.ctypes.data
    x = ea.ones(2)
    assert ea.as_tensor(x) is x
    assert ea.as_tensor(x, dtype=ea.float32) is x
    assert ea.as_tensor(x, dtype=ea.float64).dtype == ea.float64
    lst = ea.as_tensor([1, 2, 3])
    assert lst.dtype == ea.int64 and lst.tolist() == [1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ea.as_tensor(np.arange(3))  # a writable array: no warning


def test_new_tensor_takes_pytorchs_keywords_only() -> None:
    """PyTorch's new_tensor(data, *, dtype=None, device=None, requires_grad=False): no
    layout= or pin_memory= (TypeError, as PyTorch's), options only by keyword."""
    x = ea.zeros(2, dtype=ea.int32)
    for kw in ({"pin_memory": True}, {"pin_memory": False}, {"layout": ea.strided}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(kw))}'"):
            x.new_tensor([1.0], **kw)
    with pytest.raises(TypeError, match="positional argument"):
        x.new_tensor([1.0], ea.float64)  # type: ignore[misc]
    assert x.new_tensor([1.0], dtype=ea.float64, device="cpu").dtype == ea.float64
