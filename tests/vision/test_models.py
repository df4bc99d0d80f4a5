"""ember.vision.models: torchvision's architectures and parameter names (the published
parameter counts of torchvision's models, sample state_dict keys), forward shapes, and a
state_dict round trip giving identical eval outputs. (Loading a torchvision-saved
state_dict is checked by the optional `vision_interop` nox session, which has PyTorch.)"""

from __future__ import annotations

import io

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import no_grad
from ember.vision import models

# (builder, parameters in torchvision's model, input size, sample state_dict keys)
MODELS = [
    ("resnet18", 11_689_512, 64, ["layer1.0.conv1.weight", "layer2.0.downsample.1.running_var", "fc.bias"]),
    ("resnet34", 21_797_672, 64, ["layer3.5.bn2.num_batches_tracked", "layer4.2.conv2.weight"]),
    ("resnet50", 25_557_032, 64, ["layer1.0.conv3.weight", "layer4.0.downsample.0.weight", "fc.weight"]),
    (
        "mobilenet_v2",
        3_504_872,
        32,
        [
            "features.0.0.weight",
            "features.1.conv.0.0.weight",
            "features.17.conv.3.weight",
            "features.18.1.running_mean",
            "classifier.1.weight",
        ],
    ),
    ("vgg11", 132_863_336, 32, ["features.0.weight", "features.18.bias", "classifier.6.weight"]),
    ("alexnet", 61_100_840, 64, ["features.0.weight", "features.10.bias", "classifier.1.weight", "classifier.6.bias"]),
    (
        "squeezenet1_1",
        1_235_496,
        64,
        ["features.3.squeeze.weight", "features.12.expand3x3.bias", "classifier.1.weight"],
    ),
]


@pytest.mark.parametrize(("name", "n_params", "size", "keys"), MODELS, ids=[m[0] for m in MODELS])
def test_architecture_and_names(name: str, n_params: int, size: int, keys: list[str]) -> None:
    ea.manual_seed(0)
    model = getattr(models, name)()
    assert sum(p.numel() for p in model.parameters()) == n_params
    sd = model.state_dict()
    for k in keys:
        assert k in sd, k
    model.eval()
    with no_grad():
        out = model(ea.randn(2, 3, size, size))
    assert tuple(out.shape) == (2, 1000)
    assert np.isfinite(out.numpy()).all()


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "squeezenet1_1"])
def test_state_dict_round_trip_gives_identical_outputs(name: str) -> None:
    ea.manual_seed(1)
    a = getattr(models, name)(num_classes=10)
    a.train()
    with no_grad():
        a(ea.randn(4, 3, 32, 32))  # move the BatchNorm running statistics off their initial values
    buf = io.BytesIO()
    ea.save(a.state_dict(), buf)
    buf.seek(0)
    b = getattr(models, name)(num_classes=10)
    b.load_state_dict(ea.load(buf))
    a.eval()
    b.eval()
    x = ea.randn(2, 3, 32, 32)
    with no_grad():
        np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_resnet_trains_one_step() -> None:
    ea.manual_seed(2)
    model = models.resnet18(num_classes=3)
    out = model(ea.randn(2, 3, 32, 32))
    out.sum().backward()
    assert model.conv1.weight.grad is not None and float(model.conv1.weight.grad.abs().sum()) > 0


def test_weights_are_not_downloaded() -> None:
    with pytest.raises(ValueError, match="resnet18: weights='IMAGENET1K_V1' is not supported"):
        models.resnet18(weights="IMAGENET1K_V1")
