"""TensorImpl: strides, contiguity, validated geometry, dims, views and version counters."""

from __future__ import annotations

import numpy as np
import pytest
from ember.c10py import _C

K = _C.DispatchKey


@pytest.mark.parametrize(
    ("sizes", "strides"),
    [
        ([], ()),
        ([5], (1,)),
        ([2, 3], (3, 1)),
        ([2, 3, 4], (12, 4, 1)),
        ([2, 0, 3], (3, 3, 1)),  # a size-0 dim strides as if it had size 1 (as PyTorch)
        ([0], (1,)),
        ([0, 4], (4, 1)),
        ([3, 0], (1, 1)),
        ([2, 1, 3], (3, 3, 1)),
        ([1, 1], (1, 1)),
        ([1, 5, 1], (5, 1, 1)),
    ],
)
def test_contiguous_strides(sizes: list[int], strides: tuple[int, ...]) -> None:
    assert _C.contiguous_strides(sizes) == strides
    t = _C.TensorImpl.empty(sizes, _C.float32)
    assert t.sizes == tuple(sizes) and t.strides == strides
    assert t.is_contiguous and t.is_non_overlapping_and_dense


@pytest.mark.parametrize(
    ("sizes", "strides", "contiguous", "dense"),
    [
        ([], [], True, True),
        ([4], [1], True, True),
        ([4], [2], False, False),
        ([2, 3], [3, 1], True, True),
        ([3, 2], [1, 3], False, True),  # transposed
        ([2, 3], [4, 1], False, False),  # padded rows
        ([2, 3], [0, 1], False, False),  # broadcast (overlapping)
        ([2, 3, 4], [1, 2, 6], False, True),  # fully permuted
        ([1], [7], True, True),  # a size-1 dim's stride never matters
        ([2, 1, 3], [3, 100, 1], True, True),
        ([1, 4], [1, 1], True, True),
        ([4, 1], [1, 1], True, True),
        ([0], [5], True, True),  # empty tensors are contiguous whatever the strides
        ([0, 3], [1, 5], True, True),
        ([3, 0], [7, 9], True, True),
        ([2, 0, 2], [0, 0, 0], True, True),
    ],
)
def test_is_contiguous(sizes: list[int], strides: list[int], contiguous: bool, dense: bool) -> None:
    storage = _C.StorageImpl(4096)
    t = _C.TensorImpl(storage, _C.float32, sizes, strides)
    assert t.is_contiguous is contiguous
    assert t.is_non_overlapping_and_dense is dense


def test_transposed_view() -> None:
    base = _C.TensorImpl.empty([2, 3], _C.float32)
    t = base.make_view([3, 2], [1, 3], 0)
    assert not t.is_contiguous and t.is_non_overlapping_and_dense
    # a column of the transpose is contiguous again
    col = base.make_view([3], [1], 3)
    assert col.is_contiguous


def test_empty_and_geometry() -> None:
    t = _C.TensorImpl.empty([2, 3, 4], _C.float64)
    assert t.dim == 3 and t.numel == 24 and t.nbytes == 192 and t.itemsize == 8
    assert t.storage.nbytes == 192 and t.storage_offset == 0
    assert t.dtype is _C.float64
    assert t.device == _C.device("cpu")
    assert t.data_ptr == t.storage.data_ptr
    assert t.key_set == _C.DispatchKeySet(K.CPU)
    assert [t.size(d) for d in range(3)] == [2, 3, 4]
    assert [t.size(d) for d in (-1, -2, -3)] == [4, 3, 2]
    assert [t.stride(d) for d in range(3)] == [12, 4, 1]
    assert repr(t) == "TensorImpl(sizes=[2, 3, 4], strides=[12, 4, 1], storage_offset=0, dtype=float64, device='cpu')"


def test_empty_strided() -> None:
    t = _C.TensorImpl.empty_strided([2, 3], [1, 2], _C.int16)
    assert t.strides == (1, 2) and not t.is_contiguous
    assert t.storage.nbytes == (1 + 1 * 1 + 2 * 2) * 2  # extent 6 elements
    assert _C.TensorImpl.empty_strided([0, 3], [3, 1], _C.int16).storage.nbytes == 0
    with pytest.raises(ValueError, match="got 2 sizes but 1 strides"):
        _C.TensorImpl.empty_strided([2, 3], [1], _C.int16)
    with pytest.raises(RuntimeError, match="negative strides are not supported"):
        _C.TensorImpl.empty_strided([2, 3], [-1, 1], _C.int16)


def test_tensor_over_a_storage() -> None:
    s = _C.StorageImpl.from_buffer(np.arange(10, dtype=np.int32))
    t = _C.TensorImpl(s, _C.int32)  # 1-d over the whole storage
    assert t.sizes == (10,) and t.strides == (1,)
    u = _C.TensorImpl(s, _C.int32, [2, 2], storage_offset=3)
    assert u.strides == (2, 1)
    assert u.data_ptr == s.data_ptr + 3 * 4
    assert np.frombuffer(s, np.int32)[3] == 3


def test_data_ptr_follows_the_offset() -> None:
    t = _C.TensorImpl.empty([10], _C.float64)
    v = t.make_view([3], [2], 4)
    assert v.data_ptr == t.data_ptr + 4 * 8
    v.set_storage_offset(1)
    assert v.storage_offset == 1 and v.data_ptr == t.data_ptr + 8


# ---- validation ----------------------------------------------------------------


def _fresh(nbytes: int = 64) -> _C.TensorImpl:
    return _C.TensorImpl(_C.StorageImpl(nbytes, resizable=False), _C.float32)


@pytest.mark.parametrize(
    ("sizes", "strides", "offset", "error", "message"),
    [
        ([2, -1], [1, 1], 0, RuntimeError, r"Trying to create tensor with negative dimension -1: \[2, -1\]"),
        ([4], [-1], 0, RuntimeError, r"Negative strides are not supported at the moment, got strides: \[-1\]"),
        ([2, 2], [2, -3], 0, RuntimeError, r"Negative strides are not supported.*\[2, -3\]"),
        (
            [1 << 40, 1 << 40],
            [1, 1],
            0,
            RuntimeError,
            r"Storage size calculation overflowed with sizes=\[1099511627776",
        ),
        ([1 << 62], [1], 0, RuntimeError, r"Storage size calculation overflowed"),  # numel ok, * itemsize not
        ([2], [1 << 62], 0, RuntimeError, r"Storage size calculation overflowed"),  # the extent overflows
        (
            [17],
            [1],
            0,
            RuntimeError,
            r"setStorage: sizes \[17\], strides \[1\], storage offset 0, and itemsize 4 requiring a storage size "
            r"of 68 are out of bounds for storage of size 64",
        ),
        ([4, 4], [4, 1], 1, RuntimeError, r"requiring a storage size of 68 are out of bounds for storage of size 64"),
        ([2, 2], [1, 16], 0, RuntimeError, r"requiring a storage size of 72 are out of bounds"),
        ([4], [1], -1, RuntimeError, r"invalid storage offset -1"),
        ([4, 4], [1], 0, ValueError, r"dimensionality of sizes \(2\) must match dimensionality of strides \(1\)"),
    ],
)
def test_set_sizes_and_strides_errors(
    sizes: list[int], strides: list[int], offset: int, error: type[Exception], message: str
) -> None:
    t = _fresh()
    t.set_sizes_and_strides([2, 2], [2, 1], 0)
    with pytest.raises(error, match=message):
        t.set_sizes_and_strides(sizes, strides, offset)
    # a failed call leaves the geometry as it was
    assert t.sizes == (2, 2) and t.strides == (2, 1) and t.storage_offset == 0 and t.numel == 4


def test_set_sizes_and_strides_edges() -> None:
    t = _fresh()
    t.set_sizes_and_strides([16], [1], 0)  # exactly fills the storage
    t.set_sizes_and_strides([4, 4], [0, 1], 12)  # broadcast rows at the very end
    assert t.storage_offset == 12 and t.numel == 16
    t.set_sizes_and_strides([0, 1000], [1000, 1], 10**6)  # empty: no bounds to check
    assert t.numel == 0
    t.set_sizes_and_strides([], [], 15)  # a scalar at the last element
    assert t.dim == 0 and t.numel == 1
    t.set_sizes_and_strides([1], [5])  # the offset is kept when not given
    assert t.storage_offset == 15 and t.sizes == (1,)
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.set_sizes_and_strides([2], [1])  # offset 15 + 2 elements > 16
    with pytest.raises(TypeError):
        t.set_sizes_and_strides([2.0], [1])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        t.set_sizes_and_strides([True], [1])  # type: ignore[list-item]
    t.set_sizes_and_strides((np.int64(2),), (np.int32(1),), 0)  # __index__ objects are fine
    assert t.sizes == (2,)


def test_set_sizes_contiguous_grows_a_resizable_storage() -> None:
    t = _C.TensorImpl.empty([2], _C.float32)
    t.set_sizes_contiguous([4, 5])
    assert t.sizes == (4, 5) and t.strides == (5, 1) and t.numel == 20
    assert t.storage.nbytes >= 80
    t.set_sizes_contiguous([0])
    assert t.numel == 0 and t.is_contiguous


def test_set_sizes_contiguous_failure_keeps_the_geometry() -> None:
    t = _C.TensorImpl(_C.StorageImpl.from_buffer(bytearray(16)), _C.float32)
    assert t.sizes == (4,)
    with pytest.raises(RuntimeError, match="not resizable"):
        t.set_sizes_contiguous([100])
    assert t.sizes == (4,) and t.numel == 4 and t.strides == (1,)
    with pytest.raises(RuntimeError, match="negative dimension"):
        t.set_sizes_contiguous([-2])
    assert t.sizes == (4,)
    t.set_sizes_contiguous([2, 2])  # fits: no resize needed
    assert t.sizes == (2, 2)


def test_dtype_must_be_a_dtype() -> None:
    with pytest.raises(TypeError):
        _C.TensorImpl(_C.StorageImpl(8), "float32")  # type: ignore[arg-type]


# ---- dims --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dim", "ndim", "wrapped"),
    [(0, 1, 0), (-1, 1, 0), (1, 2, 1), (-2, 2, 0), (-1, 2, 1), (3, 4, 3), (-4, 4, 0), (0, 0, 0), (-1, 0, 0)],
)
def test_maybe_wrap_dim(dim: int, ndim: int, wrapped: int) -> None:
    assert _C.maybe_wrap_dim(dim, ndim) == wrapped


@pytest.mark.parametrize(
    ("dim", "ndim", "lo", "hi"),
    [(2, 2, -2, 1), (-3, 2, -2, 1), (1, 1, -1, 0), (-2, 1, -1, 0), (1, 0, -1, 0), (-2, 0, -1, 0), (100, 5, -5, 4)],
)
def test_maybe_wrap_dim_errors(dim: int, ndim: int, lo: int, hi: int) -> None:
    with pytest.raises(IndexError) as info:
        _C.maybe_wrap_dim(dim, ndim)
    assert str(info.value) == f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"


def test_maybe_wrap_dim_message_of_the_spec() -> None:
    with pytest.raises(
        IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"
    ):
        _C.maybe_wrap_dim(2, 2)


def test_maybe_wrap_dim_without_scalar_wrapping() -> None:
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        _C.maybe_wrap_dim(0, 0, wrap_scalar=False)


def test_size_and_stride_check_the_dim() -> None:
    t = _C.TensorImpl.empty([2, 3], _C.float32)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        t.size(2)
    with pytest.raises(IndexError, match=r"but got -3"):
        t.stride(-3)
    scalar = _C.TensorImpl.empty([], _C.float32)
    with pytest.raises(IndexError, match="no dimensions"):
        scalar.size(0)


# ---- views and version counters ------------------------------------------------------


def test_make_view_shares_storage_and_version_counter() -> None:
    base = _C.TensorImpl.empty([4, 4], _C.float32)
    view = base.make_view([2, 2], [4, 1], 5)
    assert view.storage.data_ptr == base.storage.data_ptr
    assert view.data_ptr == base.data_ptr + 5 * 4
    assert view.shares_version_counter(base)
    assert view.dtype is base.dtype and view.key_set == base.key_set
    np.frombuffer(base.storage, np.float32)[5] = 7.0  # a write through the base ...
    assert np.frombuffer(view.storage, np.float32)[view.storage_offset] == 7.0  # ... seen by the view
    with pytest.raises(RuntimeError, match="out of bounds"):
        base.make_view([4, 4], [4, 1], 1)


def test_bump_version_is_visible_through_views() -> None:
    base = _C.TensorImpl.empty([8], _C.float32)
    v1 = base.make_view([4], [2], 0)
    v2 = v1.make_view([2], [1], 1)  # a view of a view
    assert base.version == v1.version == v2.version == 0
    base.bump_version()
    assert base.version == v1.version == v2.version == 1
    v2.bump_version()
    v2.bump_version()
    assert base.version == v1.version == v2.version == 3
    other = _C.TensorImpl.empty([8], _C.float32)
    assert other.version == 0 and not other.shares_version_counter(base)


def test_set_version_counter_from() -> None:
    a = _C.TensorImpl.empty([2], _C.float32)
    b = _C.TensorImpl.empty([2], _C.float32)
    a.bump_version()
    b.set_version_counter_from(a)
    assert b.shares_version_counter(a) and b.version == 1
    b.bump_version()
    assert a.version == 2


def test_shallow_copy() -> None:
    base = _C.TensorImpl.empty([3, 4], _C.float32)
    view = base.make_view([4, 3], [1, 4], 0)
    view.is_wrapped_number = True
    copy = view.shallow_copy()
    assert copy is not view
    assert (copy.sizes, copy.strides, copy.storage_offset, copy.dtype) == (
        view.sizes,
        view.strides,
        view.storage_offset,
        view.dtype,
    )
    assert copy.is_contiguous == view.is_contiguous and copy.is_wrapped_number
    assert copy.storage.data_ptr == base.storage.data_ptr
    assert copy.shares_version_counter(base)
    copy.set_sizes_and_strides([12], [1], 0)  # the copy's geometry is its own
    assert view.sizes == (4, 3)
    copy.bump_version()
    assert base.version == 1


def test_key_set_is_settable() -> None:
    t = _C.TensorImpl.empty([1], _C.float32)
    t.key_set = t.key_set.add(K.AutogradCPU)
    assert t.key_set.highest_priority_key() == K.AutogradCPU
    assert t._key_bits == t.key_set.raw
    v = t.make_view([1], [1], 0)
    assert v.key_set == t.key_set  # views inherit the key set


def test_set_storage() -> None:
    t = _C.TensorImpl.empty([4], _C.float32)
    s = _C.StorageImpl(64)
    t.set_storage(s)
    assert t.storage.data_ptr == s.data_ptr


@pytest.mark.parametrize("dtype", _C._all_dtypes())
def test_every_dtype(dtype: _C.dtype) -> None:
    t = _C.TensorImpl.empty([3, 5], dtype)
    assert t.itemsize == dtype.itemsize and t.nbytes == 15 * dtype.itemsize
    assert t.dtype is dtype
