"""AccumulateGrad's first gradient: kept uncopied ("stolen") exactly when nothing else can reach it.

PyTorch's rule (accumulate_grad.h): with grad mode off, a dense first gradient that no other
tensor references and that is laid out like the leaf becomes ``leaf.grad`` itself; anything
else is copied into the leaf's layout. Whether a gradient was stolen shows in its address: a
node post-hook records the address of the gradient it sends (keeping no reference to it), and a
copy, made while the original is alive, has another address. ember is stricter than PyTorch in
one case: a view of a tensor the user holds is copied (PyTorch steals it, aliasing the user's).
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.autograd as ag
import numpy as np
import pytest
from helpers import close, rand

# each test runs with both of the engine's loops (conftest.py)
pytestmark = pytest.mark.usefixtures("engine_loop")


def _sent_address(node: Any, i: int = 0) -> list[int]:
    """Records the data address of gradient `i` that `node` sends (holding no reference to it)."""
    addresses: list[int] = []
    node.register_hook(lambda grad_inputs, grad_outputs: addresses.append(grad_inputs[i].data_ptr()))
    return addresses


def test_a_gradient_nothing_else_holds_becomes_the_grad_uncopied() -> None:
    x = rand(3, 4, requires_grad=True)
    w = rand(3, 4, seed=1)
    y = x * w
    sent = _sent_address(y.grad_fn)
    y.sum().backward()
    assert x.grad.data_ptr() == sent[0]
    assert close(x.grad, w)
    assert x.grad._base is None and x.grad.grad_fn is None and not x.grad.requires_grad


def test_the_stolen_grad_accumulates_in_place_afterwards() -> None:
    x = rand(2, 3, requires_grad=True)
    w = rand(2, 3, seed=1)
    (x * w).sum().backward()
    first = x.grad
    (x * w).sum().backward()
    assert x.grad is first
    assert close(x.grad, 2 * w)


def test_a_gradient_the_caller_holds_is_copied() -> None:
    x = rand(4, requires_grad=True)
    g = ea.ones(4, dtype=ea.float64)
    (x + 1).backward(g)  # AddBackward passes g itself on to x
    assert x.grad.data_ptr() != g.data_ptr()
    g.add_(5)
    assert x.grad.tolist() == [1.0] * 4


def test_backward_of_a_leaf_copies_its_gradient() -> None:
    x = rand(3, requires_grad=True)
    g = ea.full((3,), 2.0, dtype=ea.float64)
    x.backward(g)
    assert x.grad.data_ptr() != g.data_ptr()
    g.zero_()
    assert x.grad.tolist() == [2.0] * 3


def test_a_tensor_hook_that_keeps_the_gradient_prevents_the_steal() -> None:
    x = rand(3, requires_grad=True)
    w = rand(3, seed=1)
    kept: list[Any] = []
    x.register_hook(kept.append)
    (x * w).sum().backward()
    assert x.grad is not kept[0] and x.grad.data_ptr() != kept[0].data_ptr()
    kept[0].add_(100)
    assert close(x.grad, w)


def test_a_new_gradient_returned_by_a_hook_is_stolen() -> None:
    x = rand(3, requires_grad=True)
    w = rand(3, seed=1)
    made: list[int] = []

    def double(g: Any) -> Any:
        r = g * 2
        made.append(r.data_ptr())
        return r

    x.register_hook(double)
    (x * w).sum().backward()
    assert x.grad.data_ptr() == made[0]
    assert close(x.grad, 2 * w)


def test_a_retained_gradient_is_not_shared_with_the_leaf() -> None:
    x = rand(3, requires_grad=True)
    w = rand(3, seed=1)
    y = x + 0.5  # its backward passes y's gradient on to x unchanged
    y.retain_grad()
    (y * w).sum().backward()
    assert x.grad.data_ptr() != y.grad.data_ptr()
    y.grad.add_(100)
    assert close(x.grad, w)


def test_one_gradient_sent_to_two_leaves_is_not_shared() -> None:
    a = rand(3, requires_grad=True)
    b = rand(3, requires_grad=True, seed=1)
    w = rand(3, seed=2)
    ((a + b) * w).sum().backward()  # AddBackward sends one tensor to both leaves
    assert a.grad.data_ptr() != b.grad.data_ptr()
    a.grad.add_(100)
    assert close(b.grad, w)


def test_create_graph_copies_and_keeps_the_grad_differentiable() -> None:
    # x * w, not x * x: the one gradient x receives is the one sent (x * x sends two, and their sum,
    # a third tensor, would reach x -- the sent one freed, its address free for the copy)
    x = rand(3, requires_grad=True)
    w = rand(3, seed=1, requires_grad=True)
    y = x * w
    sent = _sent_address(y.grad_fn)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        y.sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    assert x.grad.data_ptr() != sent[0]
    assert close(x.grad, w.detach())


def test_a_gradient_laid_out_unlike_the_leaf_is_copied_into_its_layout() -> None:
    base = rand(4, 3)
    x = base.t().clone(memory_format=ea.preserve_format).detach().requires_grad_()  # strides (1, 3)
    assert x.stride() == (1, 3)
    w = rand(3, 4, seed=1)  # contiguous: x * w comes out with w's strides
    y = x * w
    sent = _sent_address(y.grad_fn)
    y.sum().backward()
    assert x.grad.stride() == x.stride()
    assert x.grad.data_ptr() != sent[0]
    assert close(x.grad, w)


def test_an_expanded_gradient_is_copied_dense() -> None:
    x = rand(2, 3, requires_grad=True)
    x.sum().backward()  # SumBackward sends ones expanded (stride 0)
    assert x.grad.stride() == (3, 1)
    x.grad[0, 0] = 7.0
    assert x.grad.tolist() == [[7.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


def test_a_view_of_a_gradient_nothing_else_holds_is_stolen_as_a_plain_tensor() -> None:
    x = rand(2, 3, requires_grad=True)
    w = rand(6, seed=1)
    y = x.view(6) * w
    sent = _sent_address(y.grad_fn)
    y.sum().backward()  # ViewBackward sends a view of MulBackward's gradient
    assert x.grad.data_ptr() == sent[0]
    assert x.grad._base is None
    assert close(x.grad, w.reshape(2, 3))


def test_a_view_of_a_gradient_the_caller_holds_is_copied() -> None:
    # PyTorch steals here (x.grad would alias g); ember copies
    x = rand(2, 3, requires_grad=True)
    g = ea.ones(6, dtype=ea.float64)
    x.view(6).backward(g)
    assert x.grad.data_ptr() != g.data_ptr()
    g.add_(1)
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_hooks_after_accumulation_see_the_stolen_grad() -> None:
    x = rand(3, requires_grad=True)
    w = rand(3, seed=1)
    y = x * w
    acc = y.grad_fn.next_functions[0][0]
    seen_node: list[Any] = []
    seen_post: list[Any] = []
    acc.register_hook(lambda grad_inputs, grad_outputs: seen_node.append(grad_outputs[0].tolist()))
    x.register_post_accumulate_grad_hook(lambda p: seen_post.append(p.grad.tolist()))
    y.sum().backward()
    assert seen_node == [w.tolist()] and seen_post == [w.tolist()]
    assert close(x.grad, w)


def test_backward_inputs_and_grad_are_unaffected() -> None:
    x = rand(3, requires_grad=True)
    w = rand(3, requires_grad=True, seed=1)
    (x * w).sum().backward(inputs=[x])
    assert close(x.grad, w) and w.grad is None
    (gx,) = ag.grad((x * w).sum(), [x])
    assert close(gx, w)
    assert gx.data_ptr() != x.grad.data_ptr()


def test_linear_gradients_for_1d_2d_and_3d_inputs() -> None:
    rng = np.random.default_rng(0)
    wn, bn = rng.standard_normal((4, 3)), rng.standard_normal(4)
    for shape in [(3,), (5, 3), (2, 5, 3)]:
        xn = rng.standard_normal(shape)
        x = ea.from_numpy(xn).requires_grad_()
        w = ea.from_numpy(wn.copy()).requires_grad_()
        b = ea.from_numpy(bn.copy()).requires_grad_()
        ea.nn.linear(x, w, b).sum().backward()
        rows = xn.reshape(-1, 3)
        assert close(x.grad, np.ones((*shape[:-1], 4)) @ wn)
        assert close(w.grad, np.ones((rows.shape[0], 4)).T @ rows)
        assert close(b.grad, np.full(4, float(rows.shape[0])))
        assert w.grad.stride() == (3, 1)
