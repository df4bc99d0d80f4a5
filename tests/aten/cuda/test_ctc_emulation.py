"""The CUDA ctc_loss kernels (cuda/LossCTC.cu) run on the host.

``ember_aten_testing.cuda_emulated_ctc_loss`` / ``cuda_emulated_ctc_loss_backward`` run the CUDA host
code on CPU tensors with every block of its kernels executed on the host (one thread per
block: the block code is the kernels' own), so the alpha / beta recursions and the
gradient gather are checked against the CPU kernel on any CUDA build. (Barriers and the
launch itself are left to the GPU tests in test_nn_kernels.py / test_nn_review.py.)"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation

# (targets, input_lengths, target_lengths, blank)
CASES = [
    ([[1, 2, 2, 4], [3, 1, 1, 0], [2, 3, 0, 0]], [12, 9, 1], [4, 3, 2], 0),  # padded; sample 2 impossible
    ([1, 2, 2, 4, 3, 1, 1, 2, 3], [12, 9, 1], [4, 3, 2], 0),  # concatenated
    ([[1, 0, 3], [0, 0, 1], [2, 2, 2]], [12, 10, 12], [3, 3, 3], 0),  # targets equal to the blank
    ([[4, 2, 1], [2, 2, 0], [3, 1, 2]], [12, 0, 7], [3, 0, 1], 2),  # blank 2; an empty input and target
]


def lp_of(dtype: Any) -> Any:
    rng = np.random.default_rng(4)
    return ea.log_softmax(ea.from_numpy(rng.uniform(-2, 2, size=(12, 3, 5))).to(dtype), 2)


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64], ids=str)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_cuda_ctc_kernels_match_the_cpu_kernel(case: tuple, dtype: Any, zero_infinity: bool) -> None:
    tg, il, tl, blank = case
    lp = lp_of(dtype)
    targets = ea.tensor(tg, dtype=ea.int64)
    nll_c, alpha_c = ea._ctc_loss(lp, targets, il, tl, blank, zero_infinity)
    nll_e, alpha_e = ember_aten_testing.cuda_emulated_ctc_loss(lp, targets, il, tl, blank, zero_infinity)
    tol = 1e-5 if dtype == ea.float32 else 1e-12
    np.testing.assert_allclose(nll_e.double().numpy(), nll_c.double().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(alpha_e.double().numpy(), alpha_c.double().numpy(), rtol=tol, atol=tol)
    go = ea.tensor([0.7, 1.1, 0.4], dtype=dtype)
    gc = ea._ctc_loss_backward(go, lp, targets, il, tl, nll_c, alpha_c, blank, zero_infinity)
    ge = ember_aten_testing.cuda_emulated_ctc_loss_backward(
        go, lp, targets, il, tl, nll_e, alpha_e, blank, zero_infinity
    )
    assert ge.dtype == gc.dtype and tuple(ge.shape) == tuple(gc.shape)
    np.testing.assert_allclose(ge.double().numpy(), gc.double().numpy(), rtol=10 * tol, atol=10 * tol)
