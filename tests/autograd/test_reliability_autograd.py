"""Gradient hooks that change a gradient's dtype or size, and relu's double backward (issue 25).

PyTorch 2.13: a tensor hook returning another dtype is "hook '<name>' has changed the type
of value (was torch.FloatTensor got torch.DoubleTensor)" (not a silent cast), another size
"has changed the size of value"; grad(relu(x).sum(), x, create_graph=True) is connected to
x (ThresholdBackwardBackward0), so a second grad gives zeros instead of an error.
"""

from __future__ import annotations

import ember.aten as ea
import ember.autograd as ag
import pytest


def leaf() -> ea.Tensor:
    return ea.ones(3, requires_grad=True)


@pytest.mark.parametrize("where", ["leaf", "non-leaf"])
def test_hook_changing_dtype_is_refused(where: str) -> None:
    x = leaf()
    y = x * 2
    target = x if where == "leaf" else y

    def to_double(g: ea.Tensor) -> ea.Tensor:
        return g.double()

    target.register_hook(to_double)
    with pytest.raises(RuntimeError, match="hook 'to_double' has changed the type of value"):
        ag.backward(y.sum())


def test_hook_changing_size_is_refused() -> None:
    x = leaf()
    x.register_hook(lambda g: g[:2])
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        ag.backward((x * 2).sum())


def test_hook_returning_same_dtype_and_size_still_replaces_the_gradient() -> None:
    x = leaf()
    x.register_hook(lambda g: g * 10)
    ag.backward((x * 2).sum())
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_relu_double_backward_gives_zeros() -> None:
    x = ea.tensor([1.0, -1.0, 2.0], requires_grad=True)
    (g,) = ag.grad(ea.relu(x).sum(), x, create_graph=True)
    assert g.tolist() == [1.0, 0.0, 1.0]
    assert g.requires_grad and type(g.grad_fn).__name__.startswith("ThresholdBackwardBackward")
    (gg,) = ag.grad(g.sum(), x)
    assert gg.tolist() == [0.0, 0.0, 0.0]


def test_threshold_double_backward_gives_zeros() -> None:
    x = ea.tensor([1.0, -1.0, 2.0], requires_grad=True)
    (g,) = ag.grad(ea.threshold(x, 0.5, 0.0).sum(), x, create_graph=True)
    assert g.tolist() == [1.0, 0.0, 1.0]
    (gg,) = ag.grad(g.sum(), x)
    assert gg.tolist() == [0.0, 0.0, 0.0]


def test_relu_double_backward_in_grad_output() -> None:
    # the first gradient's derivative in the incoming gradient is the mask again
    x = ea.tensor([1.0, -1.0, 2.0], requires_grad=True)
    v = ea.tensor([3.0, 4.0, 5.0], requires_grad=True)
    (g,) = ag.grad(ea.relu(x), x, grad_outputs=v, create_graph=True)
    assert g.tolist() == [3.0, 0.0, 5.0]
    (dv,) = ag.grad(g.sum(), v)
    assert dv.tolist() == [1.0, 0.0, 1.0]
