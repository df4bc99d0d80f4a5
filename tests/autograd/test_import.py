"""ember.autograd installs with only the layers below it, imports, and plugs itself into aten."""

import importlib
import importlib.metadata
import os


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.autograd")
    assert mod.__version__ == importlib.metadata.version("ember-autograd")
    for name in ("backward", "grad", "Function", "no_grad", "gradcheck", "functional"):
        assert name in mod.__all__


def test_entry_point_is_registered() -> None:
    eps = importlib.metadata.entry_points(group="ember.aten.plugins")
    assert any(ep.value == "ember.autograd._plugin:load" for ep in eps)


def test_aten_alone_gives_gradients() -> None:
    # importing ember.aten loads the plugin: no import of ember.autograd needed
    import ember.aten as ea

    x = ea.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(ea.tensor([1.0, 1.0]))
    assert x.grad.tolist() == [2.0, 4.0]


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
