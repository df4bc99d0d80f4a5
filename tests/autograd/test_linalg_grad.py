"""Gradients of the linear-algebra operators (derivatives.yaml, section "linear algebra"),
checked against finite differences in float64: the products (and their in-place
variants), matmul's broadcasting paths, einsum, and the LAPACK decompositions, including
the cases the OpInfo samples do not reach (singular det, wide QR, full_matrices SVD,
second derivatives) and the derivatives PyTorch refuses (QR with mode='r')."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck
from helpers import rand


def R(*shape: int, seed: int = 0) -> Any:
    return rand(*shape, requires_grad=True, seed=seed)


def spd_half(n: int, seed: int = 0) -> Any:
    m = np.random.default_rng(seed).uniform(-1, 1, size=(n, n))
    return ea.from_numpy((m @ m.T + n * np.eye(n)) / 2).requires_grad_(True)


def well_conditioned(*shape: int, seed: int = 0) -> Any:
    n = shape[-1]
    a = np.random.default_rng(seed).uniform(-1, 1, size=shape) + (n + 1) * np.eye(n)
    return ea.from_numpy(a).requires_grad_(True)


# ---- products -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (ea.mm, [(3, 4), (4, 2)]),
        (ea.bmm, [(2, 3, 4), (2, 4, 2)]),
        (ea.mv, [(3, 4), (4,)]),
        (ea.dot, [(5,), (5,)]),
        (ea.vdot, [(5,), (5,)]),
        (lambda s, a, b: ea.addmm(s, a, b, beta=0.5, alpha=-2.0), [(3, 2), (3, 4), (4, 2)]),
        (lambda s, a, b: ea.addmm(s, a, b), [(2,), (3, 4), (4, 2)]),
        (lambda s, a, b: ea.addmv(s, a, b, beta=2.0, alpha=0.5), [(3,), (3, 4), (4,)]),
        (lambda s, a, b: ea.baddbmm(s, a, b, beta=0.5, alpha=1.5), [(2, 3, 2), (2, 3, 4), (2, 4, 2)]),
        (lambda s, a, b: ea.addbmm(s, a, b, beta=0.5, alpha=1.5), [(3, 2), (2, 3, 4), (2, 4, 2)]),
        (lambda s, a, b: ea.addr(s, a, b, beta=0.5, alpha=1.5), [(3, 4), (3,), (4,)]),
        (ea.outer, [(3,), (4,)]),
        (ea.kron, [(2, 3), (2, 2)]),
        (lambda a, b: ea.linalg.cross(a, b, dim=0), [(3, 4), (3, 1)]),
        (lambda a, b: ea.tensordot(a, b, dims=([1, 2], [1, 0])), [(2, 3, 4), (4, 3, 2)]),
    ],
    ids=lambda x: "" if callable(x) else str(x),
)
def test_product_gradients(fn: Any, shapes: list[tuple[int, ...]]) -> None:
    inputs = tuple(R(*s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 2)),
        ((2, 2, 3), (3, 2)),
        ((2, 2, 3), (3,)),
        ((3,), (2, 3, 2)),
        ((2, 1, 2, 3), (3, 3, 2)),
        ((2, 3), (2, 3, 2)),
    ],
)
def test_matmul_gradients_every_path(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    x, y = R(*a, seed=1), R(*b, seed=2)
    assert gradcheck(ea.matmul, (x, y))
    assert gradgradcheck(ea.matmul, (x, y))


@pytest.mark.parametrize(
    "name",
    ["addmm_", "addmv_", "baddbmm_", "addbmm_", "addr_"],
)
def test_inplace_product_gradients(name: str) -> None:
    shapes = {
        "addmm_": [(3, 2), (3, 4), (4, 2)],
        "addmv_": [(3,), (3, 4), (4,)],
        "baddbmm_": [(2, 3, 2), (2, 3, 4), (2, 4, 2)],
        "addbmm_": [(3, 2), (2, 3, 4), (2, 4, 2)],
        "addr_": [(3, 4), (3,), (4,)],
    }[name]
    inputs = tuple(R(*s, seed=i) for i, s in enumerate(shapes))

    def fn(s: Any, a: Any, b: Any) -> Any:
        return getattr(s.clone(), name)(a, b, beta=0.5, alpha=2.0)

    assert gradcheck(fn, inputs)


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ij,jk->ik", [(2, 3), (3, 2)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii->i", [(3, 3)]),
        ("...ij,...jk", [(2, 1, 2, 3), (2, 3, 2)]),
        ("ijk,ikl,ilm->jm", [(2, 2, 3), (2, 3, 2), (2, 2, 2)]),
        ("i,i->", [(4,), (4,)]),
    ],
)
def test_einsum_gradients(equation: str, shapes: list[tuple[int, ...]]) -> None:
    inputs = tuple(R(*s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(lambda *xs: ea.einsum(equation, *xs), inputs)


# ---- LAPACK -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize(("a", "b"), [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (3, 3, 3))])
def test_solve_gradients(left: bool, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    A = well_conditioned(*a)
    B = R(*b, seed=3)
    if not left:
        B = B.detach().transpose(-2, -1).contiguous().requires_grad_(True)
    assert gradcheck(lambda x, y: ea.linalg.solve(x, y, left=left), (A, B))


def test_solve_vector_rhs_gradients() -> None:
    A = well_conditioned(2, 3, 3)
    assert gradcheck(ea.linalg.solve, (A, R(2, 3, seed=4)))
    assert gradcheck(ea.linalg.solve, (well_conditioned(3, 3), R(3, seed=5)))
    assert gradgradcheck(ea.linalg.solve, (well_conditioned(3, 3), R(3, seed=5)))


def test_inv_det_slogdet_gradients() -> None:
    A = well_conditioned(2, 3, 3)
    assert gradcheck(ea.linalg.inv, (A,))
    assert gradgradcheck(ea.linalg.inv, (A,))
    B = R(2, 3, 3, seed=7)
    assert gradcheck(ea.linalg.det, (B,))
    assert gradcheck(lambda x: ea.linalg.slogdet(x).logabsdet, (B,))


def test_det_gradient_at_a_singular_matrix() -> None:
    # rank 2: the cofactors are not zero, A^{-1} does not exist (the SVD path)
    a = ea.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]], dtype=ea.float64, requires_grad=True)
    assert ea.linalg.det(a).item() == 0.0
    assert gradcheck(ea.linalg.det, (a,))
    from ember.autograd import grad

    (g,) = grad(ea.linalg.det(a), a)
    cof = np.array([[14.0, -1.0, -4.0], [-7.0, 0.5, 2.0], [0.0, 0.0, 0.0]])  # the cofactor matrix of a
    np.testing.assert_allclose(g.numpy(), cof, atol=1e-10)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradients(upper: bool) -> None:
    A = spd_half(4)
    assert gradcheck(lambda x: ea.linalg.cholesky(x + x.mT, upper=upper), (A,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4), (2, 4, 3), (2, 3, 5)])
def test_qr_gradients(shape: tuple[int, ...]) -> None:
    A = R(*shape, seed=11)
    assert gradcheck(lambda x: ea.linalg.qr(x), (A,))
    assert gradcheck(lambda x: ea.linalg.qr(x).R, (A,))
    assert gradcheck(lambda x: ea.linalg.qr(x).Q, (A,))


def test_qr_complete_square_and_refused_modes() -> None:
    assert gradcheck(lambda x: ea.linalg.qr(x, mode="complete"), (R(3, 3, seed=12),))
    assert gradcheck(lambda x: ea.linalg.qr(x, mode="complete"), (R(2, 4, seed=12),))
    x = R(4, 3, seed=13)
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        ea.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        ea.linalg.qr(x, mode="complete").Q.sum().backward()


def _gauge_free(U: Any, S: Any, Vh: Any) -> Any:
    # quantities that do not depend on the singular vectors' signs
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, (U * S.unsqueeze(-2)) @ Vh, (U.abs() ** 2), (Vh.abs() ** 2)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 2)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_gradients(shape: tuple[int, ...], full: bool) -> None:
    A = R(*shape, seed=21)
    assert gradcheck(lambda x: _gauge_free(*ea.linalg.svd(x, full_matrices=full)), (A,))
    # U V^T (invariant to the signs) uses the singular vectors' gradients on both sides
    assert gradcheck(
        lambda x: (lambda u, s, vh: u[..., : s.shape[-1]] @ vh[..., : s.shape[-1], :])(
            *ea.linalg.svd(x, full_matrices=full)
        ),
        (A,),
    )


def test_svdvals_and_matrix_norm_gradients() -> None:
    A = R(3, 4, seed=31)
    assert gradcheck(ea.linalg.svdvals, (A,))
    for ord in ("nuc", 2, -2, "fro", 1, float("inf")):
        assert gradcheck(lambda x, o=ord: ea.linalg.matrix_norm(x, ord=o), (A,))
    assert gradcheck(lambda x: ea.linalg.norm(x, ord=2, dim=(0, 1)), (A,))


def test_svd_without_vectors_is_not_differentiable() -> None:
    A = R(3, 4, seed=32)
    assert ea.linalg.svdvals(A).requires_grad  # svdvals computes the vectors when A needs a gradient
    u, s, vh = ea._generated_ops._call__linalg_svd(A, False, False, None)
    assert u.numel() == 0 and vh.numel() == 0
    with pytest.raises(RuntimeError, match="the singular vectors were not computed"):
        s.sum().backward()


@pytest.mark.parametrize(
    "call",
    [
        lambda x, o: ea.matmul(x, x.detach()[0], out=o),  # the folded path, copied into out
        lambda x, o: ea.mm(x[0], x.detach()[0], out=o),
        lambda x, o: ea.linalg.matrix_norm(x, out=o),
        lambda x, o: ea.kron(x, x.detach(), out=o),
    ],
)
def test_out_variants_refuse_inputs_that_require_grad(call: Any) -> None:
    x = R(2, 3, 3, seed=41)
    with pytest.raises(
        RuntimeError, match=r"functions with out=\.\.\. arguments don't support automatic differentiation"
    ):
        call(x, ea.empty(0, dtype=ea.float64))
