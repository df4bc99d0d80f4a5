"""Autograd through sparse COO tensors (through ember.torch, as a PyTorch program writes it):
sparse @ dense gradients w.r.t. the dense operand and the sparse values, to_dense / to_sparse /
coalesce differentiable, sparse embedding gradients and their accumulation, checked against
the dense computation."""

from __future__ import annotations

import ember.torch as torch
import ember.torch.nn.functional as F
import numpy as np
import pytest

I = [[0, 1, 1, 2, 1], [2, 0, 2, 1, 0]]  # (1, 0) twice: uncoalesced
V = [1.0, 2.0, 3.0, 4.0, -0.5]


def dense_of(values):
    out = np.zeros((3, 3), np.float64)
    np.add.at(out, tuple(np.array(I)), values)
    return out


@pytest.mark.parametrize("mm", ["torch.mm", "torch.sparse.mm", "torch.spmm", "matmul", "addmm"])
def test_sparse_at_dense_gradients(mm):
    rng = np.random.default_rng(0)
    d_np = rng.standard_normal((3, 4))
    w_np = rng.standard_normal((3, 4))
    values = torch.tensor(V, dtype=torch.float64, requires_grad=True)
    s = torch.sparse_coo_tensor(torch.tensor(I), values, (3, 3))
    d = torch.tensor(d_np, requires_grad=True)
    out = {
        "torch.mm": lambda: torch.mm(s, d),
        "torch.sparse.mm": lambda: torch.sparse.mm(s, d),
        "torch.spmm": lambda: torch.spmm(s, d),
        "matmul": lambda: s @ d,
        "addmm": lambda: torch.addmm(torch.zeros(3, 4, dtype=torch.float64), s, d),
    }[mm]()
    (out * torch.tensor(w_np)).sum().backward()
    a = dense_of(V)
    np.testing.assert_allclose(out.detach().numpy(), a @ d_np, rtol=1e-12)
    np.testing.assert_allclose(d.grad.numpy(), a.T @ w_np, rtol=1e-12)  # d/dD = S^T W
    # d/dvalues: (W D^T) at each stored index, duplicates each getting the full entry
    gw = w_np @ d_np.T
    np.testing.assert_allclose(values.grad.numpy(), gw[tuple(np.array(I))], rtol=1e-12)


def test_a_sparse_leaf_gets_a_sparse_gradient_with_its_indices():
    s = torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V), (3, 3)).coalesce().requires_grad_()
    assert s.requires_grad and s.is_leaf
    d = torch.ones(3, 2)
    torch.sparse.mm(s, d).sum().backward()
    g = s.grad
    assert g.is_sparse and g.shape == s.shape
    assert g.indices().tolist() == s.indices().tolist()
    assert g.values().tolist() == [2.0] * s._nnz()  # each entry multiplies a row of ones, summed over 2 columns


def test_to_dense_coalesce_and_to_sparse_are_differentiable():
    x = torch.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True)
    s = x.to_sparse()
    (s.to_dense() * torch.tensor([[5.0, 6.0], [7.0, 8.0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 6.0], [7.0, 0.0]]  # only the stored entries carry gradient
    values = torch.tensor(V, requires_grad=True)
    c = torch.sparse_coo_tensor(torch.tensor(I), values, (3, 3)).coalesce()
    c.values().sum().backward()
    assert values.grad.tolist() == [1.0] * 5
    values.grad = None
    (torch.sparse_coo_tensor(torch.tensor(I), values, (3, 3)) * 3.0).to_dense().sum().backward()
    assert values.grad.tolist() == [3.0] * 5
    values.grad = None
    torch.sparse.sum(torch.sparse_coo_tensor(torch.tensor(I), values, (3, 3))).backward()
    assert values.grad.tolist() == [1.0] * 5


def test_sparse_output_cannot_start_backward():
    s = torch.sparse_coo_tensor(torch.tensor(I), torch.tensor(V, requires_grad=True), (3, 3))
    with pytest.raises(RuntimeError, match="the output is a sparse tensor"):
        s.backward()


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (1, False), (None, True)])
def test_embedding_sparse_gradient_equals_the_dense_one(padding_idx, scale):
    idx = torch.tensor([[1, 3, 3], [0, 1, 4]])
    w_np = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    up = torch.tensor(np.arange(18, dtype=np.float32).reshape(2, 3, 3))
    grads = []
    for sparse in (True, False):
        w = torch.tensor(w_np, requires_grad=True)
        out = F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale, sparse=sparse)
        (out * up).sum().backward()
        grads.append(w.grad)
    sp, dense = grads
    assert sp.is_sparse and not sp.is_coalesced() and not dense.is_sparse
    assert sp._nnz() == (6 if padding_idx is None else 4)
    np.testing.assert_allclose(sp.to_dense().numpy(), dense.numpy(), rtol=1e-6)


def test_two_sparse_gradients_accumulate_by_concatenation():
    emb = torch.nn.Embedding(6, 2, sparse=True)
    (emb(torch.tensor([1, 2])).sum() + emb(torch.tensor([2, 5, 5])).sum()).backward()
    g = emb.weight.grad
    assert g.is_sparse and g._nnz() == 5
    assert sorted(g._indices()[0].tolist()) == [1, 2, 2, 5, 5]
    emb(torch.tensor([0])).sum().backward()  # a second backward adds into .grad
    assert emb.weight.grad._nnz() == 6
    assert emb.weight.grad.to_dense()[:, 0].tolist() == [1.0, 1.0, 2.0, 0.0, 0.0, 2.0]
    # a dense gradient arriving on a sparse .grad makes it dense
    (emb.weight * 1.0).sum().backward()
    assert not emb.weight.grad.is_sparse
    assert emb.weight.grad[:, 0].tolist() == [2.0, 2.0, 3.0, 1.0, 1.0, 3.0]


def test_sparse_adam_refuses_bad_arguments():
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        torch.optim.SparseAdam([p], lr=-1.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        torch.optim.SparseAdam([p], betas=(0.9, 1.0))
    s = torch.sparse_coo_tensor([[0]], [1.0], (2,))
    with pytest.raises(ValueError, match=r"Sparse params at indices \[\(0, 0\)\]: SparseAdam requires dense"):
        torch.optim.SparseAdam([s])


def test_zero_grad_keeps_a_sparse_gradient_sparse_and_empty():
    emb = torch.nn.Embedding(4, 2, sparse=True)
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    emb(torch.tensor([1, 3])).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert emb.weight.grad.is_sparse and emb.weight.grad._nnz() == 0
    before = emb.weight.detach().clone()
    opt.step()
    assert torch.equal(emb.weight.detach(), before)


def test_requires_grad_makes_a_leaf_without_touching_the_values_passed():
    v = torch.tensor([1.0, 2.0])
    s = torch.sparse_coo_tensor([[0, 1]], v, (2,), requires_grad=True)
    assert s.requires_grad and s.is_leaf and not v.requires_grad
