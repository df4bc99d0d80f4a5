"""Every layer installs together and imports."""

import importlib


def test_all_layers_import() -> None:
    for layer in ("c10py", "aten", "autograd", "nn", "optim", "data"):
        importlib.import_module(f"ember.{layer}")
