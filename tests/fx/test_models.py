"""Whole training steps of the example models, compiled vs eager, for 10 optimizer steps.

Each model is built twice from one seed; one copy trains eagerly, the other through
``ember.fx.compile(step)``; every step draws the same dropout masks (the generator is
reseeded per step). Replay must be bit-identical (losses, outputs, gradients, parameters);
fused within rtol 1e-4 / atol 1e-5 after 10 steps (float32; per-kernel differences are a
few ulp, see ember/fx/_fused.py, and training compounds them) -- except the parameters of
the AdamW-trained transformer, atol 1e-3: Adam divides by the gradient's running RMS, so
a parameter whose gradient is near 0 moves by up to ~lr (3e-3) per step on rounding noise
alone; 1e-3 is 1/30 of how far 10 steps can move a parameter. The same holds, more so,
for a parameter whose true gradient is exactly 0 (digits_cnn's conv biases before BatchNorm:
their gradients are rounding noise in both runs): atol 1e-2, ten steps of lr.
"""

from __future__ import annotations

import math

import ember.aten as ea
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np
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
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def digits_cnn() -> nn.Module:
    """examples/cnn_digits.py's make_model (that file needs ember.data, not installed here)."""
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


class LSTMClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=1, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def _cross_entropy(out, y):
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


MODELS = {
    "mlp": (
        lambda: nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 5)),
        lambda g: (ea.randn(16, 20, generator=g), ea.randint(0, 5, (16,), generator=g)),
        lambda ps: optim.Adam(ps, lr=1e-2, fused=True),
    ),
    "lenet": (
        LeNet,
        lambda g: (ea.randn(4, 1, 28, 28, generator=g), ea.randint(0, 10, (4,), generator=g)),
        lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9),
    ),
    "digits_cnn": (
        digits_cnn,
        lambda g: (ea.randn(8, 1, 8, 8, generator=g), ea.randint(0, 10, (8,), generator=g)),
        lambda ps: optim.Adam(ps, lr=1e-3, fused=True),
    ),
    "char_transformer": (
        CharTransformer,
        lambda g: (ea.randint(0, 20, (4, 16), generator=g), ea.randint(0, 20, (4, 16), generator=g)),
        lambda ps: optim.AdamW(ps, lr=3e-3, fused=True),
    ),
    "lstm": (
        LSTMClassifier,
        lambda g: (ea.randn(4, 6, 8, generator=g), ea.randint(0, 4, (4,), generator=g)),
        lambda ps: optim.SGD(ps, lr=0.1),
    ),
}


def _train(name: str, backend: str | None, steps: int = 10):
    make_model, make_batch, make_opt = MODELS[name]
    ea.manual_seed(0)
    model = make_model()
    model.train()
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        loss = _cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss.detach(), out.detach()

    run = step if backend is None else fx.compile(step, backend=backend)
    g = ea.Generator().manual_seed(1)
    history = []
    for i in range(steps):
        x, y = make_batch(g)
        ea.manual_seed(100 + i)  # the same dropout masks in both runs
        loss, out = run(x, y)
        grads = [p.grad.numpy().copy() for p in model.parameters()]
        history.append((loss.item(), out.numpy().copy(), grads))
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return history, params, run


@pytest.mark.parametrize("name", list(MODELS))
def test_replay_is_bit_identical(name) -> None:
    eager_hist, eager_params, _ = _train(name, None)
    hist, params, run = _train(name, "replay")
    assert run.captures == 1
    for (l0, o0, g0), (l1, o1, g1) in zip(eager_hist, hist, strict=True):
        assert l0 == l1
        np.testing.assert_array_equal(o1, o0)
        for a, b in zip(g0, g1, strict=True):
            np.testing.assert_array_equal(b, a)
    for a, b in zip(eager_params, params, strict=True):
        np.testing.assert_array_equal(b, a)
    assert not math.isnan(hist[-1][0])


@pytest.mark.parametrize("name", list(MODELS))
def test_fused_within_tolerance(name, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EMBER_FX_CACHE_DIR", str(tmp_path))
    eager_hist, eager_params, _ = _train(name, None)
    hist, params, run = _train(name, "fused")
    assert run.captures == 1
    for (l0, o0, _), (l1, o1, _) in zip(eager_hist, hist, strict=True):
        assert l1 == pytest.approx(l0, rel=1e-4, abs=1e-5)
        np.testing.assert_allclose(o1, o0, rtol=1e-4, atol=1e-5)
    atol = 1e-3 if name == "char_transformer" else 1e-5
    for i, (a, b) in enumerate(zip(eager_params, params, strict=True)):
        # a parameter whose true gradient is 0 -- a conv bias right before BatchNorm, whose mean
        # subtraction cancels it -- gets rounding noise (|g| ~ 1e-8) as its gradient, and Adam
        # moves it by up to ~lr (1e-3) per step in the noise's direction: 10 steps, 1e-2
        noise = all(np.abs(g[i]).max() < 1e-6 for _, _, g in eager_hist)
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-2 if noise else atol)
