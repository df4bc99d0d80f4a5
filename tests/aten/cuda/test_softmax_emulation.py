"""The CUDA softmax kernels (cuda/SoftMax.cu) run on the host.

``ember_aten_testing.cuda_softmax_emulation(True)`` puts a host emulation of the CUDA softmax /
log_softmax kernels and their backward in the CPU slots of the softmax stubs: each kernel's
own block code run as one block of one thread (which walks every row, or every column of
the strided layout). So the row and column layouts, the max / sum passes and the backward
formulas are checked against the CPU kernel on any CUDA build; block reductions, barriers
and launches are left to the GPU tests in test_nn_kernels.py."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation

SHAPES = [((7, 33), 1), ((3, 1000), -1), ((4, 5, 6), 1), ((4, 5, 6), 0), ((2, 3, 4, 5), 2), ((), 0), ((5,), 0)]


def run(shape: tuple[int, ...], dim: int, log: bool, dtype: Any) -> list[Any]:
    rng = np.random.default_rng(3)
    x = ea.from_numpy(rng.uniform(-10, 10, size=shape)).to(dtype)
    g = ea.from_numpy(rng.standard_normal(shape)).to(dtype)
    fwd = ea._log_softmax if log else ea._softmax
    back = ea._log_softmax_backward_data if log else ea._softmax_backward_data
    y = fwd(x, dim, False)
    return [y, back(g, y, dim, dtype)]


@pytest.mark.parametrize(("shape", "dim"), SHAPES, ids=[f"{s}-{d}" for s, d in SHAPES])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.bfloat16], ids=str)
def test_cuda_softmax_kernels_match_the_cpu_kernel(shape: tuple[int, ...], dim: int, log: bool, dtype: Any) -> None:
    want = run(shape, dim, log, dtype)
    previous = ember_aten_testing.cuda_softmax_emulation(True)
    try:
        got = run(shape, dim, log, dtype)
    finally:
        ember_aten_testing.cuda_softmax_emulation(previous)
    tol = {ea.float32: 1e-5, ea.float64: 1e-12, ea.bfloat16: 1e-2}[dtype]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=tol, atol=tol)


def test_extreme_rows_under_emulation() -> None:
    x = ea.tensor([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, -1e4], [0.0, float("nan"), 1.0, 2.0]])
    previous = ember_aten_testing.cuda_softmax_emulation(True)
    try:
        s = ea._softmax(x, 1, False).numpy()
        ls = ea._log_softmax(x, 1, False).numpy()
    finally:
        ember_aten_testing.cuda_softmax_emulation(previous)
    np.testing.assert_allclose(s[0], [0.5, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(s[1], [0.25] * 4)
    assert np.isnan(s[2]).all()
    np.testing.assert_allclose(ls[1], [-np.log(4)] * 4, rtol=1e-6)
