"""View semantics of the shape operators, and what the OpInfo table cannot express.

A view shares its base's storage and version counter and has ``_base`` set: a
write through it is visible in the base (and the other way round), and an in-place
op on either bumps the version both report. reshape / flatten / contiguous return a
view (or self) when the strides allow it and a fresh copy (no ``_base``) otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest


def _arange(*shape: int, dtype: Any = ea.float32) -> ea.Tensor:
    n = int(np.prod(shape)) if shape else 1
    return ea.arange(n, dtype=dtype).reshape(shape).clone()  # a base tensor (no _base)


def _np(t: ea.Tensor) -> np.ndarray:
    return t.numpy().copy()


# (name, view maker) -- every one must return a view of its input
VIEWS: list[tuple[str, Callable[[ea.Tensor], Any]]] = [
    ("view", lambda x: x.view(4, 6)),
    ("view_dtype", lambda x: x.view(ea.int32)),
    ("view_as", lambda x: x.view_as(ea.empty(6, 4))),
    ("reshape", lambda x: x.reshape(3, 8)),
    ("reshape_as", lambda x: x.reshape_as(ea.empty(24))),
    ("flatten", lambda x: x.flatten()),
    ("unflatten", lambda x: x.unflatten(2, (2, 2))),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)),
    ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("permute", lambda x: x.permute(2, 0, 1)),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("swapaxes", lambda x: x.swapaxes(0, 1)),
    ("swapdims", lambda x: ea.swapdims(x, 1, 2)),
    ("t", lambda x: x[0].t()),
    ("T", lambda x: x.T),
    ("mT", lambda x: x.mT),
    ("movedim", lambda x: x.movedim(0, -1)),
    ("moveaxis", lambda x: ea.moveaxis(x, (0, 1), (1, 0))),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("expand_as", lambda x: x[:, :1].expand_as(ea.empty(2, 3, 4))),
    ("broadcast_to", lambda x: ea.broadcast_to(x[0], (3, 3, 4))),
    ("broadcast_tensors", lambda x: ea.broadcast_tensors(x, ea.empty(1, 4))[0]),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("narrow_tensor_start", lambda x: x.narrow(1, ea.tensor(1), 2)),
    ("select", lambda x: x.select(1, 2)),
    ("slice", lambda x: x[:, 1:]),
    ("unfold", lambda x: x.unfold(2, 2, 1)),
    ("diagonal", lambda x: x.diagonal(0, 1, 2)),
    ("split", lambda x: x.split(1, 1)[1]),
    ("split_sizes", lambda x: x.split([1, 2], 1)[1]),
    ("chunk", lambda x: x.chunk(2, 2)[1]),
    ("tensor_split", lambda x: x.tensor_split(2, 1)[1]),
    ("tensor_split_indices", lambda x: x.tensor_split([1], 1)[1]),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("meshgrid", lambda x: ea.meshgrid(x[0, 0], ea.arange(2.0), indexing="ij")[0]),
    ("alias", lambda x: ea.alias(x)),
]
_OVERLAPPING = {"unfold"}  # several view elements share one base element


@pytest.mark.parametrize(("name", "make"), VIEWS, ids=[n for n, _ in VIEWS])
def test_view_shares_storage_version_and_base(name: str, make: Callable[[ea.Tensor], Any]) -> None:
    base = _arange(2, 3, 4)
    v = make(base)
    assert v._base is base, f"{name}: _base should be the base tensor"
    assert v.untyped_storage().data_ptr == base.untyped_storage().data_ptr
    assert v._impl.shares_version_counter(base._impl)
    # a write through the view is visible in the base
    before = base.clone()
    version = base._version
    if v.dtype == ea.float32 and v.stride() and 0 not in v.stride() and name not in _OVERLAPPING:
        v.fill_(-7.0)
        assert base._version == version + 1 and v._version == version + 1
        changed = _np(base) != _np(before)
        assert changed.sum() == v.numel()
        assert (_np(base)[changed] == -7.0).all()
        # and a write to the base is visible in the view
        base.zero_()
        assert (_np(v) == 0).all()
        assert v._version == version + 2


def test_view_of_view_has_the_root_base() -> None:
    base = _arange(4, 6)
    v = base.t()[1:].transpose(0, 1).unsqueeze(0).narrow(2, 1, 2)
    assert v._base is base


def test_detach_shares_storage_and_version_counter() -> None:
    x = _arange(2, 3)
    d = x.detach()
    assert d.untyped_storage().data_ptr == x.untyped_storage().data_ptr
    assert d._base is None and not d._is_view()  # an alias, not a view (PyTorch's detach)
    assert x[0].detach()._base is None
    assert d[0]._base is d
    d.zero_()
    assert x._version == d._version == 1
    assert (_np(x) == 0).all()


def test_write_through_expanded_view_raises() -> None:
    base = _arange(1, 4)
    v = base.expand(3, 4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        v.copy_(_arange(3, 4))


# ---- reshape / flatten / contiguous: view when possible, copy otherwise --------------------------


@pytest.mark.parametrize(
    ("make", "shape", "is_view"),
    [
        (lambda: _arange(2, 3, 4), (6, 4), True),
        (lambda: _arange(2, 3, 4).transpose(0, 1), (3, 2, 2, 2), True),  # the last dim is split
        (lambda: _arange(2, 3, 4).transpose(0, 1), (3, 8), False),
        (lambda: _arange(2, 3, 4).transpose(1, 2), (2, 12), False),
        (lambda: _arange(4, 6)[:, :3], (12,), False),
        (lambda: _arange(4, 6)[:, ::2], (12,), True),  # (6, 2) strides: rows continue each other
        (lambda: _arange(4, 6)[::2], (2, 2, 3), True),
        (lambda: _arange(4, 1, 6).expand(4, 3, 6), (4, 18), False),
        (lambda: _arange(4, 1, 6).expand(4, 3, 6), (4, 3, 2, 3), True),
        (lambda: _arange(3, 4).t(), (4, 3), True),
        (lambda: _arange(3, 4).t(), (12,), False),
        (lambda: _arange(0, 4).t(), (2, 0, 2), True),
    ],
)
def test_reshape_copies_only_when_needed(make: Any, shape: tuple[int, ...], is_view: bool) -> None:
    x = make()
    r = x.reshape(shape)
    np.testing.assert_array_equal(_np(r), _np(x).reshape(shape))
    if is_view:
        assert r._base is (x._base if x._base is not None else x)
        assert r.untyped_storage().data_ptr == x.untyped_storage().data_ptr
    else:
        assert r._base is None
        assert r.is_contiguous()
        assert r.untyped_storage().data_ptr != x.untyped_storage().data_ptr
        assert not r._impl.shares_version_counter(x._impl)


def test_flatten_returns_self_when_nothing_to_flatten() -> None:
    x = _arange(2, 3)
    assert x.flatten(1, 1) is x
    assert x.flatten(-1, 1) is x
    s = ea.tensor(3.0)
    assert s.flatten().shape == (1,)
    assert x.t().flatten()._base is None  # needs a copy
    np.testing.assert_array_equal(_np(x.t().flatten()), _np(x).T.reshape(-1))


def test_contiguous_returns_self_or_a_copy() -> None:
    x = _arange(2, 3)
    assert x.contiguous() is x
    y = x.t()
    c = y.contiguous()
    assert c is not y and c.is_contiguous() and c._base is None
    np.testing.assert_array_equal(_np(c), _np(x).T)
    assert c.contiguous() is c
    n = _arange(2, 3, 4, 5)
    cl = n.contiguous(memory_format=ea.channels_last)
    assert cl.is_contiguous(memory_format=ea.channels_last) and not cl.is_contiguous()
    assert cl.stride() == (60, 1, 15, 3)
    assert cl.contiguous(memory_format=ea.channels_last) is cl
    np.testing.assert_array_equal(_np(cl), _np(n))
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x.contiguous(memory_format=ea.preserve_format)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x.contiguous(memory_format=ea.channels_last)


def test_view_signatures() -> None:
    x = _arange(4, 6)
    assert x.view(24).shape == x.view((24,)).shape == x.view([24]).shape == x.view(size=(24,)).shape == (24,)
    assert x.view(2, -1).shape == (2, 12)
    assert x.view(ea.int32).dtype == x.view(dtype=ea.int32).dtype == ea.int32
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        x.view(shape=(24,))
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        x.view(24, size=(24,))
    assert x.permute(dims=(1, 0)).shape == (6, 4)
    assert x.reshape(shape=(3, 8)).shape == (3, 8)
    assert x.expand(size=(2, 4, 6)).shape == (2, 4, 6)
    assert ea.flip(x, dims=(0,)).shape == (4, 6)


# ---- view(dtype) ------------------------------------------------------------------------------


def test_view_dtype_reinterprets_bytes() -> None:
    x = ea.tensor([1.0, -2.0, 0.5], dtype=ea.float32)
    i = x.view(ea.int32)
    np.testing.assert_array_equal(_np(i), np.array([1.0, -2.0, 0.5], np.float32).view(np.int32))
    b = x.view(ea.uint8)
    assert b.shape == (12,)
    np.testing.assert_array_equal(_np(b), np.array([1.0, -2.0, 0.5], np.float32).view(np.uint8))
    d = ea.arange(8, dtype=ea.int16).reshape(2, 4).view(ea.int64)
    assert d.shape == (2, 1)
    np.testing.assert_array_equal(_np(d), np.arange(8, dtype=np.int16).reshape(2, 4).view(np.int64))
    # a sliced row keeps its offset (in the new element size)
    m = ea.arange(16, dtype=ea.int16).reshape(4, 4)[2:].view(ea.int32)
    np.testing.assert_array_equal(_np(m), np.arange(16, dtype=np.int16).reshape(4, 4)[2:].view(np.int32))
    assert x.view(ea.float32)._base is x
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1 to view Float as Double"):
        ea.empty(2, 4)[:, ::2].view(ea.float64)
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2 to view Float as Double"):
        ea.empty(3).view(ea.float64)
    with pytest.raises(RuntimeError, match=r"self.dim\(\) cannot be 0 to view Float as Double"):
        ea.tensor(1.0).view(ea.float64)
    with pytest.raises(RuntimeError, match=r"self.storage_offset\(\) must be divisible by 2"):
        ea.empty(5)[1:].view(ea.float64)


# ---- splits and friends ------------------------------------------------------------------------


def test_split_chunk_tensor_split_return_tuples_of_views() -> None:
    x = _arange(7, 2)
    for parts in (
        x.split(3),
        x.split([3, 4]),
        x.chunk(3),
        x.tensor_split(3),
        x.tensor_split([2, 5]),
        ea.split(x, 2),
        ea.tensor_split(x, ea.tensor([1, 3])),
    ):
        assert isinstance(parts, tuple)
        for p in parts:
            assert p._base is x
    assert isinstance(x.unbind(1), tuple) and isinstance(ea.unbind(x), tuple)
    assert [p.shape[0] for p in x.chunk(3)] == [3, 3, 1]
    assert [p.shape[0] for p in x.tensor_split(3)] == [3, 2, 2]
    assert [p.shape[0] for p in ea.tensor_split(x, ea.tensor(3))] == [3, 2, 2]
    assert [p.shape[0] for p in ea.zeros(0, 2).chunk(3)] == [0, 0, 0]
    assert [p.shape[0] for p in x.split(split_size=4)] == [4, 3]


def test_squeeze_forms() -> None:
    x = ea.zeros(1, 2, 1, 3)
    assert x.squeeze().shape == (2, 3)
    assert x.squeeze(0).shape == (2, 1, 3)
    assert x.squeeze(1).shape == (1, 2, 1, 3)
    assert x.squeeze((0, 2)).shape == (2, 3)
    assert ea.squeeze(x, dim=2).shape == (1, 2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.squeeze(4)


def test_transpose_of_0dim_checks_dims() -> None:
    s = ea.tensor(1.0)
    assert s.transpose(0, -1).shape == ()
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        s.transpose(0, 1)


def test_broadcast_tensors_and_meshgrid() -> None:
    a, b = ea.broadcast_tensors(ea.zeros(3, 1), ea.zeros(4))
    assert a.shape == b.shape == (3, 4) and b.stride() == (0, 1)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        ea.broadcast_tensors(ea.zeros(3), ea.zeros(4))
    with pytest.warns(UserWarning, match="indexing argument"):
        x, _ = ea.meshgrid(ea.arange(3), ea.arange(2))
    assert x.shape == (3, 2)
    x, _y = ea.meshgrid([ea.arange(3), ea.arange(2)], indexing="xy")
    assert x.shape == (2, 3)
    np.testing.assert_array_equal(_np(x), np.meshgrid(np.arange(3), np.arange(2))[0])
    assert ea.cartesian_prod(ea.tensor([1, 2]), ea.tensor([3, 4])).tolist() == [[1, 3], [1, 4], [2, 3], [2, 4]]
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        ea.cartesian_prod(ea.zeros(2, 2), ea.zeros(2))


# ---- cat and stack beyond the table -------------------------------------------------------------


def test_cat_promotes_mixed_dtypes() -> None:
    a = ea.tensor([1, 2], dtype=ea.int32)
    b = ea.tensor([0.5], dtype=ea.float16)
    c = ea.tensor([True])
    assert ea.cat([a, c]).dtype == ea.int32
    r = ea.cat([a, b, c])
    assert r.dtype == ea.float16
    np.testing.assert_array_equal(_np(r), np.array([1, 2, 0.5, 1], np.float16))
    assert ea.cat([ea.zeros(2, dtype=ea.uint8), ea.zeros(2, dtype=ea.int8)]).dtype == ea.int16
    # the empty 1-d tensors skipped by the legacy rule still take part in promotion
    assert ea.cat([ea.zeros(2, 2, dtype=ea.int32), ea.zeros(0, dtype=ea.float64)]).dtype == ea.float64


def test_cat_out_casts_and_checks() -> None:
    a, b = _arange(2, 3, dtype=ea.int32), _arange(1, 3, dtype=ea.int32)
    out = ea.empty(0, dtype=ea.float64)
    r = ea.cat([a, b], out=out)
    assert r is out and out.shape == (3, 3) and out.dtype == ea.float64
    np.testing.assert_array_equal(_np(out), np.concatenate([_np(a), _np(b)]))
    with pytest.raises(RuntimeError, match="input types can't be cast to the desired output type Int"):
        ea.cat([_arange(2)], out=ea.empty(0, dtype=ea.int32))
    with pytest.raises(RuntimeError, match="the input tensors cannot refer to any of the output memory locations"):
        ea.cat([a[:1], b], out=a)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_strided_and_transposed_inputs(dim: int) -> None:
    parts = [
        _arange(2, 3, 4),
        _arange(4, 3, 2).permute(2, 1, 0),
        _arange(2, 6, 8)[:, ::2, ::2] + 0,
        _arange(2, 3, 8)[..., ::2],
        _arange(1, 3, 4).expand(2, 3, 4),
    ]
    ref = [_np(p) for p in parts]
    np.testing.assert_array_equal(_np(ea.cat(parts, dim)), np.concatenate(ref, dim))
    np.testing.assert_array_equal(_np(ea.stack(parts, dim)), np.stack(ref, dim))


def test_cat_many_large_inputs_parallel_path() -> None:
    parts = [_arange(300, 64) + i for i in range(40)]
    for dim in (0, 1):
        np.testing.assert_array_equal(_np(ea.cat(parts, dim)), np.concatenate([_np(p) for p in parts], dim))


def test_cat_is_not_a_view() -> None:
    a = _arange(2, 2)
    r = ea.cat([a])
    assert r._base is None and r.untyped_storage().data_ptr != a.untyped_storage().data_ptr


# ---- transformations beyond the table -------------------------------------------------------------


def test_tril_inplace_on_transposed_view_writes_the_base() -> None:
    base = _arange(4, 4)
    v = base.t()
    r = v.tril_()
    assert r is v
    np.testing.assert_array_equal(_np(base), np.tril(np.arange(16.0).reshape(4, 4).T).T)


def test_flip_of_noncontiguous_preserves_layout() -> None:
    x = _arange(3, 4).t()
    f = x.flip(0)
    np.testing.assert_array_equal(_np(f), np.flip(_np(x), 0))
    assert f.stride() == (1, 4)  # preserve_format follows the input's layout
    assert f._base is None


def test_repeat_interleave_forms() -> None:
    assert ea.repeat_interleave(ea.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert ea.repeat_interleave(ea.tensor([2, 1], dtype=ea.int32)).dtype == ea.int32
    x = ea.tensor([[1, 2], [3, 4]])
    assert x.repeat_interleave(2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert ea.repeat_interleave(x, ea.tensor([1, 2]), dim=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert ea.repeat_interleave(x, 3, dim=1, output_size=6).shape == (2, 6)


def test_roll_and_rot90() -> None:
    x = _arange(3, 4)
    np.testing.assert_array_equal(_np(x.roll(-5)), np.roll(_np(x), -5))
    np.testing.assert_array_equal(_np(x.roll((1, -1), (0, 1))), np.roll(_np(x), (1, -1), (0, 1)))
    for k in range(-5, 6):
        np.testing.assert_array_equal(_np(x.rot90(k)), np.rot90(_np(x), k))


def test_constant_pad_nd_value_and_cropping() -> None:
    x = _arange(2, 3, dtype=ea.int64)
    r = ea.constant_pad_nd(x, (1, 1), 7)
    assert r.dtype == ea.int64
    np.testing.assert_array_equal(_np(r), np.pad(_np(x), ((0, 0), (1, 1)), constant_values=7))
    np.testing.assert_array_equal(_np(ea.constant_pad_nd(x, (-1, 0, 0, -1))), _np(x)[:1, 1:])
    assert ea.constant_pad_nd(x, (0, 0, -2, 0)).shape == (0, 3)


def test_out_aliasing_the_input_is_an_error() -> None:
    x = _arange(3, 3)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ea.diag(x, out=x)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ea.tril(x, out=x.t())
    y = _arange(3, 3)
    assert ea.triu(y, out=y) is y  # the same tensor is the in-place form
    np.testing.assert_array_equal(_np(y), np.triu(np.arange(9.0).reshape(3, 3)))


def test_huge_sizes_raise_instead_of_wrapping() -> None:
    with pytest.raises(RuntimeError, match="overflows int64"):
        ea.zeros(3).repeat(2**62)
    with pytest.raises(RuntimeError, match="overflows int64"):
        ea.constant_pad_nd(ea.zeros(2), (2**62, 2**62))
    with pytest.raises(RuntimeError, match="overflow"):
        ea.zeros(2).repeat_interleave(2**62)
    with pytest.raises(RuntimeError, match="overflow"):
        ea.zeros(2).expand(2**62, 2)


def test_diag_family() -> None:
    v = ea.tensor([1.0, 2.0])
    np.testing.assert_array_equal(_np(ea.diag(v, -1)), np.diag([1.0, 2.0], -1))
    m = _arange(3, 3)
    assert ea.trace(m).item() == 12.0
    assert ea.trace(_arange(2, 2, dtype=ea.int32)).dtype == ea.int64
    e = ea.diag_embed(_arange(2, 3), 1)
    assert e.shape == (2, 4, 4)
    np.testing.assert_array_equal(_np(ea.diagonal(e, 1, -2, -1)), _np(_arange(2, 3)))
