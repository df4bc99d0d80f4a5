"""ember.fx installs with only the layers below it (c10py, aten, autograd, nn, optim) and imports."""

import importlib
import importlib.metadata
import os


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.fx")
    assert mod.__version__ == importlib.metadata.version("ember-fx")
    for name in ("capture", "compile", "Graph", "Node", "Value", "GraphModule", "Interpreter", "DataDependentError"):
        assert name in mod.__all__
        assert hasattr(mod, name)


def test_higher_layers_are_not_installed() -> None:
    installed = set(os.environ.get("EMBER_TEST_LAYERS", "").split(","))
    if installed == {""}:
        return
    assert "data" not in installed
    try:
        importlib.import_module("ember.data")
        present = True
    except ImportError:
        present = False
    assert not present
