"""ember.aten builds against ember.c10py's headers and library and imports."""

import importlib.metadata

import ember.aten
from ember.aten import _C


def test_imports_and_links_c10() -> None:
    assert ember.aten.__version__ == importlib.metadata.version("ember-aten")
    assert _C._c10_version_check() == "float32"
