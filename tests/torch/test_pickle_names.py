"""A whole model saved by PyTorch (torch.save(model), tests/fixtures/torch_modules/full_module.pt) loads
into ember's classes: the checkpoint's torch.nn.modules.* / torch.optim.* names map through
ember.torch, with weights_only=False and, allow-listed by ember's classes, weights_only=True.
Outputs match the ones PyTorch computed (full_module.json)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import ember.aten as ea
import ember.nn as nn
import ember.nn.modules.linear
import ember.optim as optim
import ember.torch as torch
import numpy as np
import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "torch_modules" / "full_module.pt"
MANIFEST = json.loads(FIXTURE.with_suffix(".json").read_text())

SAFE = [
    nn.Sequential,
    nn.Linear,
    nn.ReLU,
    nn.LayerNorm,
    nn.Dropout,
    nn.MultiheadAttention,
    ember.nn.modules.linear.NonDynamicallyQuantizableLinear,
    optim.Adam,
]


def check_outputs(obj):
    assert type(obj["model"]) is nn.Sequential and type(obj["mha"]) is nn.MultiheadAttention
    assert obj["opt_class"] is optim.Adam
    with torch.no_grad():
        out = obj["model"](torch.tensor(MANIFEST["x"]))
        q = torch.tensor(MANIFEST["q"])
        att = obj["mha"](q, q, q)[0]
    np.testing.assert_allclose(out.numpy(), MANIFEST["model_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(att.numpy(), MANIFEST["mha_out"], rtol=1e-5, atol=1e-6)


def test_full_module_pickle_loads_into_ember_classes():
    check_outputs(torch.load(FIXTURE, weights_only=False))


def test_weights_only_with_ember_classes_allow_listed():
    with pytest.raises(Exception, match=r"GLOBAL torch\.nn\.modules"):
        torch.load(FIXTURE, weights_only=True)
    with torch.serialization.safe_globals(SAFE):
        check_outputs(torch.load(FIXTURE, weights_only=True))
    with torch.serialization.safe_globals(SAFE[:-1]):  # Adam left out: refused by its PyTorch name
        with pytest.raises(Exception, match=r"GLOBAL torch\.optim\.adam\.Adam was not an allowed global"):
            torch.load(FIXTURE, weights_only=True)


@pytest.mark.parametrize(
    "module,name,expected",
    [
        ("torch.nn.modules.linear", "Linear", nn.Linear),
        ("torch.nn.modules.activation", "MultiheadAttention", nn.MultiheadAttention),
        ("torch.nn.modules.container", "Sequential", nn.Sequential),
        ("torch.optim.sgd", "SGD", optim.SGD),
        ("torch.nn.modules.linear", "NotAClass", None),
        ("torch.not_a_module", "X", None),
        ("collections", "OrderedDict", None),  # not a torch name: left to pickle
    ],
)
def test_torch_names_resolve_to_ember_objects(module, name, expected):
    from ember.aten._weights_only_unpickler import resolve_torch_name

    assert resolve_torch_name(module, name) is expected


def test_ember_classes_know_their_pytorch_names():
    from ember.aten._weights_only_unpickler import _torch_names_of

    assert "torch.nn.modules.linear.Linear" in _torch_names_of(nn.Linear)
    assert "torch.nn.modules.activation.MultiheadAttention" in _torch_names_of(nn.MultiheadAttention)
    assert "torch.optim.adam.Adam" in _torch_names_of(optim.Adam)
    assert _torch_names_of(ea.Tensor) == []  # aten's classes are PyTorch's top-level names, mapped by aten


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


def test_loading_imports_the_facade_when_it_is_installed():
    done = _run(
        f"""
        import sys, ember.aten, ember.nn
        obj = ember.aten.load({str(FIXTURE)!r}, weights_only=False)
        assert "ember.torch" in sys.modules
        print(type(obj["model"]).__module__)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ember.nn.modules.container"


def test_without_the_facade_the_error_says_what_to_install():
    done = _run(
        f"""
        import importlib.abc, sys
        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "ember.torch" or name.startswith("ember.torch."):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Hide())
        import ember.aten
        ember.aten.load({str(FIXTURE)!r}, weights_only=False)
        """
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "ember cannot load the PyTorch object torch.nn.modules" in last and "install ember-torch" in last, last
