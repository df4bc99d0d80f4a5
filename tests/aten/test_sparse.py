"""Sparse COO tensors against their dense equivalents (NumPy references): construction and its
errors, coalesce with duplicate indices, empty nnz, hybrid (sparse + dense dims) tensors,
to_sparse / to_dense, transpose, sums, sparse @ dense and the elementwise ops."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest

# (indices, values, size): duplicates, an empty one, a 3-D one
CASES = {
    "plain": ([[0, 1, 2], [2, 0, 1]], [1.0, 2.0, 3.0], (3, 3)),
    "duplicates": ([[0, 1, 1, 0, 1], [2, 0, 0, 2, 3]], [1.0, 2.0, -4.0, 0.5, 7.0], (2, 4)),
    "empty": (np.zeros((2, 0), np.int64), np.zeros(0, np.float32), (3, 2)),
    "three_d": ([[0, 1, 1], [1, 0, 0], [2, 2, 2]], [1.0, 2.0, 3.0], (2, 2, 3)),
}


def dense_ref(indices, values, size):
    out = np.zeros(size, np.float32)
    np.add.at(out, tuple(np.asarray(indices, np.int64)), np.asarray(values, np.float32))
    return out


def make(name):
    i, v, size = CASES[name]
    return ea.sparse_coo_tensor(ea.tensor(np.asarray(i, np.int64)), ea.tensor(np.asarray(v, np.float32)), size)


@pytest.mark.parametrize("name", CASES)
def test_to_dense_sums_duplicates(name):
    s = make(name)
    i, v, size = CASES[name]
    assert s.layout is ea.sparse_coo and s.is_sparse and not ea.zeros(1).is_sparse
    assert tuple(s.shape) == size and s.dim() == len(size) and s.dtype is ea.float32
    assert s.sparse_dim() == len(size) and s.dense_dim() == 0 and s._nnz() == len(v)
    np.testing.assert_allclose(s.to_dense().numpy(), dense_ref(i, v, size))


@pytest.mark.parametrize("name", CASES)
def test_coalesce_sorts_and_sums(name):
    s = make(name)
    c = s.coalesce()
    assert c.is_coalesced()
    lin = np.ravel_multi_index(tuple(c.indices().numpy()), c.shape) if c._nnz() else np.zeros(0)
    assert (np.diff(lin) > 0).all()  # sorted, no duplicates left
    np.testing.assert_allclose(c.to_dense().numpy(), s.to_dense().numpy())
    assert c.coalesce() is c


def test_uncoalesced_indices_and_values_need_coalesce():
    s = make("duplicates")
    assert not s.is_coalesced()
    with pytest.raises(RuntimeError, match=r"Cannot get indices on an uncoalesced tensor, please call \.coalesce"):
        s.indices()
    with pytest.raises(RuntimeError, match=r"Cannot get values on an uncoalesced tensor"):
        s.values()
    assert s._indices().shape == (2, 5) and s._values().shape == (5,)
    assert s.coalesce().values().tolist() == [1.5, -2.0, 7.0]


def test_construction_errors_name_the_problem():
    v = ea.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 3 but found index 5"):
        ea.sparse_coo_tensor(ea.tensor([[0, 1], [5, 0]]), v, (2, 3))
    with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
        ea.sparse_coo_tensor(ea.tensor([[-1, 1], [0, 0]]), v, (2, 3))
    with pytest.raises(RuntimeError, match=r"indices and values must have same nnz, but got nnz from indices: 2, "):
        ea.sparse_coo_tensor(ea.tensor([[0, 1], [0, 0]]), ea.tensor([1.0, 2.0, 3.0]), (2, 3))
    with pytest.raises(
        RuntimeError, match=r"number of dimensions must be sparse_dim \(2\) \+ dense_dim \(0\), but got 3"
    ):
        ea.sparse_coo_tensor(ea.tensor([[0, 1], [0, 0]]), v, (2, 3, 4))
    with pytest.raises(RuntimeError, match=r"indices must be sparse_dim x nnz, but got: \[2\]"):
        ea.sparse_coo_tensor(ea.tensor([0, 1]), v, (2,))
    with pytest.raises(RuntimeError, match="indices must be an int64 tensor"):
        ea.sparse_coo_tensor(ea.tensor([[0.0, 1.0]]), v, (2,))


def test_inferred_size_and_lists():
    s = ea.sparse_coo_tensor([[0, 3], [1, 1]], [1.0, 2.0])
    assert tuple(s.shape) == (4, 2)
    assert s.to_dense().numpy()[3, 1] == 2.0


def test_hybrid_tensor_has_dense_slices():
    rows = np.array([[2, 0, 2]])
    vals = np.arange(6, dtype=np.float32).reshape(3, 2)
    s = ea.sparse_coo_tensor(ea.tensor(rows), ea.tensor(vals), (4, 2))
    assert s.sparse_dim() == 1 and s.dense_dim() == 1
    ref = np.zeros((4, 2), np.float32)
    np.add.at(ref, rows[0], vals)
    np.testing.assert_allclose(s.to_dense().numpy(), ref)
    np.testing.assert_allclose(s.coalesce().values().numpy(), ref[[0, 2]])
    with pytest.raises(RuntimeError, match=r"values has incorrect size, expected \[3, 3\], got \[3, 2\]"):
        ea.sparse_coo_tensor(ea.tensor(rows), ea.tensor(vals), (4, 3))


@pytest.mark.parametrize("sparse_dim", [None, 1])
def test_to_sparse_round_trip(sparse_dim):
    x = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 3.0]], np.float32)
    s = ea.tensor(x).to_sparse() if sparse_dim is None else ea.tensor(x).to_sparse(sparse_dim)
    assert s.is_coalesced() and s.sparse_dim() == (2 if sparse_dim is None else 1)
    assert s._nnz() == (3 if sparse_dim is None else 2)
    np.testing.assert_array_equal(s.to_dense().numpy(), x)
    assert ea.tensor(x).to_dense() is not None and s.to_sparse() is s


@pytest.mark.parametrize("name", ["plain", "duplicates", "empty"])
def test_mm_matches_dense(name):
    s = make(name)
    rng = np.random.default_rng(0)
    d = rng.standard_normal((s.shape[1], 5)).astype(np.float32)
    ref = s.to_dense().numpy() @ d
    for out in (ea.mm(s, ea.tensor(d)), s @ ea.tensor(d), s.mm(ea.tensor(d)), ea.sparse.mm(s, ea.tensor(d)),
                ea.spmm(s, ea.tensor(d)), ea.matmul(s, ea.tensor(d))):  # fmt: skip
        assert not out.is_sparse
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    v = rng.standard_normal(s.shape[1]).astype(np.float32)
    np.testing.assert_allclose((s @ ea.tensor(v)).numpy(), s.to_dense().numpy() @ v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ea.mv(s, ea.tensor(v)).numpy(), s.to_dense().numpy() @ v, rtol=1e-5, atol=1e-6)
    left = rng.standard_normal((2, s.shape[0])).astype(np.float32)
    np.testing.assert_allclose(ea.mm(ea.tensor(left), s).numpy(), left @ s.to_dense().numpy(), rtol=1e-5, atol=1e-6)


def test_addmm_with_a_sparse_first_operand():
    s = make("duplicates")
    rng = np.random.default_rng(1)
    d = rng.standard_normal((4, 3)).astype(np.float32)
    c = rng.standard_normal((2, 3)).astype(np.float32)
    out = ea.addmm(ea.tensor(c), s, ea.tensor(d), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * c + 2.0 * (s.to_dense().numpy() @ d), rtol=1e-5, atol=1e-6)
    nan = ea.full((2, 3), float("nan"))
    assert not ea.addmm(nan, s, ea.tensor(d), beta=0).isnan().any().item()


def test_mm_errors():
    s = make("plain")
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x3 and 4x2\)"):
        ea.mm(s, ea.zeros(4, 2))
    with pytest.raises(RuntimeError, match="matrices expected, got 1D tensor"):
        ea.mm(s, ea.zeros(3))
    with pytest.raises(RuntimeError, match="expected a 2-D sparse matrix"):
        ea.mm(make("three_d"), ea.zeros(2, 2))
    with pytest.raises(RuntimeError, match="same dtype, but got: float32 != float64"):
        ea.mm(s, ea.zeros(3, 2, dtype=ea.float64))
    with pytest.raises(NotImplementedError, match="sparse @ sparse"):
        ea.mm(s, s)


def test_elementwise_and_transpose():
    s = make("duplicates")
    dense = s.to_dense().numpy()
    np.testing.assert_allclose((s * 2.5).to_dense().numpy(), dense * 2.5)
    np.testing.assert_allclose((3 * s).to_dense().numpy(), dense * 3)
    np.testing.assert_allclose((s * ea.tensor(2.0)).to_dense().numpy(), dense * 2)
    np.testing.assert_allclose((s / 4).to_dense().numpy(), dense / 4)
    np.testing.assert_allclose((-s).to_dense().numpy(), -dense)
    other = np.arange(8, dtype=np.float32).reshape(2, 4)
    prod = s * ea.tensor(other)
    assert prod.is_sparse
    np.testing.assert_allclose(prod.to_dense().numpy(), dense * other)
    np.testing.assert_allclose(s.t().to_dense().numpy(), dense.T)
    np.testing.assert_allclose(s.transpose(0, 1).to_dense().numpy(), dense.T)
    np.testing.assert_allclose((s + s).to_dense().numpy(), 2 * dense)
    np.testing.assert_allclose((s - s * 3).to_dense().numpy(), -2 * dense)
    np.testing.assert_allclose((s + ea.tensor(other)).numpy(), dense + other)
    np.testing.assert_allclose((ea.tensor(other) + s).numpy(), dense + other)
    np.testing.assert_allclose((ea.tensor(other) - s).numpy(), other - dense)
    with pytest.raises(RuntimeError, match=r"expected 'self' and 'other' to have same size"):
        s + make("plain")


def test_in_place():
    s = make("plain")
    dense = s.to_dense().numpy()
    d = ea.ones(3, 3)
    d.add_(s, alpha=2)
    np.testing.assert_allclose(d.numpy(), 1 + 2 * dense)
    t = s.clone()
    t.add_(s)
    assert t._nnz() == 6 and not t.is_coalesced()
    np.testing.assert_allclose(t.to_dense().numpy(), 2 * dense)
    t.mul_(0.5)
    np.testing.assert_allclose(t.to_dense().numpy(), dense)
    t.zero_()
    assert t._nnz() == 0 and t.to_dense().abs().sum().item() == 0
    np.testing.assert_allclose(s.to_dense().numpy(), dense)  # the clone was independent


def test_sums():
    s = make("three_d")
    dense = s.to_dense().numpy()
    assert s.sum().item() == pytest.approx(dense.sum())
    assert ea.sparse.sum(s).item() == pytest.approx(dense.sum())
    r = ea.sparse.sum(s, 0)
    assert r.is_sparse
    np.testing.assert_allclose(r.to_dense().numpy(), dense.sum(0))
    np.testing.assert_allclose(ea.sparse.sum(s, (0, 2)).to_dense().numpy(), dense.sum((0, 2)))
    np.testing.assert_allclose(ea.sparse.sum(s, (0, 1, 2)).numpy(), dense.sum())
    h = ea.sparse_coo_tensor([[1, 0, 1]], ea.ones(3, 2), (3, 2))
    np.testing.assert_allclose(ea.sparse.sum(h, 0).numpy(), [3.0, 3.0])
    np.testing.assert_allclose(ea.sparse.sum(h, 1).to_dense().numpy(), [2.0, 4.0, 0.0])


def test_ops_without_a_sparse_kernel_refuse_sparse_input():
    s = make("plain")
    for call in (lambda: ea.exp(s), lambda: ea.zeros(3, 3).mul_(s), lambda: ea.cat([s, s]), lambda: s.numpy()):
        with pytest.raises(RuntimeError, match=r"does not support sparse tensors \(layout=sparse_coo\)"):
            call()
    with pytest.raises(RuntimeError, match="bool value of a sparse tensor is ambiguous"):
        bool(s)


def test_repr_and_device_moves():
    s = make("plain")
    text = repr(s)
    assert text.startswith("tensor(indices=tensor([[0, 1, 2],") and "nnz=3, layout=ember.aten.sparse_coo)" in text
    d = s.double()
    assert d.dtype is ea.float64 and d.is_sparse and d.to_dense().dtype is ea.float64
    assert s.to("cpu").device == s.device
