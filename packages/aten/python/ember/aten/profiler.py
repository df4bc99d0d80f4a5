"""Operator profiler: ``with profile() as prof: ...; print(prof.key_averages().table())``.

Like the dispatch trace, it is a dispatcher key: inside ``profile()`` every call on this
thread carries the Profiler key, whose fallback times the call and redispatches below
itself. Nested calls (a composite's parts, an autograd kernel's backend call) are timed
too; an event's *self* time is its total minus the totals of the events directly inside
it. ``record_function("name")`` adds a user range the same way. Times are wall-clock
(``time.perf_counter_ns``) in microseconds, as PyTorch's CPU columns.

CUDA times are not measured: kernels on a GPU are asynchronous, and ember does not yet
record CUDA events around them (``ProfilerActivity.CUDA`` is accepted and ignored).
"""

from __future__ import annotations

import enum
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ember.c10py import DispatchKey, DispatchKeySet

from . import _dispatch

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerActivity", "profile", "record_function"]

PROFILER_KEYS = DispatchKeySet(DispatchKey.Profiler).raw


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"


class FunctionEvent:
    """One timed call: name, start/end (ns since the profile began), input shapes, children."""

    __slots__ = ("children", "end_ns", "id", "input_shapes", "is_user_annotation", "name", "start_ns", "thread")

    def __init__(
        self, id: int, name: str, start_ns: int, input_shapes: list[Any], thread: int, is_user_annotation: bool = False
    ) -> None:
        self.id = id
        self.name = name
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.input_shapes = input_shapes
        self.thread = thread
        self.children: list[FunctionEvent] = []
        self.is_user_annotation = is_user_annotation

    @property
    def cpu_time_total(self) -> float:
        """Total time in microseconds."""
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.children)

    def __repr__(self) -> str:
        return f"<FunctionEvent {self.name} cpu_time_total={self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    """Events of one name (and input shapes, when grouped by them) summed up."""

    def __init__(self, key: str, input_shapes: str = "") -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, e: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total

    @property
    def cpu_time(self) -> float:
        """Average total time per call (microseconds)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


def _fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = {
    "cpu_time_total": lambda a: a.cpu_time_total,
    "self_cpu_time_total": lambda a: a.self_cpu_time_total,
    "cpu_time": lambda a: a.cpu_time,
    "count": lambda a: a.count,
}


class EventList(list):  # type: ignore[type-arg]
    """A list of events (or averages) that prints as PyTorch's profiler table."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, header: str | None = None) -> str:
        rows: list[Any] = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"table: sort_by must be one of {sorted(_SORT_KEYS)}, got {sort_by!r}")
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        self_total = sum(a.self_cpu_time_total for a in self)
        shapes = any(getattr(a, "input_shapes", "") for a in rows)
        cols = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        if shapes:
            cols.append("Input Shapes")
        body = []
        for a in rows:
            pct = (lambda x: f"{100.0 * x / self_total:.2f}%") if self_total else (lambda x: "0.00%")
            cells = [
                a.key,
                pct(a.self_cpu_time_total),
                _fmt_us(a.self_cpu_time_total),
                pct(a.cpu_time_total),
                _fmt_us(a.cpu_time_total),
                _fmt_us(a.cpu_time),
                str(a.count),
            ]
            if shapes:
                cells.append(a.input_shapes)
            body.append(cells)
        widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(cols)]
        name_w = min(widths[0], 55)
        widths[0] = name_w

        def line(cells: list[str]) -> str:
            first = cells[0] if len(cells[0]) <= name_w else cells[0][: name_w - 3] + "..."
            parts = [first.ljust(name_w)] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
            return "  ".join(parts)

        sep = "-" * len(line(cols))
        out = [sep] if header is None else [header, sep]
        out += [line(cols), sep, *(line(r) for r in body), sep, f"Self CPU time total: {_fmt_us(self_total)}", ""]
        return "\n".join(out)


class _ThreadState(threading.local):
    stack: list[FunctionEvent] | None = None
    prof: profile | None = None


_tls = _ThreadState()


def _shapes(args: tuple[Any, ...]) -> list[Any]:
    """PyTorch's "Input Shapes": a tensor's sizes, a tensor list's list of sizes, [] otherwise."""
    out: list[Any] = []
    for a in args:
        if hasattr(a, "_impl"):
            out.append(list(a.shape))
        elif isinstance(a, (list, tuple)) and a and hasattr(a[0], "_impl"):
            out.append([list(t.shape) for t in a])
        else:
            out.append([])
    return out


def _profiler_fallback(op: _dispatch.OpOverload, ks: int, *args: Any) -> Any:
    prof = _tls.prof
    if prof is None:
        return op.redispatch(ks, *args)
    ev = prof._begin(op.full_name, _shapes(args) if prof.record_shapes else [])
    try:
        return op.redispatch(ks, *args)
    finally:
        prof._end(ev)


class profile:
    """Profile the operator calls of this thread inside the block.

    ``activities`` (ProfilerActivity.CPU / CUDA), ``record_shapes`` (group by input shapes
    in ``key_averages(group_by_input_shape=True)``). The other PyTorch arguments are
    accepted for compatibility and have no effect here.
    """

    def __init__(
        self,
        activities: Iterable[ProfilerActivity] | None = None,
        *,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        enabled: bool = True,
        **_: Any,
    ) -> None:
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.record_shapes = record_shapes
        self.enabled = enabled
        self._events: list[FunctionEvent] = []  # top-level events, in start order
        self._all: list[FunctionEvent] = []
        self._t0 = 0
        self._prev: tuple[Any, Any, int] | None = None

    # ---- recording ----
    def _begin(self, name: str, shapes: list[Any], user: bool = False) -> FunctionEvent:
        stack = _tls.stack
        assert stack is not None
        ev = FunctionEvent(len(self._all), name, time.perf_counter_ns() - self._t0, shapes, threading.get_ident(), user)
        (stack[-1].children if stack else self._events).append(ev)
        self._all.append(ev)
        stack.append(ev)
        return ev

    def _end(self, ev: FunctionEvent) -> None:
        ev.end_ns = time.perf_counter_ns() - self._t0
        stack = _tls.stack
        assert stack is not None
        stack.pop()

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if _tls.prof is not None:
            raise RuntimeError("profile: a profiler is already active on this thread")
        if _dispatch.fallback_for(DispatchKey.Profiler) is None:
            _dispatch.register_fallback(
                DispatchKey.Profiler, _profiler_fallback, name="ember.aten.profiler:_profiler_fallback"
            )
        self._prev = (_tls.prof, _tls.stack, _dispatch.included_keys())
        _tls.prof, _tls.stack = self, []
        self._t0 = time.perf_counter_ns()
        _dispatch.set_included(self._prev[2] | PROFILER_KEYS)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled or self._prev is None:
            return
        prof, stack, keys = self._prev
        _dispatch.set_included(keys)
        _tls.prof, _tls.stack = prof, stack
        self._prev = None

    # ---- results ----
    def events(self) -> EventList:
        """Every recorded event (operators and record_function ranges), in start order."""
        return EventList(sorted(self._all, key=lambda e: e.start_ns))

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        groups: dict[tuple[str, str], FunctionEventAvg] = {}
        for e in self._all:
            shapes = str(e.input_shapes) if group_by_input_shape else ""
            avg = groups.get((e.name, shapes))
            if avg is None:
                avg = groups[(e.name, shapes)] = FunctionEventAvg(e.name, shapes)
            avg.add(e)
        return EventList(groups.values())

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the events in the Trace Event format (Perfetto / chrome://tracing open it)."""
        pid = os.getpid()
        trace = []
        for e in self.events():
            ev: dict[str, Any] = {
                "ph": "X",
                "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                "name": e.name,
                "pid": pid,
                "tid": e.thread,
                "ts": e.start_ns / 1000.0,
                "dur": (e.end_ns - e.start_ns) / 1000.0,
                "args": {"External id": e.id},
            }
            if e.input_shapes:
                ev["args"]["Input Dims"] = e.input_shapes
            trace.append(ev)
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


F = TypeVar("F", bound=Callable[..., Any])


class record_function:
    """A named range in the profile (context manager or decorator); free when not profiling."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self._ev: FunctionEvent | None = None
        self._prof: profile | None = None

    def __enter__(self) -> record_function:
        prof = _tls.prof
        if prof is not None:
            self._prof = prof
            self._ev = prof._begin(self.name, [], user=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._prof is not None and self._ev is not None:
            self._prof._end(self._ev)
        self._prof = self._ev = None

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
