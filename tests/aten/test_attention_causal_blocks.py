"""The fused CPU attention kernels under is_causal at block edges: each query row's softmax
stops at its last visible key (the masked scores are never exponentiated, only given weight
0), so rows whose visible keys end inside a block, exactly at a block edge, or before a
block starts are checked, forward and backward, against float64 NumPy (top-left causal
alignment, as PyTorch's tril of ones(L, S)). Blocks: 128 x 512 forward, 64 x 64 backward."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

RNG = np.random.default_rng(7)


def _ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, go: np.ndarray, causal: bool) -> tuple[np.ndarray, ...]:
    scale = 1 / np.sqrt(q.shape[-1])
    s = q @ k.swapaxes(-1, -2) * scale
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.tril(np.ones((L, S), dtype=bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    p /= p.sum(-1, keepdims=True)
    out = p @ v
    dv = p.swapaxes(-1, -2) @ go
    dp = go @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return out, ds @ k * scale, ds.swapaxes(-1, -2) @ q * scale, dv


def _t(a: np.ndarray) -> Any:
    return ea.from_numpy(a.astype(np.float32))


@pytest.mark.parametrize(
    ("L", "S"),
    [(64, 64), (129, 129), (130, 513), (513, 520), (200, 70), (5, 600), (65, 1)],
)
@pytest.mark.parametrize("causal", [True, False])
def test_fused_forward_and_backward_at_block_edges(L: int, S: int, causal: bool) -> None:
    B, H, E, Ev = 1, 2, 16, 8
    q, k = RNG.standard_normal((B, H, L, E)), RNG.standard_normal((B, H, S, E))
    v, go = RNG.standard_normal((B, H, S, Ev)), RNG.standard_normal((B, H, L, Ev))
    out, lse = ea._scaled_dot_product_flash_attention_for_cpu(_t(q), _t(k), _t(v), 0.0, causal)
    gq, gk, gv = ea._scaled_dot_product_flash_attention_for_cpu_backward(
        _t(go), _t(q), _t(k), _t(v), out, lse, 0.0, causal
    )
    ref = _ref(q, k, v, go, causal)
    for name, got, want in zip(("out", "grad_query", "grad_key", "grad_value"), (out, gq, gk, gv), ref, strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=2e-4, err_msg=name)


def test_causal_rows_past_the_keys_see_every_key() -> None:
    # L > S: rows i >= S - 1 see all S keys, so their outputs are equal to the unmasked ones
    q, k, v = (RNG.standard_normal(s) for s in ((1, 1, 140, 8), (1, 1, 70, 8), (1, 1, 70, 4)))
    causal, _ = ea._scaled_dot_product_flash_attention_for_cpu(_t(q), _t(k), _t(v), 0.0, True)
    full, _ = ea._scaled_dot_product_flash_attention_for_cpu(_t(q), _t(k), _t(v), 0.0, False)
    np.testing.assert_allclose(causal.numpy()[0, 0, 69:], full.numpy()[0, 0, 69:], rtol=1e-6, atol=1e-6)
    assert not np.allclose(causal.numpy()[0, 0, :69], full.numpy()[0, 0, :69])
