"""The functions family (issue 18) beyond its OpInfo rows (tests/aten/opinfo/functions.py):
the varargs front ends of torch.functional (atleast_nd, block_diag, broadcast_shapes,
unravel_index), the Scalar overloads, in-place variants, methods and PyTorch's quirks."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest


def test_atleast_nd_single_many_and_sequence() -> None:
    s, v, m = ea.tensor(2.0), ea.ones(3), ea.ones(2, 3)
    assert ea.atleast_1d(s).shape == (1,)
    assert ea.atleast_1d(v) is v  # already 1-d: the input itself, as PyTorch
    assert [t.shape for t in ea.atleast_2d(s, v, m)] == [(1, 1), (1, 3), (2, 3)]
    assert [t.shape for t in ea.atleast_3d([s, v, m])] == [(1, 1, 1), (1, 3, 1), (2, 3, 1)]
    assert isinstance(ea.atleast_1d(s, v), tuple)
    assert ea.atleast_1d() == ()
    assert ea.atleast_2d(s)._base is not None or ea.atleast_2d(s).data_ptr() == s.data_ptr()  # a view
    np.testing.assert_array_equal(ea.atleast_3d(m).numpy(), np.atleast_3d(m.numpy()))


def test_block_diag_varargs_dtype_promotion_and_errors() -> None:
    out = ea.block_diag(ea.ones(1, 2, dtype=ea.int32), ea.tensor([[2.5]]))
    assert out.dtype == ea.float32
    assert out.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 2.5]]
    assert ea.block_diag().shape == (1, 0)
    o = ea.empty(0)
    assert ea.block_diag(ea.ones(2, 2), out=o) is o and o.shape == (2, 2)
    with pytest.raises(RuntimeError, match=r"Input tensors must have 2 or fewer dimensions\. Input 0 has 3 dimensions"):
        ea.block_diag(ea.ones(2, 2, 2))


def test_broadcast_shapes() -> None:
    assert ea.broadcast_shapes((2, 1), (3,)) == ea.Size([2, 3])
    assert ea.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert ea.broadcast_shapes() == ()
    assert ea.broadcast_shapes((0, 1), (1, 4)) == (0, 4)
    assert isinstance(ea.broadcast_shapes((1,)), ea.Size)
    with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length 4 at -2"):
        ea.broadcast_shapes((2, 3), (4, 3))
    with pytest.raises(ValueError, match="negative length"):
        ea.broadcast_shapes((2, -1))
    with pytest.raises(TypeError, match="item 1 is 'float'"):
        ea.broadcast_shapes((2, 1.5))


def test_unravel_index() -> None:
    rows, cols = ea.unravel_index(ea.tensor([5, 3, 0]), (2, 3))
    assert rows.tolist() == [1, 1, 0] and cols.tolist() == [2, 0, 0]
    got = ea.unravel_index(ea.tensor([[7, 22]]), (2, 3, 4))
    want = np.unravel_index(np.array([[7, 22]]), (2, 3, 4))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    (flat,) = ea.unravel_index(ea.tensor(4), 6)
    assert flat.tolist() == 4 and flat.dtype == ea.int64
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        ea.unravel_index(ea.tensor(1.0), (2,))
    with pytest.raises(ValueError, match="'shape' cannot have negative values"):
        ea.unravel_index(ea.tensor(1), (2, -1))
    with pytest.raises(TypeError, match="sequence to only contain ints"):
        ea.unravel_index(ea.tensor(1), (2, "a"))


def test_searchsorted_and_bucketize_scalar_overloads() -> None:
    b = ea.tensor([1, 3, 5, 7], dtype=ea.int32)
    r = ea.searchsorted(b, 5)
    assert r.dim() == 0 and r.item() == 2 and r.dtype == ea.int64
    assert ea.searchsorted(b, 5, right=True).item() == 3
    assert ea.searchsorted(b, 4.5).item() == 2  # the value is compared in the promoted dtype
    assert ea.searchsorted(b, 5, out_int32=True).dtype == ea.int32
    assert ea.bucketize(6, b).item() == 3
    assert ea.bucketize(7, b, right=True).item() == 4
    o = ea.empty(0, dtype=ea.int64)
    assert ea.searchsorted(b, 3, out=o) is o and o.item() == 1
    # promotion: int32 boundaries, float64 values
    v = ea.tensor([0.5, 3.0, 9.0], dtype=ea.float64)
    assert ea.searchsorted(b, v).tolist() == [0, 1, 4]
    assert ea.bucketize(v, b).tolist() == [0, 1, 4]
    with pytest.raises(RuntimeError, match="not implemented for dtype bool"):
        ea.searchsorted(ea.tensor([False, True]), ea.tensor([True]))


def test_searchsorted_out_noncontiguous_and_aliasing() -> None:
    b = ea.tensor([1.0, 2.0, 3.0])
    big = ea.zeros(3, 2, dtype=ea.int64)
    out = big[:, 0]
    ea.searchsorted(b, ea.tensor([0.0, 2.5, 9.0]), out=out)
    assert big.tolist() == [[0, 0], [2, 0], [3, 0]]


def test_isin_overloads() -> None:
    x = ea.tensor([[1, 2], [3, 4]])
    assert ea.isin(x, ea.tensor([2, 3])).tolist() == [[False, True], [True, False]]
    assert ea.isin(x, 4).tolist() == [[False, False], [False, True]]
    assert ea.isin(3, x).item() is True
    assert ea.isin(3.5, x, invert=True).item() is True
    assert ea.isin(ea.tensor([1.0, 2.5]), ea.tensor([1, 2])).tolist() == [True, False]


def test_angles_in_place_and_methods() -> None:
    x = ea.tensor([180.0, 90.0])
    assert x.deg2rad().tolist() == pytest.approx([np.pi, np.pi / 2])
    y = x.clone()
    assert y.deg2rad_() is y and y.tolist() == pytest.approx([np.pi, np.pi / 2])
    assert y.rad2deg_().tolist() == pytest.approx([180.0, 90.0])
    assert ea.deg2rad(ea.tensor([180])).dtype == ea.float32
    with pytest.raises(RuntimeError, match="can't be cast"):
        ea.tensor([180]).deg2rad_()


def test_methods_where_pytorch_has_them() -> None:
    t = ea.ones(2, 3)
    for name in (
        "diff",
        "msort",
        "ravel",
        "inner",
        "hsplit",
        "vsplit",
        "dsplit",
        "take_along_dim",
        "cov",
        "corrcoef",
        "quantile",
        "nanquantile",
        "renorm",
        "renorm_",
        "slice_scatter",
        "select_scatter",
        "diagonal_scatter",
        "as_strided_scatter",
        "deg2rad_",
        "rad2deg_",
        "nonzero_static",
    ):
        assert callable(getattr(t, name)), name
    for name in (
        "searchsorted",
        "bucketize",
        "isin",
        "cdist",
        "pdist",
        "tril_indices",
        "block_diag",
        "trapezoid",
        "combinations",
    ):
        assert not hasattr(ea.Tensor, name), name  # functions only, as in PyTorch


def test_renorm_in_place_and_as_strided_scatter() -> None:
    x = ea.tensor([[3.0, 4.0], [0.3, 0.4]])
    assert x.renorm_(2, 0, 1.0) is x
    np.testing.assert_allclose(x.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-5)
    z = ea.zeros(2, 3)
    r = ea.as_strided_scatter(z, ea.ones(2), (2,), (4,), 0)
    assert r.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert z.sum().item() == 0.0  # self is not written


def test_trapezoid_dx_and_x_overloads() -> None:
    y = ea.tensor([1.0, 2.0, 4.0])
    assert ea.trapezoid(y).item() == pytest.approx(4.5)
    assert ea.trapezoid(y, dx=2).item() == pytest.approx(9.0)
    assert ea.trapezoid(y, ea.tensor([0.0, 1.0, 3.0])).item() == pytest.approx(7.5)
    assert ea.cumulative_trapezoid(y).tolist() == pytest.approx([1.5, 4.5])


def test_cov_warns_on_no_degrees_of_freedom() -> None:
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        c = ea.cov(ea.ones(1, 1))
    assert np.isnan(c.item()) or np.isinf(c.item())


def test_tril_triu_indices_default_dtype_and_device() -> None:
    t = ea.tril_indices(3, 3)
    assert t.dtype == ea.int64 and t.device.type == "cpu"
    assert t.tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert ea.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
