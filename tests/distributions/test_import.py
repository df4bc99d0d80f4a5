"""ember.distributions installs with only the layers below it (c10py, aten, autograd) and imports."""

import importlib
import importlib.metadata
import importlib.util
import os


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.distributions")
    assert mod.__version__ == importlib.metadata.version("ember-distributions")
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_higher_layers_are_not_installed() -> None:
    installed = set(os.environ.get("EMBER_TEST_LAYERS", "").split(","))
    if installed == {""}:
        return  # run outside nox: nothing to compare with
    for layer in ("c10py", "aten", "autograd", "nn", "optim", "data", "distributions", "torch"):
        assert (importlib.util.find_spec(f"ember.{layer}") is not None) == (layer in installed), layer
