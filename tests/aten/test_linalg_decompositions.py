"""torch.linalg's decompositions and solvers over LinalgDecompositions.cpp (eigh, lu_factor_ex,
lu_unpack, solve_triangular, cholesky_ex, geqrf) and the composites over them, against NumPy
float64 references: values, batches (broadcast too), empty matrices, float32, out=, and the
errors PyTorch raises (singular, not square, wrong dtype, bad arguments). Gradients:
tests/autograd/test_linalg_special_grad.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import LinAlgError

RNG = np.random.default_rng(18)


def T(a: Any, dtype: Any = ea.float64) -> Any:
    return ea.from_numpy(np.array(a, dtype=np.float64)).to(dtype)


def N(t: Any) -> np.ndarray:
    return t.double().numpy()


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def sym(*shape: int) -> np.ndarray:
    a = rand(*shape)
    return a + np.swapaxes(a, -1, -2)


def spd(*shape: int) -> np.ndarray:
    a = rand(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


TOL = {ea.float64: 1e-10, ea.float32: 2e-4}
SHAPES = [(3, 3), (2, 4, 4), (2, 1, 3, 3), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)]


def close(a: Any, b: Any, dtype: Any = ea.float64) -> None:
    np.testing.assert_allclose(N(a) if isinstance(a, ea.Tensor) else a, b, atol=TOL[dtype], rtol=TOL[dtype])


# ---- eigh / eigvalsh ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy(shape: tuple[int, ...], dtype: Any, uplo: str) -> None:
    a = rand(*shape)
    # eigh reads one triangle: the reference is the symmetric matrix that triangle defines
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    ref = tri + np.swapaxes(tri, -1, -2) - np.eye(shape[-1]) * np.diagonal(a, 0, -2, -1)[..., None, :]
    w, v = ea.linalg.eigh(T(a, dtype), UPLO=uplo)
    assert w.dtype == dtype and v.dtype == dtype
    assert tuple(w.shape) == shape[:-1] and tuple(v.shape) == shape
    close(w, np.linalg.eigvalsh(ref), dtype)
    # V diag(w) V^T reconstructs the matrix and V is orthogonal (eigenvectors are unique up to sign)
    vn, wn = N(v), N(w)
    close(vn @ (wn[..., :, None] * np.swapaxes(vn, -1, -2)), ref, dtype)
    close(np.swapaxes(vn, -1, -2) @ vn, np.broadcast_to(np.eye(shape[-1]), shape), dtype)
    close(ea.linalg.eigvalsh(T(a, dtype), UPLO=uplo), np.linalg.eigvalsh(ref), dtype)


def test_eigh_named_results_out_and_noncontiguous() -> None:
    a = sym(5, 5)
    at = T(a).mT  # a transposed view of a symmetric matrix: the same matrix
    r = ea.linalg.eigh(at)
    close(r.eigenvalues, np.linalg.eigvalsh(a))
    w, v = ea.empty(0, dtype=ea.float64), ea.empty(0, dtype=ea.float64)
    ea.linalg.eigh(T(a), out=(w, v))
    close(w, np.linalg.eigvalsh(a))
    out = ea.empty(0, dtype=ea.float64)
    ea.linalg.eigvalsh(T(a), out=out)
    close(out, np.linalg.eigvalsh(a))


@pytest.mark.parametrize(
    ("fn", "arg", "error", "regex"),
    [
        (
            ea.linalg.eigh,
            np.ones((2, 3)),
            RuntimeError,
            r"linalg.eigh: A must be batches of square matrices, but they are 2 by 3",
        ),
        (ea.linalg.eigh, np.ones(3), RuntimeError, r"linalg.eigh: The input tensor A must have at least 2 dimensions"),
        (ea.linalg.eigvalsh, np.ones((2, 2)) * np.nan, LinAlgError, r"linalg.eigh: The algorithm failed to converge"),
    ],
)
def test_eigh_errors(fn: Callable[..., Any], arg: Any, error: type, regex: str) -> None:
    with pytest.raises(error, match=regex):
        fn(T(arg))


def test_eigh_uplo_and_dtype_errors() -> None:
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        ea.linalg.eigh(T(np.eye(2)), UPLO="X")
    with pytest.raises(
        RuntimeError, match=r"linalg.eigh: Expected a floating point or complex tensor as input. Got Long"
    ):
        ea.linalg.eigh(ea.ones(2, 2, dtype=ea.int64))


# ---- LU -----------------------------------------------------------------------------------------


def _lu_reference(a: np.ndarray) -> np.ndarray:
    """P, L, U re-multiplied (the factors themselves depend on pivoting ties)."""
    return a


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3), (3, 5, 4), (0, 0), (2, 0, 3), (3, 0)])
def test_lu_reconstructs_and_matches_partial_pivoting(shape: tuple[int, ...], dtype: Any) -> None:
    a = rand(*shape)
    P, L, U = ea.linalg.lu(T(a, dtype))
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    assert tuple(P.shape) == (*shape[:-2], m, m)
    assert tuple(L.shape) == (*shape[:-2], m, k) and tuple(U.shape) == (*shape[:-2], k, n)
    close(N(P) @ N(L) @ N(U), a, dtype)
    close(np.tril(N(L), -1) + np.eye(m, k), N(L), dtype)  # unit lower
    close(np.triu(N(U)), N(U), dtype)
    # partial pivoting: every |L| entry is at most 1
    assert np.all(np.abs(N(L)) <= 1 + 1e-6)
    LU, piv = ea.linalg.lu_factor(T(a, dtype))
    assert piv.dtype == ea.int32 and tuple(piv.shape) == (*shape[:-2], k)
    P2, L2, U2 = ea.lu_unpack(LU, piv)
    close(P2, N(P), dtype)
    close(L2, N(L), dtype)
    close(U2, N(U), dtype)


def test_lu_factor_pivots_are_lapacks() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    LU, piv = ea.linalg.lu_factor(T(a))
    assert piv.tolist() == [2, 2]
    close(LU, np.array([[3.0, 4.0], [1 / 3, 2 - 4 / 3]]))


def test_lu_factor_ex_reports_singular_matrices_and_lu_factor_raises() -> None:
    a = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])])
    _, _, info = ea.linalg.lu_factor_ex(T(a))
    assert info.dtype == ea.int32 and info.tolist()[0] == 0 and info.tolist()[1] > 0
    with pytest.raises(LinAlgError, match=r"torch.linalg.lu_factor: \(Batch element 1\): U\[3,3\] is zero"):
        ea.linalg.lu_factor(T(a))
    with pytest.raises(LinAlgError, match=r"lu_factor_ex: \(Batch element 1\): U\[3,3\] is zero"):
        ea.linalg.lu_factor_ex(T(a), check_errors=True)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        ea.linalg.lu_factor(T(np.eye(2)), pivot=False)


def test_lu_unpack_flags_and_errors() -> None:
    LU, piv = ea.linalg.lu_factor(T(rand(3, 3)))
    P, L, U = ea.lu_unpack(LU, piv, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and tuple(P.shape) == (3, 3)
    P, L, U = ea.lu_unpack(LU, piv, unpack_pivots=False)
    assert P.numel() == 0 and tuple(L.shape) == (3, 3)
    with pytest.raises(RuntimeError, match=r"LU_pivots is expected to be a contiguous tensor of torch.int32 dtype"):
        ea.lu_unpack(LU, piv.long())
    with pytest.raises(RuntimeError, match="out of range"):
        ea.lu_unpack(LU, ea.tensor([4, 2, 3], dtype=ea.int32))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize(("a_shape", "b_shape"), [((3, 3), (3, 2)), ((2, 4, 4), (4, 1)), ((1, 3, 3), (2, 3, 3))])
def test_lu_solve(a_shape: tuple[int, ...], b_shape: tuple[int, ...], left: bool, adjoint: bool) -> None:
    a = rand(*a_shape) + 3 * np.eye(a_shape[-1])
    b = rand(*b_shape)
    if not left:
        b = np.swapaxes(b, -1, -2)
    LU, piv = ea.linalg.lu_factor(T(a))
    x = ea.linalg.lu_solve(LU, piv, T(b), left=left, adjoint=adjoint)
    A = np.swapaxes(a, -1, -2) if adjoint else a
    ref = (
        np.linalg.solve(A, b)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    close(x, ref)


def test_lu_solve_legacy_and_errors() -> None:
    a = rand(3, 3) + 3 * np.eye(3)
    b = rand(3, 2)
    LU, piv = ea.linalg.lu_factor(T(a))
    close(ea.lu_solve(T(b), LU, piv), np.linalg.solve(a, b))
    close(T(b).lu_solve(LU, piv), np.linalg.solve(a, b))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x2\)"):
        ea.linalg.lu_solve(LU, piv, T(rand(2, 2)))
    with pytest.raises(RuntimeError, match="Expected LU and B to have the same dtype"):
        ea.linalg.lu_solve(LU, piv, T(b, ea.float32))


# ---- solve_triangular / triangular_solve -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize(("a_shape", "b_shape"), [((3, 3), (3, 2)), ((2, 1, 4, 4), (3, 4, 4)), ((0, 0), (0, 2))])
def test_solve_triangular(a_shape: Any, b_shape: Any, upper: bool, left: bool, unit: bool, dtype: Any) -> None:
    n = a_shape[-1]
    a = rand(*a_shape) + 3 * np.eye(n)
    b = rand(*b_shape)
    if not left:
        b = np.swapaxes(b, -1, -2)
    A = np.triu(a) if upper else np.tril(a)
    if unit:
        A = A - np.eye(n) * np.diagonal(A, 0, -2, -1)[..., None, :] + np.eye(n)
    x = ea.linalg.solve_triangular(T(a, dtype), T(b, dtype), upper=upper, left=left, unitriangular=unit)
    if left:
        ref = (
            np.linalg.solve(A, np.broadcast_to(b, np.broadcast_shapes(A.shape[:-2], b.shape[:-2]) + b.shape[-2:]))
            if n
            else b
        )
    else:
        bt = np.swapaxes(b, -1, -2)
        ref = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), bt), -1, -2) if n else b
    close(x, ref, dtype)


def test_solve_triangular_errors_and_out() -> None:
    a = T(np.triu(rand(3, 3)) + 3 * np.eye(3))
    with pytest.raises(RuntimeError, match="The input tensor B must have at least 2 dimensions"):
        ea.linalg.solve_triangular(a, T(rand(3)), upper=True)
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x1\)"):
        ea.linalg.solve_triangular(a, T(rand(2, 1)), upper=True)
    with pytest.raises(
        RuntimeError, match="Expected A and B to have the same dtype, but found A of type Double and B of type Float"
    ):
        ea.linalg.solve_triangular(a, T(rand(3, 1), ea.float32), upper=True)
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        ea.linalg.solve_triangular(T(rand(3, 2)), T(rand(3, 1)), upper=True)
    with pytest.raises(TypeError):
        ea.linalg.solve_triangular(a, T(rand(3, 1)))  # upper is required, as in PyTorch
    out = ea.empty(0, dtype=ea.float64)
    b = rand(3, 2)
    ea.linalg.solve_triangular(a, T(b), upper=True, out=out)
    close(out, np.linalg.solve(N(a), b))


def test_triangular_solve_legacy() -> None:
    a = np.triu(rand(3, 3)) + 3 * np.eye(3)
    b = rand(3, 2)
    x, clone = ea.triangular_solve(T(b), T(a))
    close(x, np.linalg.solve(a, b))
    close(clone, a)
    x, _ = ea.triangular_solve(T(b), T(a), transpose=True)
    close(x, np.linalg.solve(a.T, b))
    x, _ = T(b).triangular_solve(T(a.T), upper=False)
    close(x, np.linalg.solve(a.T, b))


# ---- Cholesky family ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 0)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_and_friends(shape: tuple[int, ...], upper: bool) -> None:
    a = spd(*shape)
    L, info = ea.linalg.cholesky_ex(T(a), upper=upper)
    ref = np.linalg.cholesky(a) if a.size else a
    close(L, np.swapaxes(ref, -1, -2) if upper else ref)
    assert info.dtype == ea.int32 and tuple(info.shape) == shape[:-2] and not info.any().item()
    close(ea.cholesky(T(a), upper=upper), np.swapaxes(ref, -1, -2) if upper else ref)
    b = rand(*shape[:-1], 2)
    close(ea.cholesky_solve(T(b), L, upper=upper), np.linalg.solve(a, b) if a.size else b)
    close(ea.cholesky_inverse(L, upper=upper), np.linalg.inv(a) if a.size else a)


def test_cholesky_ex_info_and_errors() -> None:
    a = np.stack([np.eye(2), -np.eye(2)])
    _, info = ea.linalg.cholesky_ex(T(a))
    assert info.tolist() == [0, 1]
    with pytest.raises(
        LinAlgError,
        match=r"\(Batch element 1\): The factorization could not be completed because the input is not "
        r"positive-definite \(the leading minor of order 1",
    ):
        ea.linalg.cholesky_ex(T(a), check_errors=True)
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3"):
        ea.linalg.cholesky_ex(T(np.ones((2, 3))))


# ---- solve_ex / inv_ex ----------------------------------------------------------------------------


def test_solve_ex_and_inv_ex() -> None:
    a = rand(2, 3, 3) + 3 * np.eye(3)
    b = rand(2, 3)
    x, info = ea.linalg.solve_ex(T(a), T(b))
    close(x, np.linalg.solve(a, b[..., None])[..., 0])
    assert info.tolist() == [0, 0]
    inv, info = ea.linalg.inv_ex(T(a))
    close(inv, np.linalg.inv(a))
    s = np.stack([np.eye(3), np.zeros((3, 3))])
    _, info = ea.linalg.inv_ex(T(s))
    assert info.tolist()[0] == 0 and info.tolist()[1] > 0
    _, info = ea.linalg.solve_ex(T(s), T(rand(2, 3, 1)))
    assert info.tolist()[1] > 0
    with pytest.raises(LinAlgError, match=r"linalg.inv: "):
        ea.linalg.inv_ex(T(s), check_errors=True)
    with pytest.raises(LinAlgError, match="The solver failed because the input matrix is singular"):
        ea.linalg.solve_ex(T(s), T(rand(2, 3, 1)), check_errors=True)


# ---- geqrf / householder_product / ormqr ------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2), (3, 4)])
def test_geqrf_householder_product_ormqr(shape: tuple[int, ...]) -> None:
    a = rand(*shape)
    qr_a, tau = ea.geqrf(T(a))
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    assert tuple(tau.shape) == (*shape[:-2], k)
    R = np.triu(N(qr_a))[..., :k, :]
    Qfull = ea.ormqr(qr_a, tau, T(np.broadcast_to(np.eye(m), (*shape[:-2], m, m)).copy()))
    close(N(Qfull)[..., :, :k] @ R, a)  # A = Q R
    close(np.swapaxes(N(Qfull), -1, -2) @ N(Qfull), np.broadcast_to(np.eye(m), (*shape[:-2], m, m)))
    c = rand(*shape[:-2], m, 2)
    close(ea.ormqr(qr_a, tau, T(c), transpose=True), np.swapaxes(N(Qfull), -1, -2) @ c)
    c2 = rand(*shape[:-2], 2, m)
    close(ea.ormqr(qr_a, tau, T(c2), left=False), c2 @ N(Qfull))
    if m >= n:
        Q = ea.linalg.householder_product(qr_a, tau)
        close(Q, N(Qfull)[..., :, :n])
        close(ea.orgqr(qr_a, tau), N(Q))


def test_householder_product_errors() -> None:
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"):
        ea.linalg.householder_product(T(rand(2, 3)), T(rand(2)))
    with pytest.raises(RuntimeError, match=r"input.shape\[-1\] must be greater than or equal to tau.shape\[-1\]"):
        ea.linalg.householder_product(T(rand(3, 2)), T(rand(3)))
    with pytest.raises(RuntimeError, match="Expected tau to have one dimension less than input"):
        ea.linalg.householder_product(T(rand(3, 2)), T(rand(1, 2)))


# ---- lstsq / pinv / matrix_rank -------------------------------------------------------------------


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((5, 3), (5, 2)), ((2, 6, 4), (2, 6, 1)), ((3, 5), (3, 2)), ((4, 4), (4,))]
)
def test_lstsq(a_shape: Any, b_shape: Any, driver: str | None) -> None:
    a, b = rand(*a_shape), rand(*b_shape)
    res = ea.linalg.lstsq(T(a), T(b), driver=driver)
    vector = len(b_shape) == len(a_shape) - 1
    bb = b[..., None] if vector else b
    ref = np.linalg.pinv(a) @ bb
    close(res.solution, ref[..., 0] if vector else ref)
    m, n = a_shape[-2], a_shape[-1]
    drv = driver or "gelsy"
    if drv == "gels":
        assert res.rank.numel() == 0
    else:
        assert res.rank.dtype == ea.int64 and res.rank.tolist() == np.broadcast_to(min(m, n), a_shape[:-2]).tolist()
    if drv in ("gelsd", "gelss"):
        close(res.singular_values, np.linalg.svd(a, compute_uv=False))
    else:
        assert res.singular_values.numel() == 0
    if m > n and drv != "gelsy":
        r = a @ ref - bb
        close(res.residuals, (r * r).sum(-2)[..., 0] if vector else (r * r).sum(-2))
    else:
        assert res.residuals.numel() == 0


def test_lstsq_rank_deficient_is_minimum_norm() -> None:
    a = rand(6, 2) @ rand(2, 4)  # rank 2
    b = rand(6, 3)
    res = ea.linalg.lstsq(T(a), T(b), driver="gelsd")
    close(res.solution, np.linalg.lstsq(a, b, rcond=None)[0])
    assert res.rank.item() == 2
    assert res.residuals.numel() == 0  # not of full rank: no residuals, as LAPACK's


def test_lstsq_errors() -> None:
    with pytest.raises(RuntimeError, match=r"parameter `driver` should be one of \(gels, gelsy, gelsd, gelss\)"):
        ea.linalg.lstsq(T(rand(3, 2)), T(rand(3, 1)), driver="foo")
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-2\)"):
        ea.linalg.lstsq(T(rand(3, 2)), T(rand(4, 1)))
    with pytest.raises(RuntimeError, match="Expected input and other to have the same dtype"):
        ea.linalg.lstsq(T(rand(3, 2)), T(rand(3, 1), ea.float32))
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        ea.linalg.lstsq(T(rand(3)), T(rand(3)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 3), (2, 0, 0)])
def test_pinv_and_matrix_rank(shape: tuple[int, ...]) -> None:
    a = rand(*shape)
    close(ea.linalg.pinv(T(a)), np.linalg.pinv(a) if a.size else np.zeros((*shape[:-2], shape[-1], shape[-2])))
    close(ea.pinverse(T(a)), np.linalg.pinv(a) if a.size else np.zeros((*shape[:-2], shape[-1], shape[-2])))
    rank = ea.linalg.matrix_rank(T(a))
    assert rank.dtype == ea.int64
    assert rank.tolist() == (np.linalg.matrix_rank(a).tolist() if a.size else np.zeros(shape[:-2], int).tolist())


def test_pinv_matrix_rank_tolerances_and_hermitian() -> None:
    a = np.diag([10.0, 1.0, 1e-3])
    assert ea.linalg.matrix_rank(T(a)).item() == 3
    assert ea.linalg.matrix_rank(T(a), atol=0.01).item() == 2
    assert ea.linalg.matrix_rank(T(a), rtol=0.5).item() == 1
    assert ea.linalg.matrix_rank(T(a), 0.5).item() == 2  # positional tol is atol
    assert ea.linalg.matrix_rank(T(a), atol=T(0.01), rtol=T(0.0)).item() == 2
    close(ea.linalg.pinv(T(a), atol=0.01), np.diag([0.1, 1.0, 0.0]))
    close(ea.linalg.pinv(T(a), 0.05), np.diag([0.1, 1.0, 0.0]))  # rcond: relative
    s = spd(4, 4)
    close(ea.linalg.pinv(T(s), hermitian=True), np.linalg.inv(s))
    assert ea.linalg.matrix_rank(T(s), hermitian=True).item() == 4


# ---- products and shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n: int) -> None:
    a = rand(2, 3, 3) + 2 * np.eye(3)
    ref = np.linalg.matrix_power(a, n)
    close(ea.linalg.matrix_power(T(a), n), ref)
    close(T(a).matrix_power(n), ref)


def test_matrix_power_integers_and_errors() -> None:
    m = ea.tensor([[1, 1], [1, 0]])
    assert ea.matrix_power(m, 10).tolist() == [[89, 55], [55, 34]]
    with pytest.raises(
        RuntimeError, match=r"linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3"
    ):
        ea.linalg.matrix_power(T(rand(2, 3)), 2)


@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (3, 4)], [(3,), (3, 4), (4, 5), (5,)], [(10, 100), (100, 5), (5, 50)], [(4,), (4, 2)], [(3, 2), (2,)]],
)
def test_multi_dot(shapes: list[tuple[int, ...]]) -> None:
    arrays = [rand(*s) for s in shapes]
    close(ea.linalg.multi_dot([T(x) for x in arrays]), np.linalg.multi_dot(arrays))


@pytest.mark.parametrize(
    ("tensors", "regex"),
    [
        ([np.ones((2, 2))], "expected at least 2 tensors but got 1"),
        ([np.ones((2, 2, 2)), np.ones((2, 2))], "the first tensor must be 1D or 2D but got 3D"),
        ([np.ones((2, 2)), np.ones((2, 2, 2))], "the last tensor must be 1D or 2D but got 3D"),
        ([np.ones((2, 2)), np.ones(2), np.ones((2, 2))], "tensor 1 must be 2D but got 1D"),
        ([np.ones((2, 3)), np.ones((2, 2))], r"tensors 0 and 1 with shapes \[2, 3\] and \[2, 2\] cannot be multiplied"),
    ],
)
def test_multi_dot_errors(tensors: list[np.ndarray], regex: str) -> None:
    with pytest.raises(RuntimeError, match=regex):
        ea.linalg.multi_dot([T(x) for x in tensors])


def test_vander_vecdot_diagonal_cross() -> None:
    x = np.array([1.0, 2.0, 3.0, 0.5])
    close(ea.linalg.vander(T(x)), np.vander(x, increasing=True))
    close(ea.linalg.vander(T(x), N=6), np.vander(x, 6, increasing=True))
    assert ea.linalg.vander(ea.tensor([2, 3]), N=3).tolist() == [[1, 2, 4], [1, 3, 9]]
    close(ea.linalg.vander(T(np.stack([x, x]))), np.stack([np.vander(x, increasing=True)] * 2))
    with pytest.raises(RuntimeError, match=r"N must be greater than 1."):
        ea.linalg.vander(T(x), N=1)
    a, b = rand(3, 4), rand(3, 4)
    close(ea.linalg.vecdot(T(a), T(b)), (a * b).sum(-1))
    close(ea.linalg.vecdot(T(a), T(b), dim=0), (a * b).sum(0))
    with pytest.raises(RuntimeError, match="Expected x and y to have the same dtype"):
        ea.linalg.vecdot(T(a), T(b, ea.float32))
    c = rand(2, 3, 4)
    close(ea.linalg.diagonal(T(c)), np.diagonal(c, 0, -2, -1))
    close(ea.linalg.diagonal(T(c), offset=1, dim1=0, dim2=2), np.diagonal(c, 1, 0, 2))
    u, v = rand(4, 3), rand(4, 3)
    close(ea.linalg.cross(T(u), T(v)), np.cross(u, v))


def test_tensorinv_tensorsolve() -> None:
    a = rand(4, 6) @ rand(6, 4) + 4 * np.eye(4)
    a = np.eye(24) + 0.1 * rand(24, 24)
    A = a.reshape(4, 6, 8, 3)
    close(ea.linalg.tensorinv(T(A), ind=2), np.linalg.tensorinv(A, ind=2))
    b = rand(4, 6)
    close(ea.linalg.tensorsolve(T(A), T(b)), np.linalg.tensorsolve(A, b))
    A2 = a.reshape(8, 3, 4, 6)
    close(ea.linalg.tensorsolve(T(A2), T(b), dims=(0, 1)), np.linalg.tensorsolve(A2, b, axes=(0, 1)))
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but got 0"):
        ea.linalg.tensorinv(T(A), ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\)"):
        ea.linalg.tensorinv(T(rand(2, 3)), ind=1)


def test_logdet_and_cond() -> None:
    a = spd(2, 3, 3)
    close(ea.logdet(T(a)), np.linalg.slogdet(a)[1])
    neg = np.diag([-1.0, 2.0, 3.0])
    assert np.isnan(ea.logdet(T(neg)).item())
    assert ea.logdet(T(np.zeros((2, 2)))).item() == -np.inf
    b = rand(3, 3)
    for p in [None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"]:
        ref = np.linalg.cond(b, p)
        got = ea.linalg.cond(T(b)) if p is None else ea.linalg.cond(T(b), p)
        close(got, ref)
