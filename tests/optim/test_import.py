"""ember.optim installs with only the layers below it, imports, and never imports ember.nn."""

import importlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.optim")
    assert mod.__version__ == importlib.metadata.version("ember-optim")
    for name in ("Optimizer", "SGD", "Adam", "AdamW"):
        assert name in mod.__all__
        assert hasattr(mod, name)


def test_does_not_import_nn() -> None:
    code = "import sys, ember.optim, ember.optim.lr_scheduler; print('ember.nn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_higher_layers_are_not_installed() -> None:
    installed = set(os.environ.get("EMBER_TEST_LAYERS", "").split(","))
    for layer in ("c10py", "aten", "autograd", "nn", "optim", "data"):
        try:
            importlib.import_module(f"ember.{layer}")
            present = True
        except ImportError:
            present = False
        if installed != {""}:
            assert present == (layer in installed), layer


def test_swa_utils_needs_the_nn_extra() -> None:
    has_nn = importlib.util.find_spec("ember.nn") is not None
    code = "import ember.optim.swa_utils as s; print(s.AveragedModel.__mro__[1].__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if has_nn:
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().startswith("ember.nn")
    else:
        assert out.returncode != 0
        assert "ImportError: ember.optim.swa_utils needs ember-nn" in out.stderr
        assert "pip install 'ember-optim[swa]'" in out.stderr
