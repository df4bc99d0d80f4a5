"""ember.torch: PyTorch's names resolve to the ember layers themselves; submodule imports in
every spelling; missing layers and missing features raise errors that say what to do;
install_as_torch() serves `import torch`."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import ember.aten as ea
import ember.autograd
import ember.data
import ember.distributions
import ember.nn
import ember.nn.functional
import ember.optim
import ember.torch as torch
import pytest


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


# (name under ember.torch, the ember object it must be)
SAME_OBJECT = [
    ("Tensor", ea.Tensor),
    ("tensor", ea.tensor),
    ("float32", ea.float32),
    ("long", ea.long),
    ("device", ea.device),
    ("Size", ea.Size),
    ("Generator", ea.Generator),
    ("save", ea.save),
    ("load", ea.load),
    ("manual_seed", ea.manual_seed),
    ("from_numpy", ea.from_numpy),
    ("randn", ea.randn),
    ("cuda", ea.cuda),
    ("backends", ea.backends),
    ("accelerator", ea.accelerator),
    ("linalg", ea.linalg),
    ("no_grad", ember.autograd.no_grad),
    ("enable_grad", ember.autograd.enable_grad),
    ("set_grad_enabled", ember.autograd.set_grad_enabled),
    ("inference_mode", ember.autograd.inference_mode),
    ("nn", ember.nn),
    ("optim", ember.optim),
    ("autograd", ember.autograd),
    ("distributions", ember.distributions),
    ("FloatTensor", ea.FloatTensor),
]


@pytest.mark.parametrize("name,obj", SAME_OBJECT, ids=[n for n, _ in SAME_OBJECT])
def test_names_are_the_ember_objects(name, obj):
    assert getattr(torch, name) is obj


def test_submodule_imports_in_every_spelling():
    import ember.torch.nn.functional
    import ember.torch.optim.lr_scheduler
    from ember.torch.nn import functional as F1
    from ember.torch.utils.data import DataLoader, TensorDataset

    assert F1 is ember.nn.functional
    assert ember.torch.nn.functional is ember.nn.functional
    assert ember.torch.optim.lr_scheduler is ember.optim.lr_scheduler
    assert DataLoader is ember.data.DataLoader and TensorDataset is ember.data.TensorDataset
    assert torch.utils.data is ember.data
    assert importlib.import_module("ember.torch.nn.modules.activation") is ember.nn.modules.activation
    assert importlib.import_module("ember.torch.utils.data.distributed") is ember.data.distributed
    assert importlib.import_module("ember.torch.linalg") is ea.linalg
    import ember.aten.signal.windows

    assert importlib.import_module("ember.torch.signal.windows") is ember.aten.signal.windows
    assert torch.signal.windows.hann is ember.aten.signal.windows.hann
    import ember.aten.masked

    assert importlib.import_module("ember.torch.masked") is ember.aten.masked
    assert torch.masked.sum is ember.aten.masked.sum
    assert importlib.import_module("ember.torch.backends.mps") is ea.backends.mps
    assert torch.optim.swa_utils.AveragedModel.__module__ == "ember.optim.swa_utils"
    # the aliased modules keep their own identity
    assert ember.nn.__spec__.name == "ember.nn"
    assert ember.nn.functional.__spec__.name == "ember.nn.functional"


def test_a_pytorch_style_step_runs():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss0 = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss0.backward()
    opt.step()
    with torch.no_grad():
        loss1 = torch.nn.functional.mse_loss(model(x), y)
    assert isinstance(loss0, torch.Tensor) and float(loss1) < float(loss0)


def test_device_probes():
    assert torch.backends.mps.is_available() is False
    assert torch.backends.mps.is_built() is False
    assert torch.accelerator.is_available() == torch.cuda.is_available()
    assert torch.accelerator.device_count() == (torch.cuda.device_count() if torch.accelerator.is_available() else 0)
    cur = torch.accelerator.current_accelerator(check_available=True)
    assert (cur is None) == (not torch.cuda.is_available())
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no accelerator is available"):
            torch.accelerator.current_device_index()
    assert torch.zeros(2).is_xpu is False and torch.zeros(2).is_mps is False


def test_jit_points_to_graph_capture():
    for fn in (torch.jit.script, torch.jit.trace):
        with pytest.raises(NotImplementedError, match=r"no TorchScript.*ember\.torch\.compile"):
            fn(torch.nn.Linear(2, 2))
    assert torch.jit.is_scripting() is False and torch.jit.is_tracing() is False

    @torch.jit.ignore
    def f(x):
        return x + 1

    @torch.jit.unused
    def g(x):
        return x

    assert f(1) == 2 and g(3) == 3 and torch.jit.annotate(list, [1]) == [1]


def test_amp_is_ember_aten_amp():
    import ember.aten as ea

    assert torch.amp is ea.amp and torch.autocast is ea.autocast
    assert importlib.import_module("ember.torch.amp").GradScaler is ea.amp.GradScaler
    with torch.autocast("cpu"):
        assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16


def test_features_not_there_yet_say_so():
    with pytest.raises(AttributeError, match="has no attribute 'not_a_torch_name'"):
        torch.not_a_torch_name  # noqa: B018


# A blocker that makes a layer look uninstalled (what importlib sees when it is absent).
_HIDE = """
import importlib.abc, sys
HIDDEN = {hidden!r}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == h or name.startswith(h + ".") for h in HIDDEN):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Hide())
"""


@pytest.mark.parametrize(
    "hidden,statement,dist",
    [
        ("ember.nn", "import ember.torch.nn", "ember-nn"),
        ("ember.nn", "from ember.torch.nn import functional", "ember-nn"),
        ("ember.nn", "import ember.torch as t; t.nn.Linear", "ember-nn"),
        ("ember.data", "from ember.torch.utils.data import DataLoader", "ember-data"),
        ("ember.optim", "import ember.torch as t; t.optim.SGD", "ember-optim"),
        ("ember.distributions", "from ember.torch.distributions import Normal", "ember-distributions"),
        ("ember.distributed", "import ember.torch.distributed", "ember-distributed"),
        ("ember.fx", "import ember.torch as t; t.compile(lambda x: x)", "ember-fx"),
        ("ember.onnx", "import ember.torch.onnx", "ember-onnx"),
        ("ember.onnx", "import ember.torch as t; t.onnx.export", "ember-onnx"),
        ("ember.fx", "from ember.torch.fx import capture", "ember-fx"),
    ],
)
def test_a_missing_layer_names_the_package_to_install(hidden, statement, dist):
    done = run_python(_HIDE.format(hidden=[hidden]) + "\nimport ember.torch\n" + statement)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "ModuleNotFoundError" in last and f"pip install {dist}" in last and "not installed" in last, last


def test_the_facade_imports_with_only_aten_and_autograd():
    hidden = ["ember.nn", "ember.optim", "ember.data", "ember.distributions"]
    done = run_python(
        _HIDE.format(hidden=hidden)
        + """
import ember.torch as torch
x = torch.ones(3, requires_grad=True)
(x * 2).sum().backward()
assert x.grad.tolist() == [2.0, 2.0, 2.0]
with torch.no_grad():
    assert not (x * 2).requires_grad
print("OK")
"""
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_install_as_torch_serves_import_torch():
    done = run_python(
        """
        import ember.torch, ember.nn, ember.data
        ember.torch.install_as_torch()
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.nn.modules.activation import MultiheadAttention
        assert torch is ember.torch
        assert nn is ember.nn and F is ember.nn.functional
        assert DataLoader is ember.data.DataLoader
        assert MultiheadAttention is ember.nn.MultiheadAttention
        assert torch.nn.Linear(2, 3)(torch.randn(1, 2)).shape == (1, 3)
        ember.torch.install_as_torch()  # idempotent
        print("OK")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_install_as_torch_refuses_when_another_torch_is_imported():
    done = run_python(
        """
        import sys, types
        sys.modules["torch"] = types.ModuleType("torch")
        import ember.torch
        try:
            ember.torch.install_as_torch()
        except RuntimeError as e:
            print(e)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "already imported" in done.stdout and "before anything imports torch" in done.stdout


@pytest.mark.parametrize("alias,layer", [("onnx", "ember.onnx"), ("fx", "ember.fx")])
def test_onnx_and_fx_are_the_ember_layers(alias, layer):
    # a stand-in module for the layer (the torch test session does not install ember-onnx / ember-fx)
    done = run_python(
        f"""
        import importlib, importlib.machinery, sys, types
        try:
            importlib.import_module({layer!r})
        except ImportError:
            m = types.ModuleType({layer!r})
            m.__spec__ = importlib.machinery.ModuleSpec({layer!r}, None)
            m.export = m.capture = object()
            sys.modules[{layer!r}] = m
        layer = sys.modules[{layer!r}]
        import ember.torch as torch
        import ember.torch.{alias}
        assert ember.torch.{alias} is layer, ember.torch.{alias}
        assert torch.{alias} is layer
        print("OK")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OK"


def test_sparse_names():
    assert torch.sparse is ea.sparse and importlib.import_module("ember.torch.sparse") is ea.sparse
    assert torch.sparse_coo is ea.sparse_coo and torch.sparse_coo_tensor is ea.sparse_coo_tensor
    assert torch.spmm is ea.spmm and torch.optim.SparseAdam is ember.optim.SparseAdam
