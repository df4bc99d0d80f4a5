"""Tensor hooks, node hooks, retain_grad, post-accumulate-grad hooks."""

from __future__ import annotations

import ember.autograd as ag
import pytest
from helpers import t

# each test runs with both of the engine's loops (conftest.py)
pytestmark = pytest.mark.usefixtures("engine_loop")


def test_tensor_hook_on_leaf_sees_and_replaces_the_gradient() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    assert x.grad.tolist() == [30.0, 30.0]


def test_tensor_hook_on_non_leaf_changes_what_flows_on() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g * 0 + 1)
    (h * h).sum().backward()  # dL/dh = 2h, replaced by 1
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_handle_remove() -> None:
    x = t([1.0], requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 1).sum().backward()
    handle.remove()
    (x * 1).sum().backward()
    assert calls == [1]
    with x.register_hook(lambda g: calls.append(2)):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert calls == [1, 2]


def test_hook_on_tensor_without_grad() -> None:
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        t([1.0]).register_hook(lambda g: g)


def test_hooks_run_in_grad_captured_by_autograd_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (g,) = ag.grad((x * 1).sum(), x)
    assert g.tolist() == [2.0, 2.0]


def test_retain_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    y = x * 1
    (y * 1).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None  # not retained
    x.retain_grad()  # a leaf: no-op
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        t([1.0]).retain_grad()


def test_retain_grad_follows_in_place_change() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 1
    h.retain_grad()
    h.mul_(2)
    (h * 1).sum().backward()
    assert h.grad.tolist() == [1.0, 1.0]


def test_post_accumulate_grad_hook() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0], [4.0, 4.0]]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 1).register_post_accumulate_grad_hook(lambda p: None)


def test_node_hooks() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []

    def pre(grad_outputs):  # type: ignore[no-untyped-def]
        calls.append(("pre", grad_outputs[0].tolist()))
        return (grad_outputs[0] * 2,)

    def post(grad_inputs, grad_outputs):  # type: ignore[no-untyped-def]
        calls.append(("post", grad_inputs[0].tolist(), grad_outputs[0].tolist()))
        return (grad_inputs[0] + 1, grad_inputs[1])

    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [6.0, 6.0], [2.0, 2.0])]
    assert x.grad.tolist() == [7.0, 7.0]


def test_hook_order_tensor_before_node_prehook() -> None:
    x = t([1.0], requires_grad=True)
    h = x * 2
    order = []
    h.grad_fn.register_prehook(lambda go: order.append("node_pre"))
    h.register_hook(lambda g: order.append("tensor"))
    h.retain_grad()
    h.sum().backward()
    assert order == ["tensor", "node_pre"]
    assert h.grad.item() == 1.0
