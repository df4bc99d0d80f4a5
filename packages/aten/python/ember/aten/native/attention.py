"""Composite kernels of scaled dot product attention.

``scaled_dot_product_attention`` checks its arguments as PyTorch does, then picks one of
two implementations, as PyTorch's CPU dispatch does:

- the fused kernel ``_scaled_dot_product_flash_attention_for_cpu`` (csrc/native/Attention.cpp:
  blocked online softmax, no L x S matrix; its gradient is the fused backward operator),
  for 3-d or 4-d float inputs whose batch sizes match or are 1, with as many key/value
  heads as query heads, or one, or (``enable_gqa``) a divisor of them, no dropout, and a
  mask (if any) that does not require grad;
- otherwise the math composite ``_scaled_dot_product_attention_math`` (softmax(Q K^T *
  scale + mask) V over matmul, with any batch broadcasting, dropout from the Generator,
  and gradients -- any order -- through the operators it calls).

A query row whose keys are all masked gives 0 in both (PyTorch's safe softmax).

On CUDA tensors the same fused operator runs csrc/native/cuda/Attention.cu (online softmax
over key blocks in shared memory, and a recompute backward); the choice between the two
paths is the same on both devices.
"""

from __future__ import annotations

import math
from typing import Any

import ember.aten
from ember.aten._generated import _ops as ops

# PyTorch's messages name dtypes by their C++ type
_CPP_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}


def _cpp(dtype: Any) -> str:
    name = str(dtype).rsplit(".", 1)[-1]
    return _CPP_NAMES.get(name, name)


def _is_bool(t: Any) -> bool:
    return str(t.dtype).endswith("bool")


def _check_inputs(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float, is_causal: bool) -> None:
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cpp(query.dtype)} key.dtype: {_cpp(key.dtype)} and value.dtype: {_cpp(value.dtype)} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point dtype, but got {query.dtype}")
    if attn_mask is not None and not (
        _is_bool(attn_mask) or str(attn_mask.dtype).endswith("float32") or attn_mask.dtype == query.dtype
    ):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{_cpp(attn_mask.dtype)} and  query.dtype: {_cpp(query.dtype)} instead."
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")


def _fused_inputs(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float, enable_gqa: bool) -> Any:
    """(query, key, value, mask, was 3-d) shaped for the fused operator, or None: the math path.

    3-d (N, L, E) inputs become one head; batch sizes of 1 and a single key/value head are
    broadcast with expand (stride 0, no copy: the kernel reads strides, and the gradient of
    expand sums them back)."""
    nd = query.dim()
    if dropout_p > 0.0 or nd not in (3, 4) or key.dim() != nd or value.dim() != nd:
        return None
    if attn_mask is not None and (attn_mask.requires_grad or attn_mask.dim() > nd):
        return None
    if nd == 3:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if attn_mask is not None and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(1)
    B = max(query.size(0), key.size(0), value.size(0))
    _, H, L, E = query.shape
    _, Hk, S, Ek = key.shape
    _, Hv, Sv, Ev = value.shape
    if any(t.size(0) not in (1, B) for t in (query, key, value)) or (Hk, S, E) != (Hv, Sv, Ek):
        return None
    if min(B, H, Hk, L, S, E) == 0:
        return None
    if H != Hk and not (enable_gqa and H % Hk == 0):
        if Hk != 1:
            return None
        Hk = H  # one key/value head broadcast to every query head
    query = query.expand(B, H, L, E) if query.size(0) != B else query
    key = key.expand(B, Hk, S, E) if tuple(key.shape[:2]) != (B, Hk) else key
    value = value.expand(B, Hk, S, Ev) if tuple(value.shape[:2]) != (B, Hk) else value
    if attn_mask is not None:
        target = (B, H, L, S)
        for m, t in zip(tuple(attn_mask.shape), target[4 - attn_mask.dim() :], strict=True):
            if m not in (1, t):
                return None  # the math path reports the broadcasting error
    return query, key, value, attn_mask, nd == 3


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    _check_inputs(query, key, value, attn_mask, dropout_p, is_causal)
    fused = _fused_inputs(query, key, value, attn_mask, dropout_p, enable_gqa)
    if fused is not None:
        q, k, v, mask, three_d = fused
        out, _ = ops._call__scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, mask, scale)
        return out.squeeze(1) if three_d else out
    out, _ = ops._call__scaled_dot_product_attention_math(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale, enable_gqa
    )
    return out


def scaled_dot_product_attention_math(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    dropout_mask: Any = None,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> tuple[Any, Any]:
    """(softmax(Q K^T * scale + mask) V, the attention weights after dropout)."""
    L, S, E = query.size(-2), key.size(-2), query.size(-1)
    factor = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)
        key = ops._call_repeat_interleave_self_int(key, rep, -3, None)
        value = ops._call_repeat_interleave_self_int(value, rep, -3, None)
    attn = query.matmul(key.transpose(-2, -1)) * factor
    if is_causal:
        keep = _ea().ones((L, S), dtype=_ea().bool, device=query.device).tril()
        attn = attn.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        if _is_bool(attn_mask):
            attn = attn.masked_fill(attn_mask.logical_not(), -math.inf)
        else:  # added in the scores' dtype (PyTorch adds in place)
            attn = attn + attn_mask.to(attn.dtype)
    # only an explicit mask can make a whole row -inf (a causal row keeps its first column);
    # decided on the arguments, not on the scores' values, so capture records one graph
    attn = ops._call__softmax(attn, -1, False) if attn_mask is None else _safe_softmax(attn)
    if dropout_p > 0.0:
        scale_kept = 1.0 / (1.0 - dropout_p) if dropout_p < 1.0 else 0.0
        if dropout_mask is None:  # one product in the graph: attn * (keep / (1 - p)), PyTorch's
            noise = _ea().empty_like(attn.detach()).bernoulli_(1.0 - dropout_p)
            attn = attn * noise.mul_(scale_kept)
        else:
            attn = attn.masked_fill(dropout_mask.logical_not(), 0.0) * scale_kept
    return attn.matmul(value), attn


def _safe_softmax(attn: Any) -> Any:
    """softmax over the last dim where a row of -inf gives 0, not NaN (PyTorch's _safe_softmax).

    Those rows are zeroed before the fused softmax (so it and its gradient stay finite) and
    after. No branch on the values: a captured graph holds the same ops for every input."""
    masked_rows = (attn.detach() == -math.inf).all(-1, True)
    out = ops._call__softmax(attn.masked_fill(masked_rows, 0.0), -1, False)
    return out.masked_fill(masked_rows, 0.0)


def _ea() -> Any:
    return ember.aten
