"""The fused backend: generated C++ kernels against the eager op chain, across layouts and dtypes;
its on-disk cache; and the fallbacks when there is no compiler or the source does not compile.

Tolerance for float32 (docs in ember/fx/_fused.py): rtol 1e-5, atol 1e-6 -- libm's exp/tanh
against ember's vectorised kernels, reductions accumulated in double; float64 1e-12.
"""

from __future__ import annotations

import os

import ember.aten as ea
import ember.fx as fx
import numpy as np
import pytest
from ember.fx import _fused

TOL = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_FX_CACHE_DIR", str(tmp_path / "fxcache"))


def _run(fn, *args, backend="fused"):
    cf = fx.compile(fn, backend=backend)
    cf(*[a.clone() for a in args])
    cf(*[a.clone() for a in args])
    return cf, cf(*args)


def _kernels(cf):
    (entry,) = cf.entries_list()
    return [s for s in entry.plan if isinstance(s, _fused.FusedKernel)]


CHAINS = {
    "arith": lambda a, b: ((a * b + 1.0) / 3.0 - b).neg(),
    "unary": lambda a, b: (a.exp() * 0.1 + b.abs().sqrt()).tanh().sigmoid(),
    "relu_max": lambda a, b: ea.maximum(a.relu(), b) + ea.minimum(a, b * 2.0),
    "addcmul": lambda a, b: ea.addcmul(a, a, b, value=0.5).lerp(b, 0.25),
}


def _layouts(dtype):
    def r(*s):
        return ea.randn(*s, dtype=dtype)

    return {
        "same": (r(4, 5), r(4, 5)),
        "broadcast_row": (r(4, 5), r(5)),
        "broadcast_col": (r(4, 1), r(1, 5)),
        "transposed": (r(5, 4).t(), r(4, 5)),
        "sliced": (r(4, 10)[:, ::2], r(4, 5)),
        "zero_d": (r(), r()),
        "zero_d_and_3d": (r(), r(2, 3, 4)),
        "empty": (r(0, 5), r(5)),
        "large": (r(300, 301), r(301)),
    }


CASES = [(c, lay, "float32") for c in CHAINS for lay in _layouts(ea.float32)] + [
    (c, lay, "float64") for c in CHAINS for lay in ("same", "broadcast_col", "transposed")
]


@pytest.mark.parametrize("chain, layout, dtype", CASES)
def test_fused_chain_matches_eager(chain, layout, dtype) -> None:
    fn = CHAINS[chain]
    a, b = _layouts(getattr(ea, dtype))[layout]
    if chain == "unary":
        b = b.abs()
    cf, out = _run(fn, a, b)
    expect = fn(a, b)
    assert out.dtype == expect.dtype and tuple(out.shape) == tuple(expect.shape)
    assert out.stride() == expect.stride()
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(out.numpy(), expect.numpy(), rtol=rtol, atol=atol)
    kernels = _kernels(cf)
    if layout in ("same", "transposed", "sliced", "zero_d"):
        assert len(kernels) == 1  # operands of one shape: the whole chain is one kernel
    else:  # a group has one shape: a chain on the smaller operand alone is its own kernel
        assert 1 <= len(kernels) <= 4  # (grouping does not yet pull a smaller-shaped chain into a group)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_dtypes_the_kernels_do_not_take_run_by_replay(dtype) -> None:
    def fn(a, b):
        return (a * b) + b

    a = ea.tensor([[1, 0, 3], [4, 5, 0]]).to(getattr(ea, dtype))
    b = ea.tensor([1, 1, 0]).to(getattr(ea, dtype))
    cf, out = _run(fn, a, b)
    np.testing.assert_array_equal(out.numpy(), fn(a, b).numpy())
    assert _kernels(cf) == []


def test_mixed_dtypes_are_not_fused_together() -> None:
    def fn(a, b):
        return a * 2.0 + b.double()

    a, b = ea.randn(3), ea.randn(3)
    _cf, out = _run(fn, a, b)
    assert out.dtype == ea.float64
    np.testing.assert_allclose(out.numpy(), fn(a, b).numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("mse_mean", lambda a, b: ((a - b) ** 2).mean()),
        ("sum_all", lambda a, b: (a * b).exp().sum()),
        ("sum_last", lambda a, b: (a * b + 1.0).sum(-1)),
        ("mean_last_keepdim", lambda a, b: (a - b).abs().mean(dim=-1, keepdim=True)),
    ],
)
@pytest.mark.parametrize("shape", [(64, 33), (3, 4, 5), (1000, 300)])
def test_pointwise_chain_feeding_a_reduction(name, fn, shape) -> None:
    a, b = ea.randn(*shape), ea.randn(*shape) * 0.1
    cf, out = _run(fn, a, b)
    expect = fn(a, b)
    assert tuple(out.shape) == tuple(expect.shape)
    np.testing.assert_allclose(out.numpy(), expect.numpy(), rtol=1e-5, atol=1e-5)
    (k,) = _kernels(cf)
    assert k.nodes[-1].op.name in ("sum", "mean")


def test_intermediates_used_later_are_kernel_outputs() -> None:
    def fn(a, b):
        h = (a * b).exp()
        s = (h + 1.0).sum()
        return s, h.t().contiguous()  # h leaves the group through a view

    a, b = ea.randn(6, 7), ea.randn(7)
    _cf, (s, ht) = _run(fn, a, b)
    es, eht = fn(a, b)
    np.testing.assert_allclose(s.numpy(), es.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ht.numpy(), eht.numpy(), rtol=1e-6)


def test_kernels_are_cached_on_disk(tmp_path) -> None:
    def fn(a):
        return (a * 3.0).exp() + 1.0

    a = ea.randn(8)
    cf, _ = _run(fn, a)
    cache = _fused.cache_dir()
    sos = sorted(cache.glob("*.so"))
    assert len(sos) == 1 and sos[0].with_suffix(".cpp").exists()
    (entry,) = cf.entries_list()
    assert "std::exp" in entry.cpp_source and "#pragma omp" in entry.cpp_source
    mtime = os.stat(sos[0]).st_mtime_ns
    _cf2, out = _run(fn, a)  # a second compile of the same graph: the cached library
    assert sorted(cache.glob("*.so")) == sos and os.stat(sos[0]).st_mtime_ns == mtime
    np.testing.assert_allclose(out.numpy(), fn(a).numpy(), rtol=1e-6)


def test_cache_dir_default_under_xdg(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("EMBER_FX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _fused.cache_dir() == tmp_path / "xdg" / "ember" / "fx"


def test_no_compiler_falls_back_to_replay(monkeypatch) -> None:
    monkeypatch.setenv("CXX", "/nonexistent/c++")

    def fn(a):
        return (a + 1.0).exp()

    a = ea.randn(5)
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler"):
        cf, out = _run(fn, a)
    np.testing.assert_array_equal(out.numpy(), fn(a).numpy())  # replay: the same kernels as eager
    assert _kernels(cf) == []


def test_source_that_fails_to_compile_falls_back(monkeypatch) -> None:
    real = _fused.kernel_source
    monkeypatch.setattr(_fused, "kernel_source", lambda k, sym: real(k, sym) + "\nthis is not C++;\n")

    def fn(a):
        return (a * 2.0).tanh()

    a = ea.randn(5)
    with pytest.warns(RuntimeWarning, match="failed"):
        cf, out = _run(fn, a)
    np.testing.assert_array_equal(out.numpy(), fn(a).numpy())
    assert _kernels(cf) == []
