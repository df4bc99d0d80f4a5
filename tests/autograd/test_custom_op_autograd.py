"""register_autograd: a derivative for a custom operator defined from Python."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember.aten import library
from ember.autograd import gradcheck

_lib = library.Library("ember_test_grad", "DEF")
_lib.define("my_add(Tensor x, Tensor y) -> Tensor")
_lib.define("scale(Tensor x, float alpha) -> Tensor")
_lib.define("bad(Tensor x) -> Tensor")
_lib.define("weigh(Tensor x, Tensor w) -> Tensor")


@library.impl("ember_test_grad::my_add", "CPU", lib=_lib)
def _my_add_cpu(x, y):  # type: ignore[no-untyped-def]
    return 2 * x + y


@library.impl("ember_test_grad::scale", "CPU", lib=_lib)
def _scale_cpu(x, alpha):  # type: ignore[no-untyped-def]
    return x * x * alpha


@library.impl("ember_test_grad::bad", "CPU", lib=_lib)
def _bad_cpu(x):  # type: ignore[no-untyped-def]
    return x.clone()


def _my_add_backward(ctx, grad):  # type: ignore[no-untyped-def]
    return 2 * grad, grad


library.register_autograd("ember_test_grad::my_add", _my_add_backward)


def _scale_setup(ctx, inputs, output):  # type: ignore[no-untyped-def]
    x, alpha = inputs
    ctx.save_for_backward(x)
    ctx.alpha = alpha


def _scale_backward(ctx, grad):  # type: ignore[no-untyped-def]
    (x,) = ctx.saved_tensors
    return grad * 2 * x * ctx.alpha, None


library.register_autograd("ember_test_grad::scale", _scale_backward, setup_context=_scale_setup)
library.register_autograd("ember_test_grad::bad", lambda ctx, grad: (grad, grad))


@library.impl("ember_test_grad::weigh", "CPU", lib=_lib)
def _weigh_cpu(x, w):  # type: ignore[no-untyped-def]
    return x * w


_seen_needs: list[tuple[bool, ...]] = []


def _weigh_setup(ctx, inputs, output):  # type: ignore[no-untyped-def]
    ctx.save_for_backward(*inputs)


def _weigh_backward(ctx, grad):  # type: ignore[no-untyped-def]
    _seen_needs.append(tuple(ctx.needs_input_grad))
    x, w = ctx.saved_tensors
    return (grad * w if ctx.needs_input_grad[0] else None), (grad * x if ctx.needs_input_grad[1] else None)


library.register_autograd("ember_test_grad::weigh", _weigh_backward, setup_context=_weigh_setup)


def test_needs_input_grad_names_the_operator_inputs_only() -> None:
    x = ea.tensor([1.0, 2.0], requires_grad=True)
    w = ea.tensor([3.0, 4.0])
    _seen_needs.clear()
    ea.ops.ember_test_grad.weigh(x, w).sum().backward()
    assert _seen_needs == [(True, False)]
    assert x.grad.tolist() == [3.0, 4.0]
    w.requires_grad_(True)
    x.grad = None
    ea.ops.ember_test_grad.weigh(x, w).sum().backward()
    assert _seen_needs[-1] == (True, True)
    assert w.grad.tolist() == [1.0, 2.0]


def test_values_and_gradients() -> None:
    x = ea.tensor([1.0, 2.0], requires_grad=True)
    y = ea.tensor([3.0, 4.0], requires_grad=True)
    out = ea.ops.ember_test_grad.my_add(x, y)
    assert out.tolist() == [5.0, 8.0]
    assert type(out.grad_fn).__name__ == "MyAddBackward"
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert y.grad.tolist() == [1.0, 1.0]


def test_gradcheck_with_saved_tensors_and_a_scalar_argument() -> None:
    x = ea.randn(5, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda t: ea.ops.ember_test_grad.scale(t, 1.5), (x,))


def test_no_graph_without_requires_grad() -> None:
    out = ea.ops.ember_test_grad.my_add(ea.ones(2), ea.ones(2))
    assert out.grad_fn is None and not out.requires_grad


def test_wrong_number_of_gradients_is_a_clear_error() -> None:
    x = ea.ones(2, requires_grad=True)
    out = ea.ops.ember_test_grad.bad(x)
    with pytest.raises(RuntimeError, match=r"returned 2 gradients, expected 1"):
        out.sum().backward()


def test_register_autograd_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="backward must be callable"):
        library.register_autograd("ember_test_grad::my_add", 3)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="is not defined"):
        library.register_autograd("ember_test_grad::nope", _my_add_backward)
