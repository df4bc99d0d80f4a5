"""Training under bfloat16 autocast reaches float32's result: the demo CNN on scikit-learn's digits
(test accuracy within 3 points) and the char Transformer on Coriolanus (validation loss within
0.15 nats after the same steps). Short runs: same seed, same batches, only the region differs."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import ember.aten as ea
import ember.autograd as autograd
import ember.data as data
import ember.nn.functional as F
import ember.optim as optim
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_amp_example_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _region(bf16: bool) -> contextlib.AbstractContextManager[None]:
    return ea.autocast("cpu", dtype=ea.bfloat16) if bf16 else contextlib.nullcontext()


def _train_cnn(bf16: bool, epochs: int = 2) -> float:
    cnn = _example("cnn_digits")
    ea.manual_seed(0)
    ds = cnn.load_digits_dataset()
    gen = ea.Generator().manual_seed(0)
    train, test = data.random_split(ds, [1500, len(ds) - 1500], generator=gen)
    loader = data.DataLoader(train, batch_size=64, shuffle=True, generator=ea.Generator().manual_seed(1))
    model = cnn.make_model()
    opt = optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(epochs):
        model.train()
        for x, y in loader:
            with _region(bf16):
                out = model(x)
                loss = F.cross_entropy(out, y)
            assert loss.dtype == ea.float32  # cross_entropy is on the float32 list
            opt.zero_grad()
            loss.backward()
            assert all(p.grad is None or p.grad.dtype == ea.float32 for p in model.parameters())
            opt.step()
    model.eval()
    correct = 0
    with autograd.no_grad():
        for x, y in data.DataLoader(test, batch_size=256):
            with _region(bf16):
                out = model(x)
            correct += int((out.argmax(1) == y).sum().item())
    return correct / len(test)


def test_cnn_digits_bf16_autocast_matches_float32() -> None:
    pytest.importorskip("sklearn")
    acc32 = _train_cnn(False)
    acc16 = _train_cnn(True)
    assert acc32 > 0.85
    assert abs(acc16 - acc32) <= 0.03, (acc32, acc16)


def _train_transformer(bf16: bool, steps: int = 30) -> float:
    ct = _example("char_transformer")
    ea.manual_seed(0)
    text = ct.TEXT.read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    tokens = ea.tensor([stoi[c] for c in text])
    n_val = len(text) // 10
    train, val = tokens[:-n_val], tokens[-n_val:]
    model = ct.CharTransformer(len(chars), 32, 64, 4, 1, dropout=0.0)
    opt = optim.AdamW(model.parameters(), lr=3e-3)
    gen = ea.Generator().manual_seed(0)

    def loss_on(src: ea.Tensor) -> ea.Tensor:
        x, y = ct.batches(src, 32, 16, gen)
        with _region(bf16):
            logits = model(x)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    for _ in range(steps):
        loss = loss_on(train)
        opt.zero_grad()
        loss.backward()
        opt.step()
    vgen = ea.Generator().manual_seed(5)
    with autograd.no_grad():
        losses = []
        for _ in range(4):
            x, y = ct.batches(val, 32, 32, vgen)
            with _region(bf16):
                logits = model(x)
            losses.append(F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1)).item())
    return sum(losses) / len(losses)


def test_char_transformer_bf16_autocast_matches_float32() -> None:
    l32 = _train_transformer(False)
    l16 = _train_transformer(True)
    assert l32 < 3.2  # learnt something: uniform guessing over ~60 characters is ~4.1
    assert abs(l16 - l32) <= 0.15, (l32, l16)
