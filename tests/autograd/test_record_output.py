"""A recorded op joins the graph through aten's C++ helpers: its one output (_set_history_1) and
its inputs' edges (the generated kernels' _edge, aten's gradient_edge)."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember.aten.extension import AUTOGRAD_KEY
from helpers import rand


def test_a_floating_output_is_output_0_of_its_node() -> None:
    x = rand(2, 3, requires_grad=True)
    y = x * 2.0
    m = y._meta
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert m.grad is None and m.output_nr == 0 and m.view_info is None and m.grad_fn is y.grad_fn
    assert m.retains_grad is False and m.hooks is None  # the class defaults: the instance was made without __init__
    assert y._keys & AUTOGRAD_KEY
    assert y.grad_fn._input_meta == (((2, 3), ea.float64, x._keys & 0x3),)
    y.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_an_integer_output_carries_no_gradient() -> None:
    x = rand(3, requires_grad=True)
    y = x.to(ea.int64)
    assert not y.requires_grad and y.grad_fn is None and y._meta is None
    assert not y._keys & AUTOGRAD_KEY


def test_hooks_and_retain_grad_work_on_a_recorded_output() -> None:
    x = rand(3, requires_grad=True)
    y = x.exp()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.retain_grad()
    y.sum().backward()
    assert seen == [[1.0] * 3] and y.grad.tolist() == [1.0] * 3


def test_the_kernels_gradient_edge_is_autograd_s() -> None:
    # the generated kernels' _edge: aten's C++ gradient_edge, _meta.gradient_edge for views
    import gc

    from ember.autograd import _kernels, _meta
    from ember.autograd.graph import AccumulateGrad

    edge = _kernels._edge
    x = rand(2, 3, requires_grad=True)
    for v in (None, 1.5, 3, True, "s", rand(2), x.detach()):
        assert edge(v) is None and _meta.gradient_edge(v) is None
    acc, nr = edge(x)
    assert acc.__class__ is AccumulateGrad and acc.variable is x and nr == 0
    assert edge(x) == (acc, 0) and _meta.gradient_edge(x) == (acc, 0)  # one accumulator while it lives
    del acc
    gc.collect()
    fresh = edge(x)[0]  # held weakly by the leaf: made again
    assert fresh.__class__ is AccumulateGrad and fresh._input_meta == (((2, 3), ea.float64, x._keys & 0x3),)
    y = x * 2
    assert edge(y) == (y.grad_fn, 0) == _meta.gradient_edge(y)
    parts = x.unbind(0)
    assert edge(parts[1]) == (parts[1].grad_fn, 1) == _meta.gradient_edge(parts[1])
    v = y[0]  # a view: its grad_fn is regenerated once its base changes
    y.mul_(3)
    e = edge(v)
    assert e == _meta.gradient_edge(v) and e[0].name() == "AsStridedBackward0"
    with pytest.raises(TypeError, match=r"gradient_edge\(tensor\)"):
        edge()


def test_the_kernels_save_is_autograd_s() -> None:
    # the generated kernels' _save: aten's C++ record of a saved input, _meta.save for sparse tensors
    from ember.autograd import _kernels, _meta

    save = _kernels._save
    x = rand(2, 3, requires_grad=True)
    y = x * 2
    for v in (x, y, x.detach(), rand(3)):
        assert save(v) == _meta.save(v)
        assert save(v)[0] is v
    assert save(y) == (y, y._version, y.grad_fn, 0)
    y.add_(1)
    assert save(y)[1] == y._version == 1 and save(y)[2] is y.grad_fn  # the version and the node now
    for v in (None, 2.5, [1, 2]):
        assert save(v) is v
    s = ea.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    with pytest.raises(Exception) as cpp_error:
        save(s)
    with pytest.raises(Exception) as py_error:
        _meta.save(s)
    assert type(cpp_error.value) is type(py_error.value) and str(cpp_error.value) == str(py_error.value)
