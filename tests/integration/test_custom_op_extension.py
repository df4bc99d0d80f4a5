"""examples/custom_op built as a separate package against the installed ember wheels.

The wheel is built without build isolation (the build requirements -- scikit-build-core,
pybind11, ember-aten -- are those installed here), installed into a temporary folder,
and every ```python block of docs/writing_an_extension.md (```py blocks are excerpts,
not run) runs in a fresh interpreter that has that folder on its path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_op"
DOC = ROOT / "docs" / "writing_an_extension.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("custom_op")
    wheels, target = tmp / "wheels", tmp / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-w",
            str(wheels),
            str(EXAMPLE),
            f"-Cbuild-dir={tmp / 'build'}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    (wheel,) = wheels.glob("ember_custom_op_example-*.whl")
    inst = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert inst.returncode == 0, inst.stderr
    return target


def _run(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _doc_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_runnable_blocks() -> None:
    assert len(_doc_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(_doc_blocks())))
def test_doc_block_runs(site: Path, index: int) -> None:
    r = _run(site, _doc_blocks()[index])
    assert r.returncode == 0, r.stderr


def test_kernel_errors_and_source_location(site: Path) -> None:
    code = """
import io
import ember.aten as ea
import ember_custom_op
try:
    ember_custom_op.my_add(ea.ones(2), ea.ones(3))
except RuntimeError as e:
    print("ERR", e)
try:
    ember_custom_op.my_add(ea.ones(2, dtype=ea.int64), ea.ones(2, dtype=ea.int64))
except RuntimeError as e:
    print("ERR", e)
buf = io.StringIO()
with ea.trace_dispatch(file=buf):
    ember_custom_op.my_add(ea.ones(2, dtype=ea.float64), ea.ones(2, dtype=ea.float64))
print(buf.getvalue())
"""
    r = _run(site, code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "ERR my_add: x and y must have the same shape, got float32[2] and float32[3]"
    assert lines[1].startswith("ERR my_add: expected float32 or float64 tensors")
    m = re.search(r"CPU: my_add_cpu \((.*my_add\.cpp):(\d+)\)", r.stdout)
    assert m is not None, r.stdout
    src = (EXAMPLE / "csrc" / "my_add.cpp").read_text().splitlines()
    assert src[int(m.group(2)) - 1].startswith("EMBER_LIBRARY_IMPL(myops, CPU, m)")


@pytest.mark.cuda
def test_cuda_kernel(site: Path) -> None:
    code = """
import ember.aten as ea
import ember.c10py
import ember_custom_op
if not ember.c10py.cuda.is_available():
    raise SystemExit(77)
x = ea.arange(5.0).cuda()
print(ember_custom_op.my_add(x, x).cpu().tolist())
"""
    r = _run(site, code)
    if r.returncode == 77:
        pytest.skip("no CUDA device")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0.0, 3.0, 6.0, 9.0, 12.0]"
