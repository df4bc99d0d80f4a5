"""The engine's two loops: aten's C++ run_backward_graph and engine.py's _run_graph (its reference).

Every test here runs with each loop (the ``engine_loop`` fixture of conftest.py), and the
order tests compare the two directly: the C++ loop must be the Python one step for step.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import ember.aten as ea
import ember.autograd as ag
import pytest
from ember.aten.extension import run_backward_graph
from ember.autograd import engine
from helpers import t

pytestmark = pytest.mark.usefixtures("engine_loop")


def _order_of_nodes(python_loop: bool) -> list[str]:
    """The names of the nodes in the order the pass ran them (a pre-hook on every node)."""
    x = t([1.0, 2.0], requires_grad=True)
    w = t([3.0, 4.0], requires_grad=True)
    a = x * w
    b = a.exp()
    c = a + x  # two paths meet at a (and at x)
    d = (b * c).sin()
    out = (d + b).sum()
    ran: list[str] = []
    seen: set[Any] = set()
    stack = [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        fn.register_prehook(lambda g, n=fn: ran.append(n.name()))
        stack.extend(nxt for nxt, _ in fn.next_functions)
    saved = engine.PYTHON_LOOP
    engine.PYTHON_LOOP = python_loop
    try:
        out.backward()
    finally:
        engine.PYTHON_LOOP = saved
    return ran


def test_both_loops_run_the_nodes_in_the_same_order() -> None:
    cpp, py = _order_of_nodes(False), _order_of_nodes(True)
    assert cpp == py
    # the most recently created ready node first; the leaves' AccumulateGrad as soon as they are ready
    assert cpp[:4] == ["SumBackward0", "AddBackward0", "SinBackward0", "MulBackward0"]
    assert cpp.count("ember::autograd::AccumulateGrad") == 2
    assert cpp.index("ExpBackward0") < cpp.index("MulBackward0", 4)


def test_the_result_is_the_same_with_either_loop() -> None:
    x = t([0.5, -1.5, 2.0], requires_grad=True)
    grads = []
    saved = engine.PYTHON_LOOP
    for python_loop in (False, True):
        engine.PYTHON_LOOP = python_loop
        try:
            y = x
            for _ in range(10):
                y = (y * 0.9 + x).tanh()
            (g,) = ag.grad(y.sum(), [x])
        finally:
            engine.PYTHON_LOOP = saved
        grads.append(g.tolist())
    assert grads[0] == grads[1]


def test_a_node_returning_too_many_gradients_is_an_error() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(
        RuntimeError, match=r"Function ExpBackward0 returned an incorrect number of gradients \(expected 1, got 2\)"
    ):
        y.sum().backward()
    assert ag.is_grad_enabled()


def test_a_broadcast_gradient_from_a_hook_is_summed_and_a_wrong_one_named() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_hook(lambda gi, go: (ea.ones(4, 2, dtype=ea.float64),))
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]  # summed to x's shape
    z = x.exp()
    z.grad_fn.register_hook(lambda gi, go: (ea.ones(3, dtype=ea.float64),))
    with pytest.raises(RuntimeError, match=r"Function ExpBackward0 returned an invalid gradient at index 0"):
        z.sum().backward()


def test_backward_twice_names_retain_graph() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_a_backward_inside_a_hook_runs_a_pass_of_its_own() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    w = t([3.0], requires_grad=True)
    inner: list[Any] = []

    def hook(g: Any) -> None:
        with ag.enable_grad():  # grad mode is off during a pass (no create_graph)
            (v,) = ag.grad((w * w).sum(), [w])  # reentrant: another graph, another pass
        inner.append(v.item())

    y = x * 2
    y.register_hook(hook)
    (y * y).sum().backward()
    assert inner == [6.0]
    assert x.grad.tolist() == [8.0, 16.0]
    assert w.grad is None


def test_grad_with_unused_and_non_leaf_inputs() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    u = t([5.0], requires_grad=True)
    h = x * 3
    out = (h * h).sum()
    gh, gx, gu = ag.grad(out, [h, x, u], allow_unused=True, retain_graph=True)
    assert gh.tolist() == [6.0, 12.0] and gx.tolist() == [18.0, 36.0] and gu is None
    (gu,) = ag.grad(out, [u], allow_unused=True, materialize_grads=True)
    assert gu.tolist() == [0.0]
    assert x.grad is None


def test_backward_inputs_writes_only_their_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    w = t([3.0, 4.0], requires_grad=True)
    h = x * w
    (h * h).sum().backward(inputs=[h, w])
    assert h.grad.tolist() == [6.0, 16.0] and w.grad.tolist() == [6.0, 32.0]
    assert x.grad is None


def test_create_graph_gives_a_differentiable_gradient() -> None:
    x = t([2.0], requires_grad=True)
    (g,) = ag.grad((x * x * x).sum(), [x], create_graph=True)
    assert g.requires_grad and g.item() == 12.0
    (gg,) = ag.grad(g.sum(), [x])
    assert gg.item() == 12.0


def test_a_leaf_first_gradient_nobody_holds_becomes_its_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    sent: list[Any] = []
    y = x * 3
    # the gradient MulBackward0 returns, held weakly: after the pass it must be x.grad itself
    y.grad_fn.register_hook(lambda gi, go: sent.append(weakref.ref(gi[0])))
    y.sum().backward()
    assert sent[0]() is x.grad


def test_the_pass_holds_no_node_after_it_returns_or_fails() -> None:
    def graph() -> tuple[Any, Any]:
        x = t([1.0, 2.0], requires_grad=True)
        y = (x.exp() * 2).sum()
        return y, weakref.ref(y.grad_fn.next_functions[0][0])

    y, ref = graph()
    y.backward()
    del y
    gc.collect()
    assert ref() is None

    y, ref = graph()
    y.grad_fn.next_functions[0][0].register_prehook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_run_backward_graph_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match=r"_run_backward_graph\(root, root_grads"):
        run_backward_graph(None, [], False, True, None, None, None, ())
    root = engine.GraphRoot([], [])
    with pytest.raises(TypeError, match="useful must be a set or None"):
        run_backward_graph(root, [], False, True, [], None, None, engine._HELPERS)
