"""ember.onnx.export: the exported file runs in ONNX Runtime and matches ember's eval outputs.

Every model is exported at one batch size with the batch (and, for sequence models, the
sequence) axis dynamic, then run by ONNX Runtime's CPU provider at the export size and at
a second size; the outputs match ember's eval-mode forward within rtol 1e-5 (atol 1e-6:
float32 kernels of two libraries sum in different orders).
"""

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


class LeNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.avg_pool2d(F.tanh(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        return F.log_softmax(self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))), dim=1)


def digits_cnn() -> nn.Module:
    """examples/cnn_digits.py's make_model."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.3),
        nn.Linear(64 * 4 * 4, 128),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.Linear(128, 10),
    )


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class SmallResNet(nn.Module):
    """ResNet-18's shape (stem, 4 stages of 2 basic blocks, global pool, fc) at small width."""

    def __init__(self, width: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        layers = []
        cin = width
        for i in range(4):
            cout = width * 2**i
            stride = 1 if i == 0 else 2
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(ea.flatten(self.avgpool(x), 1))


def _randomise_bn(model: nn.Module) -> nn.Module:
    """Non-trivial running statistics, so BatchNormalization's inference form is exercised."""
    g = ea.Generator().manual_seed(3)
    with autograd.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(ea.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(ea.rand(m.num_features, generator=g) + 0.5)
    return model


def _encoder() -> nn.Module:
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), nn.Linear(16, 5))


def _mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 5)
    )


class LSTMClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class CharTransformer(nn.Module):
    """examples/char_transformer.py's model, at a test's size."""

    def __init__(self, vocab: int = 20, block: int = 16, d_model: int = 32, nhead: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=4 * d_model,
            dropout=0.1,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(block), persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(ea.arange(t))
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


class GRUTagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(8, 12, batch_first=True)
        self.fc = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc(self.gru(x)[0])


# name: (factory, input at export, input at a second size, dynamic axes of x; an integer
# input's vocabulary size, or None for a float input)
MODELS = {
    "mlp": (_mlp, (4, 20), (9, 20), {0: "batch"}),
    "lenet": (LeNet, (2, 1, 28, 28), (5, 1, 28, 28), {0: "batch"}),
    "digits_cnn": (lambda: _randomise_bn(digits_cnn()), (4, 1, 8, 8), (3, 1, 8, 8), {0: "batch"}),
    "resnet": (lambda: _randomise_bn(SmallResNet()), (2, 3, 32, 32), (3, 3, 32, 32), {0: "batch"}),
    "transformer_encoder": (_encoder, (2, 6, 16), (3, 11, 16), {0: "batch", 1: "seq"}),
    # unrolled over time: only the batch axis can be dynamic (see test_ops)
    "lstm": (LSTMClassifier, (2, 5, 8), (4, 5, 8), {0: "batch"}),
    "gru": (GRUTagger, (2, 4, 8), (5, 4, 8), {0: "batch"}),
    "char_transformer": (CharTransformer, (2, 8), (3, 13), {0: "batch", 1: "seq"}, 20),
}


def _session(proto: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _eager(model: nn.Module, x) -> np.ndarray:
    model.eval()
    with autograd.no_grad():
        return model(x).numpy()


@pytest.mark.parametrize("name", list(MODELS))
def test_model_runs_in_onnxruntime_at_two_batch_sizes(name, tmp_path) -> None:
    factory, shape, shape2, axes, *vocab = MODELS[name]
    ea.manual_seed(0)
    model = factory()
    g = ea.Generator().manual_seed(1)
    if vocab:
        x, x2 = (ea.randint(0, vocab[0], s, generator=g) for s in (shape, shape2))
    else:
        x, x2 = ea.randn(*shape, generator=g), ea.randn(*shape2, generator=g)
    path = tmp_path / f"{name}.onnx"
    proto = eonnx.export(
        model, (x,), path, input_names=["x"], output_names=["y"], dynamic_axes={"x": axes, "y": {0: "batch"}}
    )
    assert model.training  # export ran eval() and restored the mode
    loaded = onnx.load(str(path))
    onnx.checker.check_model(loaded, full_check=True)
    dims = [d.dim_param or d.dim_value for d in loaded.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [axes.get(i, s) for i, s in enumerate(shape)]
    # parameters are initializers named as in state_dict, not graph inputs
    assert [i.name for i in loaded.graph.input] == ["x"]
    inits = {t.name for t in loaded.graph.initializer}
    assert set(model.state_dict()) - {k for k in model.state_dict() if k.endswith("num_batches_tracked")} <= inits
    sess = _session(proto)
    for inp in (x, x2):
        (got,) = sess.run(None, {"x": inp.numpy()})
        np.testing.assert_allclose(got, _eager(model, inp), rtol=1e-5, atol=1e-6)


def test_graph_ops_are_standard_onnx() -> None:
    """The digits CNN lowers to Conv / BatchNormalization / MaxPool / Gemm, dropout vanishes."""
    proto = eonnx.export(_randomise_bn(digits_cnn()), (ea.randn(2, 1, 8, 8),), None)
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("Conv") == 2 and ops.count("BatchNormalization") == 2
    assert ops.count("Gemm") == 2 and "MaxPool" in ops
    assert "Dropout" not in ops and all(n.domain in ("", "ai.onnx") for n in proto.graph.node)
    assert onnx.shape_inference.infer_shapes(proto, strict_mode=True).graph.output[0].type.tensor_type.elem_type == 1


def test_static_export_without_dynamic_axes_fixes_the_batch() -> None:
    model = _mlp()
    proto = eonnx.export(model, ea.randn(3, 20), None)
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [3, 20] and proto.graph.input[0].name == "input" and proto.graph.output[0].name == "output"
    x = ea.randn(3, 20)
    (got,) = _session(proto).run(None, {"input": x.numpy()})
    np.testing.assert_allclose(got, _eager(model, x), rtol=1e-5, atol=1e-6)


def test_file_object_and_multiple_outputs(tmp_path) -> None:
    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, a, b):
            h = self.fc(a)
            return F.softmax(h, dim=-1), (h * b).sum(dim=1, keepdim=True) - b.mean(dim=1, keepdim=True)

    m = Two()
    a, b = ea.randn(2, 4), ea.randn(2, 3)
    with open(tmp_path / "two.onnx", "wb") as fh:
        eonnx.export(m, (a, b), fh, input_names=["a", "b"], output_names=["p", "s"])
    sess = ort.InferenceSession(str(tmp_path / "two.onnx"), providers=["CPUExecutionProvider"])
    p, s = sess.run(None, {"a": a.numpy(), "b": b.numpy()})
    with autograd.no_grad():
        rp, rs = m(a, b)
    np.testing.assert_allclose(p, rp.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, rs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"input_names": ["a", "b"]}, "2 input_names for 1 tensor inputs"),
        ({"output_names": ["a", "b"]}, "2 output_names for 1 tensor outputs"),
        ({"dynamic_axes": {"z": [0]}}, r"dynamic_axes names \['z'\]"),
        ({"opset_version": 13}, "opset_version must be >= 17"),
    ],
    ids=["input_names", "output_names", "dynamic_axes", "opset"],
)
def test_bad_arguments_are_errors(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        eonnx.export(_mlp(), ea.randn(2, 20), None, **kwargs)


def test_unlowered_op_deep_in_a_resnet_names_its_module_path() -> None:
    model = SmallResNet()
    model.layer3[0].act = nn.Softplus()  # no ONNX rule; called from BasicBlock.forward below
    block = model.layer3[0]
    block.forward = lambda x: block.act(block.bn1(block.conv1(x)))  # type: ignore[method-assign]
    model.layer3[1] = nn.Identity()
    model.layer4 = nn.Sequential(nn.Conv2d(32, 64, 1))
    with pytest.raises(eonnx.UnsupportedOperatorError, match=r"aten::softplus in module model\.layer3\.0\.act "):
        eonnx.export(model, ea.randn(1, 3, 16, 16), None)
