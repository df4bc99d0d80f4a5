"""The CUDA fused attention kernels (cuda/Attention.cu) run on the host.

``ember_aten_testing.cuda_sdpa_emulation(True)`` puts a host emulation of the CUDA forward / backward
kernels in the CPU slots of the attention stubs: every block of the launch the GPU would
get, one thread each, in 48 KiB of "shared memory" (large heads shrink the tiles). The
block code is the kernels' own, so these tests check their tiling, online softmax,
masking, causal cut-off, grouped-query heads and gradient sums against the CPU kernel on
any CUDA build, GPU or not. (Not checked here: barriers, atomics, the launch itself --
the GPU tests in test_random_optim_sdpa.py run the same cases.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation

CASES = [
    # (B, Hq, Hkv, L, S, E, Ev, is_causal, mask)
    (2, 4, 4, 100, 150, 32, 16, False, None),
    (1, 3, 3, 70, 45, 64, 64, True, None),  # causal with L > S
    (1, 2, 2, 40, 90, 16, 16, True, None),  # causal with L < S
    (1, 8, 2, 65, 65, 8, 24, True, None),  # grouped-query heads
    (2, 2, 2, 64, 128, 64, 64, False, "float"),
    (1, 2, 1, 33, 200, 16, 8, False, "bool"),  # with a row whose keys are all masked
    (1, 1, 1, 5, 7, 160, 128, False, None),  # shrunken tiles
    (1, 2, 2, 9, 0, 8, 8, False, None),  # no keys: zeros and -inf
]


def run(case: tuple[Any, ...], dtype: Any) -> list[Any]:
    B, H, Hk, L, S, E, Ev, causal, mkind = case
    rng = np.random.default_rng(9)

    def r(*shape: int) -> Any:
        return ea.from_numpy(rng.standard_normal(shape)).to(dtype)

    q, k, v, go = r(B, H, L, E), r(B, Hk, S, E), r(B, Hk, S, Ev), r(B, H, L, Ev)
    mask = None
    if mkind == "float":
        mask = r(B, 1, L, S)
    elif mkind == "bool":
        mask = ea.from_numpy(rng.uniform(size=(L, S)) < 0.7)
        mask[3] = False
    out, lse = ea._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask)
    grads = ea._scaled_dot_product_flash_attention_for_cpu_backward(go, q, k, v, out, lse, 0.0, causal, attn_mask=mask)
    return [out, lse, *grads]


@pytest.fixture
def emulated() -> Iterator[None]:
    previous = ember_aten_testing.cuda_sdpa_emulation(True)
    try:
        yield
    finally:
        ember_aten_testing.cuda_sdpa_emulation(previous)


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64], ids=str)
def test_cuda_attention_kernels_match_the_cpu_kernel(case: tuple[Any, ...], dtype: Any) -> None:
    want = run(case, dtype)
    previous = ember_aten_testing.cuda_sdpa_emulation(True)
    try:
        got = run(case, dtype)
    finally:
        ember_aten_testing.cuda_sdpa_emulation(previous)
    tol = 2e-5 if dtype == ea.float32 else 1e-11
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=tol, atol=tol)


def test_emulation_switch_reports_the_previous_state(emulated: None) -> None:
    assert ember_aten_testing.cuda_sdpa_emulation(True) is True
    assert ember_aten_testing.cuda_sdpa_emulation(False) is True
    assert ember_aten_testing.cuda_sdpa_emulation(False) is False
    assert ember_aten_testing.cuda_sdpa_emulation(True) is False


def test_public_function_under_emulation_matches_math(emulated: None) -> None:
    rng = np.random.default_rng(2)
    q, k, v = (ea.from_numpy(rng.standard_normal((2, 4, 50, 32))).float() for _ in range(3))
    got = ea.nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    math_out, _ = ea._scaled_dot_product_attention_math(q, k, v, None, 0.0, True)
    np.testing.assert_allclose(got.numpy(), math_out.numpy(), rtol=2e-5, atol=2e-5)
