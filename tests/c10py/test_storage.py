"""StorageImpl: bytes + allocator + device; buffer protocol, wrapping, resizing."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from ember.c10py import _C


def test_new_storage() -> None:
    s = _C.StorageImpl(100)
    assert s.nbytes == 100
    assert s.device == _C.device("cpu")
    assert s.resizable
    assert not s.is_shared()
    assert s.use_count == 1
    assert repr(s) == "StorageImpl(nbytes=100, device='cpu')"
    assert not _C.StorageImpl(8, resizable=False).resizable


def test_negative_nbytes() -> None:
    with pytest.raises(ValueError, match="nbytes must be non-negative, got -1"):
        _C.StorageImpl(-1)


def test_numpy_view_shares_memory_both_ways() -> None:
    s = _C.StorageImpl.from_bytes(bytes(range(16)))
    a = np.frombuffer(s, dtype=np.uint8)
    assert a.ctypes.data == s.data_ptr
    np.testing.assert_array_equal(a, np.arange(16))
    assert a.flags.writeable
    a[3] = 200  # numpy -> storage
    assert s.tobytes()[3] == 200
    s.copy_from_bytes(bytes(range(100, 116)))  # storage -> numpy
    np.testing.assert_array_equal(a, np.arange(100, 116))
    f = np.frombuffer(s, dtype=np.float32)
    assert f.shape == (4,)


def test_memoryview_shares_memory_both_ways() -> None:
    s = _C.StorageImpl(8)
    m = memoryview(s)
    assert m.nbytes == 8 and m.format == "B" and m.ndim == 1 and not m.readonly
    m[:] = b"abcdefgh"
    assert s.tobytes() == b"abcdefgh"
    s.copy_from_bytes(b"12345678")
    assert m.tobytes() == b"12345678"
    m.release()


def test_from_buffer_is_zero_copy() -> None:
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = _C.StorageImpl.from_buffer(arr)
    assert s.data_ptr == arr.ctypes.data
    assert s.nbytes == arr.nbytes
    assert not s.resizable
    arr[1, 1] = -1.0
    assert np.frombuffer(s, np.float32)[5] == -1.0
    np.frombuffer(s, np.float32)[0] = 42.0
    assert arr[0, 0] == 42.0


def test_from_buffer_keeps_the_source_alive() -> None:
    arr = np.arange(1000, dtype=np.int64)
    ref = weakref.ref(arr)
    s = _C.StorageImpl.from_buffer(arr)
    del arr
    gc.collect()
    assert ref() is not None  # the storage holds the array
    assert np.frombuffer(s, np.int64)[999] == 999
    del s
    gc.collect()
    assert ref() is None  # and lets it go with the last reference


def test_from_buffer_through_a_tensor_keeps_the_source_alive() -> None:
    arr = np.arange(6, dtype=np.float32)
    ref = weakref.ref(arr)
    t = _C.TensorImpl(_C.StorageImpl.from_buffer(arr), _C.float32, [2, 3])
    del arr
    gc.collect()
    assert ref() is not None
    assert np.frombuffer(t.storage, np.float32)[5] == 5.0
    del t
    gc.collect()
    assert ref() is None


def test_from_buffer_read_only_source() -> None:
    data = b"immutable bytes!"
    with pytest.raises(BufferError):
        _C.StorageImpl.from_buffer(data)  # writable by default
    s = _C.StorageImpl.from_buffer(data, writable=False)
    assert s.tobytes() == data
    m = memoryview(s)
    assert m.readonly  # a read-only source stays read-only
    with pytest.raises(TypeError):
        m[0] = 0
    assert not np.frombuffer(s, np.uint8).flags.writeable
    with pytest.raises(RuntimeError, match="read-only"):
        s.copy_from_bytes(b"x" * len(data))
    assert data == b"immutable bytes!"


def test_from_buffer_rejects_non_contiguous() -> None:
    with pytest.raises((ValueError, BufferError)):
        _C.StorageImpl.from_buffer(np.zeros(8)[::2])


def test_from_buffer_other_buffer_types() -> None:
    ba = bytearray(b"hello")
    s = _C.StorageImpl.from_buffer(ba)
    memoryview(s)[0] = ord("j")
    assert ba == bytearray(b"jello")
    assert _C.StorageImpl.from_buffer(memoryview(ba)[1:]).tobytes() == b"ello"


def test_bytes_round_trip() -> None:
    payload = bytes(range(256)) * 3
    s = _C.StorageImpl.from_bytes(payload)
    assert s.nbytes == len(payload)
    assert s.resizable
    assert s.tobytes() == payload
    s.copy_from_bytes(payload[::-1])
    assert s.tobytes() == payload[::-1]
    with pytest.raises(ValueError, match="copy_from_bytes: got 3 bytes for a storage of 768"):
        s.copy_from_bytes(b"abc")
    assert _C.StorageImpl.from_bytes(b"x", device=_C.device("cpu")).tobytes() == b"x"


@pytest.mark.parametrize(("old", "new"), [(16, 64), (64, 16), (100, 100), (10, 0), (0, 10), (1000, 1 << 20)])
def test_resize_keeps_the_prefix(old: int, new: int) -> None:
    payload = bytes((i * 7) % 256 for i in range(old))
    s = _C.StorageImpl.from_bytes(payload)
    s.resize_(new)
    assert s.nbytes == new
    keep = min(old, new)
    assert s.tobytes()[:keep] == payload[:keep]
    assert len(s.tobytes()) == new
    if new:
        assert s.data_ptr % 64 == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda: _C.StorageImpl(16, resizable=False),
        lambda: _C.StorageImpl.from_buffer(np.zeros(16, np.uint8)),
        lambda: _C.StorageImpl.from_buffer(bytearray(4)),
    ],
)
def test_non_resizable_resize(make) -> None:  # type: ignore[no-untyped-def]
    s = make()
    before = s.tobytes()
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        s.resize_(s.nbytes + 16)
    assert s.tobytes() == before


def test_zero_byte_storages() -> None:
    for s in (_C.StorageImpl(0), _C.StorageImpl.from_bytes(b""), _C.StorageImpl.from_buffer(bytearray())):
        assert s.nbytes == 0
        assert s.tobytes() == b""
        assert memoryview(s).nbytes == 0
        assert np.frombuffer(s, np.uint8).size == 0
        s.copy_from_bytes(b"")
    s = _C.StorageImpl(0)
    s.resize_(8)
    assert s.nbytes == 8
    s.resize_(0)
    assert s.nbytes == 0 and s.tobytes() == b""


def test_use_count_counts_tensors() -> None:
    s = _C.StorageImpl(64)
    t = _C.TensorImpl(s, _C.float32)
    assert s.use_count == 2
    v = t.make_view([4], [2], 0)
    assert s.use_count == 3
    del t, v
    assert s.use_count == 1
