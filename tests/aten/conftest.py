"""tests/aten: make the opinfo package importable and provide the CPU-capability fixture."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import ember.aten as ea

_ORDER = ["default", "avx2", "avx512"]


def available_capabilities() -> list[str]:
    best = ea._C._detected_cpu_capability()
    return _ORDER[: _ORDER.index(best) + 1]


@pytest.fixture(params=available_capabilities())
def capability(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs the test once per CPU capability this machine has (DispatchStub slots)."""
    previous = ea._C._get_cpu_capability()
    ea._C._set_cpu_capability(request.param)
    try:
        yield request.param
    finally:
        ea._C._set_cpu_capability(previous)
