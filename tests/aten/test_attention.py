"""scaled_dot_product_attention beyond the OpInfo table: the fused kernel against the math
composite on shapes spanning many blocks, the logsumexp it returns, rows with every key
masked, dropout drawn from the Generator, reduced-precision dtypes, and the memory the fused
path allocates (no L x S matrix)."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import memory_stats, reset_peak_memory_stats
from opinfo.attention import ref_flash, ref_sdpa

RNG = np.random.default_rng(5)


def t(*shape: int, dtype: Any = ea.float32) -> Any:
    return ea.from_numpy(RNG.standard_normal(shape)).to(dtype)


def f64(x: Any) -> np.ndarray:
    return x.double().numpy()


CASES = [
    # (B, Hq, Hkv, L, S, E, Ev, is_causal, mask shape)
    (2, 4, 4, 100, 150, 32, 16, False, None),
    (1, 3, 3, 200, 130, 16, 16, True, None),
    (1, 8, 2, 65, 65, 8, 24, True, None),
    (2, 2, 2, 64, 128, 64, 64, False, (2, 1, 64, 128)),
    (1, 2, 1, 33, 200, 16, 8, False, (200,)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_fused_matches_math_and_reference(case: tuple[Any, ...]) -> None:
    B, H, Hk, L, S, E, Ev, causal, mshape = case
    q, k, v = t(B, H, L, E), t(B, Hk, S, E), t(B, Hk, S, Ev)
    mask = t(*mshape) if mshape else None
    got = ea.nn.scaled_dot_product_attention(q, k, v, mask, is_causal=causal, enable_gqa=H != Hk)
    math_out, weights = ea._scaled_dot_product_attention_math(q, k, v, mask, 0.0, causal, enable_gqa=H != Hk)
    expected = ref_sdpa(f64(q), f64(k), f64(v), None if mask is None else f64(mask), 0.0, causal, None, H != Hk)
    np.testing.assert_allclose(f64(got), expected, atol=3e-5, rtol=3e-5)
    np.testing.assert_allclose(f64(math_out), expected, atol=3e-5, rtol=3e-5)
    np.testing.assert_allclose(f64(weights).sum(-1), 1.0, atol=1e-5)
    _, lse = ea._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask)
    _, ref_lse = ref_flash(f64(q), f64(k), f64(v), 0.0, causal, None if mask is None else f64(mask))
    assert lse.dtype == ea.float32 and tuple(lse.shape) == (B, H, L)
    np.testing.assert_allclose(f64(lse), ref_lse, atol=3e-5, rtol=3e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_long_keys_transposed_block_by_block(causal: bool) -> None:
    # E * S above the kernel's per-head K^T budget (2^20 elements): the keys are transposed
    # one block at a time instead of once per head; both give the same attention. Two heads
    # of a batch broadcast (stride 0) and a non-contiguous query exercise the strides.
    S, E = 16450, 64
    q = t(1, 2, 70, 2 * E)[..., ::2]
    k, v = t(1, 1, S, E).expand(1, 2, S, E), t(1, 1, S, 8).expand(1, 2, S, 8)
    got = ea.nn.scaled_dot_product_attention(q, k, v, is_causal=causal)
    expected = ref_sdpa(f64(q), f64(k), f64(v), None, 0.0, causal, None, False)
    np.testing.assert_allclose(f64(got), expected, atol=3e-5, rtol=3e-5)


def test_rows_with_every_key_masked_are_zero() -> None:
    q, k, v = t(1, 2, 5, 4), t(1, 2, 6, 4), t(1, 2, 6, 3)
    mask = ea.ones(5, 6, dtype=ea.bool)
    mask[2] = False
    for fn in (ea.nn.scaled_dot_product_attention, lambda *a, **kw: ea._scaled_dot_product_attention_math(*a)[0]):
        out = fn(q, k, v, mask).numpy()
        assert np.isfinite(out).all()
        assert (out[:, :, 2] == 0).all() and (out[:, :, 1] != 0).all()
    _, lse = ea._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=mask)
    assert np.isneginf(lse.numpy()[:, :, 2]).all()


def test_scale_and_explicit_defaults() -> None:
    q, k, v = t(1, 1, 4, 9), t(1, 1, 5, 9), t(1, 1, 5, 2)
    a = ea.nn.scaled_dot_product_attention(q, k, v)
    b = ea.nn.scaled_dot_product_attention(q, k, v, scale=1 / 3)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    c = ea.nn.scaled_dot_product_attention(q, k, v, scale=0.0)  # uniform weights: the mean of v
    np.testing.assert_allclose(c.numpy()[0, 0], np.broadcast_to(v.numpy()[0, 0].mean(0), (4, 2)), rtol=1e-5)


@pytest.mark.parametrize("dtype", [ea.float16, ea.bfloat16, ea.float64])
def test_dtypes(dtype: Any) -> None:
    q, k, v = t(1, 2, 70, 16, dtype=dtype), t(1, 2, 70, 16, dtype=dtype), t(1, 2, 70, 8, dtype=dtype)
    out = ea.nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == dtype
    expected = ref_sdpa(f64(q), f64(k), f64(v), is_causal=True)
    tol = {ea.float16: 2e-3, ea.bfloat16: 2e-2, ea.float64: 1e-12}[dtype]
    np.testing.assert_allclose(f64(out), expected, atol=tol, rtol=tol)


def test_dropout_comes_from_the_generator() -> None:
    q, k, v = t(2, 2, 8, 4), t(2, 2, 8, 4), t(2, 2, 8, 4)
    ea.manual_seed(3)
    a = ea.nn.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ea.manual_seed(3)
    b = ea.nn.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    c = ea.nn.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    no_drop = ea.nn.scaled_dot_product_attention(q, k, v).numpy()
    assert not np.allclose(a.numpy(), no_drop)
    zero = ea.nn.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert (zero.numpy() == 0).all()
    # the weights after dropout: kept ones scaled by 1 / (1 - p), the rest 0
    keep = ea.rand(2, 2, 8, 8) > 0.25
    out, w = ea._scaled_dot_product_attention_math(q, k, v, None, 0.25, False, keep)
    _, w0 = ea._scaled_dot_product_attention_math(q, k, v)
    np.testing.assert_allclose(w.numpy(), np.where(keep.numpy(), w0.numpy() / 0.75, 0.0), rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), w.numpy() @ v.numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_draws_bernoulli_of_the_weights_shape() -> None:
    # one draw of bernoulli(1 - p) the shape of the weights, kept ones scaled by 1 / (1 - p):
    # the same Generator stream as an explicit mask drawn after the same seed
    q, k, v = t(2, 3, 9, 5), t(2, 3, 11, 5), t(2, 3, 11, 7)
    ea.manual_seed(11)
    keep = ea.empty(2, 3, 9, 11).bernoulli_(0.7).to(ea.bool)
    want, w_want = ea._scaled_dot_product_attention_math(q, k, v, None, 0.3, False, keep)
    ea.manual_seed(11)
    got, w_got = ea._scaled_dot_product_attention_math(q, k, v, None, 0.3)
    np.testing.assert_array_equal(w_got.numpy(), w_want.numpy())
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert 0.5 < keep.float().mean().item() < 0.9


def test_math_path_rows_with_every_key_masked_under_dropout() -> None:
    q, k, v = t(1, 2, 4, 3), t(1, 2, 6, 3), t(1, 2, 6, 2)
    mask = np.ones((4, 6), dtype=bool)
    mask[1] = False  # row 1 sees no key
    ea.manual_seed(0)
    out, w = ea._scaled_dot_product_attention_math(q, k, v, ea.from_numpy(mask), 0.25)
    assert np.isfinite(out.numpy()).all()
    assert (w.numpy()[:, :, 1] == 0).all() and (out.numpy()[:, :, 1] == 0).all()
    assert w.numpy()[:, :, 0].sum() > 0


def test_fused_path_does_not_materialise_the_score_matrix() -> None:
    B, H, L, E = 1, 4, 1024, 32
    q, k, v = t(B, H, L, E), t(B, H, L, E), t(B, H, L, E)
    reset_peak_memory_stats()
    before = memory_stats()["allocated_bytes"]
    out = ea.nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    extra = memory_stats()["peak_allocated_bytes"] - before
    scores = B * H * L * L * 4
    assert extra < scores / 8, (extra, scores)
    assert extra >= out.numel() * 4  # the output itself is counted
