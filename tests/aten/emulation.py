"""The host emulation of ember.aten's CUDA kernels, for the tests in tests/aten/cuda/.

It lives in the test-only module ``ember_aten_testing`` (packages/aten/testing), not in the
shipped ``ember.aten._C``: ``nox -s build`` builds it for a CUDA build of ember-aten and the
aten test session installs it. ``ember_aten_testing`` is that module, or None where it is not installed (a
CPU-only build has no CUDA kernels to emulate); ``requires_emulation`` skips a test then.
``tests/aten/test_no_test_code_shipped.py`` fails when a CUDA build's test session lacks it.

The emulation checks the kernels' arithmetic and indexing only -- not launches, shared
memory, synchronisation, atomics or device memory (that takes a GPU run).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest


def _load() -> ModuleType | None:
    try:
        return importlib.import_module("ember_aten_testing")
    except ImportError:
        return None


# Any: the compiled module has no stubs (and is None without it; the tests using it are skipped then)
ember_aten_testing: Any = _load()
requires_emulation = pytest.mark.skipif(
    ember_aten_testing is None,
    reason="no ember_aten_testing (a CPU-only build, or a venv the aten tests did not set up)",
)
