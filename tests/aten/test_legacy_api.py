"""PyTorch APIs that scripts still call: typed constructors (FloatTensor, ...), type_as,
from_numpy of ndarray subclasses (np.memmap), accelerator and MPS probes, is_xpu."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest

# (constructor, dtype, NumPy dtype)
TYPED = [
    ("FloatTensor", ea.float32, np.float32),
    ("DoubleTensor", ea.float64, np.float64),
    ("HalfTensor", ea.float16, np.float16),
    ("LongTensor", ea.int64, np.int64),
    ("IntTensor", ea.int32, np.int32),
    ("ShortTensor", ea.int16, np.int16),
    ("CharTensor", ea.int8, np.int8),
    ("ByteTensor", ea.uint8, np.uint8),
    ("BoolTensor", ea.bool, np.bool_),
]


@pytest.mark.parametrize("name,dtype,np_dtype", TYPED, ids=[t[0] for t in TYPED])
def test_typed_constructors(name, dtype, np_dtype):
    cls = getattr(ea, name)
    assert cls.dtype == dtype
    sized = cls(2, 3)
    assert sized.shape == (2, 3) and sized.dtype == dtype
    assert cls(ea.Size([4])).shape == (4,)
    assert cls().shape == (0,)
    data = [[1, 0], [1, 1]]
    from_list = cls(data)
    assert from_list.dtype == dtype
    np.testing.assert_array_equal(from_list.numpy(), np.array(data, dtype=np_dtype))
    arr = np.array([3, 0, 1], dtype=np.float64)
    from_array = cls(arr)
    assert from_array.dtype == dtype
    np.testing.assert_array_equal(from_array.numpy(), arr.astype(np_dtype))
    assert isinstance(from_list, cls) and isinstance(from_list, ea.Tensor)
    other = ea.FloatTensor if name != "FloatTensor" else ea.LongTensor
    assert not isinstance(from_list, other)
    assert from_list.type(other).dtype == other.dtype
    assert from_list.type(cls) is from_list


def test_typed_constructor_errors():
    with pytest.raises(RuntimeError, match=r"negative dimension -1"):
        ea.FloatTensor(2, -1)
    with pytest.raises(TypeError, match=r"expected a tensor of dtype .*float32.*int64"):
        ea.FloatTensor(ea.zeros(2, dtype=ea.int64))
    with pytest.raises(TypeError, match=r"sizes"):
        ea.FloatTensor(2, "x")
    with pytest.raises(RuntimeError, match=r"expected a cpu device"):
        ea.FloatTensor(2, device="cuda")
    t = ea.ones(3)
    assert ea.FloatTensor(t).data_ptr() == t.data_ptr()  # same type: an alias


def test_cuda_typed_constructors_exist():
    assert ea.cuda.FloatTensor.dtype == ea.float32 and ea.cuda.FloatTensor.is_cuda
    assert not isinstance(ea.ones(1), ea.cuda.FloatTensor)


def test_set_default_tensor_type():
    try:
        ea.set_default_tensor_type(ea.DoubleTensor)
        assert ea.get_default_dtype() == ea.float64 and ea.tensor([1.5]).dtype == ea.float64
        ea.set_default_tensor_type("ember.aten.FloatTensor")
        assert ea.get_default_dtype() == ea.float32
        with pytest.raises(TypeError, match=r"no default device"):
            ea.set_default_tensor_type(ea.cuda.FloatTensor)
    finally:
        ea.set_default_dtype(ea.float32)


def test_type_as():
    x = ea.tensor([1.7, -2.2])
    y = ea.zeros(3, dtype=ea.int32)
    z = x.type_as(y)
    assert z.dtype == ea.int32 and z.tolist() == [1, -2]
    assert x.type_as(ea.zeros(1)) is x
    with pytest.raises(TypeError, match=r"type_as.*must be Tensor, not list"):
        x.type_as([1])


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_from_numpy_of_a_memmap_shares_its_pages(tmp_path):
    path = tmp_path / "tokens.bin"
    np.arange(10, dtype=np.int32).tofile(path)
    mm = np.memmap(path, dtype=np.int32, mode="r+")
    t = ea.from_numpy(mm)
    assert t.dtype == ea.int32 and t.tolist() == list(range(10))
    mm[3] = 77
    assert t[3].item() == 77  # the same memory
    t[4] = 55
    mm.flush()
    assert np.fromfile(path, dtype=np.int32)[4] == 55
    with pytest.warns(UserWarning, match=r"not writable"):
        ro = ea.from_numpy(np.memmap(path, dtype=np.int32, mode="r")[2:6])
    assert ro.tolist() == [2, 77, 55, 5]
    # nanoGPT's loader: a uint16 token file, a slice of it cast to int64 (still an np.memmap)
    np.arange(20, dtype=np.uint16).tofile(tmp_path / "u16.bin")
    chunk = np.memmap(tmp_path / "u16.bin", dtype=np.uint16, mode="r")[5:9].astype(np.int64)
    assert isinstance(chunk, np.memmap)
    assert ea.from_numpy(chunk).tolist() == [5, 6, 7, 8]
    assert ea.from_numpy(np.matrix([[1.0, 2.0], [3.0, 4.0]])).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert ea.tensor(mm[:3]).tolist() == [0, 1, 2]
    assert ea.as_tensor(mm[:2]).tolist() == [0, 1]
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        ea.from_numpy([1, 2])


def test_accelerator_and_mps_probes():
    assert ea.backends.mps.is_available() is False and ea.backends.mps.is_built() is False
    assert ea.accelerator.is_available() == ea.cuda.is_available()
    built = ea.backends.cuda.is_built()
    assert ea.accelerator.current_accelerator() == (ea.device("cuda") if built else None)
    if not ea.cuda.is_available():
        assert ea.accelerator.device_count() == 0
        assert ea.accelerator.current_accelerator(check_available=True) is None
        with pytest.raises(RuntimeError, match=r"no accelerator is available"):
            ea.accelerator.synchronize()
    x = ea.zeros(1)
    assert x.is_xpu is False and x.is_mps is False
