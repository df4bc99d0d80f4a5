"""bfloat16 matrix products on the CPU (native/BFloat16Gemm.h): ember's own blocked GEMM,
float32 sums and one rounding at the end, with the vdpbf16ps micro-kernel on CPUs with
avx512_bf16 and the float32-panel fallback elsewhere. Every case runs on each CPU
capability and with each micro-kernel (the fallback forced through
_C._set_bf16_gemm_kernel), against float64 NumPy products of the bfloat16-rounded inputs.

The tolerance is the error analysis of a float32 dot product of K terms plus one
rounding to bfloat16: |got - exact| <= u16 |exact| + K u32 sum_p |a_ip b_pj| (the
products of two bfloat16 are exact in float32), with u16 = 2^-8, u32 = 2^-24."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

RNG = np.random.default_rng(26)
U16, U32 = 2.0**-8, 2.0**-24


def _has_avx512_bf16() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_bf16" in f.read().split()
    except OSError:
        return False


@pytest.fixture(params=["auto", "fallback"])
def kernel(request: pytest.FixtureRequest, capability: str) -> Iterator[str]:
    """The micro-kernel forced for the test (on each CPU capability)."""
    ea._C._set_bf16_gemm_kernel(request.param)
    try:
        yield request.param
    finally:
        ea._C._set_bf16_gemm_kernel("auto")


def bf16(a: np.ndarray) -> Any:
    return ea.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(ea.bfloat16)


def f64(t: Any) -> np.ndarray:
    return t.float().numpy().astype(np.float64)


def check_product(got: Any, a: Any, b: Any, out_dtype: Any = ea.bfloat16) -> None:
    """got == a @ b (batched or not) within one float32 dot product and one rounding."""
    assert got.dtype == out_dtype
    fa, fb = f64(a), f64(b)
    exact = fa @ fb
    k = fa.shape[-1]
    bound = np.abs(fa) @ np.abs(fb) * (k * U32) * (1 + U16)
    bound += np.abs(exact) * (U16 if out_dtype == ea.bfloat16 else U32)
    err = np.abs(f64(got) - exact)
    assert got.shape == exact.shape
    assert np.all(err <= bound + 1e-30), f"max excess {np.max(err - bound)}"


SHAPES = [  # (m, k, n): tiles of 14 x 32 and 6 x 16 / 6 x 8, K odd (a pair padded), K blocks of 256 / 512
    (1, 1, 1),
    (14, 32, 32),
    (13, 7, 31),
    (15, 1, 33),
    (29, 513, 65),
    (3, 1500, 5),
    (100, 1025, 47),
    (170, 300, 150),  # more than kBlasSerialWork: split over the threads
    (64, 257, 400),
]


@pytest.mark.parametrize(("m", "k", "n"), SHAPES)
def test_mm_matches_float64_reference(kernel: str, m: int, k: int, n: int) -> None:
    a, b = bf16(RNG.standard_normal((m, k))), bf16(RNG.standard_normal((k, n)))
    check_product(ea.mm(a, b), a, b)


@pytest.mark.parametrize(("ta", "tb"), [(False, True), (True, False), (True, True)])
def test_transposed_and_strided_operands(kernel: str, ta: bool, tb: bool) -> None:
    m, k, n = 37, 75, 45
    a = bf16(RNG.standard_normal((k, m))).t() if ta else bf16(RNG.standard_normal((m, k)))
    b = bf16(RNG.standard_normal((n, k))).t() if tb else bf16(RNG.standard_normal((k, n)))
    check_product(ea.mm(a, b), a, b)
    # row strides past the width (slices of wider matrices) and a stride that needs a copy
    wa = bf16(RNG.standard_normal((m, 2 * k + 3)))[:, 3 : k + 3]
    wb = bf16(RNG.standard_normal((k, 3 * n)))[:, ::3]
    check_product(ea.mm(wa, wb), wa, wb)
    # a column-major out= (C^T = B^T A^T) and one with arbitrary strides
    out = ea.empty(n, m, dtype=ea.bfloat16).t()
    assert ea.mm(a, b, out=out) is out
    check_product(out, a, b)
    big = ea.zeros(m, 2 * n, dtype=ea.bfloat16)
    ea.mm(a, b, out=big[:, ::2])
    check_product(big[:, ::2], a, b)


def test_zero_size_dims(kernel: str) -> None:
    a, b = bf16(RNG.standard_normal((4, 0))), bf16(RNG.standard_normal((0, 3)))
    r = ea.mm(a, b)
    assert r.shape == (4, 3) and r.dtype == ea.bfloat16
    np.testing.assert_array_equal(f64(r), np.zeros((4, 3)))
    c = bf16(RNG.standard_normal((4, 3)))
    np.testing.assert_array_equal(f64(ea.addmm(c, a, b, beta=0.5)), f64(c) * 0.5)  # K == 0: beta C
    assert ea.mm(bf16(np.ones((0, 5))), bf16(np.ones((5, 3)))).shape == (0, 3)
    assert ea.mm(bf16(np.ones((2, 5))), bf16(np.ones((5, 0)))).shape == (2, 0)


def test_batched_and_broadcast(kernel: str) -> None:
    a, b = bf16(RNG.standard_normal((5, 19, 41))), bf16(RNG.standard_normal((5, 41, 23)))
    check_product(ea.bmm(a, b), a, b)
    # matmul broadcasts a matrix over the batch (a stride-0 batch dim)
    w = bf16(RNG.standard_normal((41, 23)))
    check_product(ea.matmul(a, w), a, w)
    # a batch of products large enough that each splits itself over the threads
    big_a, big_b = bf16(RNG.standard_normal((2, 160, 200))), bf16(RNG.standard_normal((2, 200, 150)))
    check_product(ea.matmul(big_a, big_b), big_a, big_b)


def test_addmm_alpha_beta_and_linear(kernel: str) -> None:
    m, k, n = 33, 70, 40
    a, b, c = bf16(RNG.standard_normal((m, k))), bf16(RNG.standard_normal((k, n))), bf16(RNG.standard_normal((m, n)))
    got = ea.addmm(c, a, b, beta=0.5, alpha=2.0)
    fa, fb, fc = f64(a), f64(b), f64(c)
    exact = 0.5 * fc + 2.0 * (fa @ fb)
    bound = 2.0 * (np.abs(fa) @ np.abs(fb)) * (k * U32) * (1 + U16) + np.abs(exact) * U16 + 0.5 * np.abs(fc) * U32
    assert got.dtype == ea.bfloat16 and np.all(np.abs(f64(got) - exact) <= bound)
    # beta == 0: self is not read, its NaN does not propagate
    nan = ea.full((m, n), float("nan"), dtype=ea.bfloat16)
    check_product(ea.addmm(nan, a, b, beta=0.0), a, b)
    # linear: x W^T + bias, W read transposed
    w, bias = bf16(RNG.standard_normal((n, k))), bf16(RNG.standard_normal(n))
    got = ea.nn.linear(a, w, bias)
    exact = fa @ f64(w).T + f64(bias)
    bound = (np.abs(fa) @ np.abs(f64(w)).T) * (k * U32) * (1 + U16) + np.abs(exact) * U16 + np.abs(f64(bias)) * U32
    assert np.all(np.abs(f64(got) - exact) <= bound)


def test_rounds_once_across_k_blocks(kernel: str) -> None:
    # 1 + 2^-8 + 2^-16 rounds up to 1 + 2^-7 once; rounding after each K block (of 256 or
    # 512) would make 1 + 2^-8 a tie, rounded to 1 (even), and lose the 2^-16
    k = 1501
    a = np.zeros((2, k), dtype=np.float32)
    a[:, 0], a[:, 700], a[:, 1400] = 1.0, 2.0**-8, 2.0**-16
    got = ea.mm(bf16(a), bf16(np.ones((k, 3))))
    np.testing.assert_array_equal(f64(got), np.full((2, 3), 1.0 + 2.0**-7))


def test_non_finite_values_propagate(kernel: str) -> None:
    a, b = RNG.standard_normal((16, 33)), RNG.standard_normal((33, 35))
    a[3, 5], b[7, 30] = np.inf, np.nan
    got = f64(ea.mm(bf16(a), bf16(b)))
    exact = a.astype(np.float32).astype(np.float64) @ b  # only where the values are non-finite matters here
    assert np.isnan(got[:, 30]).all()
    assert np.array_equal(np.isinf(got[3]), np.isinf(exact[3])) and np.isnan(got[3, 30])
    assert np.isfinite(np.delete(np.delete(got, 30, axis=1), 3, axis=0)).all()


def test_which_kernel_runs(capability: str) -> None:
    ea._C._set_bf16_gemm_kernel("fallback")
    try:
        assert ea._C._bf16_gemm_kernel() == "fallback"
    finally:
        ea._C._set_bf16_gemm_kernel("auto")
    expect = "avx512_bf16" if capability == "avx512" and _has_avx512_bf16() else "fallback"
    assert ea._C._bf16_gemm_kernel() == expect
    with pytest.raises(RuntimeError, match="expected 'auto' or 'fallback', got 'fast'"):
        ea._C._set_bf16_gemm_kernel("fast")


def test_env_var_forces_the_fallback() -> None:
    code = textwrap.dedent(
        """
        import ember.aten as ea, numpy as np
        a = ea.from_numpy(np.full((20, 30), 0.5, dtype=np.float32)).to(ea.bfloat16)
        print(ea._C._bf16_gemm_kernel(), ea.mm(a, a.t()).float().numpy().max())
        """
    )
    env = dict(os.environ, EMBER_BF16_GEMM_KERNEL="fallback")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["fallback", "7.5"]
