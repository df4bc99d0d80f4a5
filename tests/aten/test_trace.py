"""Dispatch trace: one line per operator call with its keys, kernel and source location."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import ember.aten as ea
from ember.aten import _dispatch

ATEN_ROOT = Path(__file__).resolve().parents[2] / "packages" / "aten"


def _trace(fn, **kw):  # type: ignore[no-untyped-def]
    buf = io.StringIO()
    with ea.trace_dispatch(file=buf, **kw):
        fn()
    return buf.getvalue().splitlines()


def test_add_line_by_line() -> None:
    a, b = ea.ones(3), ea.ones(3)
    lines = _trace(lambda: ea.add(a, b))
    assert lines[0] == "aten::add.Tensor(Tensor[float32 (3,)], Tensor[float32 (3,)], 1) keys=[CPU]"
    m = re.fullmatch(r"  CPU: (\w+) \((csrc/[\w/]+\.cpp):(\d+)\)", lines[1])
    assert m is not None, lines[1]
    assert m.group(1) == "add_out"
    # the reported file and line are where the kernel is defined
    src = (ATEN_ROOT / m.group(2)).read_text().splitlines()
    assert "add_out" in src[int(m.group(3)) - 1]
    assert len(lines) == 2


def test_composite_calls_nest() -> None:
    x = ea.ones(2, 3)
    lines = _trace(lambda: x.flatten())
    assert lines[0].startswith("aten::flatten.using_ints(Tensor[float32 (2,3)], 0, -1) keys=[CPU]")
    assert lines[1].startswith("  CPU [CompositeImplicitAutograd]: ember.aten.native.shape:flatten_using_ints (")
    # the composite's own calls are printed one level deeper
    inner = [ln for ln in lines[2:] if ln.startswith("  aten::")]
    assert inner, lines
    assert all(ln.startswith("  ") for ln in lines[2:])


def test_filter_by_op_name() -> None:
    a = ea.ones(3)
    lines = _trace(lambda: (a + a).exp().sum(), ops=["exp"])
    assert [ln for ln in lines if not ln.startswith(" ")] == ["aten::exp(Tensor[float32 (3,)]) keys=[CPU]"]


def test_off_after_the_block_and_no_trace_keys_left() -> None:
    buf = io.StringIO()
    with ea.trace_dispatch(file=buf):
        pass
    assert _dispatch.included_keys() == 0
    ea.ones(2) + 1
    assert buf.getvalue() == ""


def test_nested_blocks_restore_the_outer_stream() -> None:
    outer, inner = io.StringIO(), io.StringIO()
    a = ea.ones(1)
    with ea.trace_dispatch(file=outer):
        with ea.trace_dispatch(file=inner):
            a.neg()
        a.abs()
    assert "aten::neg" in inner.getvalue() and "aten::abs" not in inner.getvalue()
    assert "aten::abs" in outer.getvalue() and "aten::neg" not in outer.getvalue()


def test_results_unchanged_by_tracing() -> None:
    x = ea.arange(6.0).reshape(2, 3)
    with ea.trace_dispatch(file=io.StringIO()):
        y = (x * 2).sum(1)
    assert y.tolist() == [6.0, 24.0]


def test_environment_variable_traces_to_stderr() -> None:
    code = "import ember.aten as ea; ea.ones(2).neg()"
    env = dict(os.environ, EMBER_TRACE_DISPATCH="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "aten::neg(Tensor[float32 (2,)]) keys=[CPU]" in r.stderr.splitlines()
