"""ember's benchmarks: `python benchmarks/bench.py [--only NAME[,NAME...] ...] [--json PATH]` (nox -s bench).

Prints one table of workloads timed with ember, NumPy and -- when installed --
PyTorch, all in this one process, with the ratios ember/NumPy and ember/PyTorch.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness
from workloads import aten_core, attention, autograd, data, linalg, nn_kernels, nn_sequence
from workloads import nn as nn_layer  # -- nn: Module overhead, training steps
from workloads import optim as optim_layer  # -- optim: Adam step single-tensor / foreach / fused

MODULES = [aten_core, autograd, data, linalg, nn_kernels, nn_layer, optim_layer]
MODULES += [attention]  # -- attention: fused SDPA at L=1024 (time and peak memory)
MODULES += [nn_sequence]  # -- nn: TransformerEncoderLayer / LSTM forward
from workloads import serialization  # noqa: E402  -- serialization: save/load, safetensors

MODULES += [serialization]
from workloads import memory  # noqa: E402  -- nn+optim: a 1,000-step loop's memory must be flat

MODULES += [memory]
from workloads import gpu  # noqa: E402  -- cuda: GPU workloads vs PyTorch CUDA ("not run" without a GPU)

MODULES += [gpu]
from workloads import gpu_blas  # noqa: E402  -- gpu: cuBLAS matmul, conv2d (one "no CUDA GPU" row without one)

MODULES += [gpu_blas]
from workloads import real_models  # noqa: E402  -- nn+optim: real models' training steps vs PyTorch

MODULES += [real_models]
from workloads import amp  # noqa: E402  -- amp: bfloat16 autocast vs float32, ember vs PyTorch CPU autocast

MODULES += [amp]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument(
        "--only",
        action="append",
        help="run only the workloads whose name contains this text (several: comma-separated or repeated, any "
        "may match; e.g. --only lstm_lm,gru_lm or --only 'train step')",
    )
    p.add_argument("--json", help="also write the results as JSON here")
    args = p.parse_args()
    workloads = [w for m in MODULES for w in m.WORKLOADS]
    if args.only:
        wanted = [o for arg in args.only for o in arg.split(",") if o]
        workloads = [w for w in workloads if any(o in w[0] for o in wanted)]
    results = harness.run(workloads)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    try:
        import torch

        meta["torch"] = torch.__version__
    except ImportError:
        meta["torch"] = None
    import ember.aten as ea

    meta["ember_cpu_capability"] = ea._C._get_cpu_capability()
    meta["ember_threads"] = ea.get_num_threads()
    print(f"ember benchmarks ({meta})")
    print(harness.table(results))
    if args.json:
        harness.write_json(results, args.json, meta)
    failed = [r for r in results if r.failed_check]
    for r in failed:
        print(f"FAILED CHECK: {r.name}: {r.failed_check}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
