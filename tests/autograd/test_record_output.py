"""A recorded op's one output joins the graph (aten's C++ helper _set_history_1, one call per op)."""

from __future__ import annotations

import ember.aten as ea
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
