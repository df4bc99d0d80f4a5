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


# ---- convolution (im2col / col2im kernels + cuBLAS) -------------------------------------------

CONV_STUBS = ["im2col_stub", "col2im_stub"]


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="a CPU-only build registers no CUDA kernels")
def test_conv_stubs_and_ops_have_cuda_kernels() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    for name in CONV_STUBS:
        assert stubs[name] is True, name
    keys = {(name, key) for name, key, *_ in ea._C._native_kernels()}
    for op in ["convolution", "convolution_backward", "im2col", "col2im"]:
        assert (f"aten::{op}", "CUDA") in keys, op


# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CONV_CASES = [
    ((2, 3, 9, 8), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    ((2, 4, 10, 9), (6, 2, 3, 2), [2, 1], [0, 1], [2, 1], False, [0, 0], 2),
    ((1, 6, 7, 7), (6, 1, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 6),  # depthwise: groups > images
    ((3, 5, 6, 6), (7, 5, 1, 1), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),  # 1x1: no im2col
    ((2, 3, 11), (4, 3, 4), [2], [1], [1], False, [0], 1),  # conv1d
    ((2, 2, 5, 6, 4), (3, 2, 2, 3, 2), [1, 2, 1], [1, 0, 1], [1, 1, 2], False, [0, 0, 0], 1),  # conv3d
    ((2, 4, 5, 6), (4, 3, 3, 3), [2, 2], [1, 0], [1, 1], True, [1, 0], 1),  # transposed
    ((2, 4, 5, 5), (4, 2, 3, 3), [1, 2], [0, 1], [2, 1], True, [0, 1], 2),  # transposed, grouped
]


def _conv_args(case: tuple, dtype: Any) -> tuple[Any, Any, Any, list]:
    xs, ws, stride, padding, dilation, transposed, output_padding, groups = case
    x, w = cpu_tensor(xs, dtype), cpu_tensor(ws, dtype)
    out_channels = ws[1] * groups if transposed else ws[0]
    b = cpu_tensor((out_channels,), dtype)
    return x, w, b, [stride, padding, dilation, transposed, output_padding, groups]


@requires_cuda
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-T{int(c[5])}-g{c[7]}")
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_convolution_forward_matches_cpu(case: tuple, dtype: Any) -> None:
    backends.cudnn.allow_tf32 = False
    x, w, b, rest = _conv_args(case, dtype)
    want = ea.convolution(x, w, b, *rest)
    close(ea.convolution(x.to("cuda"), w.to("cuda"), b.to("cuda"), *rest), want, TOL[dtype])
    close(ea.convolution(x.to("cuda"), w.to("cuda"), None, *rest), ea.convolution(x, w, None, *rest), TOL[dtype])


@requires_cuda
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-T{int(c[5])}-g{c[7]}")
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.bfloat16], ids=str)
def test_convolution_backward_matches_cpu(case: tuple, dtype: Any) -> None:
    backends.cudnn.allow_tf32 = False
    x, w, b, rest = _conv_args(case, dtype)
    y = ea.convolution(x, w, b, *rest)
    g = cpu_tensor(tuple(y.shape), dtype)
    mask = [True, True, True]
    want = ea.convolution_backward(g, x, w, [b.shape[0]], *rest, mask)
    got = ea.convolution_backward(g.to("cuda"), x.to("cuda"), w.to("cuda"), [b.shape[0]], *rest, mask)
    tol = TOL[dtype] if dtype != ea.bfloat16 else (1e-1, 1e-1)  # sums of many bf16 products
    for gt, wt in zip(got, want, strict=True):
        close(gt, wt, tol)
    only_weight = ea.convolution_backward(g.to("cuda"), x.to("cuda"), w.to("cuda"), None, *rest, [False, True, False])
    assert only_weight[0] is None and only_weight[2] is None
    close(only_weight[1], want[1], tol)


@requires_cuda
def test_convolution_tf32_default_and_channels_last() -> None:
    assert backends.cudnn.allow_tf32 is True  # PyTorch's default for convolutions
    x, w = cpu_tensor((4, 16, 12, 12)), cpu_tensor((8, 16, 3, 3))
    want = ea.convolution(x.double(), w.double(), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    got = ea.convolution(x.to("cuda"), w.to("cuda"), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    np.testing.assert_allclose(N(got), N(want), rtol=2e-2, atol=2e-2)
    xc = x.contiguous(memory_format=ea.channels_last).to("cuda")
    y = ea.convolution(xc, w.to("cuda"), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    assert y.is_contiguous(memory_format=ea.channels_last)
    np.testing.assert_allclose(N(y), N(want), rtol=2e-2, atol=2e-2)


@requires_cuda
def test_unfold_fold_match_cpu() -> None:
    x = cpu_tensor((2, 3, 7, 6))
    args = ([3, 2], [1, 2], [1, 0], [2, 1])
    cols = ea.nn.im2col(x, *args)
    close(ea.nn.im2col(x.to("cuda"), *args), cols, TOL[ea.float32])
    close(ea.nn.col2im(cols.to("cuda"), [7, 6], *args), ea.nn.col2im(cols, [7, 6], *args), TOL[ea.float32])


@requires_cuda
def test_convolution_errors_on_cuda() -> None:
    x, w = cpu_tensor((1, 2, 5, 5)), cpu_tensor((3, 2, 3, 3))
    with pytest.raises(RuntimeError, match="same device"):
        ea.convolution(x.to("cuda"), w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    with pytest.raises(NotImplementedError, match="int64"):
        ea.convolution(
            x.to(ea.int64).to("cuda"), w.to(ea.int64).to("cuda"), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
        )


# ---- pooling ----------------------------------------------------------------------------------

POOL_STUBS = [
    "max_pool_stub",
    "avg_pool_stub",
    "avg_pool_backward_stub",
    "adaptive_avg_pool_stub",
    "adaptive_avg_pool_backward_stub",
    "adaptive_max_pool_stub",
    "pool_scatter_stub",
]


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="a CPU-only build registers no CUDA kernels")
def test_pool_stubs_have_cuda_kernels() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    for name in POOL_STUBS:
        assert stubs[name] is True, name
    keys = {(name, key) for name, key, *_ in ea._C._native_kernels()}
    for op in ["max_pool2d_with_indices", "avg_pool3d_backward", "_adaptive_avg_pool2d", "max_unpool2d"]:
        assert (f"aten::{op}", "CUDA") in keys, op


def cuda_args(args: tuple) -> tuple:
    return tuple(a.to("cuda") if isinstance(a, ea.Tensor) else a for a in args)


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.int64], ids=str)
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool_matches_cpu(dtype: Any, ceil_mode: bool) -> None:
    x = cpu_tensor((2, 3, 9, 8)).mul(4).to(dtype)
    args = ([3, 2], [2, 2], [1, 1], [1, 2], ceil_mode)
    out, idx = ea.nn.max_pool2d_with_indices(x, *args)
    gout, gidx = ea.nn.max_pool2d_with_indices(x.to("cuda"), *args)
    close(gout, out, TOL.get(dtype, (0, 0)))
    np.testing.assert_array_equal(N(gidx), N(idx))
    x3 = cpu_tensor((1, 2, 5, 6, 7)).to(dtype)
    args3 = ([2, 3, 2], [2, 1, 2], [1, 1, 0], [1, 1, 2], ceil_mode)
    out3, idx3 = ea.nn.max_pool3d_with_indices(x3, *args3)
    gout3, gidx3 = ea.nn.max_pool3d_with_indices(x3.to("cuda"), *args3)
    close(gout3, out3, TOL.get(dtype, (0, 0)))
    np.testing.assert_array_equal(N(gidx3), N(idx3))
    if dtype.is_floating_point:
        g = cpu_tensor(tuple(out.shape), dtype)
        want = ea.nn.max_pool2d_with_indices_backward(g, x, *args, idx)
        got = ea.nn.max_pool2d_with_indices_backward(*cuda_args((g, x)), *args, gidx)
        close(got, want, TOL[dtype])
        close(ea.nn.max_unpool2d(gout, gidx, [9, 8]), ea.nn.max_unpool2d(out, idx, [9, 8]), TOL[dtype])


@requires_cuda
def test_max_pool_nan_wins() -> None:
    x = cpu_tensor((1, 1, 4, 4))
    x[0, 0, 1, 1] = float("nan")
    out, idx = ea.nn.max_pool2d_with_indices(x.to("cuda"), [2, 2], [2, 2], [0, 0], [1, 1], False)
    assert np.isnan(N(out)[0, 0, 0, 0])
    assert N(idx)[0, 0, 0, 0] == 5


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.bfloat16, ea.int64], ids=str)
@pytest.mark.parametrize(("count_include_pad", "divisor"), [(True, None), (False, None), (True, 3)])
def test_avg_pool_matches_cpu(dtype: Any, count_include_pad: bool, divisor: int | None) -> None:
    x = cpu_tensor((2, 3, 9, 8)).mul(10).to(dtype)
    args = ([3, 2], [2, 2], [1, 1], True, count_include_pad, divisor)
    out = ea.nn.avg_pool2d(x, *args)
    close(ea.nn.avg_pool2d(x.to("cuda"), *args), out, TOL.get(dtype, (0, 0)))
    x3 = cpu_tensor((1, 2, 5, 6, 7)).to(dtype)
    args3 = ([2, 3, 2], [2, 1, 2], [1, 1, 0], False, count_include_pad, divisor)
    close(ea.nn.avg_pool3d(x3.to("cuda"), *args3), ea.nn.avg_pool3d(x3, *args3), TOL.get(dtype, (0, 0)))
    if dtype.is_floating_point:
        g = cpu_tensor(tuple(out.shape), dtype)
        want = ea.nn.avg_pool2d_backward(g, x, *args)
        close(ea.nn.avg_pool2d_backward(*cuda_args((g, x)), *args), want, TOL[dtype])


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16], ids=str)
def test_adaptive_pool_matches_cpu(dtype: Any) -> None:
    x = cpu_tensor((2, 3, 10, 7), dtype)
    close(ea._adaptive_avg_pool2d(x.to("cuda"), [3, 4]), ea._adaptive_avg_pool2d(x, [3, 4]), TOL[dtype])
    g = cpu_tensor((2, 3, 3, 4), dtype)
    want = ea._adaptive_avg_pool2d_backward(g, x)
    close(ea._adaptive_avg_pool2d_backward(*cuda_args((g, x))), want, TOL[dtype])
    out, idx = ea.nn.adaptive_max_pool2d(x, [4, 3])
    gout, gidx = ea.nn.adaptive_max_pool2d(x.to("cuda"), [4, 3])
    close(gout, out, TOL[dtype])
    np.testing.assert_array_equal(N(gidx), N(idx))
    g2 = cpu_tensor((2, 3, 4, 3), dtype)
    want2 = ea.nn.adaptive_max_pool2d_backward(g2, x, idx)
    close(ea.nn.adaptive_max_pool2d_backward(g2.to("cuda"), x.to("cuda"), gidx), want2, TOL[dtype])
    x3 = cpu_tensor((1, 2, 5, 6, 7), dtype)
    close(ea.nn.adaptive_avg_pool3d(x3.to("cuda"), [2, 3, 4]), ea.nn.adaptive_avg_pool3d(x3, [2, 3, 4]), TOL[dtype])
    out3, idx3 = ea.nn.adaptive_max_pool3d(x3, [3, 2, 4])
    gout3, gidx3 = ea.nn.adaptive_max_pool3d(x3.to("cuda"), [3, 2, 4])
    close(gout3, out3, TOL[dtype])
    np.testing.assert_array_equal(N(gidx3), N(idx3))


@requires_cuda
def test_pool_errors_on_cuda() -> None:
    x = cpu_tensor((1, 1, 4, 4))
    out, idx = ea.nn.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    with pytest.raises(RuntimeError, match="same device"):
        ea.nn.max_pool2d_with_indices_backward(out, x.to("cuda"), [2, 2], [2, 2], [0, 0], [1, 1], False, idx)
    bad = idx.clone()
    bad[0, 0, 0, 0] = 99
    with pytest.raises(IndexError, match="max_unpool"):
        ea.nn.max_unpool2d(out.to("cuda"), bad.to("cuda"), [4, 4]).to("cpu")


# ---- padding and upsampling (separable resampling), addr ------------------------------------------


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="a CPU-only build registers no CUDA kernels")
def test_resample_stubs_and_addr_have_cuda_kernels() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    for name in ["resample_gather_stub", "resample_stub", "resample_backward_stub"]:
        assert stubs[name] is True, name
    keys = {(name, key) for name, key, *_ in ea._C._native_kernels()}
    for op in ["reflection_pad2d", "upsample_bicubic2d_backward", "_upsample_nearest_exact3d", "addr"]:
        assert (f"aten::{op}", "CUDA") in keys, op


# (forward name, args after the input, backward name, backward args builder)
RESAMPLE_CASES = [
    ("reflection_pad1d", ([2, 3],)),
    ("reflection_pad2d", ([1, 2, 2, 1],)),
    ("reflection_pad3d", ([1, 0, 1, 2, 0, 1],)),
    ("replication_pad1d", ([3, 1],)),
    ("replication_pad2d", ([2, 0, 1, 3],)),
    ("replication_pad3d", ([1, 1, 0, 2, 2, 0],)),
    ("upsample_nearest1d", ([11],)),
    ("upsample_nearest2d", ([9, 7],)),
    ("upsample_nearest3d", ([5, 9, 7],)),
    ("_upsample_nearest_exact2d", ([9, 7],)),
    ("upsample_linear1d", ([11], True)),
    ("upsample_bilinear2d", ([9, 7], False)),
    ("upsample_bicubic2d", ([9, 7], True)),
    ("upsample_trilinear3d", ([5, 9, 7], False)),
]
SPATIAL = {"1d": (2, 3, 6), "2d": (2, 3, 6, 5), "3d": (1, 2, 4, 6, 5)}


@requires_cuda
@pytest.mark.parametrize(("name", "args"), RESAMPLE_CASES, ids=[c[0] for c in RESAMPLE_CASES])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16], ids=str)
def test_resample_forward_backward_match_cpu(name: str, args: tuple, dtype: Any) -> None:
    x = cpu_tensor(SPATIAL[name[-2:]], dtype)
    fwd = getattr(ea.nn, name)
    out = fwd(x, *args)
    close(fwd(x.to("cuda"), *args), out, TOL[dtype])
    g = cpu_tensor(tuple(out.shape), dtype)
    bwd = getattr(ea.nn, name + "_backward")
    if "pad" in name:
        want = bwd(g, x, *args)
        got = bwd(g.to("cuda"), x.to("cuda"), *args)
    else:
        want = bwd(g, args[0], list(x.shape), *args[1:])
        got = bwd(g.to("cuda"), args[0], list(x.shape), *args[1:])
    close(got, want, TOL[dtype])


@requires_cuda
def test_nearest_copies_every_dtype() -> None:
    x = ea.arange(30, dtype=ea.int64).reshape(1, 1, 5, 6).to(ea.int16)
    out = ea.nn.upsample_nearest2d(x, [10, 9])
    got = ea.nn.upsample_nearest2d(x.to("cuda"), [10, 9])
    assert got.dtype == ea.int16
    np.testing.assert_array_equal(N(got), N(out))


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.bfloat16, ea.int32, ea.bool], ids=str)
def test_addr_matches_cpu(dtype: Any) -> None:
    s, v1, v2 = cpu_tensor((4, 5)), cpu_tensor((4,)), cpu_tensor((5,))
    s, v1, v2 = (t.mul(3).to(dtype) for t in (s, v1, v2))
    beta, alpha = (True, True) if dtype == ea.bool else (2, 3)
    want = ea.addr(s, v1, v2, beta=beta, alpha=alpha)
    got = ea.addr(*cuda_args((s, v1, v2)), beta=beta, alpha=alpha)
    if dtype in TOL:
        close(got, want, TOL[dtype])
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(N(got), N(want))
    # promotion: float32 self with float64 vectors -> float64
    close(
        ea.addr(*cuda_args((s.float(), v1.double(), v2.double()))),
        ea.addr(s.float(), v1.double(), v2.double()),
        TOL[ea.float64],
    )
