"""CUDA linear algebra (cuSOLVER: csrc/native/cuda/BatchLinearAlgebraCUDA.cpp) against the
CPU kernels and NumPy.

solve / inv / det / slogdet are compared with the CPU results; cholesky, qr and svd, whose
factors may differ from the CPU's by signs, are checked by reconstruction, orthogonality
and triangularity, and their unique parts (R's diagonal magnitudes, singular values)
against NumPy. Errors (singular, not positive-definite, non-finite, bad dtype or shape)
must carry the CPU kernel's messages; empty inputs and batches are covered. Without a GPU
these tests are deselected; test_linalg_kernels_are_registered runs on any CUDA build.
"""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import _dispatch
from ember.c10py import DispatchKey, LinAlgError

requires_cuda = pytest.mark.cuda  # deselected without a GPU (tests/conftest.py); gpu_check.sh selects -m cuda

DTYPES = [ea.float32, ea.float64]

CUSOLVER_OPS = [
    "linalg_solve",
    "linalg_solve.out",
    "linalg_inv",
    "linalg_inv.out",
    "linalg_det",
    "linalg_det.out",
    "linalg_slogdet",
    "linalg_slogdet.out",
    "linalg_cholesky",
    "linalg_cholesky.out",
    "linalg_qr",
    "linalg_qr.out",
    "_linalg_svd",
    "_linalg_svd.U",
]


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="ember.aten was built without CUDA")
def test_linalg_kernels_are_registered() -> None:
    ops = {op.qualname: op for op in _dispatch.all_ops() if op.namespace == "aten"}
    missing = [name for name in CUSOLVER_OPS if not ops[name].has_kernel_for(DispatchKey.CUDA)]
    assert not missing, f"no CUDA kernel: {missing}"


def test_import_does_not_load_cusolver() -> None:
    """libcusolver is loaded on the first CUDA linalg call only (LazyCuSOLVER.cpp)."""
    import subprocess
    import sys

    code = (
        "import ember.aten as ea\n"
        "ea.linalg.inv(ea.eye(3))\n"
        "maps = open('/proc/self/maps').read()\n"
        "assert 'libcusolver' not in maps, 'libcusolver loaded without a CUDA linalg call'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 1e-4, "atol": 1e-4} if dtype == ea.float32 else {"rtol": 1e-9, "atol": 1e-9}


def rand(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    return ea.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(dtype)


def well_conditioned(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    n = shape[-1]
    a = np.random.default_rng(seed).uniform(-1, 1, size=shape) + np.eye(n) * (n + 1)
    return ea.from_numpy(a).to(dtype)


def spd(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    n = shape[-1]
    m = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    return ea.from_numpy(m @ np.swapaxes(m, -1, -2) + np.eye(n) * n).to(dtype)


def np_of(t: Any) -> np.ndarray:
    return t.cpu().numpy()


def close(got: Any, expected: Any, dtype: Any, what: str = "") -> None:
    assert got.device.type == "cuda", f"{what}: result on {got.device}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert tuple(got.shape) == tuple(expected.shape), f"{what}: shape {tuple(got.shape)} != {tuple(expected.shape)}"
    np.testing.assert_allclose(np_of(got), np_of(expected), err_msg=what, **tol(dtype))


def mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


# ---- solve / inv / det / slogdet vs the CPU kernels ---------------------------------------------


SOLVE_CASES = [
    ((3, 3), (3,), True),
    ((3, 3), (3, 2), True),
    ((2, 3, 3), (2, 3), True),
    ((3, 3), (2, 3), False),
    ((2, 1, 4, 4), (3, 4, 2), True),
    ((5, 5), (5, 0), True),
    ((0, 0), (0,), True),
    ((2, 0, 0), (2, 0, 3), True),
    ((0, 3, 3), (0, 3, 1), True),
]


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("a_shape", "b_shape", "left"), SOLVE_CASES)
def test_solve_matches_cpu(a_shape: Any, b_shape: Any, left: bool, dtype: Any) -> None:
    A, B = well_conditioned(a_shape, dtype), rand(b_shape, dtype, 1)
    expected = ea.linalg.solve(A, B, left=left)
    got = ea.linalg.solve(A.cuda(), B.cuda(), left=left)
    close(got, expected, dtype, f"solve {a_shape} {b_shape} left={left}")


@requires_cuda
def test_solve_transposed_inputs_and_out() -> None:
    A = well_conditioned((2, 4, 4), ea.float64).transpose(-2, -1)
    B = rand((2, 3, 4), ea.float64).transpose(-2, -1)
    expected = ea.linalg.solve(A, B)
    out = ea.empty((0,), dtype=ea.float64, device="cuda")
    res = ea.linalg.solve(A.cuda(), B.cuda(), out=out)
    assert res is out
    close(out, expected, ea.float64, "solve out=")
    # A X = B holds on the device
    np.testing.assert_allclose(np_of(A) @ np_of(out), np_of(B), rtol=1e-9, atol=1e-9)


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5, 5), (33, 33), (0, 0), (0, 2, 2), (3, 0, 0)])
def test_inv_matches_cpu(shape: tuple[int, ...], dtype: Any) -> None:
    A = well_conditioned(shape, dtype)
    got = ea.linalg.inv(A.cuda())
    close(got, ea.linalg.inv(A), dtype, f"inv {shape}")
    if A.numel():
        eye = np.broadcast_to(np.eye(shape[-1]), shape)
        np.testing.assert_allclose(np_of(A) @ np_of(got), eye, **tol(dtype))


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (2, 3, 6, 6), (0, 0), (4, 0, 0), (0, 3, 3)])
def test_det_and_slogdet_match_cpu(shape: tuple[int, ...], dtype: Any) -> None:
    A = rand(shape, dtype, 3)
    close(ea.linalg.det(A.cuda()), ea.linalg.det(A), dtype, f"det {shape}")
    close(ea.det(A.cuda()), ea.det(A), dtype, f"det {shape}")
    s, l = ea.linalg.slogdet(A.cuda())
    es, el = ea.linalg.slogdet(A)
    close(s, es, dtype, f"slogdet sign {shape}")
    close(l, el, dtype, f"slogdet logabsdet {shape}")
    if A.numel():
        ref_s, ref_l = np.linalg.slogdet(np_of(A).astype(np.float64))
        np.testing.assert_allclose(np_of(s), ref_s, **tol(dtype))
        np.testing.assert_allclose(np_of(l), ref_l, **tol(dtype))


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_det_of_singular_and_permuted_matrices(dtype: Any) -> None:
    A = ea.tensor(
        [
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]],  # singular: det 0, sign 0, log -inf
            [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],  # a transposition: det -1
            [[0.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]],  # pivoting needed: det -24
        ],
        dtype=dtype,
    )
    det = np_of(ea.linalg.det(A.cuda()))
    np.testing.assert_allclose(det, [0.0, -1.0, -24.0], atol=1e-5)
    s, l = ea.linalg.slogdet(A.cuda())
    np.testing.assert_array_equal(np_of(s), [0.0, -1.0, -1.0])
    assert np_of(l)[0] == -math.inf
    np.testing.assert_allclose(np_of(l)[1:], [0.0, math.log(24.0)], rtol=1e-6)


# ---- cholesky / qr / svd: reconstruction ------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 2, 40, 40)])
def test_cholesky_reconstructs(shape: tuple[int, ...], upper: bool, dtype: Any) -> None:
    A = spd(shape, dtype)
    L = ea.linalg.cholesky(A.cuda(), upper=upper)
    assert L.device.type == "cuda" and L.dtype == dtype and tuple(L.shape) == shape
    ln = np_of(L)
    tri = np.triu(ln) if upper else np.tril(ln)
    np.testing.assert_array_equal(ln, tri)  # the other triangle is exactly zero
    rec = mT(ln) @ ln if upper else ln @ mT(ln)
    np.testing.assert_allclose(rec, np_of(A), **tol(dtype))
    close(L, ea.linalg.cholesky(A, upper=upper), dtype, "cholesky vs cpu")  # unique (positive diagonal)


@requires_cuda
def test_cholesky_empty_and_out() -> None:
    for shape in [(0, 0), (0, 3, 3), (2, 0, 0)]:
        L = ea.linalg.cholesky(ea.empty(shape, device="cuda"))
        assert tuple(L.shape) == shape and L.device.type == "cuda"
    A = spd((3, 3), ea.float64)
    out = ea.empty((0,), dtype=ea.float64, device="cuda")
    assert ea.linalg.cholesky(A.cuda(), out=out) is out
    close(out, ea.linalg.cholesky(A), ea.float64, "cholesky out=")


QR_SHAPES = [(4, 3), (3, 3), (2, 4), (2, 5, 3), (3, 2, 6), (40, 20), (0, 3), (3, 0), (0, 4, 2)]


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", QR_SHAPES)
def test_qr_reconstructs(shape: tuple[int, ...], mode: str, dtype: Any) -> None:
    A = rand(shape, dtype, 5)
    Q, R = ea.linalg.qr(A.cuda(), mode)
    eQ, eR = ea.linalg.qr(A, mode)
    assert tuple(Q.shape) == tuple(eQ.shape) and tuple(R.shape) == tuple(eR.shape)
    assert Q.device.type == "cuda" and R.device.type == "cuda" and R.dtype == dtype
    rn = np_of(R)
    np.testing.assert_array_equal(rn, np.triu(rn))
    # R is unique up to the signs of its rows
    np.testing.assert_allclose(np.abs(rn), np.abs(np_of(eR)), **tol(dtype))
    if mode == "r":
        assert Q.numel() == 0
        return
    qn = np_of(Q)
    np.testing.assert_allclose(qn @ rn, np_of(A), **tol(dtype))
    np.testing.assert_allclose(
        mT(qn) @ qn, np.broadcast_to(np.eye(qn.shape[-1]), qn.shape[:-2] + (qn.shape[-1],) * 2), **tol(dtype)
    )


@requires_cuda
def test_qr_transposed_input_and_out() -> None:
    A = rand((3, 5), ea.float64).t()
    Q = ea.empty((0,), dtype=ea.float64, device="cuda")
    R = ea.empty((0,), dtype=ea.float64, device="cuda")
    res = ea.linalg.qr(A.cuda(), out=(Q, R))
    assert res[0] is Q and res[1] is R
    np.testing.assert_allclose(np_of(Q) @ np_of(R), np_of(A), rtol=1e-9, atol=1e-9)


SVD_SHAPES = [(4, 3), (3, 4), (3, 3), (2, 5, 3), (2, 3, 5), (2, 2, 6, 6), (64, 17), (17, 64), (0, 3), (3, 0), (0, 2, 2)]


def check_svd(A: Any, U: Any, S: Any, Vh: Any, full: bool, dtype: Any) -> None:
    a = np_of(A)
    m, n = a.shape[-2:]
    k = min(m, n)
    assert tuple(S.shape) == (*a.shape[:-2], k)
    assert tuple(U.shape) == (*a.shape[:-2], m, m if full else k)
    assert tuple(Vh.shape) == (*a.shape[:-2], n if full else k, n)
    assert U.device.type == "cuda" and S.device.type == "cuda" and Vh.device.type == "cuda"
    u, s, vh = np_of(U), np_of(S), np_of(Vh)
    ref = np.linalg.svd(a.astype(np.float64), compute_uv=False) if a.size else np.zeros((*a.shape[:-2], k))
    np.testing.assert_allclose(s, ref, **tol(dtype))
    assert np.all(np.diff(s, axis=-1) <= 0), "singular values not in descending order"
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, **tol(dtype))
    np.testing.assert_allclose(
        mT(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), **tol(dtype)
    )
    np.testing.assert_allclose(
        vh @ mT(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2), **tol(dtype)
    )


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", [None, "gesvdj", "gesvd", "gesvda"])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("shape", SVD_SHAPES)
def test_svd_reconstructs(shape: tuple[int, ...], full: bool, driver: str | None, dtype: Any) -> None:
    A = rand(shape, dtype, 7)
    U, S, Vh = ea.linalg.svd(A.cuda(), full_matrices=full, driver=driver)
    check_svd(A, U, S, Vh, full, dtype)
    S2 = ea.linalg.svdvals(A.cuda(), driver=driver)
    assert S2.device.type == "cuda"
    np.testing.assert_allclose(np_of(S2), np_of(S), **tol(dtype))


@requires_cuda
def test_svd_transposed_input_and_out() -> None:
    A = rand((3, 5), ea.float64).t()
    U = ea.empty((0,), dtype=ea.float64, device="cuda")
    S = ea.empty((0,), dtype=ea.float64, device="cuda")
    Vh = ea.empty((0,), dtype=ea.float64, device="cuda")
    res = ea.linalg.svd(A.cuda(), full_matrices=False, out=(U, S, Vh))
    assert res[0] is U and res[1] is S and res[2] is Vh
    check_svd(A, U, S, Vh, False, ea.float64)


@requires_cuda
def test_svd_of_rank_deficient_matrix() -> None:
    a = np.outer(np.arange(1.0, 6.0), np.arange(1.0, 5.0))  # rank 1
    A = ea.from_numpy(a)
    U, S, Vh = ea.linalg.svd(A.cuda(), full_matrices=True)
    check_svd(A, U, S, Vh, True, ea.float64)
    np.testing.assert_allclose(np_of(S)[1:], 0.0, atol=1e-9)


# ---- errors: the CPU kernels' messages ---------------------------------------------------------


def cuda_and_cpu(fn: Any, *tensors: Any) -> list[Any]:
    """fn on the CPU tensors and on their CUDA copies."""
    return [lambda: fn(*tensors), lambda: fn(*(t.cuda() for t in tensors))]


ERRORS = [
    (
        lambda A: ea.linalg.inv(A),
        [ea.zeros(2, 2)],
        LinAlgError,
        "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input "
        "matrix is singular.",
    ),
    (
        lambda A: ea.linalg.inv(A),
        [ea.stack([ea.eye(2), ea.tensor([[1.0, 2.0], [2.0, 4.0]])])],
        LinAlgError,
        r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero",
    ),
    (
        lambda A, B: ea.linalg.solve(A, B),
        [ea.zeros(2, 2), ea.ones(2, 1)],
        LinAlgError,
        "torch.linalg.solve: The solver failed because the input matrix is singular.",
    ),
    (
        lambda A, B: ea.linalg.solve(A, B),
        [ea.stack([ea.eye(2), ea.zeros(2, 2)]), ea.ones(2, 2, 1)],
        LinAlgError,
        r"torch.linalg.solve: \(Batch element 1\): The solver failed because the input matrix is singular.",
    ),
    (
        lambda A: ea.linalg.cholesky(A),
        [-ea.eye(2)],
        LinAlgError,
        r"linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
        r"\(the leading minor of order 1 is not positive-definite\).",
    ),
    (
        lambda A: ea.linalg.cholesky(A),
        [ea.stack([ea.eye(2), ea.tensor([[1.0, 2.0], [2.0, 1.0]])])],
        LinAlgError,
        r"linalg.cholesky: \(Batch element 1\): The factorization could not be completed because the input is "
        r"not positive-definite \(the leading minor of order 2 is not positive-definite\).",
    ),
    (
        lambda A: ea.linalg.svd(A),
        [ea.full((3, 3), math.nan)],
        LinAlgError,
        "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.",
    ),
    (
        lambda A: ea.linalg.svdvals(A),
        [ea.stack([ea.eye(3), ea.full((3, 3), math.inf)])],
        LinAlgError,
        r"linalg.svd: \(Batch element 1\): The algorithm failed to converge because the input matrix contained",
    ),
    (lambda A: ea.linalg.det(A), [ea.ones(3)], RuntimeError, "linalg.det: The input tensor A must have at least 2"),
    (
        lambda A: ea.linalg.inv(A),
        [ea.ones(2, 3)],
        RuntimeError,
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        lambda A: ea.linalg.slogdet(A),
        [ea.ones(2, 2, dtype=ea.int64)],
        RuntimeError,
        "linalg.slogdet: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        lambda A: ea.linalg.cholesky(A),
        [ea.ones(2, 2, dtype=ea.float16)],
        NotImplementedError,
        "linalg.cholesky: not implemented for 'Half'",
    ),
    (
        lambda A, B: ea.linalg.solve(A, B),
        [ea.eye(2), ea.ones(2, dtype=ea.float64)],
        RuntimeError,
        "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double",
    ),
    (
        lambda A, B: ea.linalg.solve(A, B),
        [ea.eye(2), ea.ones(3)],
        RuntimeError,
        r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)",
    ),
    (
        lambda A: ea.linalg.qr(A, "x"),
        [ea.ones(3, 2)],
        RuntimeError,
        "qr received unrecognized mode 'x' but expected one of 'reduced' \\(default\\), 'r', or 'complete'",
    ),
    (
        lambda A: ea.linalg.svd(A),
        [ea.ones(2, 3, dtype=ea.int32)],
        RuntimeError,
        "linalg.svd: Expected a floating point or complex tensor as input. Got Int",
    ),
]


@requires_cuda
@pytest.mark.parametrize(("fn", "inputs", "error", "message"), ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_errors_match_cpu(fn: Any, inputs: list[Any], error: type[BaseException], message: str) -> None:
    for run in cuda_and_cpu(fn, *inputs):
        with pytest.raises(error, match=message):
            run()
            ea.cuda.synchronize()


@requires_cuda
def test_svd_driver_is_checked_on_cuda_only() -> None:
    A = rand((3, 3), ea.float32)
    with pytest.raises(RuntimeError, match="driver=` is only supported on CUDA inputs"):
        ea.linalg.svd(A, driver="gesvd")
    with pytest.raises(RuntimeError, match="unknown driver 'qr'"):
        ea.linalg.svd(A.cuda(), driver="qr")


@requires_cuda
def test_mixed_devices_raise() -> None:
    with pytest.raises(RuntimeError, match="same device"):
        ea.linalg.solve(ea.eye(3).cuda(), ea.ones(3))


@requires_cuda
def test_runs_on_the_current_stream() -> None:
    """Work queued on a side stream: the result read after that stream's synchronize."""
    A = well_conditioned((4, 16, 16), ea.float64).cuda()
    s = ea.cuda.Stream()
    s.wait_stream(ea.cuda.current_stream())
    with ea.cuda.stream(s):
        X = ea.linalg.inv(A)
        d = ea.linalg.det(A)
    s.synchronize()
    np.testing.assert_allclose(np_of(X), np.linalg.inv(np_of(A)), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np_of(d), np.linalg.det(np_of(A)), rtol=1e-9)
