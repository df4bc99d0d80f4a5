"""A captured model keeps vision::deform_conv2d as one node (ember.fx.capture records the
dispatcher's operators: the extension's operator is one of them), and replays it."""

from __future__ import annotations

import ember.aten as ea
import ember.nn as nn
import numpy as np
import pytest
from ember.vision import ops

fx = pytest.importorskip("ember.fx", reason="ember-fx is a test requirement of the vision session")


class DeformBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.offset = nn.Conv2d(2, 18, 3, padding=1)
        self.deform = ops.DeformConv2d(2, 4, 3, padding=1)

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        return ea.relu(self.deform(x, self.offset(x)))


def test_deform_conv2d_is_one_node() -> None:
    ea.manual_seed(0)
    model = DeformBlock()
    x = ea.randn(1, 2, 6, 6)
    gm = fx.capture(lambda x: model(x), x)
    targets = [str(n.target) for n in gm.graph.nodes]
    assert targets.count("vision::deform_conv2d") == 1, targets
    assert not any("im2col" in t or "grid_sample" in t for t in targets)
    assert "vision::deform_conv2d(" in gm.graph.code()
    x2 = ea.randn(1, 2, 6, 6)
    np.testing.assert_allclose(gm(x2).detach().numpy(), model(x2).detach().numpy(), rtol=1e-6, atol=1e-6)
