"""The CUDA layer / RMS norm kernels (cuda/Normalization.cu, row_norm_stub and
row_norm_backward_stub) run on the host.

``ember_aten_testing.cuda_row_norm_emulation(True)`` puts a host emulation of the CUDA kernels in the CPU
slots of the row-norm stubs: each kernel's own block code, blocks of one thread (the
weight / bias gradients chunk by chunk as on the GPU). So the statistics, the affine output
and the three gradients are checked against the CPU kernel on any CUDA build; block
reductions and launches are left to the GPU tests in test_nn_kernels.py."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation
TOL = {ea.float32: 1e-5, ea.float64: 1e-12, ea.bfloat16: 2e-2}


def r(rng: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    return ea.from_numpy(rng.uniform(-2, 2, size=shape)).to(dtype)


def run(kind: str, dtype: Any, affine: bool) -> list[Any]:
    rng = np.random.default_rng(6)
    pt = ea.float32 if dtype == ea.bfloat16 else dtype
    if kind == "layer_norm":
        x, go = r(rng, (130, 5, 40), dtype), r(rng, (130, 5, 40), dtype)  # 130 rows: several gradient chunks
        w = r(rng, (5, 40), pt) if affine else None
        b = r(rng, (5, 40), pt) if affine else None
        out, mean, rstd = ea.native_layer_norm(x, [5, 40], w, b, 1e-5)
        grads = ea.native_layer_norm_backward(go, x, [5, 40], mean, rstd, w, b, [True, affine, affine])
        return [out, mean, rstd, *grads]
    if kind == "rms_norm":
        x, go = r(rng, (7, 300), dtype), r(rng, (7, 300), dtype)
        w = r(rng, (300,), pt) if affine else None
        out, rstd = ea._fused_rms_norm(x, [300], w, None)
        return [out, rstd, *ea._fused_rms_norm_backward(go, x, [300], rstd, w, [True, affine])]
    x = r(rng, (3, 6, 4, 5), dtype)  # group norm: its statistics come from row_norm_stub
    w, b = r(rng, (6,), pt), r(rng, (6,), pt)
    return list(ea.native_group_norm(x, w, b, 3, 6, 20, 2, 1e-5))


@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm", "group_norm"])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.bfloat16], ids=str)
@pytest.mark.parametrize("affine", [False, True])
def test_cuda_row_norm_kernels_match_the_cpu_kernel(kind: str, dtype: Any, affine: bool) -> None:
    want = run(kind, dtype, affine)
    previous = ember_aten_testing.cuda_row_norm_emulation(True)
    try:
        got = run(kind, dtype, affine)
    finally:
        ember_aten_testing.cuda_row_norm_emulation(previous)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
            continue
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=TOL[dtype], atol=TOL[dtype])
