"""The fused backend's masks and row kernels against the eager op chain.

Masks: comparisons make bool values inside a kernel (stored as one byte), masked_fill and
where read them, isfinite/isnan/logical ops combine them -- ReLU's backward (le + masked_fill)
is one loop. Row kernels: reductions over the last dim (amax, sum, mean) are passes over each
row, so softmax (max, then the sum of exps, then the quotients), log-softmax and layer norm
written as op chains -- as autograd captures the composites -- are one kernel each.

Tolerance for float32 as in test_fused.py (rtol 1e-5, atol 1e-6: libm's exp/log against
ember's vectorised kernels, sums accumulated in double); float64 1e-12; bool results exact.
"""

from __future__ import annotations

import ember.aten as ea
import ember.fx as fx
import ember.nn.functional as F
import numpy as np
import pytest
from ember.fx import _fused

TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_FX_CACHE_DIR", str(tmp_path / "fxcache"))


def _run(fn, *args):
    cf = fx.compile(fn, backend="fused")
    cf(*[a.clone() for a in args])
    cf(*[a.clone() for a in args])
    return cf, cf(*args)


def _kernels(cf):
    (entry,) = cf.entries_list()
    return [s for s in entry.plan if isinstance(s, _fused.FusedKernel)]


def _check(out, expect, dtype):
    outs = out if isinstance(out, tuple) else (out,)
    expects = expect if isinstance(expect, tuple) else (expect,)
    assert len(outs) == len(expects)
    rtol, atol = TOL[dtype]
    for o, e in zip(outs, expects, strict=True):
        assert o.dtype == e.dtype and tuple(o.shape) == tuple(e.shape)
        if e.dtype == ea.bool:
            np.testing.assert_array_equal(o.numpy(), e.numpy())
        else:
            np.testing.assert_allclose(o.numpy(), e.numpy(), rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------

MASK_CHAINS = {
    "relu_backward": lambda a, b: b.masked_fill(a <= 0, 0.0),
    "where": lambda a, b: ea.where(a > b, a * 2.0, b - 1.0),
    "compares": lambda a, b: (a < b, a <= 0.5, a > b, a >= b, a == b, a != 0.0),
    "nan_masks": lambda a, b: (a + b).masked_fill(a.isnan().logical_or(b.isfinite().logical_not()), -1.0),
}


def _mask_layouts(dtype):
    def r(*s):
        t = ea.randn(*s, dtype=dtype)
        flat = t.reshape(-1)
        if flat.numel() >= 4:  # NaN and infinities where the layout has room: comparisons see them
            flat[0] = float("nan")
            flat[1] = float("inf")
            flat[2] = float("-inf")
        return t

    return {
        "same": (r(4, 5), r(4, 5)),
        "broadcast": (r(4, 5), r(5)),
        "transposed": (r(5, 4).t(), r(4, 5)),
        "zero_d": (r(), r()),
        "empty": (r(0, 5), r(5)),
    }


MASK_CASES = [(c, lay, "float32") for c in MASK_CHAINS for lay in _mask_layouts(ea.float32)] + [
    (c, lay, "float64") for c in MASK_CHAINS for lay in ("same", "transposed")
]


@pytest.mark.parametrize("chain, layout, dtype", MASK_CASES)
def test_mask_chain_matches_eager(chain, layout, dtype) -> None:
    fn = MASK_CHAINS[chain]
    a, b = _mask_layouts(getattr(ea, dtype))[layout]
    cf, out = _run(fn, a, b)
    _check(out, fn(a, b), dtype)
    if layout in ("same", "transposed"):
        assert len(_kernels(cf)) == 1  # comparisons, masks and arithmetic in one loop


def test_relu_backward_of_a_training_step_is_one_kernel() -> None:
    # the graph of relu's backward: le(x, 0) then masked_fill(grad, mask, 0)
    def fn(x, g):
        return g.masked_fill(x <= 0, 0.0) * 0.5

    x, g = ea.randn(64, 33), ea.randn(64, 33)
    cf, out = _run(fn, x, g)
    _check(out, fn(x, g), "float32")
    (k,) = _kernels(cf)
    assert [n.op.name for n in k.nodes] == ["le", "masked_fill", "mul"]
    assert "uint8_t" not in k.source  # the mask never leaves the loop: no byte array


def test_a_mask_the_caller_reads_is_stored_as_bytes() -> None:
    def fn(a):
        m = a > 0.0
        return m, a.masked_fill(m, 0.0)

    a = ea.randn(7, 9)
    cf, (m, out) = _run(fn, a)
    _check((m, out), fn(a), "float32")
    (k,) = _kernels(cf)
    assert "uint8_t" in k.source


# ---------------------------------------------------------------------------
# row kernels
# ---------------------------------------------------------------------------


def _softmax(x, mask):
    s = (x * 0.5).masked_fill(mask, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = m.masked_fill(m.isfinite().logical_not(), 0.0)  # as the attention composite guards -inf rows
    e = (s - m).exp()
    d = e.sum(-1, keepdim=True)
    return e / d.masked_fill(d == 0, 1.0), d  # the denominator, for backward: a per-row output


def _log_softmax(x, mask):
    m = x.amax(-1, keepdim=True)
    z = x - m
    return z - z.exp().sum(-1, keepdim=True).log(), x.mean(-1), m


def _layer_norm(x, w):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d * (var + 1e-5).rsqrt() * w + 0.5


ROW_CHAINS = {"softmax": _softmax, "log_softmax": _log_softmax, "layer_norm": _layer_norm}


def _row_layouts():
    def r(*s):
        return ea.randn(*s)

    def mask(*s):
        m = r(*s) > 1.0
        m[0] = True  # a whole row masked: -inf everywhere, the guard keeps it finite
        return m

    return {
        "rows": (r(6, 37), mask(6, 37)),
        "3d_broadcast": (r(2, 5, 33), mask(5, 33)),
        "transposed": (r(37, 6).t(), mask(6, 37)),
        "row_of_one": (r(7, 1), mask(7, 1)),
        "parallel": (r(300, 301), mask(300, 301)),
    }


@pytest.mark.parametrize("layout", list(_row_layouts()))
@pytest.mark.parametrize("chain", list(ROW_CHAINS))
def test_row_kernel_matches_eager(chain, layout) -> None:
    fn = ROW_CHAINS[chain]
    x, m = _row_layouts()[layout]
    second = m if chain != "layer_norm" else ea.randn(x.shape[-1])
    cf, out = _run(fn, x, second)
    _check(out, fn(x, second), "float32")
    (k,) = _kernels(cf)  # every pass of every row in one kernel
    reductions = [n.op.name for n in k.nodes if n.op.full_name in _fused.REDUCTIONS]
    assert reductions == {"softmax": ["amax", "sum"], "log_softmax": ["amax", "sum", "mean"]}.get(
        chain, ["mean", "mean"]
    )


def test_row_kernel_float64() -> None:
    x = ea.randn(9, 40, dtype=ea.float64)
    m = ea.randn(9, 40) > 1.0
    cf, out = _run(_log_softmax, x, m)
    _check(out, _log_softmax(x, m), "float64")
    assert len(_kernels(cf)) == 1


def test_row_kernel_propagates_nan_through_amax() -> None:
    x = ea.randn(4, 8)
    x[1, 3] = float("nan")
    m = ea.zeros(4, 8, dtype=ea.bool)
    _cf, out = _run(_log_softmax, x, m)
    expect = _log_softmax(x, m)
    assert np.isnan(out[2].numpy()[1, 0]) and np.isnan(expect[2].numpy()[1, 0])
    _check(out, expect, "float32")


def test_sum_over_an_empty_last_dim_writes_zeros() -> None:
    def fn(x):
        return (x * 2.0).sum(-1), (x + 1.0).mean(-1, keepdim=True)

    x = ea.randn(5, 0)
    _cf, (s, mean) = _run(fn, x)
    np.testing.assert_array_equal(s.numpy(), np.zeros(5, np.float32))
    assert np.isnan(mean.numpy()).all() and tuple(mean.shape) == (5, 1)  # 0/0, as eager


def test_rows_of_an_empty_batch() -> None:
    x, m = ea.randn(0, 7), ea.zeros(0, 7, dtype=ea.bool)
    _cf, out = _run(_softmax, x, m)
    _check(out, _softmax(x, m), "float32")


def test_zero_d_reductions_run_eagerly() -> None:
    def fn(x):
        return (x * 3.0).amax(-1, keepdim=True) + x.sum(-1)

    x = ea.tensor(1.5)
    _cf, out = _run(fn, x)
    _check(out, fn(x), "float32")


def test_a_row_value_without_keepdim_is_not_read_inside_the_kernel() -> None:
    # sum(-1) of [4, 4] is [4]: against [4, 4] it broadcasts along the *last* dim (a column per
    # row index), not per row -- the kernel must not use its row register there
    def fn(x):
        return x - x.sum(-1)

    x = ea.randn(4, 4)
    _cf, out = _run(fn, x)
    _check(out, fn(x), "float32")


def test_in_place_is_not_read_back_by_a_later_pass() -> None:
    def fn(x):
        h = x * 2.0
        h.add_(1.0)
        return h - h.amax(-1, keepdim=True)

    x = ea.randn(6, 10)
    _cf, out = _run(fn, x)
    _check(out, fn(x), "float32")


# ---------------------------------------------------------------------------
# transposed inputs: tiles staged in their own memory order
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape", [(70, 45), (64, 64), (3, 100), (130, 257), (256, 9), (11, 131), (70, 260), (129, 300), (512, 256)]
)
def test_transposed_operand_through_a_local_tile(shape, dtype) -> None:
    # shapes around the tile (256 x 64 floats, 128 x 32 doubles) and the register transposes' blocks
    # (8 x 8 floats, 4 x 4 doubles): whole blocks, edge rows and columns, a partial last tile
    def fn(a, b):
        return (a.t() + b) * 0.5 - b.exp()

    dt = getattr(ea, dtype)
    a, b = ea.randn(*shape, dtype=dt), ea.randn(shape[1], shape[0], dtype=dt)
    cf, out = _run(fn, a, b)
    expect = fn(a, b)
    _check(out, expect, dtype)
    if shape == (130, 257):
        np.testing.assert_array_equal(  # the staging copies values: the sum itself is exact
            _run(lambda a, b: a.t() + b, a, b)[1].numpy(), (a.t() + b).numpy()
        )
    (k,) = _kernels(cf)
    assert "tile0" in k.source or "tile1" in k.source


# ---------------------------------------------------------------------------
# softmax-like nodes: log_softmax (cross_entropy's), softmax, and their backward nodes
# ---------------------------------------------------------------------------


def _loss_step(x, y, w):
    # forward and backward of cross_entropy: _log_softmax, then _log_softmax_backward_data
    x = x.detach().requires_grad_(True)
    loss = F.cross_entropy(x * w, y)
    loss.backward()
    return loss.detach(), x.grad


def _softmax_step(x, t):
    # softmax's backward node reads its output and the incoming gradient: _softmax_backward_data
    x = x.detach().requires_grad_(True)
    p = ea.softmax(x * 2.0, -1)
    (p * t).sum().backward()
    return p.detach(), x.grad, ea.log_softmax(x.detach() - 1.0, -1)


@pytest.mark.parametrize("layout", ["rows", "transposed", "parallel"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_forward_and_backward_fuse(layout, dtype) -> None:
    dt = getattr(ea, dtype)
    x = {"rows": ea.randn(37, 10, dtype=dt), "transposed": ea.randn(10, 37, dtype=dt).t()}.get(
        layout, ea.randn(300, 301, dtype=dt)
    )
    y = ea.randint(0, x.shape[1], (x.shape[0],))
    w = ea.randn(x.shape[1], dtype=dt)
    cf, out = _run(_loss_step, x, y, w)
    _check(out, _loss_step(x, y, w), dtype)
    fused = [n.op.full_name for k in _kernels(cf) for n in k.nodes]
    assert "aten::_log_softmax" in fused and "aten::_log_softmax_backward_data" in fused


@pytest.mark.parametrize("shape", [(6, 33), (2, 3, 17)])
def test_softmax_and_its_backward_fuse(shape) -> None:
    x, t = ea.randn(*shape), ea.randn(*shape)
    cf, out = _run(_softmax_step, x, t)
    _check(out, _softmax_step(x, t), "float32")
    fused = {n.op.full_name for k in _kernels(cf) for n in k.nodes}
    assert {"aten::_softmax_backward_data", "aten::log_softmax.int"} <= fused
    assert fused & {"aten::_softmax", "aten::softmax.int"}


def test_softmax_over_another_dim_runs_eagerly() -> None:
    def fn(x):
        return ea.softmax(x * 2.0, 0)

    x = ea.randn(5, 6)
    cf, out = _run(fn, x)
    _check(out, fn(x), "float32")
    assert all("softmax" not in n.op.name for k in _kernels(cf) for n in k.nodes)


# ---------------------------------------------------------------------------
# layer norm nodes: aten::layer_norm (no grad) and native_layer_norm (its mean and rstd too)
# ---------------------------------------------------------------------------


def _ln_chain(x, pos, scale, w, b):
    # a pointwise chain feeding the norm (pos broadcasts over the rows, scale is 0-d), and one after it
    h = x * scale + pos
    return F.layer_norm(h, (h.shape[-1],), w, b, 1e-5).tanh() + h


def _ln_train(x, pos, scale, w, b):
    # under autograd the norm is captured as native_layer_norm: its mean and rstd are saved
    # for native_layer_norm_backward, so the kernel stores them once per row
    x = x.detach().requires_grad_(True)
    out = _ln_chain(x, pos, scale, w, b)
    (out * out).sum().backward()
    return out.detach(), x.grad


def _ln_layouts(dtype):
    def r(*s):
        return ea.randn(*s, dtype=dtype)

    return {
        "rows": (r(6, 37), r(37)),
        "3d_broadcast": (r(2, 5, 33), r(5, 33)),  # pos broadcasts over the batch
        "transposed": (r(37, 6).t(), r(37)),  # rows read with a stride
        "row_of_one": (r(7, 1), r(1)),
        "parallel": (r(300, 301), r(301)),
        "empty_batch": (r(0, 9), r(9)),
    }


LN_CASES = [(mode, lay, "float32") for mode in ("eval", "train") for lay in _ln_layouts(ea.float32)] + [
    (mode, "rows", "float64") for mode in ("eval", "train")
]


@pytest.mark.parametrize("mode, layout, dtype", LN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_node_fuses_with_its_chains(mode, layout, dtype, affine) -> None:
    dt = getattr(ea, dtype)
    x, pos = _ln_layouts(dt)[layout]
    d = x.shape[-1]
    w, b = (ea.randn(d, dtype=dt), ea.randn(d, dtype=dt)) if affine else (None, None)
    chain = _ln_chain if mode == "eval" else _ln_train

    def fn(x, pos, scale):
        return chain(x, pos, scale, w, b)

    scale = ea.tensor(2.0, dtype=dt)
    cf, out = _run(fn, x, pos, scale)
    _check(out, fn(x, pos, scale), dtype)
    node = "aten::layer_norm" if mode == "eval" else "aten::native_layer_norm"
    fused = [k for k in _kernels(cf) if any(n.op.full_name == node for n in k.nodes)]
    assert len(fused) == 1, node
    names = [n.op.name for n in fused[0].nodes]
    assert names.index("mul") < names.index(node.split("::")[1]) < names.index("tanh")  # both chains
    if mode == "train" and x.numel():
        ln = next(n for n in fused[0].nodes if n.op.full_name == node)
        assert ln.outputs[1] in fused[0].outputs and ln.outputs[2] in fused[0].outputs  # mean, rstd stored


def test_layer_norm_statistics_match_eager() -> None:
    x, w, b = ea.randn(5, 12) * 3.0 + 1.0, ea.randn(12), ea.randn(12)

    def fn(x):
        return ea.native_layer_norm(x * 1.0, [12], w, b, 1e-3)

    cf, (out, mean, rstd) = _run(fn, x)
    e_out, e_mean, e_rstd = fn(x)
    assert tuple(mean.shape) == tuple(e_mean.shape) == (5, 1)
    _check((out, mean, rstd), (e_out, e_mean, e_rstd), "float32")
    assert len(_kernels(cf)) == 1


def test_layer_norm_of_empty_rows_runs_eagerly() -> None:
    # rows of no elements: eager writes NaN statistics, which a per-row store inside the
    # (empty) row loop never would, so the norm stays an eager kernel
    def fn(x):
        return ea.native_layer_norm(x + 1.0, [0], None, None, 1e-5)

    x = ea.randn(3, 0)
    cf, got = _run(fn, x)
    _check(got, fn(x), "float32")
    assert np.isnan(got[1].numpy()).all() and tuple(got[1].shape) == (3, 1)
    assert all(n.op.name != "native_layer_norm" for k in _kernels(cf) for n in k.nodes)


def test_layer_norm_over_several_dims_runs_eagerly() -> None:
    def fn(x):
        return F.layer_norm(x * 2.0, (4, 5))

    x = ea.randn(3, 4, 5)
    cf, got = _run(fn, x)
    _check(got, fn(x), "float32")
    assert all(n.op.name != "layer_norm" for k in _kernels(cf) for n in k.nodes)
