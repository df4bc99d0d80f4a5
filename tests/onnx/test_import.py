"""ember.onnx installs with only the layers below it (and onnx, onnxruntime) and imports."""

import importlib
import importlib.metadata


def test_imports_with_only_lower_layers() -> None:
    mod = importlib.import_module("ember.onnx")
    assert mod.__version__ == importlib.metadata.version("ember-onnx")
    for name in ("export", "register_symbolic", "unregister_symbolic", "UnsupportedOperatorError"):
        assert name in mod.__all__
        assert hasattr(mod, name)
