"""The operator profiler: counts, self/total times, the table, the Chrome trace JSON."""

from __future__ import annotations

import json
import time

import ember.aten as ea
import pytest
from ember.aten import _dispatch
from ember.aten.profiler import ProfilerActivity, profile, record_function


def test_counts_and_nesting() -> None:
    x = ea.ones(4, 4)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            y = x + x
        y.flatten()
    avgs = {a.key: a for a in prof.key_averages()}
    assert avgs["aten::add.Tensor"].count == 3
    flat = avgs["aten::flatten.using_ints"]
    assert flat.count == 1
    # flatten is a composite: its parts are its children, so its self time is below its total
    ev = next(e for e in prof.events() if e.name == "aten::flatten.using_ints")
    assert ev.children
    assert ev.self_cpu_time_total <= ev.cpu_time_total
    assert ev.cpu_time_total >= sum(c.cpu_time_total for c in ev.children)
    assert _dispatch.included_keys() == 0


def test_record_function_range_contains_its_ops() -> None:
    x = ea.ones(3)
    with profile() as prof:
        with record_function("my_block"):
            time.sleep(0.002)
            x.exp()
    ev = next(e for e in prof.events() if e.name == "my_block")
    assert [c.name for c in ev.children] == ["aten::exp"]
    assert ev.cpu_time_total >= 2000.0  # microseconds: the sleep is inside
    assert ev.self_cpu_time_total >= 1900.0


def test_record_function_outside_profile_is_free() -> None:
    @record_function("decorated")
    def f() -> int:
        return 7

    assert f() == 7


def test_group_by_input_shape() -> None:
    with profile(record_shapes=True) as prof:
        ea.ones(2) + ea.ones(2)
        ea.ones(3) + ea.ones(3)
        ea.ones(3) + ea.ones(3)
    groups = {(a.key, a.input_shapes): a.count for a in prof.key_averages(group_by_input_shape=True)}
    assert groups[("aten::add.Tensor", "[[2], [2], []]")] == 1
    assert groups[("aten::add.Tensor", "[[3], [3], []]")] == 2


def test_table_layout_and_sorting() -> None:
    x = ea.ones(64, 64)
    with profile() as prof:
        for _ in range(5):
            x.exp()
        x.neg()
    table = prof.key_averages().table(sort_by="count", row_limit=2)
    lines = table.splitlines()
    header = lines[1].split()
    assert header[:3] == ["Name", "Self", "CPU"]
    assert "# of Calls" in lines[1]
    rows = [ln for ln in lines[3:] if ln.startswith("aten::")]
    assert len(rows) == 2
    assert rows[0].startswith("aten::exp") and rows[0].split()[-1] == "5"
    assert lines[-1].startswith("Self CPU time total: ")
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="bogus")


def test_chrome_trace_is_valid_trace_event_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            ea.ones(2, 2).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert events, data
    for e in events:
        # Trace Event format: complete events need ph, name, ts, dur, pid, tid
        assert e["ph"] == "X"
        assert isinstance(e["name"], str) and isinstance(e["ts"], float) and e["dur"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    names = [e["name"] for e in events]
    assert names[0] == "outer"
    outer = events[0]
    assert all(outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] + 1e-3 for e in events[1:])
    assert any(e["cat"] == "cpu_op" and e["name"] == "aten::sum" for e in events)


def test_profile_not_reentrant_on_one_thread() -> None:
    with profile():
        with pytest.raises(RuntimeError, match="already active"):
            with profile():
                pass
