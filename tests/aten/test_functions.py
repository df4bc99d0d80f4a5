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


# ---- the opdb additions: view copies, PyTorch's older spellings, histogram, gradient, ... -------


def _nc(a: np.ndarray) -> ea.Tensor:
    """A non-contiguous ember tensor holding a (a transposed copy, transposed back)."""
    return ea.from_numpy(np.ascontiguousarray(a.T)).t() if a.ndim == 2 else ea.from_numpy(a)


def test_view_copies_are_contiguous_copies() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    t = ea.from_numpy(a.copy())
    for name, args, ref in [
        ("view_copy", ((6, 4),), a.reshape(6, 4)),
        ("squeeze_copy", (), a),
        ("select_copy", (1, 2), a[:, 2]),
        ("slice_copy", (2, 1, 3), a[:, :, 1:3]),
        ("as_strided_copy", ((2, 2), (1, 4)), np.lib.stride_tricks.as_strided(a, (2, 2), (8, 32))),
        ("detach_copy", (), a),
    ]:
        r = getattr(ea, name)(t, *args)
        assert r.is_contiguous() and r.data_ptr() != t.data_ptr(), name
        np.testing.assert_array_equal(r.numpy(), ref, err_msg=name)
    parts = ea.split_with_sizes_copy(t, [1, 3], 2)
    np.testing.assert_array_equal(parts[1].numpy(), a[:, :, 1:])
    assert [p.shape for p in ea.unbind_copy(t, 1)] == [(2, 4)] * 3
    assert [p.shape for p in ea.split_copy(t, 2, 2)] == [(2, 3, 2)] * 2
    o = ea.empty(0, dtype=ea.float64)
    assert ea.t_copy(_nc(np.ones((2, 3))), out=o) is o and o.shape == (3, 2)
    assert ea.narrow_copy(t, 0, 1, 1).shape == (1, 3, 4) and t.narrow_copy(0, 0, 0).shape == (0, 3, 4)
    with pytest.raises(RuntimeError, match=r"narrow\(\) cannot be applied to a 0-dim tensor\."):
        ea.narrow_copy(ea.tensor(1.0), 0, 0, 1)
    with pytest.raises(RuntimeError, match=r"Expected dim < static_cast<int64_t>\(self_sizes.size\(\)\)"):
        ea.narrow_copy(t, 3, 0, 0)


def test_unsafe_split_sum_to_size_fill() -> None:
    t = ea.arange(10.0)
    assert [p.tolist() for p in ea.unsafe_chunk(t, 3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.shape for p in t.unsafe_split(4)] == [(4,), (4,), (2,)]
    assert [p.shape for p in ea.unsafe_split_with_sizes(t, [3, 7])] == [(3,), (7,)]
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = ea.from_numpy(a)
    np.testing.assert_allclose(x.sum_to_size(3, 1).numpy(), a.sum(0).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(x.sum_to_size((1, 4)).numpy(), a.sum((0, 1)).reshape(1, 4), rtol=1e-12)
    assert x.sum_to_size(2, 3, 4).shape == (2, 3, 4)
    with pytest.raises(RuntimeError, match=r"size \{\[3\]\} is not expandable to size \{\[2, 3, 4\]\}"):
        x.sum_to_size(3)
    assert ea.fill(ea.zeros(2, 2), 3).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    f = ea.fill(ea.zeros(3, dtype=ea.int32), ea.tensor(2.7))
    assert f.dtype == ea.int32 and f.tolist() == [2, 2, 2]
    assert ea.fill(ea.empty(0), 1.0).shape == (0,)
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dim"):
        ea.fill(ea.zeros(3), ea.ones(1))


def test_real_tensor_complex_functions_trapz_angle() -> None:
    t = ea.tensor([-1.5, 0.0, 2.0, float("nan")])
    for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg", "real"):
        assert getattr(ea, name)(t) is t, name
    assert ea.isreal(t).tolist() == [True] * 4
    np.testing.assert_array_equal(ea.angle(t).numpy(), np.angle(t.numpy()))
    assert ea.angle(ea.tensor([-2, 3])).dtype == ea.float32
    y = np.random.default_rng(1).standard_normal((3, 5))
    np.testing.assert_allclose(ea.trapz(ea.from_numpy(y), dx=0.5).numpy(), np.trapezoid(y, dx=0.5), rtol=1e-12)
    x = np.sort(np.random.default_rng(2).standard_normal(5))
    np.testing.assert_allclose(ea.trapz(ea.from_numpy(y), ea.from_numpy(x)).numpy(), np.trapezoid(y, x), rtol=1e-12)


def test_svd_qr_lu_older_spellings() -> None:
    a = np.random.default_rng(3).standard_normal((4, 3))
    u, s, v = ea.svd(ea.from_numpy(a))
    assert (u.shape, s.shape, v.shape) == ((4, 3), (3,), (3, 3))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, a, atol=1e-12)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    u, s, v = ea.svd(ea.from_numpy(a), compute_uv=False)
    assert (u.shape, v.shape) == ((4, 4), (3, 3)) and not u.numpy().any() and not v.numpy().any()
    assert ea.svd(ea.from_numpy(a), some=False).U.shape == (4, 4)
    q, r = ea.qr(ea.from_numpy(a))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-12)
    assert ea.qr(ea.from_numpy(a), some=False).Q.shape == (4, 4)
    m = ea.from_numpy(np.random.default_rng(4).standard_normal((3, 3)))
    lu, piv = ea.lu(m)
    p, low, up = ea.lu_unpack(lu, piv)
    np.testing.assert_allclose((p @ low @ up).numpy(), m.numpy(), atol=1e-12)
    assert ea.lu(m, get_infos=True)[2].tolist() == 0


def test_dist_and_batch_norm_spellings() -> None:
    a, b = ea.tensor([[1.0, 2.0]]), ea.tensor([4.0, 6.0])
    assert ea.dist(a, b).item() == 5.0 and a.dist(b, 1).item() == 7.0
    with pytest.raises(TypeError, match=r"dist\(\): argument 'other' \(position 2\) must be Tensor, not int"):
        ea.dist(a, 2)
    x = ea.from_numpy(np.random.default_rng(5).standard_normal((4, 3, 2)))
    rm, rv = ea.zeros(3, dtype=ea.float64), ea.ones(3, dtype=ea.float64)
    out, mean, _invstd = ea._native_batch_norm_legit(x, None, None, rm, rv, True, 0.1, 1e-5)
    xn = x.numpy()
    mu, var = xn.mean((0, 2)), xn.var((0, 2))
    np.testing.assert_allclose(mean.numpy(), mu, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), (xn - mu[:, None]) / np.sqrt(var[:, None] + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mu, rtol=1e-12)  # running stats updated in place
    assert ea._native_batch_norm_legit(x, None, None, True, 0.1, 1e-5)[0].shape == (4, 3, 2)
    r = ea._batch_norm_with_update(x, None, None, rm, rv, 0.1, 1e-5)
    assert len(r) == 4 and r[3].shape == (0,) and r[3].dtype == ea.uint8


def test_frexp_edges() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7e308, 0.5, -3.0])
    m, e = ea.frexp(ea.from_numpy(x))
    rm, re = np.frexp(x)
    np.testing.assert_array_equal(m.numpy(), rm)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(e.numpy()[finite], re[finite])
    assert e.dtype == ea.int32 and m.dtype == ea.float64
    assert ea.frexp(ea.empty(0, 3)).mantissa.shape == (0, 3)
    assert np.signbit(m.numpy()[1])


def test_gradient_against_numpy() -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 6))
    t = _nc(a)
    for kw, np_args in [({}, ()), ({"spacing": 2.0}, (2.0,)), ({"spacing": [2.0, 0.5]}, (2.0, 0.5))]:
        for order in (1, 2):
            got = ea.gradient(t, **kw, edge_order=order)
            want = np.gradient(a, *np_args, edge_order=order)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
    xs = np.sort(rng.standard_normal(6))
    for order in (1, 2):
        (g,) = ea.gradient(t, spacing=[ea.from_numpy(xs)], dim=1, edge_order=order)
        np.testing.assert_allclose(g.numpy(), np.gradient(a, xs, axis=1, edge_order=order), rtol=1e-10)
    assert ea.gradient(ea.tensor([1, 2, 4, 8]))[0].tolist() == [1.0, 1.5, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="expected each dimension size to be at least edge_order\\+1"):
        ea.gradient(ea.zeros(2), edge_order=2)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        ea.gradient(ea.zeros(4), edge_order=3)
    with pytest.raises(RuntimeError, match="but got a list of length 2"):
        ea.gradient(ea.zeros(3), spacing=[1.0, 2.0])
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        ea.gradient(ea.zeros(3, 3), dim=(0, 0))


def test_histogram_and_histogramdd_against_numpy() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal(50)
    w = rng.random(50)
    for bins in (1, 4, 10):
        for density in (False, True):
            h, e = ea.histogram(ea.from_numpy(a), bins, weight=ea.from_numpy(w), density=density)
            rh, re = np.histogram(a, bins, weights=w, density=density)
            np.testing.assert_allclose(e.numpy(), re, rtol=1e-12)
            np.testing.assert_allclose(h.numpy(), rh, rtol=1e-12)
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    h, _ = ea.histogram(ea.from_numpy(a), ea.from_numpy(edges))
    np.testing.assert_array_equal(h.numpy(), np.histogram(a, edges)[0])
    h, e = ea.histogram(ea.from_numpy(a), 3, range=[0.0, 1.0])
    np.testing.assert_array_equal(h.numpy(), np.histogram(a, 3, range=(0.0, 1.0))[0])
    assert ea.histogram(ea.tensor(2.0), 2).bin_edges.tolist() == [1.5, 2.0, 2.5]  # one value: +-0.5
    assert ea.histogram(ea.empty(0), 2).bin_edges.tolist() == [0.0, 0.5, 1.0]
    pts = rng.standard_normal((40, 2))
    hd = ea.histogramdd(ea.from_numpy(pts), [3, 4])
    rh, (_, r1) = np.histogramdd(pts, [3, 4])
    np.testing.assert_array_equal(hd.hist.numpy(), rh)
    np.testing.assert_allclose(hd.bin_edges[1].numpy(), r1, rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"bins must be > 0, but got 0 for dimension 0"):
        ea.histogram(ea.from_numpy(a), 0)
    with pytest.raises(RuntimeError, match="bins tensor should have one dimension, but got 2 dimensions"):
        ea.histogram(ea.from_numpy(a), ea.zeros(2, 2, dtype=ea.float64))
    with pytest.raises(RuntimeError, match="input tensor and bins tensors should have the same dtype"):
        ea.histogram(ea.from_numpy(a), ea.zeros(3))
    with pytest.raises(RuntimeError, match=r"range \[0, inf\] is not finite"):
        ea.histogram(ea.from_numpy(a), 3, range=[0.0, float("inf")])
    with pytest.raises(RuntimeError, match="The size of bins must be equal to the innermost dimension"):
        ea.histogramdd(ea.from_numpy(pts), [1, 1, 1])
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        ea.histogram(ea.tensor([1, 2]), 3)


def test_linspace_logspace_tensor_bounds() -> None:
    np.testing.assert_allclose(ea.linspace(ea.tensor(0.0), ea.tensor(1.0), 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(ea.linspace(ea.tensor(0.0), 2, 3).numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(ea.logspace(0, ea.tensor(2.0), 3, base=2.0).numpy(), [1.0, 2.0, 4.0])
    with pytest.raises(
        RuntimeError,
        match=r"linspace only supports 0-dimensional start and end tensors, but got "
        r"start with 1 dimension\(s\)\.",
    ):
        ea.linspace(ea.zeros(2), 3, 4)
    with pytest.raises(RuntimeError, match=r"but got end with 1 dimension\(s\)\."):
        ea.logspace(2, ea.zeros(2), 4)


def test_out_overlap_and_index_errors() -> None:
    x = ea.arange(6.0)
    idx = ea.tensor([0, 1, 2])
    msg = "some elements of the input tensor and the written-to tensor refer to a single memory location"
    for fn in (
        lambda: ea.take(x, idx, out=x[:3]),
        lambda: ea.index_select(x, 0, idx, out=x[3:]),
        lambda: ea.gather(x, 0, idx, out=x[:3]),
        lambda: ea.masked_select(x, x > 2, out=x[:3]),
        lambda: ea.kthvalue(x, 2, out=(x[0], ea.zeros((), dtype=ea.int64))),
    ):
        with pytest.raises(RuntimeError, match=msg):
            fn()
    i = ea.tensor([0, 1, 2, 3])
    with pytest.raises(RuntimeError, match=msg):
        ea.take(ea.arange(6), i[1:3], out=i[:2])  # out overlaps the index
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        ea.take(x, idx, out=ea.zeros(1).expand(3))
    # an empty index of any dtype: an empty result of its shape (gather and its backward, scatter_add)
    assert ea.gather(ea.ones(5), 0, ea.empty(2, 0, dtype=ea.uint8)).shape == (2, 0)
    assert ea.zeros(3).scatter_add(0, ea.empty(0, dtype=ea.uint8), ea.ones(0)).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match=r"index 5 is out of bounds for dimension 0 with size 3"):
        ea.gather(ea.ones(3), 0, ea.tensor([5]))
    with pytest.raises(ValueError, match=r"torch\.cat\(\): expected a non-empty list of Tensors"):
        ea.cat([])
    with pytest.raises(IndexError, match="aminmax: Expected reduction dim 1 to have non-zero size"):
        ea.aminmax(ea.zeros(5, 0, 5), dim=1)
