"""Shared by the tests of every layer: CUDA devices in tests.

It imports only ember.c10py (the bottom layer, installed for every layer's tests).

- ``@pytest.mark.cuda``: the test needs a CUDA device. Without one (no GPU, no driver,
  or a build without CUDA) it is deselected at collection; the summary says how many
  and the runtime's reason.
- fixture ``requires_cuda``: the same, for a test or fixture that asks for it by name.
- an argument named ``device``: the test runs once with ``"cpu"`` and once with
  ``"cuda"`` (marked ``cuda``, so skipped without a GPU) -- unless the test parametrizes
  ``device`` itself. tests/aten/conftest.py pairs ``device`` with its CPU-capability
  argument (``capability``) so that CUDA runs once, not once per CPU capability.

    def test_add(device):                      # test_add[cpu], test_add[cuda]
        x = ea.ones(3, device=device)

Select the CUDA tests with ``-m cuda`` (benchmarks/gpu_check.sh does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ember.c10py import cuda as _cuda

CUDA_AVAILABLE: bool = bool(_cuda.is_available())
CUDA_SKIP_REASON = f"needs a CUDA GPU ({_cuda.availability_error() or 'no CUDA device found'})"

# The values of a `device` argument.
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda, id="cuda")]


def _parametrized_by_mark(metafunc: pytest.Metafunc, name: str) -> bool:
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" not in metafunc.fixturenames or _parametrized_by_mark(metafunc, "device"):
        return
    if "capability" in metafunc.fixturenames:
        return  # tests/aten/conftest.py parametrizes (device, capability) together
    metafunc.parametrize("device", DEVICES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a CUDA device the ``cuda`` items are deselected (cheaper than tens of
    thousands of skips: the device-parametrised OpInfo tests double the item count);
    the run's summary says how many and why."""
    if CUDA_AVAILABLE:
        return
    keep = [item for item in items if item.get_closest_marker("cuda") is None]
    if len(keep) == len(items):
        return
    dropped = [item for item in items if item.get_closest_marker("cuda") is not None]
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep
    _DESELECTED.append(len(dropped))


_DESELECTED: list[int] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _DESELECTED:
        terminalreporter.write_line(f"cuda: {sum(_DESELECTED)} tests marked cuda deselected: {CUDA_SKIP_REASON}")


@pytest.fixture
def requires_cuda() -> Iterator[None]:
    """Skips the test without a CUDA device (prefer ``@pytest.mark.cuda``, which also selects it)."""
    if not CUDA_AVAILABLE:
        pytest.skip(CUDA_SKIP_REASON)
    yield
