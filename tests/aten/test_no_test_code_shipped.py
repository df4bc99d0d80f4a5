"""No test-only code in the shipped ember-aten: the host emulation of the CUDA kernels lives
in the test-only module ember_aten_testing (packages/aten/testing), which the aten test
session installs beside the wheel and which the wheel never contains."""

from __future__ import annotations

import importlib.metadata
import os
import re
from pathlib import Path

import ember.aten as ea
import pytest
from emulation import ember_aten_testing

# the names the emulation had in _C, and any like them
TEST_ONLY_NAME = re.compile(r"emulat|_cuda_loops_", re.IGNORECASE)


def _shipped_files() -> list[Path]:
    dist = importlib.metadata.distribution("ember-aten")
    return [Path(str(dist.locate_file(f))) for f in dist.files or []]


def test_shipped_C_exposes_no_emulation() -> None:
    assert [name for name in dir(ea._C) if TEST_ONLY_NAME.search(name)] == []


def test_shipped_wheel_holds_no_testing_module() -> None:
    files = _shipped_files()
    assert any(p.name.startswith("_C.") for p in files), "ember-aten's RECORD lists its files"
    assert [p for p in files if "ember_aten_testing" in p.name or "Emulation" in p.name] == []


# the identifiers the emulation is made of (cuda_softmax_emulation, softmax_emulated, SlotSwap,
# namespace cuda_emulation); the CUDA runtime linked into libember_aten has an error message
# of its own about a "device emulation mode", which is not ember's
EMULATION_SYMBOL = re.compile(rb"\w+_emulat\w*|\w*emulated\w*|SlotSwap|cuda_emulation")


def test_shipped_libraries_hold_no_emulation_code() -> None:
    libraries = [p for p in _shipped_files() if p.suffix == ".so" or ".so." in p.name]
    assert libraries, "ember-aten ships _C and libember_aten"
    for lib in libraries:
        assert EMULATION_SYMBOL.findall(lib.read_bytes()) == [], lib.name


def test_testing_module_is_apart_from_ember_aten() -> None:
    if ember_aten_testing is None:
        # the aten test session of a CUDA build installs it (noxfile.py); elsewhere it may be absent
        assert not (ea._C._built_with_cuda and os.environ.get("EMBER_TEST_LAYERS")), (
            "a CUDA build's aten test session must have ember_aten_testing (nox -s build makes it)"
        )
        pytest.skip("no ember_aten_testing: a CPU-only build, or a venv without it")
    origin = Path(ember_aten_testing.__file__)
    assert origin not in _shipped_files()
    assert importlib.metadata.distribution("ember-aten-testing").metadata["Name"] == "ember-aten-testing"
    assert ember_aten_testing.cuda_softmax_emulation(False) is False  # off unless a test turns it on
