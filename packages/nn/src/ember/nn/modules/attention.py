"""``MultiheadAttention`` (PyTorch's nn.MultiheadAttention, defined there in activation.py).

Parameters as PyTorch's: with kdim == vdim == embed_dim one packed ``in_proj_weight``
(3E, E) (rows q | k | v), else ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim),
``v_proj_weight`` (E, vdim); ``in_proj_bias`` (3E) with ``bias``; ``bias_k`` and
``bias_v`` (1, 1, E) with ``add_bias_kv``; ``out_proj`` a Linear(E, E). Initialised
as PyTorch: xavier_uniform projections, zero biases, xavier_normal bias_k/bias_v.
"""

from __future__ import annotations

from typing import Any, ClassVar

import ember.aten as ea
from ember.aten import Tensor

from .. import _functional_attention as _fa
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: PyTorch gives MultiheadAttention.out_proj this class
    (so that quantization passes leave it alone); the name shows in repr."""


class MultiheadAttention(Module):
    """MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (attn_output, attn_weights)
    query (L, N, E) ((N, L, E) with batch_first, or unbatched (L, E)), key (S, N, kdim),
    value (S, N, vdim); attn_output like query; attn_weights (N, L, S) averaged over
    heads, (N, H, L, S) with ``average_attn_weights=False``, None without ``need_weights``.

    >>> mha = MultiheadAttention(8, 2)
    >>> x = ember.aten.randn(5, 3, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (ember.aten.Size([5, 3, 8]), ember.aten.Size([3, 5, 5]))
    """

    __constants__: ClassVar[list[str]] = ["batch_first"]
    bias_k: Tensor | None
    bias_v: Tensor | None

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        factory: dict[str, Any] = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(ea.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(ea.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(ea.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(ea.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ea.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(ea.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(ea.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = _fa._canonical_mask(
            key_padding_mask, "key_padding_mask", _fa._none_or_dtype(attn_mask), "attn_mask", query.dtype
        )
        attn_mask = _fa._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)

        if self.batch_first and is_batched:
            # keep `query is key is value` (self-attention takes the one-GEMM projection)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))

        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = _fa.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights
