"""ember.aten builds against ember.c10py and imports with only ember-c10py installed."""

import importlib
import importlib.metadata
import os

import ember.aten


def test_version_matches_metadata() -> None:
    assert ember.aten.__version__ == importlib.metadata.version("ember-aten")


def test_no_autograd_needed() -> None:
    layers = os.environ.get("EMBER_TEST_LAYERS")
    if layers:
        assert "autograd" not in layers.split(",")
        try:
            importlib.import_module("ember.autograd")
            present = True
        except ImportError:
            present = False
        assert not present


def test_backward_without_autograd_says_what_to_install() -> None:
    import pytest

    t = ember.aten.tensor([1.0, 2.0])
    if "backward" in ember.aten._tensor._autograd_hooks:
        pytest.skip("ember-autograd is installed")
    with pytest.raises(RuntimeError, match="ember-autograd"):
        t.backward()
