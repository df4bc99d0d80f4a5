"""ember.optim is a skeleton: it installs with only the layers below it and imports."""

import importlib
import importlib.metadata
import os


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.optim")
    assert mod.__version__ == importlib.metadata.version("ember-optim")
    assert mod.__all__ == []  # nothing pretends to be implemented


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
