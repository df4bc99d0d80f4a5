"""The engine: dependency order, gradients summed where paths meet, retain_graph, roots, inputs, errors."""

from __future__ import annotations

import ember.aten as ea
import ember.autograd as ag
import pytest
from helpers import close, rand, t

# each test runs with both of the engine's loops (conftest.py)
pytestmark = pytest.mark.usefixtures("engine_loop")


def test_simple_backward() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert y.grad_fn.name() == "SumBackward0"


def test_paths_meet_and_are_summed() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x * 3
    c = a * b  # 6 x^2 -> 12 x
    d = c + a + x  # + 2 + 1
    d.sum().backward()
    assert x.grad.tolist() == [12 * 1 + 3, 12 * 2 + 3]


def test_diamond_runs_each_node_once() -> None:
    x = t([1.0], requires_grad=True)
    a = x.exp()
    calls = []
    a.grad_fn.register_hook(lambda gi, go: calls.append(1))
    (a * 2 + a * 3).sum().backward()
    assert calls == [1]
    assert close(x.grad, 5 * x.detach().exp())


def test_dependency_order_before_consumer() -> None:
    # the node shared by two paths runs only after both gradients arrived
    x = t([2.0], requires_grad=True)
    shared = x * 1.0
    long = shared
    for _ in range(5):
        long = long * 1.0
    out = long + shared
    seen = []
    shared.register_hook(lambda g: seen.append(g.item()))
    out.backward(t([1.0]))
    assert seen == [2.0]
    assert x.grad.item() == 2.0


def test_gradient_accumulates_across_backward_calls() -> None:
    x = t([1.0, 1.0], requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    (x * 4).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    assert x.grad is g  # accumulated in place, like PyTorch


def test_leaf_grad_does_not_alias_the_graph_gradient() -> None:
    a = t([1.0, 2.0], requires_grad=True)
    b = t([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(10)
    assert b.grad.tolist() == [1.0, 1.0]


def test_broadcast_gradient_is_summed_to_the_input_shape() -> None:
    x = rand(3, 1, requires_grad=True)
    y = rand(4, requires_grad=True, seed=1)
    (x * y).sum().backward()
    assert tuple(x.grad.shape) == (3, 1)
    assert tuple(y.grad.shape) == (4,)
    assert close(x.grad, ea.ones(3, 1, dtype=ea.float64) * y.detach().sum())


def test_dtype_of_gradient_follows_the_input() -> None:
    x = ea.tensor([1.0, 2.0], dtype=ea.float32, requires_grad=True)
    s = ea.tensor(3.0, dtype=ea.float64, requires_grad=True)
    (x * s).sum().backward()
    assert x.grad.dtype == ea.float32
    assert s.grad.dtype == ea.float64
    assert s.grad.item() == 3.0


def test_backward_twice_without_retain_graph_raises() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_graph_without_saved_tensors_can_run_twice() -> None:
    # like PyTorch: only nodes that saved tensors refuse a second pass
    x = t([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_scalar_backward_needs_a_gradient() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(t([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 1.0]


def test_gradient_shape_mismatch() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        y.backward(t([1.0, 2.0]))


def test_backward_on_tensor_without_grad() -> None:
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        x.sum().backward()


def test_autograd_backward_with_several_roots() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    a = (x * x).sum()
    b = (x * 3).sum()
    ag.backward([a, b])
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    ag.backward([x * 2, x * 5], [t([1.0, 1.0]), t([1.0, 0.0])])
    assert x.grad.tolist() == [7.0, 2.0]


def test_backward_inputs_only_accumulates_into_them() -> None:
    x = t([1.0], requires_grad=True)
    y = t([2.0], requires_grad=True)
    z = (x * y).sum()
    z.backward(inputs=[x])
    assert x.grad.item() == 2.0
    assert y.grad is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * y).sum().backward(inputs=[])


def test_backward_inputs_non_leaf() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 3
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [6.0, 12.0]
    assert x.grad is None


def test_grad_returns_without_touching_dot_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = ag.grad(y, x)
    assert g.tolist() == [3.0, 12.0]
    assert x.grad is None


def test_grad_of_non_leaf_and_several_inputs() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h * x).sum()
    gh, gx = ag.grad(y, [h, x])
    assert gh.tolist() == [1.0, 2.0]
    assert gx.tolist() == [2.0 * 1 + 2.0, 2.0 * 2 + 4.0]


def test_grad_allow_unused_and_materialize() -> None:
    x = t([1.0], requires_grad=True)
    unused = t([5.0, 6.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ag.grad(y, [x, unused], retain_graph=True)
    gx, gu = ag.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None and gx.item() == 2.0
    gx, gu = ag.grad(y, [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="allow_unused"):
        ag.grad((x * 2).sum(), [x], materialize_grads=True, allow_unused=False)


def test_grad_input_that_does_not_require_grad() -> None:
    x = t([1.0], requires_grad=True)
    c = t([1.0])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        ag.grad((x * c).sum(), [c])


def test_grad_outputs() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    (g,) = ag.grad(x * x, x, grad_outputs=t([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_long_chain_has_no_recursion_limit() -> None:
    x = t([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_long_chain_of_grad_fn_is_freed_without_recursion_error() -> None:
    x = t([1.0], requires_grad=True)
    y = x
    for _ in range(50_000):
        y = y + 1.0
    del y  # dropping the last reference frees 50k nodes


def test_next_functions_and_names() -> None:
    x = t([1.0], requires_grad=True)
    w = t([2.0])
    y = x * w + x.exp()
    fn = y.grad_fn
    assert fn.name() == "AddBackward0"
    names = [f.name() if f is not None else None for f, _ in fn.next_functions]
    assert names == ["MulBackward0", "ExpBackward0"]
    mul = fn.next_functions[0][0]
    acc, nr = mul.next_functions[0]
    assert acc.name() == "ember::autograd::AccumulateGrad" and nr == 0
    assert acc.variable is x
    assert mul.next_functions[1] == (None, 0)
    assert isinstance(fn, ag.graph.Node)
    assert "grad_fn=<AddBackward0>" in repr(y)


def test_node_metadata_and_saved_attributes() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}
    e = x.exp()
    assert close(e.grad_fn._saved_result, e)
    m = x * x
    assert m.grad_fn._saved_self is x


def test_calling_a_node_directly() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * t([3.0, 4.0])
    g = y.grad_fn(t([1.0, 1.0]))
    assert isinstance(g, tuple) and len(g) == 2
    assert g[0].tolist() == [3.0, 4.0] and g[1] is None


def test_gradient_edge() -> None:
    x = t([1.0], requires_grad=True)
    y = x * 2
    e = ag.graph.get_gradient_edge(y)
    assert e.node is y.grad_fn and e.output_nr == 0
    assert ag.graph.get_gradient_edge(x).node.name() == "ember::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError):
        ag.graph.get_gradient_edge(t([1.0]))


def test_multi_output_op_with_one_output_used() -> None:
    x = t([[1.0, 5.0, 3.0], [7.0, 2.0, 0.0]], requires_grad=True)
    parts = x.unbind(1)
    (parts[1] * 2).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]]


def test_error_in_a_node_propagates_and_keeps_grad_mode() -> None:
    from ember.autograd import Function

    class Boom(Function):
        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            return a * 1

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            raise ValueError("boom")

    x = t([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="boom"):
        Boom.apply(x).sum().backward()
    assert ag.is_grad_enabled()
    assert (x * 2).requires_grad


def test_unused_input_error_names_its_index() -> None:
    x = t([1.0], requires_grad=True)
    z = t([2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"The differentiated Tensor at index 1 appears to not have been used"):
        ag.grad((x * 2).sum(), [x, z])


def test_grad_of_a_non_leaf_warns() -> None:
    import warnings

    x = t([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(
        UserWarning, match=r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed"
    ):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for a leaf, a retained non-leaf, or a tensor without grad
        assert x.grad.tolist() == [2.0, 2.0]
        y.retain_grad()
        assert y.grad is None
        assert t([1.0]).grad is None
