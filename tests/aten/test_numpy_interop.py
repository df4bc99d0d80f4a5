"""NumPy interop: from_numpy / Tensor.numpy() share memory (write through one, read through
the other), __array__ and __array_wrap__, and PyTorch's errors and warnings."""

from __future__ import annotations

import warnings

import ember.aten as ea
import numpy as np
import pytest

NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def sample(np_dtype, shape=(4, 6)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    return (a % 3 == 0) if np_dtype is np.bool_ else a.astype(np_dtype)


STRIDED = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "step": lambda a: a[:, ::2],
    "offset": lambda a: a[1:, 2:],
    "fortran": lambda a: np.asfortranarray(a),
    "broadcast": lambda a: np.broadcast_to(a[:1], (3, a.shape[1])),
    "zero-size": lambda a: a[:0],
    "0-d": lambda a: a[1, 1, ...],
}


@pytest.mark.parametrize("np_dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", list(STRIDED))
def test_from_numpy_is_zero_copy_with_any_strides(np_dtype, layout):
    a = STRIDED[layout](sample(np_dtype))
    if a.flags.writeable:
        t = ea.from_numpy(a)
    else:  # np.broadcast_to returns a read-only view
        with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
            t = ea.from_numpy(a)
    assert t.shape == a.shape
    assert t.stride() == tuple(s // a.itemsize for s in a.strides) or a.size == 0
    assert t.dtype == getattr(ea, np.dtype(np_dtype).name if np_dtype is not np.bool_ else "bool")
    np.testing.assert_array_equal(t.numpy(), a)
    if a.size:
        assert t.data_ptr() == a.__array_interface__["data"][0]


@pytest.mark.parametrize("np_dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_writes_through_from_numpy_show_in_the_array_and_back(np_dtype):
    a = sample(np_dtype)
    view = a[1:, ::2]
    t = ea.from_numpy(view)
    one = np.ones((), dtype=np_dtype)
    t[0, 1] = one.item()
    assert a[1, 2] == one
    a[2, 4] = 0
    assert t[1, 2].item() == 0
    n = t.numpy()
    n[0, 0] = one
    assert a[1, 0] == one


def test_numpy_shares_memory_and_keeps_the_storage_alive():
    t = ea.arange(12.0).reshape(3, 4).t()
    a = t.numpy()
    assert a.strides == (4, 16)
    assert np.shares_memory(a, t.numpy())
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    t.add_(1.0)
    assert a[1, 2] == 0.0
    del t
    assert a.sum() == sum(range(12)) - 9 - 1 + 12  # still valid after the tensor is gone


def test_array_keeps_the_tensor_memory_alive_and_vice_versa():
    a = np.arange(5.0)
    t = ea.from_numpy(a)
    del a
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_negative_strides_follow_pytorch():
    a = np.arange(6.0)[::-1]
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        ea.from_numpy(a)
    # tensor()/as_tensor() copy instead, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ea.tensor(a).tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
        t = ea.as_tensor(a)
    assert t.tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]


def test_read_only_array_warns_as_pytorch():
    a = np.arange(4.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        t = ea.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data  # shared, as in PyTorch
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "array, exc, message",
    [
        (np.arange(3, dtype=">i4"), ValueError, "given numpy array has byte order different from the native byte"),
        (np.zeros(3, dtype=[("a", "i4")]), TypeError, "can't convert np.ndarray of type numpy.void"),
        (np.array(["a"]), TypeError, "can't convert np.ndarray of type numpy.str_"),
        (np.array([1 + 2j]), TypeError, "can't convert np.ndarray of type numpy.complex128"),
        (np.lib.stride_tricks.as_strided(np.zeros(4, np.int16), shape=(2,), strides=(3,)), ValueError,
         "given numpy array strides not a multiple of the element byte size"),
        ([1, 2], TypeError, r"expected np.ndarray \(got list\)"),
    ],
)  # fmt: skip
def test_from_numpy_errors(array, exc, message):
    with pytest.raises(exc, match=message):
        ea.from_numpy(array)


def test_numpy_errors():
    t = ea.ones(2)
    t.requires_grad_(True)
    with pytest.raises(
        RuntimeError,
        match=r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead.",
    ):
        t.numpy()
    assert t.numpy(force=True).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="Got unsupported ScalarType bfloat16"):
        ea.ones(2, dtype=ea.bfloat16).numpy()
    assert ea.ones(2, dtype=ea.bfloat16).numpy(force=True).dtype == np.float32


def test_dunder_array():
    t = ea.arange(6.0).reshape(2, 3)
    a = np.asarray(t)
    assert a.ctypes.data == t.data_ptr()
    a[0, 0] = 9.0
    assert t[0, 0].item() == 9.0
    b = np.asarray(t, dtype=np.int64)
    assert b.dtype == np.int64 and b.tolist() == [[9, 1, 2], [3, 4, 5]]
    c = np.array(t, copy=False)  # zero-copy is possible, so copy=False works
    assert c.ctypes.data == t.data_ptr()
    d = np.array(t)  # copies
    assert d.ctypes.data != t.data_ptr()


def test_array_wrap_ufuncs_return_tensors():
    t = ea.arange(3.0)
    s = np.sin(t)
    assert isinstance(s, ea.Tensor)
    np.testing.assert_allclose(s.numpy(), np.sin(np.arange(3.0)), rtol=1e-6)
    g = np.greater(t, 1)
    assert isinstance(g, ea.Tensor) and g.dtype == ea.uint8 and g.tolist() == [0, 0, 1]  # PyTorch's uint8 rule
    m = np.multiply(ea.arange(3), 2.0)
    assert isinstance(m, ea.Tensor) and m.dtype == ea.float64
