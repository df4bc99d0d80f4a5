"""ember.fx.capture: the recorded graph (ops, values, printing), the Interpreter, and capture's errors."""

from __future__ import annotations

import ember.aten as ea
import ember.fx as fx
import ember.nn as nn
import ember.optim as optim
import numpy as np
import pytest
from ember.aten import _dispatch


def chain(x, w):
    y = x * w
    y = y + 1.0
    return y.exp()


def test_pointwise_chain_nodes_and_meta() -> None:
    x, w = ea.randn(2, 3), ea.randn(3)
    gm = fx.capture(chain, x, w)
    g = gm.graph
    assert [n.op.full_name for n in g.nodes] == ["aten::mul.Tensor", "aten::add.Tensor", "aten::exp"]
    assert [v.name for v in g.inputs] == ["x", "w"]
    assert g.lifted == []
    assert g.nodes[0].args[0] is g.inputs[0] and g.nodes[0].args[1] is g.inputs[1]
    assert g.nodes[1].args[1] == 1.0
    for v in g.values():
        assert v.meta.dtype == ea.float32 and v.meta.device.type == "cpu"
    assert g.nodes[2].outputs[0].meta.shape == (2, 3)
    assert g.output_values == [g.nodes[2].outputs[0]]


def test_code_and_table_print() -> None:
    gm = fx.capture(chain, ea.randn(2, 3), ea.randn(3))
    code = gm.code
    assert code.splitlines()[0] == "def chain(x: f32[2, 3], w: f32[3]):"
    assert "t0: f32[2, 3] = aten::mul.Tensor(x, w)" in code
    assert "= aten::add.Tensor(t0, 1.0)" in code  # alpha=1 is the default: not printed
    assert code.splitlines()[-1] == "    return t2"
    table = gm.table().splitlines()
    assert table[0].split() == ["#", "name", "op", "args", "value"]
    assert any("aten::exp" in row and "f32[2, 3]" in row for row in table)


def test_interpreter_matches_eager() -> None:
    x, w = ea.randn(4, 3), ea.randn(3)
    gm = fx.capture(chain, x, w)
    x2, w2 = ea.randn(4, 3), ea.randn(3)
    np.testing.assert_array_equal(gm(x2, w2).numpy(), chain(x2, w2).numpy())
    np.testing.assert_array_equal(fx.Interpreter(gm).run(x2, w2).numpy(), chain(x2, w2).numpy())


def test_interpreter_run_node_override() -> None:
    seen = []

    class Spy(fx.Interpreter):
        def run_node(self, node, args):
            seen.append(node.op.name)
            return super().run_node(node, args)

    gm = fx.capture(chain, ea.randn(3), ea.randn(3))
    Spy(gm).run(ea.randn(3), ea.randn(3))
    assert seen == ["mul", "add", "exp"]


def test_nested_outputs_and_constants() -> None:
    def f(x):
        return {"a": x + 1, "b": (x * 2, 3)}

    gm = fx.capture(f, ea.ones(2))
    out = gm(ea.full((2,), 2.0))
    assert out["b"][1] == 3
    np.testing.assert_array_equal(out["a"].numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(out["b"][0].numpy(), [4.0, 4.0])


def test_training_step_captures_backward_and_optimizer() -> None:
    ea.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    x, y = ea.randn(8, 4), ea.randn(8, 2)
    gm = fx.capture(step, x, y)
    g = gm.graph
    names = [n.op.name for n in g.nodes]
    assert "linear" in names  # recorded as called, above Autograd
    assert names.count("mm") >= 1  # the backward of linear: the engine's ops are nodes
    lifted = {id(t) for t in gm.lifted if t is not None}
    assert {id(model.weight), id(model.bias)} <= lifted
    mutated = {id(gm.lifted[g.lifted.index(v)]) for v in g.mutated_placeholders() if v in g.lifted}
    assert {id(model.weight), id(model.bias)} <= mutated  # the optimizer's in-place updates
    owners = {id(gm.lifted[g.lifted.index(o)]) for o, v in g.grad_effects if v is not None}
    assert owners == {id(model.weight), id(model.bias)}
    # the printed code shows the mutation and the .grad effects
    assert "(mutated)" in g.code() and ".grad = t" in g.code()


def test_replaying_a_captured_step_trains_like_eager() -> None:
    def make():
        ea.manual_seed(1)
        m = nn.Linear(3, 1)
        return m, optim.SGD(m.parameters(), lr=0.05, momentum=0.9)

    xs = [ea.randn(5, 3) for _ in range(4)]
    ys = [ea.randn(5, 1) for _ in range(4)]
    results = []
    for use_graph in (False, True):
        m, opt = make()

        def step(x, y, m=m, opt=opt):
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).sum()
            loss.backward()
            opt.step()
            return loss.detach()

        step(xs[0], ys[0])  # momentum buffers exist from here on: state, not nodes
        gm = fx.capture(step, xs[1], ys[1]) if use_graph else None
        if gm is None:
            step(xs[1], ys[1])
        losses = [(gm or step)(x, y).item() for x, y in zip(xs[2:], ys[2:], strict=True)]
        results.append((losses, m.weight.detach().numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_library_op_is_one_node() -> None:
    lib = ea.library.Library("fxtest", "DEF")
    lib.define("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor")
    lib.impl("scaled_add", lambda x, y, a: x * a + y, "CompositeImplicitAutograd")
    try:
        op = ea.ops.fxtest.scaled_add

        def f(x, y):
            return op(x, y, 2.0).neg()

        gm = fx.capture(f, ea.ones(3), ea.ones(3))
        assert [n.op.full_name for n in gm.graph.nodes] == ["fxtest::scaled_add", "aten::neg"]
        np.testing.assert_array_equal(gm(ea.ones(3), ea.zeros(3)).numpy(), [-2.0, -2.0, -2.0])
    finally:
        lib._destroy()


@pytest.mark.parametrize(
    "body, what",
    [
        (lambda y: y.item(), "Tensor.item()"),
        (lambda y: bool(y > 0), "Tensor.item()"),
        (lambda y: float(y), "Tensor.item()"),
        (lambda y: y.tolist(), "Tensor.tolist()"),
        (lambda y: y.numpy(), "Tensor.numpy()"),
        (lambda y: np.asarray(y), "Tensor.numpy()"),
    ],
    ids=["item", "bool", "float", "tolist", "numpy", "asarray"],
)
def test_data_dependent_python_is_an_error_naming_the_line(body, what) -> None:
    def f(x):
        y = x.sum()
        body(y)  # the line the error names
        return y

    before = _dispatch.included_keys()
    with pytest.raises(fx.DataDependentError) as info:
        fx.capture(f, ea.ones(3))
    msg = str(info.value)
    assert what in msg
    assert "test_capture.py:" in msg and "in <lambda>" in msg  # the innermost user line
    # capture cleaned up: no capture key left on, the Tensor methods are the originals again
    assert _dispatch.included_keys() == before
    assert ea.ones(2).sum().item() == 2.0


def test_error_when_swallowed_still_fails_the_capture() -> None:
    def f(x):
        try:
            x.sum().item()
        except fx.DataDependentError:
            pass
        return x + 1

    with pytest.raises(fx.DataDependentError):
        fx.capture(f, ea.ones(2))


def _linear_step(make_opt):  # type: ignore[no-untyped-def]
    model = nn.Linear(2, 1)
    opt = make_opt(model.parameters())

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    step(ea.ones(1, 2))
    return step


def test_single_tensor_step_reading_its_count_names_the_optimizer_line() -> None:
    # NAdam's single-tensor loop reads each step count in Python (its mu product)
    step = _linear_step(lambda ps: optim.NAdam(ps, foreach=False))
    with pytest.raises(fx.DataDependentError, match=r"opt\.step\(\).*inside optimizer\.py.*fused=True"):
        fx.capture(step, ea.ones(1, 2))


def test_default_adam_single_tensor_step_is_captured_as_fused_ops() -> None:
    # Adam's single-tensor loop runs one fused op per float parameter: nothing read in Python
    step = _linear_step(lambda ps: optim.Adam(ps, foreach=False))
    gm = fx.capture(step, ea.ones(1, 2))
    names = [n.op.name for n in gm.graph.nodes]
    assert names.count("_fused_adam_") == 2  # weight and bias


def test_same_tensor_twice_is_rejected() -> None:
    x = ea.ones(2)
    with pytest.raises(ValueError, match="passed twice"):
        fx.capture(lambda a, b: a + b, x, x)


def test_views_and_inplace_on_inputs() -> None:
    def f(x):
        v = x[0]
        v.mul_(2.0)
        x.add_(1.0)
        return x, v

    x = ea.arange(6.0).reshape(2, 3)
    gm = fx.capture(f, x.clone())
    g = gm.graph
    assert g.mutated_placeholders() == [g.inputs[0]]
    view = next(n for n in g.nodes if n.op.name in ("select", "slice")).outputs[0]
    assert view.view_of is g.inputs[0]
    a, b = ea.arange(6.0).reshape(2, 3), ea.arange(6.0).reshape(2, 3)
    _ra, va = f(a)
    rb, vb = gm(b)
    assert rb is b  # the output aliases the input, as in eager
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    np.testing.assert_array_equal(vb.numpy(), va.numpy())
