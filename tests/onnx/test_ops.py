"""Lowering errors, custom operators, and single aten ops checked in ONNX Runtime."""

from __future__ import annotations

import ember.aten as ea
import ember.autograd as autograd
import ember.nn as nn
import ember.nn.functional as F
import ember.onnx as eonnx
import numpy as np
import onnx
import onnxruntime as ort
import pytest


def _run(proto: onnx.ModelProto, *arrays: np.ndarray) -> list[np.ndarray]:
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), arrays, strict=True)})


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 1)
        self.act = nn.Softplus()

    def forward(self, x):
        return self.act(self.conv1(x))


def test_unlowered_op_is_an_error_naming_op_and_module() -> None:
    model = nn.Sequential(nn.ReLU(), nn.Sequential(nn.Identity(), _Block()))
    with pytest.raises(eonnx.UnsupportedOperatorError) as info:
        eonnx.export(model, ea.randn(1, 3, 4, 4), None)
    msg = str(info.value)
    assert "no ONNX lowering for aten::softplus" in msg
    assert "in module model.1.1.act" in msg
    assert "register_symbolic('aten::softplus'" in msg


def test_unlowered_op_of_a_plain_function_names_the_node() -> None:
    with pytest.raises(eonnx.UnsupportedOperatorError, match=r"aten::softplus \(node 1: aten::softplus"):
        eonnx.export(lambda x: F.softplus(x.relu()), ea.randn(3), None)


def test_inplace_op_is_an_error_not_a_different_graph() -> None:
    with pytest.raises(eonnx.UnsupportedOperatorError, match=r"relu_ writes its input in place in module model.1 "):
        eonnx.export(nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True)), ea.randn(2, 3), None)


def test_registered_symbolic_lowers_an_aten_op() -> None:
    def softplus(ctx):
        # log(1 + exp(x)), beta = 1 only
        assert ctx.args["beta"] == 1
        return ctx.op("Softplus", ctx.input("self"))

    eonnx.register_symbolic("aten::softplus", softplus)
    try:
        x = ea.randn(5)
        proto = eonnx.export(lambda t: F.softplus(t), x, None)
        np.testing.assert_allclose(_run(proto, x.numpy())[0], F.softplus(x).numpy(), rtol=1e-5, atol=1e-6)
    finally:
        eonnx.unregister_symbolic("aten::softplus")


@pytest.fixture
def scaled_add():
    lib = ea.library.Library("onnxtest", "DEF")
    lib.define("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor")
    lib.impl("scaled_add", lambda x, y, a: x * a + y, "CompositeImplicitAutograd")
    try:
        yield ea.ops.onnxtest.scaled_add
    finally:
        lib._destroy()


class _CustomModel(nn.Module):
    def __init__(self, op) -> None:
        super().__init__()
        self.op = op
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.op(self.fc(x), x, 3.0).tanh()


def test_custom_op_exports_as_one_node_of_its_domain(scaled_add) -> None:
    proto = eonnx.export(_CustomModel(scaled_add), ea.randn(2, 4), None)
    custom = [n for n in proto.graph.node if n.domain == "onnxtest"]
    assert len(custom) == 1 and custom[0].op_type == "scaled_add"
    assert [(a.name, a.f) for a in custom[0].attribute] == [("alpha", 3.0)]
    assert "onnxtest" in {o.domain for o in proto.opset_import}
    # nothing of the kernel's decomposition (Mul) leaks into the graph
    assert [n.op_type for n in proto.graph.node if n.domain == ""] == ["Gemm", "Tanh", "Identity"]


def test_custom_op_with_a_symbolic_runs_in_onnxruntime(scaled_add) -> None:
    def lower(ctx):
        alpha = ctx.scalar_like(ctx.args["alpha"], ctx.meta("x"))
        return ctx.op("Add", ctx.op("Mul", ctx.input("x"), alpha), ctx.input("y"))

    eonnx.register_symbolic("onnxtest::scaled_add", lower)
    try:
        model = _CustomModel(scaled_add)
        x = ea.randn(2, 4)
        proto = eonnx.export(model, x, None, dynamic_axes={"input": [0]})
        assert all(n.domain == "" for n in proto.graph.node)
        x2 = ea.randn(6, 4)
        with autograd.no_grad():
            ref = model(x2).numpy()
        np.testing.assert_allclose(_run(proto, x2.numpy())[0], ref, rtol=1e-5, atol=1e-6)
    finally:
        eonnx.unregister_symbolic("onnxtest::scaled_add")


def test_register_symbolic_needs_a_qualified_name() -> None:
    with pytest.raises(ValueError, match="namespace::name"):
        eonnx.register_symbolic("softplus", lambda ctx: None)


# single ops: (function, input shapes)
OPS = {
    "silu_sigmoid": (lambda x: F.silu(x) + F.sigmoid(x), [(3, 4)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    "leaky_hardtanh_elu": (lambda x: F.leaky_relu(x, 0.1) * F.hardtanh(x) - F.elu(x), [(3, 4)]),
    "where_cast": (lambda x, y: ea.where(x > y, x, y).to(ea.float64), [(3, 4), (3, 4)]),
    "permute_transpose": (lambda x: x.permute(2, 0, 1).transpose(0, 2).contiguous(), [(2, 3, 4)]),
    "slice_select": (lambda x: x[:, 1:3][0] + x.select(0, 1)[1:3], [(2, 4)]),
    "cat_stack": (lambda x, y: ea.cat([x, y], 0).sum(0) + ea.stack([x, y], 0).mean((0, 1)), [(2, 3), (2, 3)]),
    "expand_unsqueeze": (lambda x: x.unsqueeze(1).expand(3, 4, 5) * 2.0, [(3, 5)]),
    "div_sub_rsub": (lambda x, y: (x / (y.abs() + 1.0) - y) * (1 - x), [(3, 4), (3, 4)]),
    "softmax_logsoftmax": (lambda x: F.softmax(x, 0) + F.log_softmax(x, -1), [(3, 4)]),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), [(3, 4)]),
    "matmul_bmm": (lambda x, y: x @ y, [(2, 3, 4), (2, 4, 5)]),
    "reshape_flatten": (lambda x: x.reshape(3, 8).flatten(), [(2, 3, 4)]),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [(2, 2, 5, 4)] * 3),
    "sdpa_float_mask": (
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [(2, 5, 4)] * 3 + [(5, 5)],
    ),
    "hardswish_hardsigmoid": (lambda x: F.hardswish(x) - F.hardsigmoid(x), [(3, 8)]),
    "upsample_nearest": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), [(2, 3, 4, 5)]),
    "upsample_nearest_size": (lambda x: F.interpolate(x, size=(7, 3), mode="nearest"), [(2, 3, 4, 5)]),
    "upsample_bilinear": (lambda x: F.interpolate(x, size=(7, 9), mode="bilinear"), [(1, 2, 4, 5)]),
    "upsample_bilinear_ac": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        [(1, 2, 4, 5)],
    ),
    "conv_transpose": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        [(2, 3, 5, 5), (3, 4, 3, 3)],
    ),
    "conv1d_avgpool1d": (lambda x, w: F.avg_pool1d(F.conv1d(x, w, padding=1), 2), [(2, 3, 8), (4, 3, 3)]),
    "embedding_arange": (lambda w: F.embedding(ea.arange(3), w) * 2.0, [(6, 4)]),
}


@pytest.mark.parametrize("name", list(OPS))
def test_single_op_matches_in_onnxruntime(name) -> None:
    fn, shapes = OPS[name]
    g = ea.Generator().manual_seed(7)
    xs = [ea.randn(*s, generator=g) for s in shapes]
    proto = eonnx.export(fn, tuple(xs), None)
    (got,) = _run(proto, *[x.numpy() for x in xs])
    ref = fn(*xs).numpy()
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_sequence_axis_of_an_unrolled_lstm_is_an_error() -> None:
    """The captured LSTM is unrolled over time: a dynamic sequence axis would change the graph."""
    model = nn.LSTM(4, 6, batch_first=True)
    with pytest.raises(eonnx.UnsupportedOperatorError, match="runs different operators when the dynamic axes"):
        eonnx.export(model, ea.randn(2, 5, 4), None, dynamic_axes={"input": {0: "batch", 1: "seq"}})


def test_dynamic_axis_in_reshape_is_computed_from_the_input_shape() -> None:
    """view(b * 3, 2) follows the batch axis: the exported Reshape reads it at run time."""
    fn = lambda x: x.view(x.shape[0] * 3, 2).sum(1)  # noqa: E731
    proto = eonnx.export(fn, ea.randn(2, 6), None, dynamic_axes={"input": {0: "b"}})
    assert "Shape" in [n.op_type for n in proto.graph.node]
    x = ea.randn(5, 6)
    np.testing.assert_allclose(_run(proto, x.numpy())[0], fn(x).numpy(), rtol=1e-5, atol=1e-6)


def test_dynamic_axis_without_room_to_grow_is_a_clear_error() -> None:
    """The extra captures grow the dynamic axes; a model with a maximum length says so."""
    table = ea.randn(6, 3)

    def fn(idx):
        return F.embedding(ea.arange(idx.shape[1]), table) + idx.unsqueeze(-1)

    with pytest.raises(eonnx.UnsupportedOperatorError, match="export runs the forward again with them grown"):
        eonnx.export(fn, ea.zeros(2, 5), None, dynamic_axes={"input": {1: "seq"}})


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2, "mode": "nearest"}, {"size": (5, 7), "mode": "bilinear"}])
def test_resize_keeps_the_batch_dynamic(kwargs) -> None:
    fn = lambda x: F.interpolate(x, **kwargs)  # noqa: E731
    proto = eonnx.export(fn, ea.randn(1, 2, 3, 4), None, dynamic_axes={"input": {0: "batch"}})
    x = ea.randn(4, 2, 3, 4)
    np.testing.assert_allclose(_run(proto, x.numpy())[0], fn(x).numpy(), rtol=1e-5, atol=1e-6)
