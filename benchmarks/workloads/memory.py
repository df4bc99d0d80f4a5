"""Memory: ember's allocations over a 1,000-step MLP training loop must stay flat.

The loop is the MLP of workloads/nn.py (784-256-128-10, batch 64) trained with
ember.optim.Adam, the usual zero_grad / forward / loss / backward / step. After a
warm-up of 10 steps (Adam's state exists by then) the live bytes at the end of each
step and the peak within each step must not grow: a leak of one tensor per step,
a graph kept alive by a stale reference, or a cache that only grows shows here.
The timed part is 100 steps of the same loop beside PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEPS = 1000
WARMUP = 10


def _loop(nn: Any, optim: Any, x: Any, y: Any) -> tuple[Any, Any]:
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step() -> None:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step, model


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((64, 784), dtype=np.float32), rng.integers(0, 10, 64)


def mlp_loop_memory() -> dict[str, Any]:
    """Runs 1,000 ember steps measuring memory, then returns 100-step loops to time."""
    import ember.aten as ea
    from ember import nn, optim
    from ember.c10py import memory_stats, reset_peak_memory_stats

    xs, ys = _data()
    x, y = ea.from_numpy(xs), ea.from_numpy(ys)
    step, _ = _loop(nn, optim, x, y)
    live, peaks = [], []
    for _ in range(STEPS):
        reset_peak_memory_stats()
        step()
        stats = memory_stats()
        live.append(stats["allocated_bytes"])
        peaks.append(stats["peak_allocated_bytes"])
    base_live, base_peak = live[WARMUP - 1], max(peaks[:WARMUP])
    grew_live = max(live[WARMUP:]) - base_live
    grew_peak = max(peaks[WARMUP:]) - base_peak
    flat = grew_live <= 0 and grew_peak <= 0
    mib = 2**20
    info = (
        f" [ember live {base_live / mib:.2f} MiB after step {WARMUP}, {live[-1] / mib:.2f} MiB after step {STEPS};"
        f" peak per step {base_peak / mib:.2f} -> {max(peaks[WARMUP:]) / mib:.2f} MiB: {'flat' if flat else 'GROWS'}]"
    )
    fns: dict[str, Any] = {"info": info}
    if not flat:
        fns["check"] = f"memory of the MLP loop grows: live +{grew_live} B, peak +{grew_peak} B over {STEPS} steps"

    def ember_100() -> None:
        for _ in range(100):
            step()

    fns["ember"] = ember_100
    try:
        import torch
    except ImportError:
        return fns
    tstep, _ = _loop(torch.nn, torch.optim, torch.from_numpy(xs), torch.from_numpy(ys))

    def torch_100() -> None:
        for _ in range(100):
            tstep()

    fns["torch"] = torch_100
    return fns


WORKLOADS = [
    (f"nn+optim: MLP Adam training loop, memory over {STEPS} steps", "100 steps", mlp_loop_memory),
]
