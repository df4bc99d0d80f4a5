"""tests/autograd: the OpInfo database of tests/aten (it needs only ember.aten) and helpers.py are importable."""

from __future__ import annotations

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "aten"))
sys.path.insert(0, _HERE)


@pytest.fixture(params=["cpp", "python"])
def engine_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test with each of the engine's loops: aten's C++ run_backward_graph and engine.py's
    _run_graph, its reference (``pytestmark = pytest.mark.usefixtures("engine_loop")``)."""
    from ember.autograd import engine

    monkeypatch.setattr(engine, "PYTHON_LOOP", request.param == "python")
    return str(request.param)
