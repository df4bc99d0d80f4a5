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


# The backward's products run over row strips of 6 (AVX2; 8 AVX-512, 4 SSE), then 4, then 1,
# each only over the keys (or query rows) its rows see under is_causal: sizes that are no
# multiple of a strip or of a vector, the diagonal crossing a strip, grouped heads, strided
# (B, L, H, E) views as a Transformer passes them, in float32 and float64.
@pytest.mark.parametrize(
    ("L", "S", "E", "Ev"),
    [(67, 67, 12, 5), (7, 7, 3, 9), (100, 37, 32, 32), (37, 100, 33, 17), (64, 64, 32, 32), (1, 5, 4, 4)],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_causal_backward_strips(L: int, S: int, E: int, Ev: int, dtype: str, capability: str) -> None:
    B, H, Hk = 2, 4, 2
    dt = getattr(ea, dtype)
    # (B, L, H, E) arrays viewed as (B, H, L, E): the kernel reads the strides
    q = RNG.standard_normal((B, L, H, E)).transpose(0, 2, 1, 3)
    k = RNG.standard_normal((B, S, Hk, E)).transpose(0, 2, 1, 3)
    v = RNG.standard_normal((B, S, Hk, Ev)).transpose(0, 2, 1, 3)
    go = RNG.standard_normal((B, H, L, Ev))

    def view(a: np.ndarray) -> Any:
        return ea.from_numpy(np.ascontiguousarray(a.transpose(0, 2, 1, 3))).to(dt).transpose(1, 2)

    tq, tk, tv = view(q), view(k), view(v)
    assert L == 1 or not tq.is_contiguous()
    out, lse = ea._scaled_dot_product_flash_attention_for_cpu(tq, tk, tv, 0.0, True)
    gq, gk, gv = ea._scaled_dot_product_flash_attention_for_cpu_backward(
        ea.from_numpy(go).to(dt), tq, tk, tv, out, lse, 0.0, True
    )
    rep = H // Hk
    kr, vr = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    want_out, want_gq, want_gk, want_gv = _ref(q, kr, vr, go, True)
    # the kv-head gradients sum over the query heads of their group
    want_gk = want_gk.reshape(B, Hk, rep, S, E).sum(2)
    want_gv = want_gv.reshape(B, Hk, rep, S, Ev).sum(2)
    tol = 2e-4 if dtype == "float32" else 1e-11
    for name, got, want in zip(
        ("out", "grad_query", "grad_key", "grad_value"),
        (out, gq, gk, gv),
        (want_out, want_gq, want_gk, want_gv),
        strict=True,
    ):
        assert got.dtype == dt
        np.testing.assert_allclose(got.double().numpy(), want, rtol=tol, atol=tol, err_msg=name)
