"""Per-op profile of one real-model training step: ember.aten.profiler beside torch.profiler.

    python benchmarks/profile_step.py lstm_lm [--steps 3] [--rows 15] [--threads 1]

Runs the training step of workloads/real_models.py SPECS[MODEL] in ember and in PyTorch
(same weights, same data), a warm-up step first, then profiles --steps steps of each and
prints both operator tables sorted by self CPU time, with the wall time per step. With
--unfused, ember's LSTM / GRU run the per-step composition instead of the fused layer
operators (the before/after of that change, from one build).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from workloads import real_models


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=sorted(real_models.SPECS))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--rows", type=int, default=15)
    p.add_argument("--threads", type=int, default=0, help="0: each framework's default")
    p.add_argument("--unfused", action="store_true", help="ember LSTM/GRU through the per-step composition")
    args = p.parse_args()

    import ember.aten as ea
    from ember.aten import profiler as eprof
    from ember.nn import _functional_rnn

    _functional_rnn.use_fused = not args.unfused
    if args.threads:
        ea.set_num_threads(args.threads)
    model, step = real_models.training_step(args.model, "ember")
    step()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    wall = (time.perf_counter() - t0) / args.steps
    with eprof.profile() as prof:
        for _ in range(args.steps):
            step()
    print(f"== ember ({'unfused' if args.unfused else 'fused'} RNN), {wall * 1e3:.1f} ms/step unprofiled")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))

    try:
        import torch
    except ImportError:
        print("(PyTorch not installed: no torch.profiler table)")
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    _, tstep = real_models.training_step(args.model, "torch", model)
    tstep()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        tstep()
    twall = (time.perf_counter() - t0) / args.steps
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tprof:
        for _ in range(args.steps):
            tstep()
    print(f"== PyTorch {torch.__version__}, {twall * 1e3:.1f} ms/step unprofiled (ember/PyTorch {wall / twall:.2f}x)")
    print(tprof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
