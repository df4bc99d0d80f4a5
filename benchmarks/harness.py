"""Timing harness: medians of repeated runs, ember vs NumPy vs PyTorch, in one process.

A workload is a function returning {backend: zero-argument callable} (backends it
cannot run are left out), optionally with "info" (text appended to its name) and
"check" (a requirement it found broken: bench.py then exits non-zero). Each
callable is warmed up, then timed in batches sized so one batch takes ~20 ms;
the median over batches is reported (machines are noisy: compare ratios
measured in the same run, never across runs).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

BACKENDS = ("ember", "numpy", "torch")


@dataclass
class Result:
    name: str
    unit: str
    seconds: dict[str, float] = field(default_factory=dict)
    note: str = ""
    failed_check: str = ""  # a workload's own requirement that did not hold (e.g. memory not flat)

    def ratio(self, other: str) -> float | None:
        if "ember" not in self.seconds or other not in self.seconds:
            return None
        return self.seconds["ember"] / self.seconds[other]


def time_callable(
    fn: Callable[[], Any], *, min_batch_time: float = 0.02, batches: int = 7, max_total: float = 3.0
) -> float:
    """Median seconds per call."""
    fn()
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_batch_time or n >= 1 << 20:
            break
        n *= 2
    samples = []
    start = time.perf_counter()
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
        if time.perf_counter() - start > max_total:
            break
    return statistics.median(samples)


def run(
    workloads: list[tuple[str, str, Callable[[], dict[str, Callable[[], Any]]]]], only: str | None = None
) -> list[Result]:
    results = []
    wanted = [w for w in only.split(",") if w] if only else []
    for name, unit, make in workloads:
        if wanted and not any(w in name for w in wanted):
            continue
        try:
            fns = make()
        except Exception as e:  # a workload whose layer is missing is reported, not fatal
            results.append(Result(name, unit, note=f"not run: {type(e).__name__}: {e}"))
            continue
        # a workload may add a line of its own (peak memory, ...) to its name under "info"
        r = Result(name + fns.pop("info", ""), unit, failed_check=fns.pop("check", ""))
        for backend in BACKENDS:
            if backend in fns:
                r.seconds[backend] = time_callable(fns[backend])
        results.append(r)
    return results


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def table(results: list[Result]) -> str:
    rows = [("workload", "ember", "NumPy", "PyTorch", "ember/NumPy", "ember/PyTorch")]
    for r in results:
        if r.note:
            rows.append((r.name, r.note, "", "", "", ""))
            continue
        rn, rt = r.ratio("numpy"), r.ratio("torch")
        rows.append(
            (
                r.name,
                _fmt(r.seconds.get("ember")),
                _fmt(r.seconds.get("numpy")),
                _fmt(r.seconds.get("torch")),
                f"{rn:.2f}x" if rn else "-",
                f"{rt:.2f}x" if rt else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
        if i == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def write_json(results: list[Result], path: str, meta: dict[str, Any]) -> None:
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": [asdict(r) for r in results]}, f, indent=2)
