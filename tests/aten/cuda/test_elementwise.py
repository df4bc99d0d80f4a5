"""CUDA elementwise core (csrc/native/cuda/Loops.cuh and the kernels built on it).

The CUDA results of every op family are compared with the CPU kernels' (and so with
the NumPy references the CPU tests check): each dtype the CPU kernel supports,
non-contiguous and broadcast operands, 0-dim CPU tensors and Python numbers among
CUDA operands, copies between host and device in every direction and layout.

These tests need a GPU and skip without one, except test_stubs_have_cuda_kernels,
which runs on any CUDA build: every stub covered here has its CUDA kernel registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import ember.c10py as c10py
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation
from opinfo.core import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, make_array, tensor_from, to_numpy

requires_cuda = pytest.mark.skipif(not c10py.cuda.is_available(), reason="needs a CUDA GPU")

ALL_NUMERIC = INT_DTYPES + FLOAT_DTYPES

# ---- the stubs with a CUDA kernel (no GPU needed) ------------------------------------------------

COVERED_STUBS = [
    # Copy.h
    "copy_stub",
    "fill_stub",
    # UnaryOps.h
    "neg_stub",
    "exp_stub",
    "abs_stub",
    "sign_stub",
    "square_stub",
    "floor_stub",
    "ceil_stub",
    "round_stub",
    "round_decimals_stub",
    "trunc_stub",
    "frac_stub",
    "bitwise_not_stub",
    "logical_not_stub",
    "signbit_stub",
    "float_class_stub",
    "nan_to_num_stub",
    "exp2_stub",
    "expm1_stub",
    "log_stub",
    "log2_stub",
    "log10_stub",
    "log1p_stub",
    "sqrt_stub",
    "rsqrt_stub",
    "reciprocal_stub",
    "sin_stub",
    "cos_stub",
    "tan_stub",
    "asin_stub",
    "acos_stub",
    "atan_stub",
    "sinh_stub",
    "cosh_stub",
    "tanh_stub",
    "asinh_stub",
    "acosh_stub",
    "atanh_stub",
    "sigmoid_stub",
    "logit_stub",
    "erf_stub",
    "erfc_stub",
    "erfinv_stub",
    "lgamma_stub",
    "digamma_stub",
    # BinaryOps.h
    "add_stub",
    "mul_stub",
    "div_true_stub",
    "div_trunc_stub",
    "div_floor_stub",
    "remainder_stub",
    "fmod_stub",
    "pow_tensor_tensor_stub",
    "pow_tensor_scalar_stub",
    "atan2_stub",
    "hypot_stub",
    "copysign_stub",
    "maximum_stub",
    "minimum_stub",
    "fmax_stub",
    "fmin_stub",
    "bitwise_and_stub",
    "bitwise_or_stub",
    "bitwise_xor_stub",
    "lshift_stub",
    "rshift_stub",
    "xlogy_stub",
    "logaddexp_stub",
    "logaddexp2_stub",
    "heaviside_stub",
    "gcd_stub",
    "lcm_stub",
    "nextafter_stub",
    # CompareOps.h
    "eq_stub",
    "ne_stub",
    "lt_stub",
    "le_stub",
    "gt_stub",
    "ge_stub",
    "logical_and_stub",
    "logical_or_stub",
    "logical_xor_stub",
    "isclose_stub",
    "equal_stub",
    # PointwiseOps.h
    "lerp_scalar_stub",
    "lerp_tensor_stub",
    "addcmul_stub",
    "addcdiv_stub",
    "clamp_scalar_stub",
    "clamp_min_scalar_stub",
    "clamp_max_scalar_stub",
    "clamp_tensor_stub",
    "where_stub",
    # Activation.h
    "relu_stub",
    "threshold_stub",
    "hardtanh_stub",
    "elu_stub",
    "gelu_stub",
    "silu_stub",
    "mish_stub",
    "softplus_stub",
    "leaky_relu_stub",
    "hardsigmoid_stub",
    "hardswish_stub",
]


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="ember.aten was built without CUDA")
def test_stubs_have_cuda_kernels() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    unknown = [s for s in COVERED_STUBS if s not in stubs]
    assert not unknown, f"not registered stubs: {unknown}"
    missing = [s for s in COVERED_STUBS if not stubs[s]]
    assert not missing, f"stubs without a CUDA kernel: {missing}"


# ---- helpers --------------------------------------------------------------------------------------

# (rtol, atol): CUDA's math library and the CPU's libm may differ by a few ulps.
_TOL = {
    ea.float16: (2e-3, 1e-3),
    ea.bfloat16: (1.6e-2, 1e-2),
    ea.float32: (2e-6, 1e-6),
    ea.float64: (1e-13, 1e-14),
}


def _cuda(x: Any) -> Any:
    return x.to("cuda") if isinstance(x, ea.Tensor) else x


def assert_same(cuda_result: Any, cpu_result: Any, *, loose: bool = False) -> None:
    """CUDA result == CPU result: exactly for integers and bool, to a few ulps for floats."""
    if isinstance(cpu_result, (tuple, list)):
        for a, b in zip(cuda_result, cpu_result, strict=True):
            assert_same(a, b, loose=loose)
        return
    if not isinstance(cpu_result, ea.Tensor):
        assert cuda_result == cpu_result
        return
    assert cuda_result.is_cuda, "expected a CUDA result"
    assert cuda_result.dtype == cpu_result.dtype
    assert tuple(cuda_result.shape) == tuple(cpu_result.shape)
    got, want = to_numpy(cuda_result), to_numpy(cpu_result)
    if cpu_result.dtype in _TOL:
        rtol, atol = _TOL[cpu_result.dtype]
        if loose:
            rtol, atol = rtol * 50, atol * 50
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def run_both(fn: Callable[..., Any], *args: Any, loose: bool = False, **kwargs: Any) -> None:
    """fn on CPU tensors and on their CUDA copies (other arguments as they are) agree."""
    want = fn(*args, **kwargs)
    got = fn(*[_cuda(a) for a in args], **{k: _cuda(v) for k, v in kwargs.items()})
    assert_same(got, want, loose=loose)


def t(shape: tuple[int, ...], dtype: Any, **kw: Any) -> Any:
    return tensor_from(make_array(shape, dtype, **kw), dtype)


def noncontiguous(x: Any) -> Any:
    """The same values, held transposed with a gap: a strided, non-dense CUDA-or-CPU tensor."""
    big = ea.empty((x.shape[1], x.shape[0] * 2), dtype=x.dtype, device=x.device)
    v = big[:, ::2].t()
    v.copy_(x)
    return v


# ---- copies -------------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_host_device_round_trip(dtype: Any) -> None:
    x = t((3, 5), dtype)
    d = x.to("cuda")
    assert d.is_cuda and d.dtype == dtype
    assert_same(d.cpu().to("cuda"), x)
    np.testing.assert_array_equal(to_numpy(d), to_numpy(x))


@requires_cuda
@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_copy_converts_like_cpu(src: Any, dst: Any) -> None:
    a = make_array((4, 6), src, low=-300, high=300) if src in FLOAT_DTYPES else make_array((4, 6), src)
    if src in FLOAT_DTYPES:
        a = a.copy()
        a.flat[:3] = [np.nan, np.inf, -np.inf] if src != ea.float16 else [np.nan, np.inf, -1.5]
    x = tensor_from(a, src)
    want = ea.empty((4, 6), dtype=dst).copy_(x)
    # device -> device with conversion, contiguous and strided on each side
    got = ea.empty((4, 6), dtype=dst, device="cuda").copy_(x.to("cuda"))
    assert_same(got, want)
    got_nc = noncontiguous(ea.zeros((4, 6), dtype=dst, device="cuda"))
    got_nc.copy_(noncontiguous(x.to("cuda")))
    assert_same(got_nc, want)
    # host -> device and device -> host with conversion
    assert_same(ea.empty((4, 6), dtype=dst, device="cuda").copy_(x), want)
    back = ea.empty((4, 6), dtype=dst).copy_(x.to("cuda"))
    np.testing.assert_array_equal(to_numpy(back), to_numpy(want))


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.int64, ea.float16, ea.bool])
def test_copy_noncontiguous_and_broadcast(dtype: Any) -> None:
    x = t((5, 7), dtype)
    # host strided -> device strided, device strided -> host strided
    dst = noncontiguous(ea.zeros((5, 7), dtype=dtype, device="cuda"))
    dst.copy_(noncontiguous(x))
    np.testing.assert_array_equal(to_numpy(dst), to_numpy(x))
    host = noncontiguous(ea.zeros((5, 7), dtype=dtype))
    host.copy_(noncontiguous(x.to("cuda")))
    np.testing.assert_array_equal(to_numpy(host), to_numpy(x))
    # dense but not contiguous (transposed): moved as it is laid out, strides kept
    xt = x.t()
    dt = xt.to("cuda")
    assert dt.stride() == xt.stride()
    np.testing.assert_array_equal(to_numpy(dt), to_numpy(xt))
    np.testing.assert_array_equal(to_numpy(dt.cpu()), to_numpy(xt))
    assert dt.cpu().stride() == xt.stride()
    # broadcasting source, both directions and on the device
    row = t((7,), dtype)
    want = ea.empty((5, 7), dtype=dtype).copy_(row)
    for src in (row, row.to("cuda")):
        for dev in ("cpu", "cuda"):
            got = ea.empty((5, 7), dtype=dtype, device=dev).copy_(src)
            np.testing.assert_array_equal(to_numpy(got), to_numpy(want))
    # a 0-dim CPU tensor into a CUDA tensor
    s = ea.tensor(3, dtype=dtype) if dtype != ea.bool else ea.tensor(True)
    got = ea.empty((2, 3), dtype=dtype, device="cuda").copy_(s)
    np.testing.assert_array_equal(to_numpy(got), np.full((2, 3), to_numpy(s)))


@requires_cuda
def test_pinned_non_blocking_copies() -> None:
    x = ea.arange(1 << 16, dtype=ea.float32)
    pinned = x.pin_memory()
    assert pinned.is_pinned()
    d = pinned.to("cuda", non_blocking=True)
    back = ea.empty((1 << 16,), dtype=ea.float32).pin_memory()
    back.copy_(d, non_blocking=True)
    c10py.cuda.synchronize()
    np.testing.assert_array_equal(to_numpy(back), to_numpy(x))
    # pageable memory with non_blocking=True is still correct right away (synchronised)
    pageable = ea.empty((1 << 16,), dtype=ea.float32)
    pageable.copy_(d, non_blocking=True)
    np.testing.assert_array_equal(to_numpy(pageable), to_numpy(x))
    # a converting copy from pinned memory stages through the CPU and is correct too
    np.testing.assert_array_equal(to_numpy(pinned.to("cuda", dtype=ea.float64, non_blocking=True)), to_numpy(x))


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill(dtype: Any) -> None:
    value = True if dtype == ea.bool else 3
    for shape in ((0,), (), (7,), (33, 65)):
        got = ea.empty(shape, dtype=dtype, device="cuda").fill_(value)
        np.testing.assert_array_equal(to_numpy(got), to_numpy(ea.empty(shape, dtype=dtype).fill_(value)))
    nc = noncontiguous(ea.zeros((6, 9), dtype=dtype, device="cuda"))
    nc.fill_(value)
    assert to_numpy(nc).tolist() == to_numpy(ea.full((6, 9), value, dtype=dtype)).tolist()
    z = ea.ones((4, 4), dtype=dtype, device="cuda")
    z.zero_()
    assert not to_numpy(z).any()


@requires_cuda
def test_cross_device_error() -> None:
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea.add(ea.ones(3, device="cuda"), ea.ones(3))


# ---- unary ----------------------------------------------------------------------------------------

FLOAT_UNARY = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "erf",
    "erfc",
    "erfinv",
    "lgamma",
    "digamma",
    "floor",
    "ceil",
    "trunc",
    "round",
    "frac",
]


@requires_cuda
@pytest.mark.parametrize("name", FLOAT_UNARY)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_unary(name: str, dtype: Any) -> None:
    fn = getattr(ea, name)
    x = t((9, 13), dtype, low=-3, high=3)
    run_both(fn, x, loose=name in ("lgamma", "digamma", "tan", "erfinv"))
    run_both(fn, noncontiguous(x), loose=name in ("lgamma", "digamma", "tan", "erfinv"))


@requires_cuda
@pytest.mark.parametrize("name", ["exp", "sqrt", "sin", "sigmoid", "erf", "log1p"])
@pytest.mark.parametrize("dtype", [ea.bool, ea.uint8, ea.int32, ea.int64])
def test_float_unary_promotes_integers(name: str, dtype: Any) -> None:
    run_both(getattr(ea, name), t((4, 5), dtype))


@requires_cuda
@pytest.mark.parametrize("name", ["neg", "abs", "sign", "square"])
@pytest.mark.parametrize("dtype", ALL_NUMERIC)
def test_same_dtype_unary(name: str, dtype: Any) -> None:
    x = t((6, 11), dtype)
    run_both(getattr(ea, name), x)
    run_both(getattr(ea, name), noncontiguous(x))


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_bool_result_unary(dtype: Any) -> None:
    a = make_array((5, 8), dtype)
    if dtype in FLOAT_DTYPES:
        a = a.astype(np.float32)
        a.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    x = tensor_from(a, dtype)
    for name in ("logical_not", "signbit", "isnan", "isinf", "isposinf", "isneginf", "isfinite"):
        run_both(getattr(ea, name), x)
    if dtype not in FLOAT_DTYPES:
        run_both(ea.bitwise_not, x)
    else:
        run_both(ea.nan_to_num, x)
        run_both(ea.nan_to_num, x, nan=1.5, posinf=2.0, neginf=-2.0)
        run_both(lambda v: ea.round(v, decimals=2), x)
        run_both(lambda v: ea.round(v, decimals=-1), x * 100)
        run_both(lambda v: ea.logit(v, eps=0.1), x)
        run_both(ea.logit, x)


@requires_cuda
def test_round_half_to_even() -> None:
    x = ea.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], device="cuda")
    assert ea.round(x).cpu().tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]


# ---- binary ---------------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_add_sub_mul(dtype: Any) -> None:
    a, b = t((7, 9), dtype), t((7, 9), dtype)
    run_both(ea.add, a, b)
    run_both(ea.mul, a, b)
    if dtype != ea.bool:
        run_both(lambda x, y: ea.add(x, y, alpha=2), a, b)
        run_both(lambda x, y: ea.sub(x, y, alpha=3), a, b)
        # broadcasting, strided, Python numbers and 0-dim CPU tensors as operands
        run_both(ea.add, a, t((9,), dtype))
        run_both(ea.mul, noncontiguous(a), t((7, 1), dtype))
        run_both(lambda x: x + 2, a)
        run_both(lambda x: 3 * x, a)
        s = ea.tensor(2, dtype=dtype)
        assert_same(a.to("cuda") * s, a * s)  # s stays on the CPU
        assert_same(s + a.to("cuda"), s + a)


@requires_cuda
def test_mixed_dtypes_promote() -> None:
    run_both(ea.add, t((4, 4), ea.int32), t((4, 4), ea.float16))
    run_both(ea.mul, t((4, 4), ea.uint8), t((4, 4), ea.int8))
    run_both(lambda x: x * 2.5, t((4, 4), ea.int64))
    run_both(ea.div, t((4, 4), ea.int64), t((4, 4), ea.int64, exclude_zero=True))


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_NUMERIC)
def test_division_family(dtype: Any) -> None:
    lo = 0 if dtype == ea.uint8 else -50
    a = t((8, 10), dtype, low=lo, high=50)
    b = t((8, 10), dtype, low=lo, high=50, exclude_zero=True)
    run_both(lambda x, y: ea.div(x, y, rounding_mode="trunc"), a, b)
    run_both(lambda x, y: ea.div(x, y, rounding_mode="floor"), a, b)
    run_both(ea.remainder, a, b)
    run_both(ea.fmod, a, b)
    run_both(ea.true_divide, a, b)


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.uint8, ea.int32, ea.int64])
def test_integer_division_by_zero_raises(dtype: Any) -> None:
    a = ea.tensor([1, 2, 3], dtype=dtype, device="cuda")
    zero_in = ea.tensor([1, 0, 1], dtype=dtype, device="cuda")
    for fn in (
        lambda x, y: ea.div(x, y, rounding_mode="trunc"),
        lambda x, y: ea.div(x, y, rounding_mode="floor"),
        ea.remainder,
        ea.fmod,
        ea.floor_divide,
    ):
        # a device divisor: reported by the kernel, raised at the next check point
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(a, zero_in).cpu()
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(a, 0)  # a Python number: raised at once
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(a, zero_in[1:2].expand(3))  # a broadcast zero on the device
            ea.cuda.synchronize()
        assert_same(fn(a, zero_in + 1), fn(a.cpu(), zero_in.cpu() + 1))
    # floats divide by zero without an error
    f = ea.div(a.float(), ea.zeros(3, device="cuda"), rounding_mode="floor")
    assert to_numpy(f).tolist() == [float("inf")] * 3


@requires_cuda
def test_integer_rounding_modes_and_signs() -> None:
    a = ea.tensor([-7, 7, -7, 7, -128, 5], dtype=ea.int8)
    b = ea.tensor([2, -2, -2, 2, -1, 3], dtype=ea.int8)
    run_both(lambda x, y: ea.div(x, y, rounding_mode="floor"), a, b)
    run_both(lambda x, y: ea.div(x, y, rounding_mode="trunc"), a, b)
    run_both(ea.remainder, a, b)
    run_both(ea.fmod, a, b)
    f = ea.tensor([-7.5, 7.5, -0.0, 3.0, float("inf")])
    g = ea.tensor([2.0, -2.0, 1.0, 0.0, 2.0])
    run_both(ea.remainder, f, g)
    run_both(lambda x, y: ea.div(x, y, rounding_mode="floor"), f, g)


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_NUMERIC)
def test_pow(dtype: Any) -> None:
    if dtype in INT_DTYPES:
        a = t((6, 7), dtype, low=0 if dtype == ea.uint8 else -4, high=5)
        e = t((6, 7), dtype, low=0, high=4)
        run_both(ea.pow, a, e)
        run_both(lambda x: x**3, a)
        run_both(lambda x: x**2, a)
        return
    a = t((6, 7), dtype, low=0.1, high=3)
    run_both(ea.pow, a, t((6, 7), dtype, low=-2, high=2), loose=True)
    for e in (2, 3, 0.5, -0.5, -1, -2, 1.7, 0, 1):
        run_both(lambda x, e=e: x**e, a, loose=True)
    run_both(lambda x: 2.0**x, a, loose=True)
    run_both(ea.float_power, a, t((6, 7), dtype, low=-2, high=2), loose=True)


@requires_cuda
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min(name: str, dtype: Any) -> None:
    a = make_array((5, 6), dtype)
    b = make_array((5, 6), dtype)
    if dtype in FLOAT_DTYPES:
        a, b = a.astype(np.float32), b.astype(np.float32)
        a.flat[0], b.flat[1], a.flat[2], b.flat[2] = np.nan, np.nan, np.nan, np.nan
    run_both(getattr(ea, name), tensor_from(a, dtype), tensor_from(b, dtype))


@requires_cuda
@pytest.mark.parametrize("name", ["atan2", "hypot", "copysign", "xlogy", "logaddexp", "logaddexp2", "nextafter"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_binary(name: str, dtype: Any) -> None:
    a = make_array((6, 8), dtype, low=-5, high=5).astype(np.float32)
    b = make_array((6, 8), dtype, low=0.1, high=5).astype(np.float32)
    a.flat[:3] = [0.0, np.inf, np.nan]
    b.flat[:3] = [0.0, np.inf, 1.0]
    run_both(getattr(ea, name), tensor_from(a, dtype), tensor_from(b, dtype))


@requires_cuda
@pytest.mark.parametrize("dtype", (*INT_DTYPES, ea.bool))
def test_bitwise_and_integer_ops(dtype: Any) -> None:
    a, b = t((6, 9), dtype), t((6, 9), dtype)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        run_both(getattr(ea, name), a, b)
    if dtype == ea.bool:
        return
    shift = t((6, 9), dtype, low=0, high=9)
    run_both(ea.bitwise_left_shift, a, shift)
    run_both(ea.bitwise_right_shift, a, shift)
    run_both(ea.gcd, a, b)
    run_both(ea.lcm, a, b)


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_heaviside(dtype: Any) -> None:
    run_both(ea.heaviside, t((5, 5), dtype), t((5, 5), dtype))


# ---- comparisons ----------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_comparisons(dtype: Any) -> None:
    a = t((6, 7), dtype)
    b = a.clone()
    b[::2] = t((3, 7), dtype)
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
        run_both(getattr(ea, name), a, b)
        run_both(getattr(ea, name), noncontiguous(a), b[0])
    run_both(lambda x: x > 0, a)
    run_both(ea.isclose, a, b)
    run_both(lambda x, y: ea.isclose(x, y, rtol=0.1, atol=0.5, equal_nan=True), a, b)
    assert ea.equal(a.to("cuda"), a.to("cuda")) is True
    assert ea.equal(a.to("cuda"), b.to("cuda")) == ea.equal(a, b)
    assert ea.equal(noncontiguous(a.to("cuda")), a.to("cuda")) is True


@requires_cuda
def test_equal_nan_and_promotion() -> None:
    x = ea.tensor([1.0, float("nan")], device="cuda")
    assert ea.equal(x, x) is False
    assert ea.equal(ea.tensor([1, 2], device="cuda"), ea.tensor([1.0, 2.0], device="cuda")) is True


# ---- pointwise ------------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_lerp_addcdiv(dtype: Any) -> None:
    a, b, w = t((5, 9), dtype), t((5, 9), dtype), t((5, 9), dtype, low=-1, high=2)
    run_both(ea.lerp, a, b, w)
    run_both(ea.lerp, a, b, 0.3)
    run_both(ea.lerp, a, b, 0.8)
    run_both(lambda x, y, z: ea.addcdiv(x, y, z, value=0.5), a, b, t((5, 9), dtype, low=1, high=3))


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_NUMERIC)
def test_addcmul_clamp(dtype: Any) -> None:
    a, b, c = t((5, 9), dtype), t((5, 9), dtype), t((5, 9), dtype)
    run_both(lambda x, y, z: ea.addcmul(x, y, z, value=2), a, b, c)
    run_both(lambda x: ea.clamp(x, 1, 20), a)
    run_both(lambda x: ea.clamp(x, min=2), a)
    run_both(lambda x: ea.clamp(x, max=5), a)
    run_both(ea.clamp, a, ea.minimum(b, c), ea.maximum(b, c))
    if dtype in FLOAT_DTYPES:
        run_both(lambda x: ea.clamp(x, -0.5, 0.5), ea.tensor([float("nan"), 2.0, -3.0], dtype=dtype))


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where(dtype: Any) -> None:
    cond = t((6, 8), ea.bool)
    a, b = t((6, 8), dtype), t((6, 8), dtype)
    run_both(ea.where, cond, a, b)
    run_both(ea.where, cond, noncontiguous(a), b[0])
    if dtype not in (ea.bool, ea.uint8):
        run_both(lambda c, x: ea.where(c, x, 0), cond, a)


# ---- activations ----------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_activations(dtype: Any) -> None:
    x = t((7, 9), dtype, low=-6, high=6)
    nn = ea.nn
    run_both(nn.gelu, x)
    run_both(lambda v: nn.gelu(v, approximate="tanh"), x)
    run_both(nn.silu, x)
    run_both(nn.mish, x)
    run_both(nn.softplus, x)
    run_both(lambda v: nn.softplus(v, beta=2, threshold=3), x)
    run_both(nn.leaky_relu, x)
    run_both(nn.hardsigmoid, x)
    run_both(nn.hardswish, x)
    run_both(nn.elu, x)
    run_both(lambda v: nn.elu(v, alpha=0.5, scale=2.0, input_scale=1.5), x)
    run_both(ea.selu, x)
    run_both(ea.celu, x)


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_NUMERIC)
def test_relu_threshold_hardtanh(dtype: Any) -> None:
    x = t((7, 9), dtype)
    run_both(ea.relu, x)
    run_both(lambda v: ea.threshold(v, 5, 1), x)
    run_both(lambda v: ea.nn.hardtanh(v, 2, 30), x)
    run_both(ea.relu, noncontiguous(x))


# ---- the launch paths ---------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_vectorized_and_misaligned_paths(offset: int) -> None:
    # sizes around the 4-element vector width, starting at aligned and misaligned addresses
    for n in (1, 3, 4, 5, 1023, 4096 + 3):
        base = t((n + offset,), ea.float32)
        x = base[offset:]
        run_both(ea.exp, x)
        run_both(ea.add, x, x.flip(0))


@requires_cuda
def test_many_dims_and_in_place() -> None:
    x = t((2, 3, 2, 3, 2, 3, 2), ea.float32)
    y = x.permute(6, 5, 4, 3, 2, 1, 0)
    run_both(lambda v: v.exp() * 2, y)
    run_both(ea.add, y, x.permute(6, 5, 4, 3, 2, 1, 0).contiguous())
    want = to_numpy(x) * 3 + 1
    d = x.to("cuda")
    d.mul_(3)
    d.add_(1)
    np.testing.assert_allclose(to_numpy(d), want, rtol=1e-6)
    out = ea.empty((2, 3, 2, 3, 2, 3, 2), dtype=ea.float64, device="cuda")
    ea.add(x.to("cuda"), 1, out=out)  # computed in float32, cast into the float64 out
    np.testing.assert_allclose(to_numpy(out), (to_numpy(x) + 1).astype(np.float64), rtol=1e-6)


# ---- index math of gpu_kernel, checked on the host (no GPU needed) ------------------------------


@requires_emulation
def test_offset_calculator_matches_strides() -> None:
    rng = np.random.default_rng(7)
    for nd in (0, 1, 2, 3, 5, 8):
        shape = [int(s) for s in rng.integers(1, 9, size=nd)]
        strides = [[int(s) for s in rng.integers(0, 1000, size=nd)] for _ in range(3)]
        numel = int(np.prod(shape)) if shape else 1
        linear = list(range(numel)) if numel < 2000 else [int(i) for i in rng.integers(0, numel, size=2000)]
        got = ember_aten_testing.cuda_loops_offsets(shape, strides, linear)
        for i, row in zip(linear, got, strict=True):
            idx = np.unravel_index(i, shape[::-1])[::-1] if shape else ()  # dim 0 is the fastest
            assert row == [sum(int(a) * b for a, b in zip(idx, s, strict=True)) for s in strides]


@requires_emulation
def test_offset_calculator_division_edge_sizes() -> None:
    # the multiply-shift division over sizes near powers of two and the int32 limit
    sizes = [1, 2, 3, 7, 8, 9, 255, 256, 257, 65535, 65536, 65537, 1 << 20, (1 << 31) - 1]
    for size in sizes:
        rest = max(1, ((1 << 31) - 1) // size)
        shape = [size, rest]
        linear = sorted({0, 1, size - 1, size, size + 1, size * rest - 1, (size * rest) // 2, (1 << 31) - 1})
        linear = [i for i in linear if i < size * rest]
        got = ember_aten_testing.cuda_loops_offsets(shape, [[1, 1 << 31], [0, 1]], linear)
        for i, row in zip(linear, got, strict=True):
            q, r = divmod(i, size)
            assert row[0] == (r + (q << 31)) % (1 << 32)  # 32-bit arithmetic wraps
            assert row[1] == q


@requires_emulation
def test_32bit_split_covers_the_iteration() -> None:
    # a 3 x 2^31 iteration (expanded: no memory) must be cut into pieces below 2^31
    # elements whose starts follow the operands' strides
    n = 1 << 31
    out = ea.zeros(1, dtype=ea.int8).expand(3, n)
    col = ea.zeros(3, dtype=ea.float32).view(3, 1).expand(3, n)
    pieces = ember_aten_testing.cuda_loops_split([out, col])
    assert len(pieces) > 1
    total = 0
    for shape, starts in pieces:
        numel = int(np.prod(shape))
        assert numel <= (1 << 31) - 1
        total += numel
        assert starts[0] == 0  # out has stride 0 everywhere
        assert starts[1] % 4 == 0 and 0 <= starts[1] < 3 * 4
    assert total == 3 * n


# ---- flip / tril / triu / trace -----------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_flip_tril_triu_trace(dtype: Any) -> None:
    x = t((3, 4, 5), dtype)
    for dims in ((0,), (2,), (0, 2), (0, 1, 2), (-1,)):
        run_both(lambda v, dims=dims: ea.flip(v, dims), x)
    run_both(lambda v: ea.flip(v, (1,)), x.permute(2, 0, 1))
    run_both(lambda v: ea.flip(v, (0,)), ea.tensor(5, dtype=dtype))
    for diagonal in (-2, -1, 0, 1, 3):
        run_both(lambda v, d=diagonal: ea.tril(v, d), x)
        run_both(lambda v, d=diagonal: ea.triu(v, d), x)
        run_both(lambda v, d=diagonal: ea.triu(v, d), noncontiguous(x[0]))
    m = t((4, 6), dtype)
    run_both(ea.trace, m)
    run_both(ea.trace, m.t())
    run_both(ea.trace, t((0, 3), dtype))
    d = x.to("cuda")
    d.tril_(1)
    np.testing.assert_array_equal(to_numpy(d), to_numpy(ea.tril(x, 1)))
