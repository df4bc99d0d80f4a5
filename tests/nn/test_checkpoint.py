"""A PyTorch checkpoint loads into the equivalent ember model: same state_dict keys and shapes, same
outputs (fixture written by fixtures/make_torch_checkpoint.py with PyTorch 2.13); ember's own
state_dict survives ember.aten.save / load."""

from __future__ import annotations

import importlib.util
import io
import os

import ember.aten as ea
import numpy as np
from ember import nn

_HERE = os.path.dirname(os.path.abspath(__file__))


def _build() -> nn.Module:
    spec = importlib.util.spec_from_file_location("small_cnn", os.path.join(_HERE, "fixtures", "small_cnn.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build(nn)


def test_pytorch_checkpoint_loads_and_matches() -> None:
    ckpt = ea.load(os.path.join(_HERE, "fixtures", "torch_small_cnn.pt"))
    sd = ckpt["state_dict"]
    model = _build()
    ours = model.state_dict()
    assert list(ours) == list(sd)
    for k in sd:
        assert tuple(ours[k].shape) == tuple(sd[k].shape), k
        assert ours[k].dtype == sd[k].dtype, k
    res = model.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>"
    model.eval()
    out = model(ckpt["input"])
    np.testing.assert_allclose(out.detach().numpy(), ckpt["output"].numpy(), rtol=1e-4, atol=1e-5)


def test_state_dict_save_load_round_trip() -> None:
    model = _build()
    model.train()(ea.randn(2, 3, 12, 12))  # move the batch norm statistics
    buf = io.BytesIO()
    ea.save(model.state_dict(), buf)
    buf.seek(0)
    loaded = ea.load(buf)
    assert loaded._metadata == model.state_dict()._metadata
    fresh = _build()
    fresh.load_state_dict(loaded)
    model.eval()
    fresh.eval()
    x = ea.randn(2, 3, 12, 12)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
