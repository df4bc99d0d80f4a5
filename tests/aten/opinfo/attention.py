"""OpInfo entries of scaled dot product attention: the public ``scaled_dot_product_attention``
(fused and math paths), the fused operator ``_scaled_dot_product_flash_attention_for_cpu``
(output and logsumexp) and its backward operator.

The reference is softmax(Q K^T * scale + mask) V written out in float64 NumPy, with PyTorch's
rules: scale defaults to 1 / sqrt(E); is_causal keeps key j for query i when j <= i (top
left); a bool mask keeps True; a float mask is added; a row with every key masked gives 0;
enable_gqa repeats each key/value head for Hq / Hkv query heads. The backward reference is
the closed form dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO * O)), dQ = scale dS K,
dK = scale dS^T Q.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor

SDPA_TOLS = {ea.float32: (2e-5, 2e-5), ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 2e-2)}


def _t(shape: tuple[int, ...], dtype: Any) -> Any:
    return make_tensor(shape, dtype, low=-1.0, high=1.0)


# ---- reference -------------------------------------------------------------------------------


def ref_attention_weights(
    q: np.ndarray,
    k: np.ndarray,
    attn_mask: Any = None,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> tuple[np.ndarray, np.ndarray, float]:
    """(softmax weights P, logsumexp of each row, scale) in float64."""
    E, L, S = q.shape[-1], q.shape[-2], k.shape[-2]
    s = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    scores = (q @ np.swapaxes(k, -1, -2)) * s
    if is_causal:
        scores = np.where(np.tril(np.ones((L, S), dtype=bool)), scores, -np.inf)
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        scores = np.where(m, scores, -np.inf) if m.dtype == np.bool_ else scores + m
    mx = scores.max(axis=-1, keepdims=True) if S else np.zeros((*scores.shape[:-1], 1))
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(scores - mx)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = np.where(total[..., 0] > 0, np.log(np.where(total > 0, total, 1.0))[..., 0] + mx[..., 0], -np.inf)
    return e / np.where(total == 0, 1.0, total), lse, s


def ref_sdpa(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> np.ndarray:
    assert dropout_p == 0.0
    p, _, _ = ref_attention_weights(q, k, attn_mask, is_causal, scale, enable_gqa)
    if enable_gqa and q.ndim >= 3 and v.shape[-3] != q.shape[-3]:
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    return p @ v


def ref_flash(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    attn_mask: Any = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    p, lse, _ = ref_attention_weights(q, k, attn_mask, is_causal, scale, True)
    if v.shape[-3] != q.shape[-3]:
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    return p @ v, lse


def ref_flash_backward(
    grad_out: np.ndarray,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    out: np.ndarray,
    logsumexp: np.ndarray,
    dropout_p: float,
    is_causal: bool,
    attn_mask: Any = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    group = q.shape[1] // k.shape[1]
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    p, _, s = ref_attention_weights(q, kr, attn_mask, is_causal, scale)
    o = p @ vr
    dv = np.swapaxes(p, -1, -2) @ grad_out
    dp = grad_out @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (grad_out * o).sum(-1, keepdims=True))
    dq = s * ds @ kr
    dk = s * np.swapaxes(ds, -1, -2) @ q
    B, Hk = k.shape[:2]
    dk = dk.reshape(B, Hk, group, *dk.shape[2:]).sum(2)
    dv = dv.reshape(B, Hk, group, *dv.shape[2:]).sum(2)
    return dq, dk, dv


# ---- samples ---------------------------------------------------------------------------------


def _s(*args: Any, name: str = "", **kw: Any) -> SampleInput:
    return SampleInput(args[0], args[1:], kw, name=name)


def _qkv(dtype: Any, B: int, H: int, L: int, S: int, E: int, Ev: int, Hk: int | None = None) -> tuple[Any, Any, Any]:
    Hk = H if Hk is None else Hk
    return _t((B, H, L, E), dtype), _t((B, Hk, S, E), dtype), _t((B, Hk, S, Ev), dtype)


def _sdpa_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    q, k, v = _qkv(dtype, 1, 1, 3, 4, 4, 3)
    yield _s(q, k, v, name="small")
    yield _s(q, k, v, is_causal=True, name="small causal")
    yield _s(*_qkv(dtype, 1, 2, 2, 3, 2, 2, Hk=1), enable_gqa=True, name="grouped-query")
    yield _s(q, k, v, attn_mask=ea.tensor([[True, False, True, True]]), name="bool mask")
    yield _s(q, k, v, attn_mask=_t((3, 4), dtype), scale=0.3, name="float mask, scale")
    yield _s(*_qkv(dtype, 2, 3, 5, 7, 8, 6), is_causal=True, name="batched causal, L < S")
    yield _s(*_qkv(dtype, 1, 2, 7, 5, 4, 4), is_causal=True, name="causal, L > S")
    mask = ea.ones(1, 2, 70, 130, dtype=ea.bool)
    mask[0, 0, 3] = False  # a row with every key masked
    mask[0, 1, :, 100:] = False
    yield _s(*_qkv(dtype, 1, 2, 70, 130, 16, 8), attn_mask=mask, name="several blocks, masked row")
    yield _s(*_qkv(dtype, 1, 2, 129, 129, 8, 8), is_causal=True, name="several blocks causal")
    yield _s(_t((3, 5, 4), dtype), _t((3, 6, 4), dtype), _t((3, 6, 2), dtype), name="3-d (math path)")
    yield _s(_t((2, 2, 3, 4), dtype), _t((1, 2, 5, 4), dtype), _t((1, 2, 5, 4), dtype), name="broadcast batch")
    yield _s(*_qkv(dtype, 1, 1, 0, 4, 4, 3), name="empty query")


def _flash_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    q, k, v = _qkv(dtype, 1, 1, 3, 4, 4, 3)
    yield _s(q, k, v, name="small")
    yield _s(q, k, v, 0.0, True, name="causal")
    yield _s(*_qkv(dtype, 1, 4, 3, 2, 2, 2, Hk=2), name="grouped-query")
    yield _s(q, k, v, attn_mask=_t((1, 1, 3, 4), dtype), scale=0.5, name="float mask")
    yield _s(*_qkv(dtype, 2, 2, 67, 66, 8, 4), 0.0, True, name="several blocks causal")
    yield _s(*_qkv(dtype, 1, 1, 4, 0, 4, 3), name="no keys")


def _flash_backward_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    cases = [
        ((1, 1, 3, 4, 4, 3, None), False, None, None),
        ((1, 2, 4, 5, 3, 2, 1), True, None, None),
        ((2, 2, 70, 67, 8, 4, None), True, None, 0.4),
        ((1, 1, 5, 6, 4, 4, None), False, "mask", None),
    ]
    for (B, H, L, S, E, Ev, Hk), causal, mask, scale in cases:
        q, k, v = _qkv(dtype, B, H, L, S, E, Ev, Hk)
        m = _t((L, S), dtype) if mask else None
        out, lse = ea._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=m, scale=scale)
        yield _s(_t(tuple(out.shape), dtype), q, k, v, out, lse, 0.0, causal, attn_mask=m, scale=scale)


# ---- errors ----------------------------------------------------------------------------------


def _err(*args: Any, regex: str, error: type[BaseException] = RuntimeError, **kw: Any) -> ErrorInput:
    return ErrorInput(SampleInput(args[0], args[1:], kw), error, regex)


def _sdpa_errors(op: OpInfo) -> Iterator[ErrorInput]:
    q, k, v = _qkv(ea.float32, 1, 2, 3, 5, 4, 6)
    yield _err(
        q,
        k.double(),
        v,
        regex=r"Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: double "
        r"and value.dtype: float instead.",
    )
    yield _err(
        q,
        k,
        v,
        attn_mask=ea.ones(3, 5, dtype=ea.int64),
        regex=r"Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: long "
        r"int and  query.dtype: float instead.",
    )
    yield _err(
        q,
        k,
        v,
        attn_mask=ea.ones(3, 5, dtype=ea.bool),
        is_causal=True,
        regex="_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
    )
    yield _err(
        q,
        k,
        v,
        attn_mask=ea.ones(3, 5, dtype=ea.float64),
        regex=r"Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
        r"double and  query.dtype: float instead.",
    )
    yield _err(q, k, v, dropout_p=1.5, regex="dropout probability has to be between 0 and 1, but got 1.5")
    yield _err(q[0, 0, 0], k, v, regex="Expected query, key, and value to all be  at least 2 dimensional")
    yield _err(
        q, k, v, attn_mask=ea.ones(4, 5), regex=r"[Tt]he size of tensor a \(3\) must match the size of tensor b \(4\)"
    )


def _flash_errors(op: OpInfo) -> Iterator[ErrorInput]:
    q, k, v = _qkv(ea.float32, 1, 2, 3, 5, 4, 6)
    yield _err(q[0], k, v, regex=r"Accept only 4 dims inputs shape of \{B, H, T, K\}")
    yield _err(q, k, v, 0.1, regex="Currently do not support dropout > 0")
    yield _err(q, k[..., :3], v, regex="Q/K should have the same head size, but got 4 and 3")
    yield _err(q, k[:, :1], v, regex="K/V should have the same number of heads")
    yield _err(
        _t((1, 3, 3, 4), ea.float32),
        k,
        v,
        regex=r"the number of query heads \(3\) must be a multiple of the number of key/value heads \(2\)",
    )
    yield _err(
        q,
        k,
        v,
        attn_mask=ea.ones(3, 4),
        regex=r"The size of tensor a \(5\) must match the size of tensor b \(4\) at non-singleton dimension 3",
    )


OPS = [
    OpInfo(
        "scaled_dot_product_attention",
        ea.nn.scaled_dot_product_attention,
        FLOAT_DTYPES,
        _sdpa_samples,
        ref=ref_sdpa,
        supports_out=False,
        tol_overrides=SDPA_TOLS,
        error_inputs=_sdpa_errors,
        nondifferentiable_args=("attn_mask",),
        kind="attention",
    ),
    OpInfo(
        "_scaled_dot_product_flash_attention_for_cpu",
        ea._scaled_dot_product_flash_attention_for_cpu,
        FLOAT_DTYPES,
        _flash_samples,
        ref=ref_flash,
        supports_out=False,
        tol_overrides=SDPA_TOLS,
        error_inputs=_flash_errors,
        nondifferentiable_args=("attn_mask",),
        kind="attention",
    ),
    OpInfo(
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        ea._scaled_dot_product_flash_attention_for_cpu_backward,
        (ea.float32, ea.float64),
        _flash_backward_samples,
        ref=ref_flash_backward,
        supports_out=False,
        supports_noncontiguous=False,
        tol_overrides={ea.float32: (5e-5, 5e-5)},
        supports_autograd=False,  # no double backward through the fused kernel (as PyTorch)
        check_unsupported=False,  # its samples come from the forward, which refuses other dtypes
        kind="attention",
    ),
]
