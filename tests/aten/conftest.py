"""tests/aten: make the opinfo package importable and provide the CPU-capability fixture.

A test taking ``capability`` runs once per CPU capability this machine has and the
build compiled (the DispatchStub slots). If it also takes ``device`` (see tests/conftest.py), the CPU
runs are once per capability and the CUDA run once, with the capability untouched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import ember.aten as ea

_ORDER = ["default", "avx2", "avx512"]


def available_capabilities() -> list[str]:
    """The capabilities this CPU runs and this build compiled kernels for (a development
    build compiles the baseline and the machine's best only; see noxfile.py)."""
    best = ea._C._detected_cpu_capability()
    built = set(ea._C._built_cpu_capabilities())
    return [c for c in _ORDER[: _ORDER.index(best) + 1] if c in built]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "capability" not in metafunc.fixturenames:
        return
    caps = available_capabilities()
    if "device" in metafunc.fixturenames:
        combos = [pytest.param("cpu", c, id=f"cpu-{c}") for c in caps]
        combos.append(pytest.param("cuda", None, id="cuda", marks=pytest.mark.cuda))
        metafunc.parametrize(("device", "capability"), combos, indirect=["capability"])
    else:
        metafunc.parametrize("capability", caps, indirect=True)


@pytest.fixture
def capability(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The CPU capability (DispatchStub slot) the test runs with (None: a CUDA run, unchanged)."""
    cap = request.param
    if cap is None:
        yield None
        return
    previous = ea._C._get_cpu_capability()
    ea._C._set_cpu_capability(cap)
    try:
        yield cap
    finally:
        ea._C._set_cpu_capability(previous)
