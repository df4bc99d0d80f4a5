"""ember.vision installs with only the layers below it (and ember-fx for the capture test)."""

import importlib
import importlib.metadata
import os

import ember.aten as ea


def test_imports_and_version() -> None:
    mod = importlib.import_module("ember.vision")
    assert mod.__version__ == importlib.metadata.version("ember-vision")
    for sub in ("ops", "models", "transforms", "datasets"):
        assert hasattr(mod, sub)


def test_operators_are_in_the_vision_namespace() -> None:
    import ember.vision  # noqa: F401

    for name in ("deform_conv2d", "roi_align", "roi_pool", "nms", "_roi_align_backward", "_deform_conv2d_backward"):
        packet = getattr(ea.ops.vision, name)
        assert packet.overloads() == ["default"]
    schema = ea.ops.vision.roi_align.default.schema
    assert "sampling_ratio" in schema and "aligned" in schema


def test_higher_layers_are_not_installed() -> None:
    installed = set(os.environ.get("EMBER_TEST_LAYERS", "").split(","))
    if installed == {""}:
        return
    for layer in ("distributed", "torch", "onnx", "distributions"):
        assert layer not in installed
        try:
            importlib.import_module(f"ember.{layer}")
            present = True
        except ImportError:
            present = False
        assert not present, layer
