"""CUDA kernels of the random distributions, the fused optimizer steps, the _foreach_ ops
(multi-tensor launch) and fused scaled dot product attention, against the CPU kernels.

Random numbers: the CUDA kernels follow the CPU's Philox layout word for word and use the
same libm-free arithmetic (Distributions.h) built without FMA contraction, so every
distribution is compared bit for bit with the CPU draw of the same seed. The fused
optimizers and SDPA are compared with the CPU kernels within float32 tolerance (nvcc fuses
multiply-adds; SDPA sums in another order).

The tests that need a GPU skip without one; the stub-table tests run on any CUDA build."""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import cuda as c10_cuda

_C = ea._C

needs_cuda = pytest.mark.skipif(not c10_cuda.is_available(), reason="needs a CUDA GPU")
needs_cuda_build = pytest.mark.skipif(not _C._built_with_cuda, reason="needs a CUDA build of ember.aten")

# The stubs this area gives CUDA kernels (csrc/native/cuda/{Distributions,FusedOptimizers,Attention}.cu).
CUDA_STUBS = [
    "uniform_stub",
    "normal_stub",
    "random_from_to_stub",
    "exponential_stub",
    "cauchy_stub",
    "log_normal_stub",
    "geometric_stub",
    "bernoulli_stub",
    "fused_adam_stub",
    "fused_sgd_stub",
    "foreach_stub",
    "sdpa_forward_stub",
    "sdpa_backward_stub",
]


# ---------------------------------------------------------------- without a GPU


def test_stubs_are_registered() -> None:
    names = [name for name, _ in _C._dispatch_stubs()]
    missing = [s for s in CUDA_STUBS if s not in names]
    assert missing == []


@needs_cuda_build
def test_cuda_build_has_kernels_for_these_stubs() -> None:
    has = dict(_C._dispatch_stubs())
    assert [s for s in CUDA_STUBS if not has[s]] == []


def test_each_cuda_device_has_its_own_default_generator() -> None:
    # default_generator(device) needs no GPU: it is the (seed, offset) state the kernels read
    g0 = _C.default_generator(ea.device("cuda", 0))
    g1 = _C.default_generator(ea.device("cuda", 1))
    assert g0.device == ea.device("cuda", 0) and g1.device == ea.device("cuda", 1)
    assert _C.default_generator(ea.device("cuda")).device == ea.device("cuda", 0)
    saved = g1._get_state()
    try:
        g1.manual_seed(123)
        assert g1.initial_seed() == 123 and g0._get_state() != g1._get_state()
        assert _C.default_generator(ea.device("cuda", 1)).initial_seed() == 123
    finally:
        g1._set_state(*saved)


# ---------------------------------------------------------------- helpers


def cuda(t: Any) -> Any:
    return t.to(ea.device("cuda"))


def bits(t: Any) -> np.ndarray:
    """The values as float64 bit patterns (exact for every dtype here; -0.0 != 0.0)."""
    return t.cpu().to(ea.float64).numpy().view(np.uint64)


def both(draw: Any, seed: int = 0) -> tuple[Any, Any]:
    """draw(device) under the same seed on the CPU and on the GPU."""
    ea.manual_seed(seed)
    c = draw(ea.device("cpu"))
    ea.manual_seed(seed)
    g = draw(ea.device("cuda"))
    return c, g


FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]


# ---------------------------------------------------------------- random numbers


@needs_cuda
@pytest.mark.parametrize("n", [1, 3, 1000, 100_003])
def test_randn_and_rand_float32_equal_the_cpu_bit_for_bit(n: int) -> None:
    for fn in (ea.randn, ea.rand):
        c, g = both(lambda d, fn=fn: fn(n, device=d))
        assert g.device.type == "cuda" and g.dtype == ea.float32
        assert np.array_equal(bits(c), bits(g)), fn.__name__


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_real_distributions_equal_the_cpu(dtype: Any) -> None:
    draws = {
        "uniform_": lambda d: ea.empty(4099, dtype=dtype, device=d).uniform_(-2.0, 3.0),
        "normal_": lambda d: ea.empty(4099, dtype=dtype, device=d).normal_(1.5, 2.0),
        "log_normal_": lambda d: ea.empty(4099, dtype=dtype, device=d).log_normal_(0.1, 0.5),
        "exponential_": lambda d: ea.empty(4099, dtype=dtype, device=d).exponential_(2.5),
        "cauchy_": lambda d: ea.empty(4099, dtype=dtype, device=d).cauchy_(0.5, 2.0),
        "geometric_": lambda d: ea.empty(4099, dtype=dtype, device=d).geometric_(0.3),
        "bernoulli_": lambda d: ea.empty(4099, dtype=dtype, device=d).bernoulli_(0.25),
        "randn_like": lambda d: ea.randn_like(ea.empty(7, 9, dtype=dtype, device=d)),
    }
    for name, draw in draws.items():
        c, g = both(draw, seed=7)
        assert np.array_equal(bits(c), bits(g)), name


@needs_cuda
@pytest.mark.parametrize("dtype", [ea.int64, ea.int32, ea.uint8, ea.bool, ea.float32, ea.float64], ids=str)
def test_random_integers_equal_the_cpu(dtype: Any) -> None:
    ranges: list[tuple[int, int | None]] = [(0, 2)]  # every dtype holds {0, 1}
    if dtype not in (ea.bool, ea.uint8):
        ranges += [(-5, 100), (0, 1 << 20)]
    if dtype in (ea.int64, ea.float64):
        ranges += [(-(1 << 40), 1 << 40), (-(1 << 63), None)]
    for lo, hi in ranges:
        c, g = both(lambda d, lo=lo, hi=hi: ea.empty(2051, dtype=dtype, device=d).random_(lo, hi), seed=3)
        assert np.array_equal(c.cpu().numpy(), g.cpu().numpy()), (lo, hi)
    c, g = both(lambda d: ea.empty(2051, dtype=dtype, device=d).random_(), seed=4)
    assert np.array_equal(c.numpy(), g.cpu().numpy())


@needs_cuda
def test_tensor_parameters_and_strided_outputs_equal_the_cpu() -> None:
    rng = np.random.default_rng(0)
    mean = ea.from_numpy(rng.standard_normal((33, 17)).astype(np.float32))
    std = ea.from_numpy(rng.uniform(0.1, 2.0, (33, 17)).astype(np.float32))
    p = ea.from_numpy(rng.uniform(0.0, 1.0, (33, 17)))

    def on(t: Any, d: Any) -> Any:
        return t.to(d)

    cases = {
        "normal(T, T)": lambda d: ea.normal(on(mean, d), on(std, d)),
        "normal(T, s)": lambda d: ea.normal(on(mean, d), 0.5),
        "normal(s, T)": lambda d: ea.normal(2.0, on(std, d)),
        "bernoulli(T)": lambda d: ea.bernoulli(on(p, d)),
        "bernoulli_(T)": lambda d: ea.empty(33, 17, device=d).bernoulli_(on(p.float(), d)),
        "transposed": lambda d: ea.empty(17, 33, device=d).t().normal_(),
        "randint": lambda d: ea.randint(-3, 1000, (5, 77), device=d),
        "randperm": lambda d: ea.randperm(1000, device=d),
        "multinomial": lambda d: ea.multinomial(on(p.float(), d), 5),
        "multinomial, replacement": lambda d: ea.multinomial(on(p.float(), d), 40, replacement=True),
    }
    for name, draw in cases.items():
        c, g = both(draw, seed=11)
        assert g.device.type == "cuda", name
        assert np.array_equal(bits(c), bits(g)), name


@needs_cuda
def test_cuda_generator_advances_as_the_cpu_one() -> None:
    gc = ea.Generator().manual_seed(5)
    gg = ea.Generator(ea.device("cuda")).manual_seed(5)
    for n in (1, 4, 5, 1001):
        a = ea.randn(n, generator=gc)
        b = ea.randn(n, generator=gg, device=ea.device("cuda"))
        assert np.array_equal(bits(a), bits(b))
        assert gc._get_state() == gg._get_state()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        ea.randn(3, generator=gc, device=ea.device("cuda"))


@needs_cuda
def test_moments() -> None:
    ea.manual_seed(1)
    n = 1 << 20
    d = ea.device("cuda")
    x = ea.randn(n, device=d).cpu().double().numpy()
    assert abs(x.mean()) < 5e-3 and abs(x.std() - 1) < 5e-3
    u = ea.rand(n, device=d).cpu().double().numpy()
    assert abs(u.mean() - 0.5) < 3e-3 and u.min() >= 0 and u.max() < 1
    e = ea.empty(n, device=d).exponential_(4.0).cpu().double().numpy()
    assert abs(e.mean() - 0.25) < 3e-3
    b = ea.empty(n, device=d).bernoulli_(0.3).cpu().double().numpy()
    assert abs(b.mean() - 0.3) < 3e-3
    k = ea.empty(n, dtype=ea.int64, device=d).geometric_(0.5).cpu().double().numpy()
    assert abs(k.mean() - 2.0) < 1e-2 and k.min() >= 1
    r = ea.randint(0, 10, (n,), device=d).cpu().numpy()
    assert np.all(np.abs(np.bincount(r, minlength=10) / n - 0.1) < 3e-3)


# ---------------------------------------------------------------- fused optimizers


SHAPES = [(), (5,), (3, 4), (2, 3, 5), (70_000,)]


def _arrays(seed: int, scale: float = 1.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.asarray(scale * rng.uniform(-1.0, 1.0, size=s), dtype=np.float32) for s in SHAPES]


def _pair(arrays: list[np.ndarray], dtype: Any) -> tuple[list[Any], list[Any]]:
    cpu = [ea.from_numpy(a.copy()).to(dtype) for a in arrays]
    return cpu, [cuda(t) for t in cpu]


def _close(a: list[Any], b: list[Any], dtype: Any) -> None:
    tol = {ea.float32: 2e-5, ea.float64: 1e-12, ea.float16: 2e-3, ea.bfloat16: 2e-2}[dtype]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(y.cpu().double().numpy(), x.double().numpy(), rtol=tol, atol=tol)


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("adamw", [False, True])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("maximize", [False, True])
def test_fused_adam_matches_the_cpu_kernel(dtype: Any, adamw: bool, amsgrad: bool, maximize: bool) -> None:
    pc, pg = _pair(_arrays(0), dtype)
    mc, mg = _pair([np.zeros_like(a) for a in _arrays(0)], dtype)
    vc, vg = _pair([np.zeros_like(a) for a in _arrays(0)], dtype)
    xc, xg = _pair([np.zeros_like(a) for a in _arrays(0)], dtype)
    # steps: on the device (read by the kernel) for the GPU, on the CPU for the CPU
    sc = [ea.tensor(0.0) for _ in SHAPES]
    sg = [cuda(ea.tensor(0.0)) for _ in SHAPES]
    op = ea._fused_adamw_ if adamw else ea._fused_adam_
    for step in range(3):
        gc, gg = _pair(_arrays(10 + step), dtype)
        for s in sc + sg:
            s.add_(1.0)
        kw = dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=amsgrad, maximize=maximize)
        op(pc, gc, mc, vc, xc if amsgrad else [], sc, **kw)
        op(pg, gg, mg, vg, xg if amsgrad else [], sg, **kw)
    _close(pc, pg, dtype)
    _close(mc, mg, dtype)
    _close(vc, vg, dtype)
    if amsgrad:
        _close(xc, xg, dtype)


@needs_cuda
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_fused_sgd_matches_the_cpu_kernel(dtype: Any, momentum: float, nesterov: bool) -> None:
    pc, pg = _pair(_arrays(1), dtype)
    bc, bg = _pair([np.zeros_like(a) for a in _arrays(1)], dtype)
    for step in range(3):
        gc, gg = _pair(_arrays(20 + step), dtype)
        kw = dict(
            weight_decay=0.01,
            momentum=momentum,
            lr=0.1,
            dampening=0.1,
            nesterov=nesterov,
            maximize=step == 1,
            is_first_step=step == 0,
        )
        ea._fused_sgd_(pc, gc, bc if momentum else [], **kw)
        ea._fused_sgd_(pg, gg, bg if momentum else [], **kw)
    _close(pc, pg, dtype)
    if momentum:
        _close(bc, bg, dtype)


@needs_cuda
def test_fused_grad_scale_found_inf_and_tensor_lr_on_the_device() -> None:
    kw = dict(beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    results = []
    for dev in ("cpu", "cuda"):
        d = ea.device(dev)
        p = [ea.from_numpy(a).to(d) for a in _arrays(2)]
        g = [ea.from_numpy(a).to(d) for a in _arrays(3, scale=1024.0)]
        m = [ea.zeros_like(t) for t in p]
        v = [ea.zeros_like(t) for t in p]
        s = [ea.tensor(1.0, device=d) for _ in p]
        scale = ea.tensor(1024.0, device=d)
        skip = ea.tensor(1.0, device=d)
        before = [t.clone() for t in p]
        ea._fused_adam_(p, g, m, v, [], s, lr=0.1, grad_scale=scale, found_inf=skip, **kw)
        for a, b in zip(p, before, strict=True):  # found_inf == 1: nothing changes
            assert np.array_equal(a.cpu().numpy(), b.cpu().numpy())
        ea._fused_adam_(p, g, m, v, [], s, lr=ea.tensor(0.1, device=d), grad_scale=scale, found_inf=skip * 0, **kw)
        results.append((p, g))
    _close(results[0][0], results[1][0], ea.float32)  # params
    _close(results[0][1], results[1][1], ea.float32)  # grads unscaled in place


@needs_cuda
def test_fused_errors_name_the_device() -> None:
    p = [cuda(ea.ones(3))]
    with pytest.raises(RuntimeError, match=r"_fused_sgd_: expected grads\[0\] on the parameters' device cuda:0"):
        ea._fused_sgd_(
            p, [ea.ones(3)], [], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
            maximize=False, is_first_step=False,
        )  # fmt: skip


# ---------------------------------------------------------------- _foreach_


@needs_cuda
def test_foreach_mixed_layouts_and_dtypes_on_cuda() -> None:
    # a transposed view and a float64 tensor leave the multi-tensor launch for the
    # per-tensor kernels; the results must not change
    x = ea.from_numpy(np.arange(12.0).reshape(3, 4)).float()
    y = ea.from_numpy(np.linspace(-1, 1, 5))
    cpu = ea._foreach_addcmul([x.t(), y], [x.t(), y], [x.t(), y], value=0.5)
    got = ea._foreach_addcmul([cuda(x).t(), cuda(y)], [cuda(x).t(), cuda(y)], [cuda(x).t(), cuda(y)], value=0.5)
    for e, g in zip(cpu, got, strict=True):
        assert g.dtype == e.dtype and tuple(g.shape) == tuple(e.shape)
        np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-6)


@needs_cuda
def test_foreach_ops_on_cuda_match_the_cpu() -> None:
    a = [ea.from_numpy(x) for x in _arrays(4)]
    b = [ea.from_numpy(x) for x in _arrays(5)]
    c = [ea.from_numpy(np.asarray(np.abs(x) + 0.5)) for x in _arrays(6)]
    ag, bg, cg = [cuda(t) for t in a], [cuda(t) for t in b], [cuda(t) for t in c]
    cases = [
        lambda x, y, z: ea._foreach_add(x, y, alpha=0.5),
        lambda x, y, z: ea._foreach_mul(x, 3.0),
        lambda x, y, z: ea._foreach_div(x, z),
        lambda x, y, z: ea._foreach_addcmul(x, y, z, value=0.25),
        lambda x, y, z: ea._foreach_addcdiv(x, y, z, value=2.0),
        lambda x, y, z: ea._foreach_sqrt(z),
        lambda x, y, z: ea._foreach_exp(x),
        lambda x, y, z: ea._foreach_maximum(x, y),
        lambda x, y, z: ea._foreach_lerp(x, y, 0.3),
        lambda x, y, z: ea._foreach_pow(z, 2.0),
        lambda x, y, z: ea._foreach_norm(x),
    ]
    for i, f in enumerate(cases):
        exp, got = f(a, b, c), f(ag, bg, cg)
        for e, g in zip(exp, got, strict=True):
            assert g.device.type == "cuda", i
            np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(i))
    expected = [a0.numpy() * 2 + b0.numpy() for a0, b0 in zip(a, b, strict=True)]
    xs = [t.clone() for t in ag]
    ea._foreach_mul_(xs, 2.0)
    ea._foreach_add_(xs, bg)
    ea._foreach_zero_(bg)
    for x, e in zip(xs, expected, strict=True):
        np.testing.assert_allclose(x.cpu().numpy(), e, rtol=1e-6)
    assert all(float(t.abs().sum().cpu()) == 0.0 for t in bg)


# ---------------------------------------------------------------- SDPA

SDPA_CASES = [
    # (B, Hq, Hkv, L, S, E, Ev, is_causal, mask)
    (2, 4, 4, 100, 150, 32, 16, False, None),
    (1, 3, 3, 200, 130, 64, 64, True, None),
    (1, 8, 2, 65, 65, 8, 24, True, None),
    (2, 2, 2, 64, 128, 64, 64, False, "float"),
    (1, 2, 1, 33, 200, 16, 8, False, "bool"),
    (1, 1, 1, 5, 7, 160, 128, False, None),
]


@needs_cuda
@pytest.mark.parametrize("case", SDPA_CASES, ids=[str(c) for c in SDPA_CASES])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64], ids=str)
def test_sdpa_forward_and_backward_match_the_cpu(case: tuple[Any, ...], dtype: Any) -> None:
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
        mask[3] = False  # a row with every key masked
    tol = 2e-5 if dtype == ea.float32 else 1e-11
    fwd = ea._scaled_dot_product_flash_attention_for_cpu
    bwd = ea._scaled_dot_product_flash_attention_for_cpu_backward
    out_c, lse_c = fwd(q, k, v, 0.0, causal, attn_mask=mask)
    gpu = [cuda(t) for t in (q, k, v, go)]
    mask_g = None if mask is None else cuda(mask)
    out_g, lse_g = fwd(*gpu[:3], 0.0, causal, attn_mask=mask_g)
    assert out_g.device.type == "cuda" and tuple(lse_g.shape) == (B, H, L)
    np.testing.assert_allclose(out_g.cpu().numpy(), out_c.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_g.cpu().numpy(), lse_c.numpy(), rtol=tol, atol=tol)
    # against the math composite on the GPU as well
    math_out, _ = ea._scaled_dot_product_attention_math(*gpu[:3], mask_g, 0.0, causal, enable_gqa=H != Hk)
    np.testing.assert_allclose(out_g.cpu().numpy(), math_out.cpu().numpy(), rtol=10 * tol, atol=10 * tol)
    grads_c = bwd(go, q, k, v, out_c, lse_c, 0.0, causal, attn_mask=mask)
    grads_g = bwd(gpu[3], *gpu[:3], out_g, lse_g, 0.0, causal, attn_mask=mask_g)
    for gc, gg in zip(grads_c, grads_g, strict=True):
        np.testing.assert_allclose(gg.cpu().numpy(), gc.numpy(), rtol=10 * tol, atol=10 * tol)


@needs_cuda
def test_sdpa_half_inputs_and_public_function() -> None:
    rng = np.random.default_rng(2)
    q, k, v = (ea.from_numpy(rng.standard_normal((2, 4, 50, 32))).to(ea.float16) for _ in range(3))
    exp = ea.nn.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    got = ea.nn.scaled_dot_product_attention(cuda(q), cuda(k), cuda(v), is_causal=True)
    assert got.dtype == ea.float16 and got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().float().numpy(), exp.numpy(), rtol=2e-3, atol=2e-3)
    assert math.isfinite(float(got.float().abs().sum().cpu()))


@needs_cuda
def test_sdpa_cross_device_error() -> None:
    q = cuda(ea.ones(1, 1, 2, 4))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea._scaled_dot_product_flash_attention_for_cpu(q, ea.ones(1, 1, 2, 4), q)
