"""Parameter and Buffer."""

from __future__ import annotations

import copy
import pickle

import ember.aten as ea
import numpy as np
import pytest
from ember import nn


def test_parameter_shares_storage_and_requires_grad() -> None:
    t = ea.zeros(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, nn.Parameter) and isinstance(p, ea.Tensor)
    assert p.requires_grad and p.is_leaf and not t.requires_grad
    p.data.add_(1)
    assert t.tolist() == [[1.0] * 3] * 2  # same storage
    q = nn.Parameter(ea.zeros(2), requires_grad=False)
    assert not q.requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])  # type: ignore[arg-type]


def test_parameter_from_nonleaf_is_detached() -> None:
    x = ea.ones(2, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_ops_on_parameter_return_tensors() -> None:
    p = nn.Parameter(ea.ones(2))
    y = p * 2
    assert type(y) is ea.Tensor and y.requires_grad
    y.sum().backward()
    assert p.grad.tolist() == [2.0, 2.0]


def test_parameter_repr() -> None:
    p = nn.Parameter(ea.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_parameter_deepcopy_and_pickle() -> None:
    p = nn.Parameter(ea.tensor([1.0, 2.0]))
    p.grad = ea.tensor([0.5, 0.5])
    c = copy.deepcopy(p)
    assert type(c) is nn.Parameter and c.requires_grad and c is not p
    assert c.tolist() == [1.0, 2.0] and c.grad.tolist() == [0.5, 0.5]
    c.data.add_(1)
    assert p.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(nn.Parameter(ea.tensor([3.0]), requires_grad=False)))
    assert type(r) is nn.Parameter and not r.requires_grad and r.tolist() == [3.0]


def test_buffer_marker() -> None:
    b = nn.Buffer(ea.ones(2), persistent=False)
    assert isinstance(b, nn.Buffer) and isinstance(b, ea.Tensor) and not b.persistent
    assert not isinstance(ea.ones(2), nn.Buffer)
    m = nn.Module()
    m.b = b
    assert "b" in m._buffers and "b" in m._non_persistent_buffers_set
    assert list(m.state_dict()) == []
    m.c = nn.Buffer(ea.zeros(1))
    assert list(m.state_dict()) == ["c"]


def test_uninitialized_parameter() -> None:
    u = nn.UninitializedParameter()
    assert repr(u) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter or buffer"):
        _ = u.shape
    u.materialize((2, 3))
    assert type(u) is nn.Parameter and tuple(u.shape) == (2, 3) and u.requires_grad


def test_parameter_to_numpy() -> None:
    p = nn.Parameter(ea.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(p.detach().numpy(), [1.0, 2.0])


def test_a_parameter_saved_for_backward_unpacks() -> None:
    # ctx.save_for_backward(weight) of a custom Function keeps the Parameter itself (a Tensor
    # subclass): unpacking it checks its version like any input (it used to fail on the class)
    from ember.autograd import Function, no_grad

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, w):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            x, w = ctx.saved_tensors
            return g * w, (g * x).sum(0)

    w = nn.Parameter(ea.tensor([2.0, 3.0]))
    x = ea.tensor([[1.0, 4.0], [5.0, 6.0]], requires_grad=True)
    Scale.apply(x, w).sum().backward()
    assert w.grad.tolist() == [6.0, 10.0] and x.grad.tolist() == [[2.0, 3.0], [2.0, 3.0]]
    y = Scale.apply(x, w)
    with no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
