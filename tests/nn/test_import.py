"""ember.nn installs with only the layers below it and imports; its public names exist."""

import importlib
import importlib.metadata
import os


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.nn")
    assert mod.__version__ == importlib.metadata.version("ember-nn")
    for name in mod.__all__:
        assert hasattr(mod, name), name
    assert {"Module", "Linear", "Sequential", "Parameter", "functional", "init"} <= set(mod.__all__)


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
