"""GPU: cuBLAS matrix products and im2col + cuBLAS convolutions, ember vs PyTorch CUDA.

matmul 4096^2 in float32 with TF32 off and on (ember.aten.backends.cuda.matmul.allow_tf32,
torch.backends.cuda.matmul.allow_tf32) and in bfloat16; conv2d forward and backward (a
ResNet-style 3x3 layer) in float32 with each library's default TF32 setting for
convolutions (cudnn.allow_tf32 = True). Every timed call ends with a device
synchronisation, so a time is the kernels' time plus one launch-and-sync round trip.
Without a GPU the table gets one 'not run: no CUDA GPU' row.

`python benchmarks/workloads/gpu_blas.py` prints the same rows with TFLOP/s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np


def _gpu_available() -> bool:
    try:
        import ember.c10py

        return bool(ember.c10py.cuda.is_available())
    except Exception:
        return False


def _torch_cuda() -> Any:
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except ImportError:
        return None


def _sync_ember() -> None:
    import ember.c10py

    ember.c10py.cuda.synchronize()


def _ember_dtype(name: str) -> Any:
    import ember.aten as ea

    return getattr(ea, name)


def _with_flag(set_flag: Callable[[], None], fn: Callable[[], Any], sync: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        set_flag()
        fn()
        sync()

    return run


N_MATMUL = 4096


def _matmul(dtype: str, tf32: bool) -> dict[str, Any]:
    import ember.aten as ea
    import ember.aten.backends

    rng = np.random.default_rng(0)
    x = rng.standard_normal((N_MATMUL, N_MATMUL), dtype=np.float32)
    y = rng.standard_normal((N_MATMUL, N_MATMUL), dtype=np.float32)
    a = ea.from_numpy(x).to(_ember_dtype(dtype)).to("cuda")
    b = ea.from_numpy(y).to(_ember_dtype(dtype)).to("cuda")

    def ember_flag() -> None:
        ember.aten.backends.cuda.matmul.allow_tf32 = tf32

    fns: dict[str, Any] = {"ember": _with_flag(ember_flag, lambda: ea.mm(a, b), _sync_ember)}
    torch = _torch_cuda()
    if torch is not None:
        ta = torch.from_numpy(x).to(getattr(torch, dtype)).cuda()
        tb = torch.from_numpy(y).to(getattr(torch, dtype)).cuda()

        def torch_flag() -> None:
            torch.backends.cuda.matmul.allow_tf32 = tf32

        fns["torch"] = _with_flag(torch_flag, lambda: torch.mm(ta, tb), torch.cuda.synchronize)
    return fns


def matmul_fp32() -> dict[str, Any]:
    return _matmul("float32", tf32=False)


def matmul_fp32_tf32() -> dict[str, Any]:
    return _matmul("float32", tf32=True)


def matmul_bf16() -> dict[str, Any]:
    return _matmul("bfloat16", tf32=False)


# conv2d: batch 32, 64 -> 64 channels, 56x56, 3x3, padding 1 (a ResNet-18 stage-1 layer)
CONV = {"n": 32, "c": 64, "k": 64, "hw": 56, "r": 3}


def _conv_tensors(lib: Any, device: str) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(1)
    c = CONV
    x = rng.standard_normal((c["n"], c["c"], c["hw"], c["hw"]), dtype=np.float32)
    w = rng.standard_normal((c["k"], c["c"], c["r"], c["r"]), dtype=np.float32) * 0.05
    b = rng.standard_normal((c["k"],), dtype=np.float32)
    g = rng.standard_normal((c["n"], c["k"], c["hw"], c["hw"]), dtype=np.float32)
    return tuple(lib.from_numpy(v).to(device) for v in (x, w, b, g))  # type: ignore[return-value]


def conv2d_forward() -> dict[str, Any]:
    import ember.aten as ea

    x, w, b, _ = _conv_tensors(ea, "cuda")
    fns: dict[str, Any] = {"ember": _with_flag(lambda: None, lambda: ea.conv2d(x, w, b, 1, 1), _sync_ember)}
    torch = _torch_cuda()
    if torch is not None:
        tx, tw, tb, _ = _conv_tensors(torch, "cuda")
        fns["torch"] = _with_flag(
            lambda: None, lambda: torch.nn.functional.conv2d(tx, tw, tb, 1, 1), torch.cuda.synchronize
        )
    return fns


def conv2d_backward() -> dict[str, Any]:
    import ember.aten as ea

    x, w, _, g = _conv_tensors(ea, "cuda")
    args = ([CONV["k"]], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
    fns: dict[str, Any] = {
        "ember": _with_flag(lambda: None, lambda: ea.convolution_backward(g, x, w, *args), _sync_ember)
    }
    torch = _torch_cuda()
    if torch is not None:
        tx, tw, _, tg = _conv_tensors(torch, "cuda")
        fns["torch"] = _with_flag(
            lambda: None, lambda: torch.ops.aten.convolution_backward(tg, tx, tw, *args), torch.cuda.synchronize
        )
    return fns


def _no_gpu() -> dict[str, Any]:
    raise RuntimeError("no CUDA GPU (ember.c10py.cuda.is_available() is False)")


_conv_flops = 2 * CONV["n"] * CONV["k"] * CONV["hw"] ** 2 * CONV["c"] * CONV["r"] ** 2
# floating-point operations per call (TFLOP/s = FLOPS / seconds / 1e12)
FLOPS = {
    "gpu matmul 4096^2 float32 (TF32 off)": 2 * N_MATMUL**3,
    "gpu matmul 4096^2 float32 (TF32 on)": 2 * N_MATMUL**3,
    "gpu matmul 4096^2 bfloat16": 2 * N_MATMUL**3,
    "gpu conv2d 32x64x56x56 3x3 forward": _conv_flops,
    "gpu conv2d 32x64x56x56 3x3 backward (input, weight, bias)": 2 * _conv_flops,
}

if _gpu_available():
    WORKLOADS = [
        ("gpu matmul 4096^2 float32 (TF32 off)", "call", matmul_fp32),
        ("gpu matmul 4096^2 float32 (TF32 on)", "call", matmul_fp32_tf32),
        ("gpu matmul 4096^2 bfloat16", "call", matmul_bf16),
        ("gpu conv2d 32x64x56x56 3x3 forward", "call", conv2d_forward),
        ("gpu conv2d 32x64x56x56 3x3 backward (input, weight, bias)", "call", conv2d_backward),
    ]
else:
    WORKLOADS = [("gpu: cuBLAS matmul / conv2d", "call", _no_gpu)]


def main() -> int:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import harness

    results = harness.run(WORKLOADS)
    print(harness.table(results))
    for r in results:
        if r.name in FLOPS:
            rates = ", ".join(f"{k} {FLOPS[r.name] / s / 1e12:.1f} TFLOP/s" for k, s in r.seconds.items())
            print(f"{r.name}: {rates}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
