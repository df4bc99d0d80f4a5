"""ember.data installs and imports with only the layers below it."""

import importlib
import importlib.metadata
import os
import subprocess
import sys


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.data")
    assert mod.__version__ == importlib.metadata.version("ember-data")
    for name in ("DataLoader", "Dataset", "RandomSampler", "default_collate", "get_worker_info", "random_split"):
        assert name in mod.__all__ and hasattr(mod, name)
    assert mod.datasets.MNIST.__name__ == "MNIST"  # the datasets subpackage loads on first use


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


def test_data_imports_no_higher_layer() -> None:
    # Layering: ember.data stands on ember.aten and ember.c10py only.
    code = (
        "import sys, ember.data, ember.data.datasets; "
        "print(sorted(m for m in sys.modules if m.startswith('ember.') and m.split('.')[1] "
        "not in ('aten', 'c10py', 'data')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
