"""MultiheadAttention, F.multi_head_attention_forward and the Transformer layers: parameters as
PyTorch names them, forward values against a NumPy float64 reference written step by step (per
batch entry and head) from the module's own weights, masks, gradients and PyTorch's messages."""

from __future__ import annotations

import math
import re

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F

F64 = ea.float64

# ---- NumPy reference -------------------------------------------------------------------------


def to_np(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def softmax(x: np.ndarray) -> np.ndarray:
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x: np.ndarray, w, b, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def mha(m, query, key, value, attn_mask=None, key_padding_mask=None):
    """MultiheadAttention m (eval, no dropout) on (L, N, E) / (S, N, kdim) / (S, N, vdim) arrays.

    attn_mask: None, (L, S) or (N * H, L, S), bool (True = blocked) or float (added);
    key_padding_mask: None or (N, S) bool. Returns (out (L, N, E), weights (N, H, L, S)).
    """
    E, H = m.embed_dim, m.num_heads
    D = E // H
    if m.in_proj_weight is not None:
        w = to_np(m.in_proj_weight)
        wq, wk, wv = w[:E], w[E : 2 * E], w[2 * E :]
    else:
        wq, wk, wv = to_np(m.q_proj_weight), to_np(m.k_proj_weight), to_np(m.v_proj_weight)
    if m.in_proj_bias is not None:
        b = to_np(m.in_proj_bias)
        bq, bk, bv = b[:E], b[E : 2 * E], b[2 * E :]
    else:
        bq = bk = bv = np.zeros(E)
    L, N, _ = query.shape
    S = key.shape[0]
    q = query @ wq.T + bq
    k = key @ wk.T + bk
    v = value @ wv.T + bv
    # additive mask per (n, h): (L, S)
    mask = np.zeros((N, H, L, S))
    if attn_mask is not None:
        am = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask.astype(np.float64)
        mask = mask + (am if am.ndim == 2 else am.reshape(N, H, L, S))
    if key_padding_mask is not None:
        mask = mask + np.where(key_padding_mask, -np.inf, 0.0)[:, None, None, :]
    if m.bias_k is not None:
        k = np.concatenate([k, np.broadcast_to(to_np(m.bias_k), (1, N, E))])
        v = np.concatenate([v, np.broadcast_to(to_np(m.bias_v), (1, N, E))])
        mask = np.concatenate([mask, np.zeros((N, H, L, 1))], axis=3)
    out = np.zeros((L, N, E))
    weights = np.zeros((N, H, L, mask.shape[3] + (1 if m.add_zero_attn else 0)))
    for n in range(N):
        for h in range(H):
            qh = q[:, n, h * D : (h + 1) * D]
            kh = k[:, n, h * D : (h + 1) * D]
            vh = v[:, n, h * D : (h + 1) * D]
            mh = mask[n, h]
            if m.add_zero_attn:
                kh = np.concatenate([kh, np.zeros((1, D))])
                vh = np.concatenate([vh, np.zeros((1, D))])
                mh = np.concatenate([mh, np.zeros((L, 1))], axis=1)
            p = softmax(qh @ kh.T / math.sqrt(D) + mh)
            weights[n, h] = p
            out[:, n, h * D : (h + 1) * D] = p @ vh
    out = out @ to_np(m.out_proj.weight).T
    if m.out_proj.bias is not None:
        out = out + to_np(m.out_proj.bias)
    return out, weights


def encoder_layer(layer, src, src_mask=None, src_key_padding_mask=None, activation=None):
    """TransformerEncoderLayer (eval) on src (S, N, E)."""
    act = activation or (lambda x: np.maximum(x, 0.0))

    def norm(mod, x):
        w = None if mod.weight is None else to_np(mod.weight)
        b = None if mod.bias is None else to_np(mod.bias)
        return layer_norm(x, w, b, mod.eps)

    def lin(mod, x):
        y = x @ to_np(mod.weight).T
        return y if mod.bias is None else y + to_np(mod.bias)

    def sa(x):
        return mha(layer.self_attn, x, x, x, src_mask, src_key_padding_mask)[0]

    def ff(x):
        return lin(layer.linear2, act(lin(layer.linear1, x)))

    x = src
    if layer.norm_first:
        x = x + sa(norm(layer.norm1, x))
        x = x + ff(norm(layer.norm2, x))
    else:
        x = norm(layer.norm1, x + sa(x))
        x = norm(layer.norm2, x + ff(x))
    return x


def _t(a: np.ndarray) -> ea.Tensor:
    return ea.from_numpy(np.ascontiguousarray(a))


def _raises(exc, msg, fn):
    with pytest.raises(exc, match=re.escape(msg)):
        fn()


# ---- MultiheadAttention: parameters ----------------------------------------------------------


def test_mha_parameters_as_pytorch() -> None:
    m = nn.MultiheadAttention(8, 2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (24, 8)),
        ("in_proj_bias", (24,)),
        ("out_proj.weight", (8, 8)),
        ("out_proj.bias", (8,)),
    ]
    m2 = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    assert [(n, tuple(p.shape)) for n, p in m2.named_parameters()] == [
        ("q_proj_weight", (8, 8)),
        ("k_proj_weight", (8, 3)),
        ("v_proj_weight", (8, 5)),
        ("bias_k", (1, 1, 8)),
        ("bias_v", (1, 1, 8)),
        ("out_proj.weight", (8, 8)),
    ]
    assert list(m2.state_dict()) == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "bias_k",
        "bias_v",
        "out_proj.weight",
    ]
    assert m2.in_proj_weight is None and m2.in_proj_bias is None
    assert repr(m) == (
        "MultiheadAttention(\n"
        "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n"
        ")"
    )
    assert isinstance(m.out_proj, nn.Linear)


def test_mha_initialisation() -> None:
    ea.manual_seed(0)
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = math.sqrt(6.0 / (16 + 48))  # xavier_uniform on (3E, E)
    w = to_np(m.in_proj_weight)
    assert w.min() >= -bound and w.max() <= bound and w.max() > 0.8 * bound
    assert np.all(to_np(m.in_proj_bias) == 0) and np.all(to_np(m.out_proj.bias) == 0)
    assert np.std(to_np(m.bias_k)) > 0  # xavier_normal, not zeros


# ---- MultiheadAttention: values --------------------------------------------------------------

MHA_CASES = [
    ("plain", {}, {}),
    ("float_mask_and_padding", {}, {"attn_mask": "float2d", "key_padding_mask": True}),
    ("bool_mask", {}, {"attn_mask": "bool2d"}),
    ("mask_3d", {}, {"attn_mask": "float3d"}),
    ("kdim_vdim", {"kdim": 3, "vdim": 5}, {"key_padding_mask": True}),
    (
        "bias_kv_zero_attn",
        {"add_bias_kv": True, "add_zero_attn": True},
        {"attn_mask": "float2d", "key_padding_mask": True},
    ),
    ("no_bias", {"bias": False}, {}),
]


def _mha_inputs(m, L=4, S=5, N=2, seed=1, cross=True):
    r = np.random.default_rng(seed)
    q = r.standard_normal((L, N, m.embed_dim))
    k = r.standard_normal((S, N, m.kdim)) if cross else q
    v = r.standard_normal((S, N, m.vdim)) if cross else q
    return q, k, v


def _masks(spec: dict, m, L, S, N, seed=2):
    r = np.random.default_rng(seed)
    out = {}
    kind = spec.get("attn_mask")
    if kind == "float2d":
        out["attn_mask"] = r.standard_normal((L, S))
    elif kind == "float3d":
        out["attn_mask"] = r.standard_normal((N * m.num_heads, L, S))
    elif kind == "bool2d":
        am = r.random((L, S)) < 0.3
        am[:, 0] = False  # every query keeps one key
        out["attn_mask"] = am
    if spec.get("key_padding_mask"):
        kpm = np.zeros((N, S), dtype=bool)
        kpm[0, -2:] = True
        kpm[1, -1] = True
        out["key_padding_mask"] = kpm
    return out


@pytest.mark.parametrize(("name", "ctor", "spec"), MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_mha_against_numpy_reference(name: str, ctor: dict, spec: dict) -> None:
    ea.manual_seed(3)
    m = nn.MultiheadAttention(8, 2, dtype=F64, **ctor)
    q, k, v = _mha_inputs(m)
    masks = _masks(spec, m, 4, 5, 2)
    ref_out, ref_w = mha(m, q, k, v, masks.get("attn_mask"), masks.get("key_padding_mask"))
    kwargs = {key: _t(val) for key, val in masks.items()}
    if "key_padding_mask" in masks and masks.get("attn_mask", np.zeros(0, bool)).dtype != bool:
        # same mask types (PyTorch warns on a bool key_padding_mask with a float attn_mask)
        kwargs["key_padding_mask"] = _t(np.where(masks["key_padding_mask"], -np.inf, 0.0))
    out, w = m(_t(q), _t(k), _t(v), **kwargs)
    np.testing.assert_allclose(to_np(out), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(w), ref_w.mean(1), rtol=1e-10, atol=1e-12)
    out_h, w_h = m(_t(q), _t(k), _t(v), average_attn_weights=False, **kwargs)
    np.testing.assert_allclose(to_np(w_h), ref_w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(out_h), ref_out, rtol=1e-10, atol=1e-12)
    out_nw, w_nw = m(_t(q), _t(k), _t(v), need_weights=False, **kwargs)  # the scaled-dot-product path
    assert w_nw is None
    np.testing.assert_allclose(to_np(out_nw), ref_out, rtol=1e-10, atol=1e-12)


def test_mha_self_attention_batch_first_and_unbatched() -> None:
    ea.manual_seed(4)
    m = nn.MultiheadAttention(8, 4, batch_first=True, dtype=F64)
    q, _, _ = _mha_inputs(m, cross=False)
    ref_out, ref_w = mha(m, q, q, q)
    x = _t(q.transpose(1, 0, 2))  # (N, L, E)
    out, w = m(x, x, x)
    np.testing.assert_allclose(to_np(out), ref_out.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(w), ref_w.mean(1), rtol=1e-10, atol=1e-12)
    xu = _t(q[:, 1])  # unbatched (L, E)
    out_u, w_u = m(xu, xu, xu, key_padding_mask=ea.tensor([False, False, True, False]))
    ref_u, ref_wu = mha(m, q[:, 1:2], q[:, 1:2], q[:, 1:2], key_padding_mask=np.array([[False, False, True, False]]))
    assert tuple(out_u.shape) == (4, 8) and tuple(w_u.shape) == (4, 4)
    np.testing.assert_allclose(to_np(out_u), ref_u[:, 0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(w_u), ref_wu[0].mean(0), rtol=1e-10, atol=1e-12)


def test_mha_is_causal_hint_matches_the_mask() -> None:
    ea.manual_seed(5)
    m = nn.MultiheadAttention(8, 2, dtype=F64)
    q, _, _ = _mha_inputs(m, L=5, cross=False)
    mask = _t(np.triu(np.full((5, 5), -np.inf), 1))
    ref_out, _ = mha(m, q, q, q, attn_mask=to_np(mask))
    x = _t(q)
    out, _ = m(x, x, x, attn_mask=mask, is_causal=True, need_weights=False)
    np.testing.assert_allclose(to_np(out), ref_out, rtol=1e-10, atol=1e-12)
    out2, _ = m(x, x, x, attn_mask=mask, is_causal=True)
    np.testing.assert_allclose(to_np(out2), ref_out, rtol=1e-10, atol=1e-12)


def test_functional_multi_head_attention_forward() -> None:
    ea.manual_seed(6)
    m = nn.MultiheadAttention(8, 2, dtype=F64)
    q, k, v = _mha_inputs(m)
    out, w = F.multi_head_attention_forward(
        _t(q),
        _t(k),
        _t(v),
        8,
        2,
        m.in_proj_weight,
        m.in_proj_bias,
        None,
        None,
        False,
        0.0,
        m.out_proj.weight,
        m.out_proj.bias,
        training=False,
    )
    ref_out, ref_w = mha(m, q, k, v)
    np.testing.assert_allclose(to_np(out), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(w), ref_w.mean(1), rtol=1e-10, atol=1e-12)


def test_mha_dropout_only_in_training() -> None:
    ea.manual_seed(7)
    m = nn.MultiheadAttention(8, 2, dropout=0.5, dtype=F64)
    q, _, _ = _mha_inputs(m, cross=False)
    x = _t(q)
    m.eval()
    ref_out, _ = mha(m, q, q, q)
    np.testing.assert_allclose(to_np(m(x, x, x)[0]), ref_out, rtol=1e-10, atol=1e-12)
    m.train()
    _, w = m(x, x, x, average_attn_weights=False)
    wn = to_np(w)
    assert np.any(wn == 0) and wn.max() > 1.0 / 4  # dropped entries, survivors scaled by 2


def test_mha_gradcheck() -> None:
    ea.manual_seed(8)
    m = nn.MultiheadAttention(4, 2, dtype=F64, add_bias_kv=True)
    q = ea.randn(3, 2, 4, dtype=F64, requires_grad=True)
    k = ea.randn(2, 2, 4, dtype=F64, requires_grad=True)
    kpm = ea.tensor([[False, True], [False, False]])
    assert gradcheck(lambda q, k: m(q, k, k, key_padding_mask=kpm), (q, k))
    w = m.in_proj_weight.detach().clone().requires_grad_(True)
    b = m.in_proj_bias.detach().clone().requires_grad_(True)

    def fn(q, w, b):
        return F.multi_head_attention_forward(
            q, q, q, 4, 2, w, b, None, None, False, 0.0, m.out_proj.weight, m.out_proj.bias, need_weights=False
        )[0]

    assert gradcheck(fn, (q, w, b))


def test_mha_parameters_receive_gradients() -> None:
    m = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True)
    out, _ = m(ea.randn(4, 2, 8), ea.randn(5, 2, 3), ea.randn(5, 2, 5))
    out.sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


def test_mha_errors() -> None:
    _raises(AssertionError, "embed_dim must be divisible by num_heads", lambda: nn.MultiheadAttention(8, 3))
    _raises(
        ValueError,
        "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=1 instead",
        lambda: nn.MultiheadAttention(0, 1),
    )
    m = nn.MultiheadAttention(8, 2)
    q = ea.randn(4, 2, 8)
    _raises(RuntimeError, "The shape of the 2D attn_mask is", lambda: m(q, q, q, attn_mask=ea.zeros(3, 4)))
    _raises(RuntimeError, "but should be (4, 4).", lambda: m(q, q, q, attn_mask=ea.zeros(3, 4)))
    _raises(RuntimeError, "but should be (4, 4, 4).", lambda: m(q, q, q, attn_mask=ea.zeros(2, 4, 4)))
    _raises(
        AssertionError,
        "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D tensor instead",
        lambda: m(q, q, q, attn_mask=ea.zeros(4, 4, 4, 4)),
    )
    _raises(
        AssertionError,
        "Expected key_padded_mask.shape[1] to be 4, but got 3",
        lambda: m(q, q, q, key_padding_mask=ea.zeros(2, 3, dtype=ea.bool)),
    )
    _raises(
        AssertionError,
        "only bool and floating types of key_padding_mask are supported",
        lambda: m(q, q, q, key_padding_mask=ea.zeros(2, 4, dtype=ea.int64)),
    )
    _raises(
        AssertionError,
        "only bool and floating types of attn_mask are supported",
        lambda: m(q, q, q, attn_mask=ea.zeros(4, 4, dtype=ea.int64)),
    )
    _raises(AssertionError, "does not match value shape", lambda: m(q, q[:3], q))
    _raises(RuntimeError, "Need attn_mask if specifying the is_causal hint.", lambda: m(q, q, q, is_causal=True))
    _raises(
        AssertionError,
        "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor",
        lambda: m(q.reshape(4, 2, 2, 4), q, q),
    )
    _raises(AssertionError, "was expecting embedding dimension of 8, but got 5", lambda: m(q[..., :5], q, q))
    _raises(
        AssertionError,
        "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found 3-D and 3-D",
        lambda: m(q[0], q, q),
    )
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        m(q, q, q, attn_mask=ea.zeros(4, 4), key_padding_mask=ea.zeros(2, 4, dtype=ea.bool))


# ---- Transformer layers ----------------------------------------------------------------------


def test_encoder_layer_parameters_and_repr_as_pytorch() -> None:
    e = nn.TransformerEncoderLayer(8, 2, 16)
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == [
        ("self_attn.in_proj_weight", (24, 8)),
        ("self_attn.in_proj_bias", (24,)),
        ("self_attn.out_proj.weight", (8, 8)),
        ("self_attn.out_proj.bias", (8,)),
        ("linear1.weight", (16, 8)),
        ("linear1.bias", (16,)),
        ("linear2.weight", (8, 16)),
        ("linear2.bias", (8,)),
        ("norm1.weight", (8,)),
        ("norm1.bias", (8,)),
        ("norm2.weight", (8,)),
        ("norm2.bias", (8,)),
    ]
    assert (
        repr(e)
        == """TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
  )
  (linear1): Linear(in_features=8, out_features=16, bias=True)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=16, out_features=8, bias=True)
  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
)"""
    )
    g = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU(), bias=False)
    assert repr(g).endswith("  (activation): GELU(approximate='none')\n)")
    assert g.activation_relu_or_gelu == 2 and e.activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation=ea.tanh).activation_relu_or_gelu == 0
    _raises(
        RuntimeError,
        "activation should be relu/gelu, not tanh",
        lambda: nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    )


ENC_CASES = [
    ("post_norm_relu", {}, {}),
    ("pre_norm_gelu_masks", {"norm_first": True, "activation": "gelu"}, {"mask": "causal", "padding": True}),
    ("callable_activation_float_mask", {"activation": F.gelu}, {"mask": "float"}),
    ("no_bias", {"bias": False}, {"padding": True}),
]


@pytest.mark.parametrize(("name", "ctor", "spec"), ENC_CASES, ids=[c[0] for c in ENC_CASES])
def test_encoder_layer_against_numpy_reference(name: str, ctor: dict, spec: dict) -> None:
    ea.manual_seed(9)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dtype=F64, **ctor).eval()
    r = np.random.default_rng(10)
    src = r.standard_normal((5, 3, 8))
    mask = kpm = None
    if spec.get("mask") == "causal":
        mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    elif spec.get("mask") == "float":
        mask = r.standard_normal((5, 5))
    if spec.get("padding"):
        kpm = np.zeros((3, 5), dtype=bool)
        kpm[0, 3:] = True
    act = gelu if ctor.get("activation") in ("gelu", F.gelu) else None
    ref = encoder_layer(layer, src, mask, kpm, act)
    out = layer(
        _t(src), src_mask=None if mask is None else _t(mask), src_key_padding_mask=None if kpm is None else _t(kpm)
    )
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-9, atol=1e-11)


def test_encoder_stack_and_causal_detection() -> None:
    ea.manual_seed(11)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dtype=F64)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, dtype=F64)).eval()
    assert [n for n, _ in enc.named_parameters()][:2] == [
        "layers.0.self_attn.in_proj_weight",
        "layers.0.self_attn.in_proj_bias",
    ]
    assert "layers.1.linear2.bias" in enc.state_dict() and "norm.weight" in enc.state_dict()
    assert enc.layers[0] is not enc.layers[1] and enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    r = np.random.default_rng(12)
    src = r.standard_normal((2, 5, 8))  # (N, S, E)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=F64)
    x = src.transpose(1, 0, 2)
    for lyr in enc.layers:
        x = encoder_layer(lyr, x, to_np(mask))
    n = enc.norm
    ref = layer_norm(x, to_np(n.weight), to_np(n.bias), n.eps).transpose(1, 0, 2)
    out = enc(_t(src), mask=mask)
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-9, atol=1e-11)
    from ember.nn.modules.transformer import _detect_is_causal_mask

    assert _detect_is_causal_mask(mask) is True
    assert _detect_is_causal_mask(ea.zeros(5, 5, dtype=F64)) is False
    assert _detect_is_causal_mask(None, True) is True


def test_generate_square_subsequent_mask() -> None:
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == ea.float32
    assert to_np(m).tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]]


def _decoder_layer_ref(layer, tgt, memory, tgt_mask=None, memory_kpm=None):
    def norm(mod, x):
        return layer_norm(x, to_np(mod.weight), to_np(mod.bias), mod.eps)

    def lin(mod, x):
        return x @ to_np(mod.weight).T + to_np(mod.bias)

    def sa(x):
        return mha(layer.self_attn, x, x, x, tgt_mask)[0]

    def ca(x):
        return mha(layer.multihead_attn, x, memory, memory, None, memory_kpm)[0]

    def ff(x):
        return lin(layer.linear2, np.maximum(lin(layer.linear1, x), 0))

    x = tgt
    if layer.norm_first:
        x = x + sa(norm(layer.norm1, x))
        x = x + ca(norm(layer.norm2, x))
        return x + ff(norm(layer.norm3, x))
    x = norm(layer.norm1, x + sa(x))
    x = norm(layer.norm2, x + ca(x))
    return norm(layer.norm3, x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_against_numpy_reference(norm_first: bool) -> None:
    ea.manual_seed(13)
    layer = nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first, dtype=F64).eval()
    r = np.random.default_rng(14)
    tgt, memory = r.standard_normal((4, 2, 8)), r.standard_normal((6, 2, 8))
    tmask = to_np(nn.Transformer.generate_square_subsequent_mask(4, dtype=F64))
    kpm = np.zeros((2, 6), dtype=bool)
    kpm[1, 4:] = True
    ref = _decoder_layer_ref(layer, tgt, memory, tmask, kpm)
    out = layer(_t(tgt), _t(memory), tgt_mask=_t(tmask), memory_key_padding_mask=_t(kpm), tgt_is_causal=True)
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-9, atol=1e-11)


def test_transformer_parameters_forward_and_errors() -> None:
    ea.manual_seed(15)
    t = nn.Transformer(8, 2, 1, 1, 16, dtype=F64).eval()
    names = [n for n, _ in t.named_parameters()]
    assert names[:4] == [
        "encoder.layers.0.self_attn.in_proj_weight",
        "encoder.layers.0.self_attn.in_proj_bias",
        "encoder.layers.0.self_attn.out_proj.weight",
        "encoder.layers.0.self_attn.out_proj.bias",
    ]
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in names and names[-2:] == [
        "decoder.norm.weight",
        "decoder.norm.bias",
    ]
    assert len(names) == 34
    # _reset_parameters: every matrix xavier_uniform (LayerNorm / bias vectors untouched)
    w = to_np(t.encoder.layers[0].linear1.weight)
    assert np.abs(w).max() <= math.sqrt(6.0 / 24) and np.all(to_np(t.encoder.norm.weight) == 1)
    r = np.random.default_rng(16)
    src, tgt = r.standard_normal((5, 2, 8)), r.standard_normal((3, 2, 8))
    tmask = t.generate_square_subsequent_mask(3, dtype=F64)
    mem = encoder_layer(t.encoder.layers[0], src)
    en = t.encoder.norm
    mem = layer_norm(mem, to_np(en.weight), to_np(en.bias), en.eps)
    dec = _decoder_layer_ref(t.decoder.layers[0], tgt, mem, to_np(tmask))
    dn = t.decoder.norm
    ref = layer_norm(dec, to_np(dn.weight), to_np(dn.bias), dn.eps)
    out = t(_t(src), _t(tgt), tgt_mask=tmask)
    assert tuple(out.shape) == (3, 2, 8)
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-9, atol=1e-11)
    _raises(RuntimeError, "the batch number of src and tgt must be equal", lambda: t(_t(src), _t(tgt[:, :1])))
    _raises(
        RuntimeError,
        "the feature number of src and tgt must be equal to d_model",
        lambda: t(_t(src[..., :4]), _t(tgt[..., :4])),
    )


def test_transformer_trains_one_step() -> None:
    ea.manual_seed(17)
    t = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True, norm_first=True)
    out = t(ea.randn(2, 5, 8), ea.randn(2, 3, 8))
    out.pow(2).mean().backward()
    missing = [n for n, p in t.named_parameters() if p.grad is None]
    assert missing == []


def test_encoder_layer_gradcheck() -> None:
    ea.manual_seed(18)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=F64)
    x = ea.randn(3, 2, 4, dtype=F64, requires_grad=True)
    kpm = ea.tensor([[False, False, True], [False, False, False]])
    assert gradcheck(lambda x: layer(x, src_key_padding_mask=kpm), (x,))
