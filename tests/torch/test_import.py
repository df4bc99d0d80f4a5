"""ember.torch installs with the layers it names (its session has all of them) and imports."""

import importlib
import importlib.metadata


def test_imports_and_version() -> None:
    mod = importlib.import_module("ember.torch")
    assert mod.__version__ == importlib.metadata.version("ember-torch")
    assert {"nn", "optim", "utils", "distributions", "autograd", "cuda", "jit"} <= set(dir(mod))
