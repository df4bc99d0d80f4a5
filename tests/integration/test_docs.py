"""Keeps docs/ honest without Sphinx (`nox -s docs` builds them; this runs with the tests).

- Every repository path a page mentions (`packages/...`, `tests/...`, `examples/...`,
  `benchmarks/...`, `docs/...`) exists. Placeholders (`packages/<layer>/`) and globs
  are not paths and are skipped.
- The ```python blocks of each page run, in order, in one fresh interpreter per page
  (a page reads like a session: later blocks may use names from earlier ones).
  ```py blocks are excerpts and are not run. docs/writing_an_extension.md needs the
  example extension built; tests/integration/test_custom_op_extension.py runs its blocks.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
RUN_ELSEWHERE = {"writing_an_extension.md"}  # run by test_custom_op_extension.py

_PATH = re.compile(r"(?<![\w./-])((?:packages|tests|examples|benchmarks|docs)/[\w./-]*)")
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def _mentioned_paths(text: str) -> list[str]:
    paths = []
    for m in _PATH.finditer(text):
        nxt = text[m.end() : m.end() + 1]
        if nxt in ("<", "*", "{"):  # packages/<layer>/..., tests/*/..., a placeholder
            continue
        paths.append(m.group(1).rstrip(".,:;"))
    return paths


def _id(p: Path) -> str:
    return str(p.relative_to(DOCS))


def test_pages_found() -> None:
    names = {p.name for p in PAGES}
    assert {"index.md", "architecture.md", "one_op_top_to_bottom.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_mentioned_paths_exist(page: Path) -> None:
    missing = sorted({p for p in _mentioned_paths(page.read_text()) if not (ROOT / p).exists()})
    assert not missing, f"{_id(page)} mentions paths that do not exist: {missing}"


def test_path_pattern_skips_placeholders() -> None:
    text = "see `packages/<layer>/src`, `tests/*/conftest.py` and packages/aten/native_functions.yaml."
    assert _mentioned_paths(text) == ["packages/aten/native_functions.yaml"]


_RUNNABLE = [p for p in PAGES if p.name not in RUN_ELSEWHERE and _PYTHON_BLOCK.search(p.read_text())]


@pytest.mark.parametrize("page", _RUNNABLE, ids=_id)
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    blocks = _PYTHON_BLOCK.findall(page.read_text())
    code = "\n".join(f"# --- block {i}\n{b}" for i, b in enumerate(blocks))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{_id(page)}: a ```python block failed\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
