"""Every layer with state: state_dict keys and shapes exactly as PyTorch 2.13 has them (table written
out from torch), so PyTorch checkpoints load into the equivalent ember modules."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember import nn

# (constructor, [(key, shape), ...]) -- from torch.nn with the same arguments
CASES = [
    ("nn.Linear(4, 3)", [("weight", (3, 4)), ("bias", (3,))]),
    ("nn.Linear(4, 3, bias=False)", [("weight", (3, 4))]),
    ("nn.Bilinear(2, 3, 4)", [("weight", (4, 2, 3)), ("bias", (4,))]),
    ("nn.Conv1d(2, 4, 3)", [("weight", (4, 2, 3)), ("bias", (4,))]),
    ("nn.Conv2d(4, 6, (3, 5), groups=2)", [("weight", (6, 2, 3, 5)), ("bias", (6,))]),
    ("nn.Conv3d(2, 4, 3, bias=False)", [("weight", (4, 2, 3, 3, 3))]),
    ("nn.ConvTranspose1d(2, 4, 3)", [("weight", (2, 4, 3)), ("bias", (4,))]),
    ("nn.ConvTranspose2d(4, 6, 3, groups=2)", [("weight", (4, 3, 3, 3)), ("bias", (6,))]),
    ("nn.ConvTranspose3d(2, 4, 2)", [("weight", (2, 4, 2, 2, 2)), ("bias", (4,))]),
    (
        "nn.BatchNorm1d(3)",
        [("weight", (3,)), ("bias", (3,)), ("running_mean", (3,)), ("running_var", (3,)), ("num_batches_tracked", ())],
    ),
    ("nn.BatchNorm2d(3, affine=False)", [("running_mean", (3,)), ("running_var", (3,)), ("num_batches_tracked", ())]),
    ("nn.BatchNorm3d(3, track_running_stats=False)", [("weight", (3,)), ("bias", (3,))]),
    ("nn.InstanceNorm2d(3, affine=True)", [("weight", (3,)), ("bias", (3,))]),
    ("nn.LayerNorm((2, 3))", [("weight", (2, 3)), ("bias", (2, 3))]),
    ("nn.LayerNorm(4, bias=False)", [("weight", (4,))]),
    ("nn.GroupNorm(2, 4)", [("weight", (4,)), ("bias", (4,))]),
    ("nn.RMSNorm(5)", [("weight", (5,))]),
    ("nn.PReLU(3)", [("weight", (3,))]),
    ("nn.Embedding(7, 3)", [("weight", (7, 3))]),
    ("nn.EmbeddingBag(7, 3)", [("weight", (7, 3))]),
    ("nn.CrossEntropyLoss(weight=ea.ones(3))", [("weight", (3,))]),
    ("nn.BCEWithLogitsLoss(pos_weight=ea.ones(3))", [("pos_weight", (3,))]),
    (
        "nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Conv1d(1, 1, 1)))",
        [("0.weight", (2, 2)), ("0.bias", (2,)), ("2.0.weight", (1, 1, 1)), ("2.0.bias", (1,))],
    ),
]


@pytest.mark.parametrize(("ctor", "expected"), CASES, ids=[c for c, _ in CASES])
def test_state_dict_keys_and_shapes(ctor: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    module = eval(ctor, {"nn": nn, "ea": ea})
    got = [(k, tuple(v.shape)) for k, v in module.state_dict().items()]
    assert got == expected
    # and the same state loads back strictly
    assert repr(module.load_state_dict(module.state_dict())) == "<All keys matched successfully>"
