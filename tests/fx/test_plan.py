"""The fused backend's grouping across broadcasts, views, fills, reductions and in-place ops,
and the replay program's static memory plan.

Every case compares with the eager function on the same inputs (float32: rtol 1e-5 / atol
1e-6, float64: 1e-12, as tests/fx/test_fused.py), and says how many kernels it expects, so a
grouping that silently stops fusing fails too.
"""

from __future__ import annotations

import ember.aten as ea
import ember.fx as fx
import numpy as np
import pytest
from ember.fx import _fused, _replay

TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_FX_CACHE_DIR", str(tmp_path / "fxcache"))


def _compiled(fn, *args, backend="fused"):
    cf = fx.compile(fn, backend=backend)
    cf(*[a.clone() for a in args])  # warm-up
    cf(*[a.clone() for a in args])  # capture
    return cf


def _entry(cf):
    (entry,) = cf.entries_list()
    return entry


def _kernels(cf):
    return [s for s in _entry(cf).plan if isinstance(s, _fused.FusedKernel)]


def _close(out, expect, dtype="float32"):
    rtol, atol = TOL[dtype]
    assert tuple(out.shape) == tuple(expect.shape) and out.dtype == expect.dtype
    np.testing.assert_allclose(out.numpy(), expect.numpy(), rtol=rtol, atol=atol)


# ---- broadcasts, views and fills inside one kernel ----------------------------------------

GROUPED = {
    # a chain on the smaller operand joins the bigger one's kernel (computed per element)
    "small_chain": (lambda a, b: (b * 2.0 + 1.0).exp() * a + b, 1),
    # the group starts on the smaller shape and grows to the bigger one
    "grows": (lambda a, b: (b.abs() + 1.0).sqrt() + a, 1),
    # views that only broadcast are a new name inside the kernel
    "views": (lambda a, b: (b * 2.0).unsqueeze(0).expand(4, 5) * a - a, 1),
    "fills": (lambda a, b: a.new_ones((5,)) * b + ea.ones_like(a) * a.new_full((1, 5), 0.5) - a, 1),
    # a sum does not end the kernel: values that do not need it go on in the same loop
    "sum_then_more": (lambda a, b: ((a * b).sum(), (a + b).tanh()), 1),
    # ... and a value that needs the sum is a second kernel
    "needs_sum": (lambda a, b: (a * b).sum() * a + b, 2),
    # a kernel that reads no tensor: fills feeding a sum
    "fill_sum": (lambda a, b: (ea.ones_like(a) * 2.0).mean() + b, 2),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(GROUPED))
def test_grouped_chains_match_eager(case, dtype) -> None:
    fn, n_kernels = GROUPED[case]
    dt = getattr(ea, dtype)
    a, b = ea.randn(4, 5, dtype=dt), ea.randn(5, dtype=dt)
    cf = _compiled(fn, a, b)
    out, expect = cf(a, b), fn(a, b)
    for o, x in zip(
        out if isinstance(out, tuple) else (out,), expect if isinstance(expect, tuple) else (expect,), strict=True
    ):
        _close(o, x, dtype)
    assert len(_kernels(cf)) == n_kernels


@pytest.mark.parametrize(
    "layout",
    ["transposed", "sliced", "zero_d_small", "empty"],
)
def test_grouped_chains_odd_layouts(layout) -> None:
    fn = GROUPED["small_chain"][0]
    a, b = {
        "transposed": (ea.randn(5, 4).t(), ea.randn(5)),
        "sliced": (ea.randn(4, 10)[:, ::2], ea.randn(10)[::2]),
        "zero_d_small": (ea.randn(4, 5), ea.randn(())),
        "empty": (ea.randn(0, 5), ea.randn(5)),
    }[layout]
    cf = _compiled(fn, a, b)
    _close(cf(a, b), fn(a, b))
    assert len(_kernels(cf)) == 1


def test_smaller_value_read_later_is_not_a_member() -> None:
    """A value of the smaller shape that leaves the group would be stored once per element of
    the bigger shape: it is computed outside the kernel instead, and stays right."""

    def fn(a, b):
        c = b * 2.0
        return c, (c + a).exp()

    a, b = ea.randn(3, 5), ea.randn(5)
    cf = _compiled(fn, a, b)
    for o, x in zip(cf(a, b), fn(a, b), strict=True):
        _close(o, x)
    (k,) = _kernels(cf)
    assert all(v.meta.shape == (3, 5) for v in k.outputs)


def test_returned_view_keeps_its_aliasing() -> None:
    def fn(x):
        h = x * 2.0
        return h, h.unsqueeze(0), (h + 1.0).exp()

    x = ea.randn(6)
    cf = _compiled(fn, x)
    h, hv, e = cf(x)
    eh, ehv, ee = fn(x)
    _close(h, eh), _close(hv, ehv), _close(e, ee)
    assert hv.data_ptr() == h.data_ptr()  # still a view of h, not a copy
    h.fill_(3.0)
    assert hv.numpy().tolist() == [[3.0] * 6]


def test_tiny_training_step_is_one_kernel() -> None:
    """Forward, the sum, backward's seed and views, and the .grad copies: one loop."""

    def chain(x, w):
        y = x
        for _ in range(5):
            y = (-(y * w + 1.0).exp()) / 3.0
        return y

    def step(x, w):
        x.grad = None
        w.grad = None
        chain(x, w).sum().backward()

    x = ea.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = ea.tensor([0.5, 0.25, 0.125], requires_grad=True)
    cf = fx.compile(step)
    for _ in range(3):
        cf(x, w)  # warm-up (grads None), warm-up (grads set), capture
    assert len(_kernels(cf)) == 1
    cf(x, w)
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    step(x, w)
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- in-place ops -------------------------------------------------------------------------


def test_inplace_updates_of_bound_tensors_are_fused() -> None:
    """An SGD-with-momentum-shaped update of lifted tensors: one kernel that writes them."""
    p, buf = ea.randn(7, 3), ea.zeros(7, 3)
    p_ref, buf_ref = p.clone(), buf.clone()

    def update(p, buf, g):
        buf.mul_(0.9).add_(g)
        p.add_(buf, alpha=-0.1)
        return (p * p).sum()

    cf = fx.compile(lambda g: update(p, buf, g))
    for i in range(5):
        g = ea.randn(7, 3, generator=ea.Generator().manual_seed(i))
        v0 = p._version
        out = cf(g)
        expect = update(p_ref, buf_ref, g)
        _close(out, expect)
        np.testing.assert_allclose(p.numpy(), p_ref.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(buf.numpy(), buf_ref.numpy(), rtol=1e-6, atol=1e-7)
        assert p._version > v0  # the kernel's writes bump the version counter
    (k,) = _kernels(cf)
    assert {v.name for v in k.inplace} == {v.name for v in _entry(cf).gm.graph.lifted}


def test_inplace_on_a_value_the_kernel_makes() -> None:
    def fn(a):
        y = a * 2.0
        y.add_(1.0)
        y.mul_(y)
        return y.exp()

    a = ea.randn(4, 4) * 0.3
    cf = _compiled(fn, a)
    _close(cf(a), fn(a))
    assert len(_kernels(cf)) == 1


def test_inplace_destination_seen_through_a_view_is_not_fused() -> None:
    def fn(a):
        y = a * 2.0
        v = y.unsqueeze(0)  # the same memory as y
        y.add_(1.0)
        return v * 3.0  # eager: (2a + 1) * 3

    a = ea.randn(5)
    cf = _compiled(fn, a)
    _close(cf(a), fn(a))


def test_inplace_into_memory_shared_with_another_operand_is_not_fused() -> None:
    whole = ea.randn(8)
    lo, hi = whole[:4], whole[4:]  # two bound tensors on one storage
    ref = whole.clone()
    ref_lo, ref_hi = ref[:4], ref[4:]

    def fn(g):
        lo.add_(hi * g)
        return lo + 0.0

    cf = fx.compile(fn)
    for i in range(4):
        g = ea.full((4,), float(i))
        out = cf(g)
        ref_lo.add_(ref_hi * g)
        np.testing.assert_allclose(out.numpy(), ref_lo.numpy(), rtol=1e-6)
        np.testing.assert_allclose(whole.numpy(), ref.numpy(), rtol=1e-6)
    for k in _kernels(cf):
        assert not k.inplace


def test_inplace_on_an_argument_stays_an_eager_kernel() -> None:
    """Arguments are not bound: a later call may pass two that alias. Not fused in place."""

    def fn(x, y):
        x.mul_(2.0)
        return x + y

    cf = _compiled(fn, ea.ones(3), ea.ones(3))
    x, y = ea.arange(3.0), ea.ones(3)
    out = cf(x, y)
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(out.numpy(), [1.0, 3.0, 5.0])
    for k in _kernels(cf):
        assert not k.inplace


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_inplace_on_dtypes_the_kernels_do_not_take(dtype) -> None:
    dt = getattr(ea, dtype)
    p = ea.tensor([1, 0, 1]).to(dt)
    ref = p.clone()

    def fn(g):
        p.mul_(g)
        return p + g

    cf = fx.compile(fn)
    g = ea.tensor([1, 1, 0]).to(dt)
    for _ in range(3):
        out = cf(g)
        expect = ref.mul_(g) + g
        np.testing.assert_array_equal(p.numpy(), ref.numpy())
        np.testing.assert_array_equal(out.numpy(), expect.numpy())
    assert _kernels(cf) == []


# ---- the memory plan ----------------------------------------------------------------------


def _chain(a, b):
    h = (a * b + 1.0).exp()  # kernel 1
    m = h @ b.t()  # an aten op between kernels reads h
    return (m * 0.5).tanh().sum(), m.relu()  # kernel 2


def test_planned_buffers_are_reused_across_replays() -> None:
    a, b = ea.randn(6, 6), ea.randn(6, 6)
    cf = _compiled(_chain, a, b)
    entry = _entry(cf)
    owner = _replay.memory_plan(entry.gm.graph, entry.plan)
    (h,) = [v for v in owner if v.meta.shape == (6, 6) and v.node.op.name == "exp"]
    bufs = {name: t for name, t in entry.program.globals.items() if name.startswith("buf")}
    assert len(bufs) == len(set(owner.values())) >= 1
    ptrs = sorted(t.data_ptr() for t in bufs.values())
    results = [cf(a, b) for _ in range(3)]
    assert sorted(t.data_ptr() for t in bufs.values()) == ptrs  # allocated once
    expect = _chain(a, b)
    for r in results:  # identical replay after replay
        np.testing.assert_array_equal(r[0].numpy(), results[0][0].numpy())
        np.testing.assert_array_equal(r[1].numpy(), results[0][1].numpy())
        _close(r[0], expect[0])
        _close(r[1], expect[1])
    assert h in owner


def test_results_are_fresh_memory_on_every_call() -> None:
    a, b = ea.randn(6, 6), ea.randn(6, 6)
    cf = _compiled(_chain, a, b)
    s1, r1 = cf(a, b)
    keep = r1.numpy().copy()
    s2, r2 = cf(a * 2.0, b)
    assert r1.data_ptr() != r2.data_ptr() and s1.data_ptr() != s2.data_ptr()
    np.testing.assert_array_equal(r1.numpy(), keep)  # the second call did not write the first result


def test_buffers_are_shared_by_values_whose_lives_do_not_overlap() -> None:
    def fn(x, w):
        for _ in range(4):  # each round: a kernel, then a matmul that reads its output
            x = (x * 0.5 + 1.0).tanh() @ w
        return x.sum()

    x, w = ea.randn(8, 8), ea.randn(8, 8) * 0.2
    cf = _compiled(fn, x, w)
    entry = _entry(cf)
    owner = _replay.memory_plan(entry.gm.graph, entry.plan)
    assert len(owner) >= 4 and len(set(owner.values())) < len(owner)
    _close(cf(x, w), fn(x, w))


def test_plan_never_hands_a_kernel_the_buffer_it_reads() -> None:
    def fn(x):
        y = (x * 2.0).exp()
        z = y @ y  # y's last read ...
        return ((z * 0.1).tanh() @ z).sum()  # ... before z's kernel: the two may share

    x = ea.randn(5, 5) * 0.1
    cf = _compiled(fn, x)
    entry = _entry(cf)
    owner = _replay.memory_plan(entry.gm.graph, entry.plan)
    for k in _kernels(cf):
        read = {owner[v] for v in k.inputs if v in owner}
        assert not read & {owner[v] for v in k.outputs if v in owner}
    _close(cf(x), fn(x))


def test_inplace_written_planned_buffer_across_replays() -> None:
    """A planned buffer written in place by an eager op after its kernel: each replay starts
    from the kernel's values again (the plan does not carry state between calls)."""

    def fn(x):
        h = (x * 3.0).exp()
        h.index_fill_(0, ea.tensor([0]), 0.0)  # not fusable: an eager kernel writes the buffer
        return h.sum()

    x = ea.randn(4) * 0.1
    cf = _compiled(fn, x)
    outs = [cf(x).numpy().item() for _ in range(3)]
    assert outs[0] == outs[1] == outs[2]
    np.testing.assert_allclose(outs[0], fn(x).numpy(), rtol=1e-5)


# ---- large outputs: streamed stores -------------------------------------------------------


@pytest.mark.parametrize(
    "layout",
    ["flat", "flat_odd_offset", "transposed", "rows", "rows_float64"],
)
def test_large_outputs_are_streamed_and_match_eager(layout) -> None:
    """Outputs of at least STREAM_MIN_BYTES are written with non-temporal stores from a staging
    row: every loop shape (1-D blocks, transposed tiles, rows) and an unaligned start."""
    n = _fused.STREAM_MIN_BYTES // 4 + 77  # just over the threshold, not a multiple of a block
    a, b = {
        "flat": (ea.randn(n), ea.randn(n)),
        "flat_odd_offset": (ea.randn(n + 3)[3:], ea.randn(n + 1)[1:]),
        "transposed": (ea.randn(1500, 1501).t(), ea.randn(1501, 1500)),
        "rows": (ea.randn(600, 3999), ea.randn(3999)),
        "rows_float64": (ea.randn(300, 3999, dtype=ea.float64), ea.randn(3999, dtype=ea.float64)),
    }[layout]

    def fn(a, b):
        return (a * 1.5 + b).abs() - 0.25

    cf = _compiled(fn, a, b)
    out = cf(a, b)
    (k,) = _kernels(cf)
    assert "stream_(out0" in k.source
    _close(out, fn(a, b), "float64" if layout == "rows_float64" else "float32")


_W, _B = ea.randn(8, 6), ea.randn(8)


def _matmuls(x):
    h = ea.mm(x, _W)  # the caller never sees h: mm.out into a planned buffer
    g = ea.addmm(_B, h.tanh(), _W.t())  # addmm.out likewise
    return (g * g).sum(), ea.mm(x, _W), ea.bmm(x[None], _W[None]).transpose(1, 2)  # returned: fresh tensors


@pytest.mark.parametrize("backend", ["replay", "fused"])
def test_aten_results_through_out_overloads_are_planned(backend) -> None:
    x = ea.randn(5, 8)
    cf = _compiled(_matmuls, x, backend=backend)
    entry = _entry(cf)
    src = entry.program.source
    assert "# aten::mm.out" in src and "# aten::addmm.out" in src
    assert "# aten::bmm.out" not in src  # its result is returned through a view
    owner = _replay.memory_plan(entry.gm.graph, entry.plan)
    planned_ops = {v.node.op.full_name for v in owner}
    assert {"aten::mm", "aten::addmm"} <= planned_ops
    first = cf(x)
    for scale in (1.0, -3.0):  # the same buffers, new inputs: each replay computes afresh
        xs = x * scale
        got, expect = cf(xs), _matmuls(xs)
        for a, b in zip(got, expect, strict=True):
            if backend == "replay":  # the .out kernels are the same kernels: bit-identical
                np.testing.assert_array_equal(a.numpy(), b.numpy())
            else:
                _close(a, b)
        assert got[1].data_ptr() != first[1].data_ptr() and got[2].data_ptr() != first[2].data_ptr()


def _pointwise_and_reductions(x, idx):
    # no kernel fuses these under backend "replay": each is an aten op with an .out overload
    h = ea.add(x, 1.0, alpha=2)  # add.out
    s = ea.sum(h * x, [1], True)  # mul.out, sum.IntList_out
    g = ea.index_select(h, 0, idx)  # index_select.out
    return (g - s.mean()).abs().sum(), ea.cat([h, g])  # cat's result is returned: fresh


def test_every_out_overload_of_the_same_arguments_is_planned() -> None:
    x, idx = ea.randn(6, 5), ea.tensor([4, 0, 2])
    cf = _compiled(_pointwise_and_reductions, x, idx, backend="replay")
    entry = _entry(cf)
    src = entry.program.source
    for name in ("aten::add.out", "aten::mul.out", "aten::sum.IntList_out", "aten::index_select.out"):
        assert f"# {name}" in src, name
    assert "# aten::cat.out" not in src  # returned to the caller
    owner = _replay.memory_plan(entry.gm.graph, entry.plan)
    assert {"aten::add.Tensor", "aten::sum.dim_IntList", "aten::index_select"} & {v.node.op.full_name for v in owner}
    first = cf(x, idx)
    for scale in (1.0, -2.0):
        xs = x * scale
        got, expect = cf(xs, idx), _pointwise_and_reductions(xs, idx)
        for a, b in zip(got, expect, strict=True):  # the same kernels: bit-identical
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert got[1].data_ptr() != first[1].data_ptr()


def test_out_overload_is_only_taken_when_its_arguments_match() -> None:
    def names(fn, *args):
        gm = fx.capture(fn, *args)
        return {n.op.full_name: _replay.out_overload(n) for n in gm.graph.nodes}

    x = ea.randn(4, 3)
    got = names(lambda x: (x.nonzero(), ea.add(x, 2.0), x.t(), x.sum()), x)
    assert got["aten::nonzero"] is None  # its size depends on the data: not into a fixed buffer
    assert got["aten::t"] is None  # a view has no .out
    assert got["aten::add.Tensor"] == "aten::add.out"
    assert got["aten::sum"] == "aten::sum.IntList_out"  # another overload name, the same arguments
