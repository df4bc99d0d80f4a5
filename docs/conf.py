"""Sphinx configuration of ember's docs (built by `nox -s docs`, warnings are errors).

Pages are Markdown (MyST); the API reference under api/ is reStructuredText with
autodoc, so it imports the installed ember packages (the docs session installs every
layer's wheel first).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree

project = "ember"
author = "the ember authors"
copyright = "the ember authors, BSD-3-Clause"
release = version = (Path(__file__).resolve().parents[1] / "VERSION").read_text().strip()

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: `#anchor` links to headings, ::: fences for directives.
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# autodoc: document what each page lists explicitly, in source order, without
# importing anything that is not installed.
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures carry PyTorch's names; the annotations are mostly Any
# Signatures come from the functions themselves: many docstrings open with PyTorch's
# signature line followed by prose ("elu(input, alpha=1.0) -> x if x > 0 else ..."),
# which is not a Python signature.
autodoc_docstring_signature = False
autodoc_default_options = {"undoc-members": False}
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_title = f"ember {release}"
html_static_path: list[str] = []


# ember's docstrings are written to be read with help(): mostly plain text with ``code``
# and >>> examples, sometimes with characters reStructuredText reads as markup (|x|,
# *args, clip_grad_norm_). A docstring that does not parse cleanly on its own is shown
# verbatim instead of failing the build, so packages need not write for Sphinx.
_CLEAN = {"report_level": 2, "halt_level": 5, "warning_stream": io.StringIO(), "file_insertion_enabled": False}


def _parses_cleanly(text: str) -> bool:
    stream = io.StringIO()
    try:
        doctree = publish_doctree(text, settings_overrides=dict(_CLEAN, warning_stream=stream))
    except Exception:
        return False
    if stream.getvalue() or next(iter(doctree.findall(nodes.problematic)), None) is not None:
        return False
    return not any(m["level"] >= 2 for m in doctree.findall(nodes.system_message))


def _verbatim_if_not_rst(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    text = "\n".join(lines).strip()
    if not text or _parses_cleanly(text):
        return
    lines[:] = ["::", ""] + ["    " + line if line else "" for line in lines] + [""]


# Pages added to docs/ without an entry in index.md still get built and reached: they
# are listed in a "More" toctree in place of the "% other-pages" line.
_HERE = Path(__file__).resolve().parent


def _other_pages(app: Any, docname: str, source: list[str]) -> None:
    if docname != "index":
        return
    text = source[0]
    listed = set()
    for block in text.split("```{toctree}")[1:]:
        listed |= {line.strip() for line in block.split("```", 1)[0].splitlines()}
    others = sorted(
        p.relative_to(_HERE).with_suffix("").as_posix()
        for p in _HERE.rglob("*.md")
        if "_build" not in p.parts and p.stem != "index" and p.parent == _HERE
    )
    others = [d for d in others if d not in listed]
    block = "```{toctree}\n:maxdepth: 1\n:caption: More\n\n" + "\n".join(others) + "\n```\n" if others else ""
    source[0] = text.replace("% other-pages\n", block)


def setup(app: Any) -> None:
    app.connect("autodoc-process-docstring", _verbatim_if_not_rst, priority=900)
    app.connect("source-read", _other_pages)
