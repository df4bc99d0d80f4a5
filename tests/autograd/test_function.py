"""Custom Functions: ctx.save_for_backward, needs_input_grad, mark_dirty, mark_non_differentiable,
set_materialize_grads, once_differentiable, setup_context."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.autograd as ag
import pytest
from ember.autograd import Function, once_differentiable
from helpers import close, t

# each test runs with both of the engine's loops (conftest.py)
pytestmark = pytest.mark.usefixtures("engine_loop")


class Exp(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (y,) = ctx.saved_tensors
        return g * y


class MulConst(Function):
    @staticmethod
    def forward(ctx: Any, x: Any, k: float) -> Any:
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g * ctx.k, None


def test_apply_records_a_node() -> None:
    x = t([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert isinstance(y.grad_fn, ag.graph.Node)
    y.sum().backward()
    assert close(x.grad, x.detach().exp())
    assert ag.gradcheck(Exp.apply, (t([0.5, -1.0], requires_grad=True),))


def test_non_tensor_arguments_get_none() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    MulConst.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_needs_input_grad() -> None:
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any, k: int) -> Any:
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, None, None

    F.apply(t([1.0], requires_grad=True), t([2.0]), 3).sum().backward()
    assert seen == [(True, False, False)]


def test_no_graph_when_nothing_requires_grad() -> None:
    y = Exp.apply(t([1.0]))
    assert y.grad_fn is None and not y.requires_grad
    with ag.no_grad():
        y = Exp.apply(t([1.0], requires_grad=True))
    assert y.grad_fn is None


def test_forward_runs_without_recording() -> None:
    inside = []

    class F(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            inside.append((ag.is_grad_enabled(), (x * 2).requires_grad))
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    F.apply(t([1.0], requires_grad=True))
    assert inside == [(False, False)]


def test_saved_tensors_version_check() -> None:
    class F(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * x

    x = t([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = F.apply(h)
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_released_after_backward() -> None:
    x = t([1.0], requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors  # noqa: B018


def test_mark_dirty() -> None:
    class MulInPlace(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    a = t([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = MulInPlace.apply(b)
    assert c is b
    assert b.grad_fn.name() == "MulInPlaceBackward"
    (c * c).sum().backward()
    assert a.grad.tolist() == [8.0, 16.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation"):
        MulInPlace.apply(t([1.0], requires_grad=True))


def test_mark_non_differentiable() -> None:
    class SortLike(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            idx = x * 0
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx: Any, g: Any, g_idx: Any) -> Any:
            assert g_idx is not None  # materialized as zeros
            assert g_idx.tolist() == [0.0, 0.0]
            return g

    x = t([3.0, 1.0], requires_grad=True)
    v, idx = SortLike.apply(x)
    assert v.requires_grad and not idx.requires_grad
    v.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_set_materialize_grads_false() -> None:
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            seen.append((g1 is None, g2 is None))
            return g1 if g1 is not None else g2 * 2

    x = t([1.0], requires_grad=True)
    _, b = Two.apply(x)
    b.sum().backward()
    assert seen == [(True, False)]
    assert x.grad.item() == 2.0


def test_returning_an_input_gives_it_new_history() -> None:
    class Identity(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 5

    x = t([1.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf
    y.sum().backward()
    assert x.grad.item() == 5.0


def test_wrong_number_of_gradients() -> None:
    class Bad(Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 1\)"):
        Bad.apply(t([1.0], requires_grad=True), t([2.0])).sum().backward()


def test_wrong_gradient_shape() -> None:
    class Bad(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return t([1.0, 2.0, 3.0])

    with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0 - got"):
        Bad.apply(t([1.0, 2.0], requires_grad=True)).sum().backward()


def test_setup_context_style() -> None:
    class Mul(Function):
        @staticmethod
        def forward(a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = t([2.0], requires_grad=True)
    b = t([3.0], requires_grad=True)
    Mul.apply(a, b).sum().backward()
    assert (a.grad.item(), b.grad.item()) == (3.0, 2.0)


def test_double_backward_through_a_function() -> None:
    x = t([0.5, 1.5], requires_grad=True)
    assert ag.gradgradcheck(Exp.apply, (x,))


def test_once_differentiable() -> None:
    class Sq(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            assert not ag.is_grad_enabled()
            return 2 * g * x

    x = t([1.0, 2.0], requires_grad=True)
    go = t([1.0, 1.0], requires_grad=True)  # a grad_output that requires grad, as in double backward
    (g,) = ag.grad(Sq.apply(x), x, go, create_graph=True)
    assert g.tolist() == [2.0, 4.0]
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()
    y = Sq.apply(x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_ctx_does_not_keep_the_graph_alive() -> None:
    import gc
    import weakref

    x = t([1.0], requires_grad=True)
    y = Exp.apply(x)
    ref = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert ref() is None  # the saved output does not point back at its node
    finally:
        gc.enable()


def test_legacy_instantiation_raises() -> None:
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        Exp()


def test_function_outputs_dtype_and_ints() -> None:
    class WithInt(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2, ea.tensor([1, 2])

        @staticmethod
        def backward(ctx: Any, g: Any, gi: Any) -> Any:
            return g * 2

    x = t([1.0, 2.0], requires_grad=True)
    y, i = WithInt.apply(x)
    assert not i.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
