"""CUDA matrix products (cuBLAS), convolution and pooling against the CPU kernels.

Tests that need a GPU skip without one; the ember.aten.backends flags and the CUDA
kernel registrations of a CUDA build are checked on every machine."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import ember.aten.backends
import ember.c10py
import numpy as np
import pytest

backends = ember.aten.backends
BUILT_WITH_CUDA = bool(ea._C._built_with_cuda)
requires_cuda = pytest.mark.skipif(not ember.c10py.cuda.is_available(), reason="needs a CUDA GPU")
RNG = np.random.default_rng(11)

# float32 with TF32 has a 10-bit mantissa on the inputs: about 1e-3 relative
TOL = {
    ea.float64: (1e-10, 1e-10),
    ea.float32: (1e-4, 1e-4),
    ea.float16: (1e-2, 1e-2),
    ea.bfloat16: (5e-2, 5e-2),
}
TF32_TOL = (5e-3, 5e-3)
FLOAT_DTYPES = [ea.float32, ea.float64, ea.float16, ea.bfloat16]


@pytest.fixture(autouse=True)
def _restore_flags() -> Iterator[None]:
    m = backends.cuda.matmul
    saved = (
        m.allow_tf32,
        m.allow_fp16_reduced_precision_reduction,
        m.allow_bf16_reduced_precision_reduction,
        backends.cudnn.allow_tf32,
    )
    try:
        yield
    finally:
        m.allow_tf32 = saved[0]
        m.allow_fp16_reduced_precision_reduction = saved[1]
        m.allow_bf16_reduced_precision_reduction = saved[2]
        backends.cudnn.allow_tf32 = saved[3]


def cpu_tensor(shape: tuple[int, ...], dtype: Any = ea.float32) -> Any:
    return ea.from_numpy(RNG.standard_normal(shape)).to(dtype)


def N(t: Any) -> np.ndarray:
    t = t.to("cpu")
    return t.double().numpy() if t.dtype != ea.float64 else t.numpy()


def close(got: Any, want: Any, tol: tuple[float, float]) -> None:
    assert got.device.type == "cuda"
    assert got.dtype == want.dtype
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(N(got), N(want), rtol=tol[0], atol=tol[1])


# ---- ember.aten.backends (no GPU needed) -------------------------------------------------------


def test_backends_defaults_are_pytorchs() -> None:
    m = backends.cuda.matmul
    assert m.allow_tf32 is False
    assert m.allow_fp16_reduced_precision_reduction is True
    assert m.allow_bf16_reduced_precision_reduction is True
    assert backends.cudnn.allow_tf32 is True
    assert ea.backends is backends


@pytest.mark.parametrize(
    "name",
    ["allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"],
)
def test_matmul_flags_set_and_read_back(name: str) -> None:
    m = backends.cuda.matmul
    getter = getattr(ea._C, "_get_cublas_" + name)
    for value in (True, False, True):
        setattr(m, name, value)
        assert getattr(m, name) is value
        assert getter() is value  # the C++ flag the kernels read


def test_cudnn_allow_tf32_set_and_read_back() -> None:
    backends.cudnn.allow_tf32 = False
    assert backends.cudnn.allow_tf32 is False
    assert ea._C._get_cudnn_allow_tf32() is False
    backends.cudnn.allow_tf32 = True
    assert ea._C._get_cudnn_allow_tf32() is True
    assert backends.cudnn.is_available() is False
    assert backends.cudnn.version() is None


def test_backends_errors() -> None:
    m = backends.cuda.matmul
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo  # noqa: B018
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = True
    with pytest.raises(RuntimeError, match="set_allow_tf32_cublas expects a bool, but got int"):
        m.allow_tf32 = 1
    assert m.allow_tf32 is False
    with pytest.raises(RuntimeError, match="expects a bool, but got str"):
        backends.cudnn.allow_tf32 = "yes"
    assert backends.cudnn.allow_tf32 is True


def test_cuda_is_built_matches_the_build() -> None:
    assert backends.cuda.is_built() is BUILT_WITH_CUDA


MATMUL_OPS = ["mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot"]


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="a CPU-only build registers no CUDA kernels")
@pytest.mark.parametrize("op", MATMUL_OPS)
def test_matmul_family_has_cuda_kernels(op: str) -> None:
    keys = {(name, key) for name, key, *_ in ea._C._native_kernels()}
    assert (f"aten::{op}", "CUDA") in keys
    assert (f"aten::{op}.out", "CUDA") in keys


# ---- matrix products on the GPU ------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_mm_matches_cpu(dtype: Any, ta: bool, tb: bool) -> None:
    a = cpu_tensor((33, 17), dtype)
    b = cpu_tensor((17, 9), dtype)
    if ta:  # the same values, stored transposed: read in place (cuBLAS 'T')
        a = a.t().contiguous().t()
    if tb:
        b = b.t().contiguous().t()
    close(ea.mm(a.to("cuda"), b.to("cuda")), ea.mm(a, b), TOL[dtype])


@requires_cuda
def test_mm_non_blas_strides_and_column_major_out() -> None:
    a = cpu_tensor((20, 30))[:, ::2]  # column stride 2: copied first
    b = cpu_tensor((15, 7))
    want = ea.mm(a, b)
    out = ea.empty((7, 20), device="cuda").t()  # column-major result
    got = ea.mm(a.to("cuda"), b.to("cuda"), out=out)
    assert got is out
    close(out, want, TOL[ea.float32])


@requires_cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_addmm_baddbmm_addbmm_match_cpu(dtype: Any) -> None:
    s2, m1, m2 = cpu_tensor((5, 6), dtype), cpu_tensor((5, 4), dtype), cpu_tensor((4, 6), dtype)
    g = [t.to("cuda") for t in (s2, m1, m2)]
    close(ea.addmm(*g, beta=0.5, alpha=2.0), ea.addmm(s2, m1, m2, beta=0.5, alpha=2.0), TOL[dtype])
    bias = cpu_tensor((6,), dtype)  # broadcast self
    close(ea.addmm(bias.to("cuda"), g[1], g[2]), ea.addmm(bias, m1, m2), TOL[dtype])
    s3, b1, b2 = cpu_tensor((3, 5, 6), dtype), cpu_tensor((3, 5, 4), dtype), cpu_tensor((3, 4, 6), dtype)
    g3 = [t.to("cuda") for t in (s3, b1, b2)]
    close(ea.bmm(g3[1], g3[2]), ea.bmm(b1, b2), TOL[dtype])
    close(ea.baddbmm(*g3, beta=-1.0, alpha=0.25), ea.baddbmm(s3, b1, b2, beta=-1.0, alpha=0.25), TOL[dtype])
    close(ea.addbmm(g[0], g3[1], g3[2]), ea.addbmm(s2, b1, b2), TOL[dtype])


@requires_cuda
def test_beta_zero_ignores_nan_and_inplace() -> None:
    s = ea.full((4, 3), float("nan")).to("cuda")
    a, b = cpu_tensor((4, 2)), cpu_tensor((2, 3))
    close(ea.addmm(s, a.to("cuda"), b.to("cuda"), beta=0), ea.mm(a, b), TOL[ea.float32])
    c = cpu_tensor((4, 3))
    gc = c.to("cuda")
    gc.addmm_(a.to("cuda"), b.to("cuda"), alpha=3.0)
    close(gc, ea.addmm(c, a, b, alpha=3.0), TOL[ea.float32])
    # k == 0: the product is zero, beta scales self
    e1, e2 = ea.empty((4, 0)), ea.empty((0, 3))
    close(ea.addmm(c.to("cuda"), e1.to("cuda"), e2.to("cuda"), beta=2.0), c * 2.0, TOL[ea.float32])


@requires_cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_mv_addmv_dot_vdot_match_cpu(dtype: Any) -> None:
    m, v, s = cpu_tensor((7, 5), dtype), cpu_tensor((5,), dtype), cpu_tensor((7,), dtype)
    gm, gv, gs = m.to("cuda"), v.to("cuda"), s.to("cuda")
    close(ea.mv(gm, gv), ea.mv(m, v), TOL[dtype])
    close(ea.mv(gm.t().contiguous().t(), gv), ea.mv(m, v), TOL[dtype])
    close(ea.addmv(gs, gm, gv, beta=2.0, alpha=-1.0), ea.addmv(s, m, v, beta=2.0, alpha=-1.0), TOL[dtype])
    x, y = cpu_tensor((100,), dtype), cpu_tensor((200,), dtype)[::2]  # strided y
    close(ea.dot(x.to("cuda"), y.to("cuda")), ea.dot(x, y), (TOL[dtype][0], TOL[dtype][1] * 10))
    close(ea.vdot(x.to("cuda"), y.to("cuda")), ea.vdot(x, y), (TOL[dtype][0], TOL[dtype][1] * 10))
    z = ea.empty((0,), dtype=dtype)
    close(ea.dot(z.to("cuda"), z.to("cuda")), ea.dot(z, z), TOL[dtype])


@requires_cuda
def test_batched_broadcast_matmul() -> None:
    a = cpu_tensor((2, 1, 6, 5))
    b = cpu_tensor((3, 5, 4))
    close(ea.matmul(a.to("cuda"), b.to("cuda")), ea.matmul(a, b), TOL[ea.float32])
    v = cpu_tensor((5,))
    close(ea.matmul(a.to("cuda"), v.to("cuda")), ea.matmul(a, v), TOL[ea.float32])
    close(a.to("cuda") @ b.to("cuda"), a @ b, TOL[ea.float32])
    # an expanded (stride-0) batch operand is read in place
    w = cpu_tensor((5, 4)).expand(3, 5, 4)
    x = cpu_tensor((3, 6, 5))
    close(ea.bmm(x.to("cuda"), w.to("cuda")), ea.bmm(x, w), TOL[ea.float32])


@requires_cuda
def test_tf32_flag_switches_float32_precision() -> None:
    a, b = cpu_tensor((256, 512)), cpu_tensor((512, 128))
    want = ea.mm(a.double(), b.double())
    ga, gb = a.to("cuda"), b.to("cuda")
    backends.cuda.matmul.allow_tf32 = False
    exact = ea.mm(ga, gb)
    np.testing.assert_allclose(N(exact), N(want), rtol=1e-4, atol=1e-4)
    backends.cuda.matmul.allow_tf32 = True
    fast = ea.mm(ga, gb)
    np.testing.assert_allclose(N(fast), N(want), rtol=TF32_TOL[0] * 10, atol=TF32_TOL[1] * 10)
    # float64 never uses TF32
    close(ea.mm(ga.double(), gb.double()), want, TOL[ea.float64])


@requires_cuda
def test_matmul_errors_on_cuda() -> None:
    a = ea.ones((2, 3), dtype=ea.int64).to("cuda")
    with pytest.raises(NotImplementedError, match="addmm_cuda: not implemented for dtype int64"):
        ea.mm(a, a.t())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea.mm(cpu_tensor((2, 3)).to("cuda"), cpu_tensor((3, 2)))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        ea.mm(cpu_tensor((2, 3)).to("cuda"), cpu_tensor((2, 3)).to("cuda"))
