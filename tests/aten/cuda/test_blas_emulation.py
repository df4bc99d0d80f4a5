"""The cuBLAS calls of the CUDA matrix products and convolutions, checked on the host.

gemm_batched_cuda (CUDABlas.cpp) and the CUDA convolution (ConvolutionCUDA.cpp) turn
row-major, possibly strided or transposed operands into column-major cuBLAS calls
(operand order, transposes, leading dimensions, batch strides). ``ember_aten_testing.cuda_emulated_*``
runs that host code on CPU tensors with cuBLAS replaced by a host emulation (cuBLAS's
argument checks, then the column-major product), so those calls are checked against the
CPU kernels on every CUDA build, GPU or not. The GPU runs the same cases for real in
test_blas_conv_pool.py."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation
RNG = np.random.default_rng(5)


def rand(*shape: int, dtype: Any = ea.float64) -> Any:
    return ea.from_numpy(RNG.standard_normal(shape)).to(dtype)


def N(t: Any) -> np.ndarray:
    return t.double().numpy()


def emulated(out: Any, a: Any, b: Any, beta: float = 0.0, alpha: float = 1.0) -> Any:
    ember_aten_testing.cuda_emulated_gemm_batched(out, a, b, beta, alpha)
    return out


def want(c: np.ndarray, a: Any, b: Any, beta: float, alpha: float) -> np.ndarray:
    prod = alpha * np.matmul(N(a), N(b))
    return prod if beta == 0 else prod + beta * c


# (a, b) as views with the layouts cuBLAS must be told about: transposed, sliced (leading
# dimension > columns), single rows / columns, a stride-0 batch
def operand_cases() -> list[tuple[str, Any, Any]]:
    B, m, k, n = 3, 5, 4, 7
    cases = [
        ("contiguous", rand(B, m, k), rand(B, k, n)),
        ("a transposed", rand(B, k, m).transpose(1, 2), rand(B, k, n)),
        ("b transposed", rand(B, m, k), rand(B, n, k).transpose(1, 2)),
        ("both transposed", rand(B, k, m).transpose(1, 2), rand(B, n, k).transpose(1, 2)),
        ("sliced columns", rand(B, m, k + 3)[:, :, 1 : k + 1], rand(B, k, n + 2)[:, :, :n]),
        ("sliced transposed", rand(B, k + 2, m + 3)[:, 1 : k + 1, 2 : m + 2].transpose(1, 2), rand(B, k, n)),
        ("k == 1", rand(B, m, 1), rand(B, 1, n)),
        ("m == 1", rand(B, 1, k), rand(B, k, n)),
        ("n == 1", rand(B, m, k), rand(B, k, 1)),
        ("stride-0 batch", rand(1, m, k).expand(B, m, k), rand(B, k, n)),
        ("stepped rows", rand(B, 2 * m, k)[:, ::2, :], rand(B, k, n)),  # neither row- nor column-major: copied
        ("batch of one", rand(1, m, k), rand(1, k, n).transpose(1, 2).contiguous().transpose(1, 2)),
    ]
    return [(name, a, b) for name, a, b in cases]


CASES = operand_cases()


@pytest.mark.parametrize(("name", "a", "b"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize(("beta", "alpha"), [(0.0, 1.0), (0.5, -2.0)])
def test_gemm_batched_cuda_matches_numpy(name: str, a: Any, b: Any, beta: float, alpha: float) -> None:
    B, m, n = a.shape[0], a.shape[1], b.shape[2]
    c0 = rand(B, m, n)
    expected = want(N(c0), a, b, beta, alpha)
    out = emulated(c0.clone(), a, b, beta, alpha)
    np.testing.assert_allclose(N(out), expected, rtol=1e-12, atol=1e-12)
    # a column-major result (C^T stored row-major): the operands trade places
    out_t = ea.empty((B, n, m), dtype=ea.float64).transpose(1, 2)
    out_t.copy_(c0)
    emulated(out_t, a, b, beta, alpha)
    np.testing.assert_allclose(N(out_t), expected, rtol=1e-12, atol=1e-12)


def test_gemm_batched_cuda_beta_zero_ignores_nan_and_k_zero() -> None:
    a, b = rand(2, 3, 4), rand(2, 4, 5)
    out = emulated(ea.full((2, 3, 5), float("nan"), dtype=ea.float64), a, b)
    np.testing.assert_allclose(N(out), np.matmul(N(a), N(b)), rtol=1e-12)
    c = rand(2, 3, 5)
    got = emulated(c.clone(), ea.empty((2, 3, 0), dtype=ea.float64), ea.empty((2, 0, 5), dtype=ea.float64), 2.0)
    np.testing.assert_allclose(N(got), 2 * N(c))


@pytest.mark.parametrize("dtype", [ea.float32, ea.float16, ea.bfloat16], ids=str)
def test_gemm_batched_cuda_reduced_dtypes(dtype: Any) -> None:
    a, b = rand(2, 6, 5, dtype=dtype), rand(2, 7, 5, dtype=dtype).transpose(1, 2)
    out = emulated(ea.empty((2, 6, 7), dtype=dtype), a, b)
    tol = {ea.float32: 1e-5, ea.float16: 1e-2, ea.bfloat16: 5e-2}[dtype]
    np.testing.assert_allclose(N(out), np.matmul(N(a), N(b)), rtol=tol, atol=tol)


# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CONV_CASES = [
    ((2, 3, 9, 8), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    ((2, 4, 10, 9), (6, 2, 3, 2), [2, 1], [0, 1], [2, 1], False, [0, 0], 2),
    ((1, 6, 7, 7), (6, 1, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 6),  # groups > images
    ((3, 5, 6, 6), (7, 5, 1, 1), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),  # 1x1: the image is the columns
    ((2, 3, 11), (4, 3, 4), [2], [1], [1], False, [0], 1),  # conv1d
    ((2, 2, 5, 6, 4), (3, 2, 2, 3, 2), [1, 2, 1], [1, 0, 1], [1, 1, 2], False, [0, 0, 0], 1),  # conv3d
    ((2, 4, 5, 6), (4, 3, 3, 3), [2, 2], [1, 0], [1, 1], True, [1, 0], 1),  # transposed
    ((2, 4, 5, 5), (4, 2, 3, 3), [1, 2], [0, 1], [2, 1], True, [0, 1], 2),  # transposed, grouped
    ((3, 4, 5, 5), (4, 3, 1, 1), [1, 1], [0, 0], [1, 1], True, [0, 0], 1),  # transposed 1x1
]


def conv_args(case: tuple) -> tuple[Any, Any, Any, list]:
    xs, ws, stride, padding, dilation, transposed, output_padding, groups = case
    out_channels = ws[1] * groups if transposed else ws[0]
    return rand(*xs), rand(*ws), rand(out_channels), [stride, padding, dilation, transposed, output_padding, groups]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-T{int(c[5])}-g{c[7]}")
def test_cuda_convolution_matches_cpu(case: tuple) -> None:
    x, w, b, rest = conv_args(case)
    for bias in (b, None):
        got = ember_aten_testing.cuda_emulated_convolution(x, w, bias, *rest)
        np.testing.assert_allclose(N(got), N(ea.convolution(x, w, bias, *rest)), rtol=1e-10, atol=1e-10)
    y = ea.convolution(x, w, b, *rest)
    g = rand(*y.shape)
    mask = [True, True, True]
    expected = ea.convolution_backward(g, x, w, [b.shape[0]], *rest, mask)
    got3 = ember_aten_testing.cuda_emulated_convolution_backward(g, x, w, [b.shape[0]], *rest, mask)
    for gt, wt in zip(got3, expected, strict=True):
        np.testing.assert_allclose(N(gt), N(wt), rtol=1e-10, atol=1e-10)
    only_weight = ember_aten_testing.cuda_emulated_convolution_backward(g, x, w, None, *rest, [False, True, False])
    assert only_weight[0] is None and only_weight[2] is None
    np.testing.assert_allclose(N(only_weight[1]), N(expected[1]), rtol=1e-10, atol=1e-10)


def test_cuda_convolution_many_images_in_chunks() -> None:
    # more images than groups: one strided-batched product per group over the images
    x, w = rand(9, 4, 6, 5), rand(6, 2, 3, 3)
    rest = [[1, 1], [1, 1], [1, 1], False, [0, 0], 2]
    np.testing.assert_allclose(
        N(ember_aten_testing.cuda_emulated_convolution(x, w, None, *rest)),
        N(ea.convolution(x, w, None, *rest)),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("dtype", [ea.bfloat16, ea.float16], ids=str)
def test_cuda_convolution_half_gradients_sum_in_float32(dtype: Any) -> None:
    # 1x1 kernels need no im2col, so the half types run here too. The weight and bias
    # gradients sum over 64 images: summed in float32 and rounded once they match the CPU
    # kernel (float32 throughout) to a rounding; summed in the half type they drift.
    x = (rand(64, 8, 4, 4) + 1.0).to(dtype)
    w = rand(6, 8, 1, 1).to(dtype)
    g = (rand(64, 6, 4, 4) + 1.0).to(dtype)
    rest = [[1, 1], [0, 0], [1, 1], False, [0, 0], 1]
    want = ea.convolution_backward(g, x, w, [6], *rest, [True, True, True])
    got = ember_aten_testing.cuda_emulated_convolution_backward(g, x, w, [6], *rest, [True, True, True])
    eps = 2.0**-8 if dtype == ea.bfloat16 else 2.0**-11
    for gt, wt in zip(got, want, strict=True):
        assert gt.dtype == dtype
        np.testing.assert_allclose(N(gt), N(wt), rtol=2 * eps, atol=1e-6)
