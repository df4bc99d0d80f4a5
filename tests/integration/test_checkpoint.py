"""Checkpoints across the stack: nn.Module and optimizer state dicts through ember.aten.save/load,
and PyTorch 2.13's own state dicts (tests/fixtures/torch) loaded into ember modules and optimizers."""

from __future__ import annotations

import io
import json
import os

import ember.aten as ea
import ember.nn as nn
import ember.optim as optim

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "torch")


def model() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def train_step(m: nn.Module, opt: optim.Optimizer) -> None:
    opt.zero_grad()
    m(ea.linspace(-1, 1, 8).reshape(2, 4)).square().sum().backward()
    opt.step()


def test_resume_training_from_a_checkpoint():
    ea.manual_seed(0)
    m = model()
    opt = optim.Adam(m.parameters(), lr=0.01)
    train_step(m, opt)
    buf = io.BytesIO()
    ea.save({"model": m.state_dict(), "optim": opt.state_dict(), "epoch": 1}, buf)

    buf.seek(0)
    ckpt = ea.load(buf)  # weights_only=True: state dicts are plain data
    m2 = model()
    m2.load_state_dict(ckpt["model"])
    opt2 = optim.Adam(m2.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["optim"])
    assert ckpt["epoch"] == 1
    assert ckpt["model"]._metadata[""] == m.state_dict()._metadata[""]

    train_step(m, opt)
    train_step(m2, opt2)
    for (k, a), (_, b) in zip(m.state_dict().items(), m2.state_dict().items(), strict=True):
        assert a.tolist() == b.tolist(), k


def test_parameters_come_back_as_parameters():
    m = model()
    buf = io.BytesIO()
    ea.save(list(m.parameters()), buf)
    buf.seek(0)
    params = ea.load(buf)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    assert [p.tolist() for p in params] == [p.tolist() for p in m.parameters()]


def test_pytorch_module_and_optimizer_state_dicts_load_into_ember():
    sd = ea.load(os.path.join(FIXTURES, "module_state_dict.pt"))
    m = model()
    m.load_state_dict(sd)
    with open(os.path.join(FIXTURES, "module_state_dict.json")) as fh:
        manifest = json.load(fh)
    for d in manifest["tensors"]:
        assert m.state_dict()[d["path"][1:]].tolist() == d["values"]
    opt = optim.Adam(m.parameters(), lr=0.01)
    opt.load_state_dict(ea.load(os.path.join(FIXTURES, "optimizer_state_dict.pt")))
    assert opt.state_dict()["state"][0]["exp_avg"].shape == ea.Size([3, 4])
    train_step(m, opt)  # the loaded state drives a real step

    params = ea.load(os.path.join(FIXTURES, "parameters.pt"))
    assert all(isinstance(p, nn.Parameter) for p in params)
