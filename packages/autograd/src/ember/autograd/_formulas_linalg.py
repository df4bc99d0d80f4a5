"""Backward helpers of the linear-algebra formulas in derivatives.yaml (section "linear algebra").

Written with differentiable operators only (matmul, linalg.solve, tril, ...), so the
gradients are themselves differentiable. Real dtypes: the conjugates of PyTorch's
formulas are no-ops here. Notation: A = the input, X^T = X.mT, G = the output's gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.aten as ea
from ember.aten import _generated_ops as ops

__all__ = [
    "cholesky_backward",
    "linalg_cross",
    "linalg_det_backward",
    "linalg_inv",
    "linalg_qr_backward",
    "linalg_solve_backward",
    "slogdet_backward",
    "svd_backward",
]


def _mT(x: Any) -> Any:
    return x.transpose(-2, -1)


def _eye_like(a: Any, n: int) -> Any:
    return ops._call_eye(n, a.dtype, None, a.device, None)


def linalg_cross(a: Any, b: Any, dim: int) -> Any:
    return ops._call_linalg_cross(a, b, dim)


def linalg_inv(a: Any) -> Any:
    return ops._call_linalg_inv(a)


def _solve(a: Any, b: Any, left: bool = True) -> Any:
    return ops._call_linalg_solve(a, b, left)


def _is_vector_rhs(A_shape: Sequence[int], B_shape: Sequence[int]) -> bool:
    return len(B_shape) == 1 or (len(B_shape) == len(A_shape) - 1 and tuple(B_shape) == tuple(A_shape[:-1]))


def linalg_solve_backward(grad: Any, X: Any, A: Any, B_shape: Sequence[int], left: bool, mask: Sequence[bool]) -> Any:
    """AX = B: gB = A^{-T} G, gA = -gB X^T.  XA = B: gB = G A^{-T}, gA = -X^T gB."""
    gB = _solve(_mT(A), grad, left)
    gA = None
    if mask[0]:
        if _is_vector_rhs(tuple(A.shape), B_shape):
            gA = -(gB.unsqueeze(-1) * X.unsqueeze(-2))
        elif left:
            gA = -(gB.matmul(_mT(X)))
        else:
            gA = -(_mT(X).matmul(gB))
    return gA, (gB if mask[1] else None)


def linalg_det_backward(grad: Any, det: Any, A: Any) -> Any:
    """d det(A) / dA = det(A) A^{-T} (the cofactor matrix). Singular matrices: the cofactors
    from the SVD A = U diag(s) Vh, cof(A) = det(U) det(Vh) U diag(prod_{j != i} s_j) Vh."""
    if A.shape[-1] == 0:
        return ops._call_zeros_like(A, None, None, None, None, None)
    g = (grad * det).unsqueeze(-1).unsqueeze(-1)
    if bool((det != 0).all()):
        return g * _mT(linalg_inv(A))
    U, S, Vh = ops._call__linalg_svd(A, False, True, None)
    n = S.shape[-1]
    eye = _eye_like(S, n).to(ea.bool)
    others = ops._call_where_self(
        eye,
        ops._call_ones_like(S.unsqueeze(-2), None, None, None, None, None),
        S.unsqueeze(-2).expand(*S.shape[:-1], n, n),
    )
    cof = (U * others.prod(-1).unsqueeze(-2)).matmul(Vh)
    sign = ops._call_linalg_det(U) * ops._call_linalg_det(Vh)
    return (grad * sign).unsqueeze(-1).unsqueeze(-1) * cof


def slogdet_backward(grad_logabsdet: Any, A: Any) -> Any:
    """d log|det A| / dA = A^{-T}."""
    if grad_logabsdet is None:
        return None
    return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * _mT(linalg_inv(A))


def cholesky_backward(grad: Any, upper: bool, result: Any) -> Any:
    """A = L L^T: gA = sym(L^{-T} Phi(L^T G) L^{-1}), Phi = the lower triangle with the diagonal
    halved, sym(X) = (X + X^T) / 2 (A is symmetric; only its symmetric part matters)."""
    L = _mT(result) if upper else result
    gL = _mT(grad) if upper else grad
    P = _mT(L).matmul(gL).tril()
    P = P - 0.5 * ops._call_diag_embed(P.diagonal(0, -2, -1), 0, -2, -1)
    gA = _solve(L, _solve(_mT(L), P), left=False)  # L^{-T} P L^{-1}
    return 0.5 * (gA + _mT(gA))


def _copy_upper_to_lower(M: Any) -> Any:
    return M.triu() + _mT(M.triu(1))


def _qr_square_backward(gQ: Any, gR: Any, Q: Any, R: Any) -> Any:
    """A = QR with Q (m x n) orthonormal columns, R (n x n) upper, m >= n:
    gA = [gQ + Q copyutl(gR R^T - Q^T gQ)] R^{-T}, copyutl(M) = triu(M) + triu(M, 1)^T
    (from Q^T dA R^{-1} = Q^T dQ + dR R^{-1}: skew-symmetric plus upper triangular)."""
    M = gR.matmul(_mT(R)) if gR is not None else None
    if gQ is not None:
        QtgQ = _mT(Q).matmul(gQ)
        M = -QtgQ if M is None else M - QtgQ
    B = Q.matmul(_copy_upper_to_lower(M))
    if gQ is not None:
        B = B + gQ
    return _solve(_mT(R), B, left=False)  # B R^{-T}


def linalg_qr_backward(gQ: Any, gR: Any, Q: Any, R: Any, mode: str) -> Any:
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
            "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if m >= n:
        return _qr_square_backward(gQ, gR, Q, R)
    # wide A = [X | Y] with X = Q R1 (m x m) and R2 = Q^T Y
    R1 = R.narrow(-1, 0, m)
    Y_grad_R2 = gR.narrow(-1, m, n - m) if gR is not None else None
    gR1 = gR.narrow(-1, 0, m) if gR is not None else None
    # Y = Q R2 is recovered from the factors (A is not saved)
    Y = Q.matmul(R.narrow(-1, m, n - m))
    gQ2 = gQ
    if Y_grad_R2 is not None:
        extra = Y.matmul(_mT(Y_grad_R2))
        gQ2 = extra if gQ2 is None else gQ2 + extra
    gX = _qr_square_backward(gQ2, gR1, Q, R1)
    if Y_grad_R2 is None:
        gY = ops._call_zeros_like(Y, None, None, None, None, None)
    else:
        gY = Q.matmul(Y_grad_R2)
    return ops._call_cat([gX, gY], -1)


def svd_backward(gU: Any, gS: Any, gVh: Any, U: Any, S: Any, Vh: Any, full_matrices: bool) -> Any:
    """A = U diag(S) Vh (real), k = min(m, n):
    gA = U [ (skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS) ] Vh
         + (I - U U^T) gU S^{-1} Vh + U S^{-1} gV^T (I - V V^T),
    skew(X) = X - X^T, E_ij = S_j^2 - S_i^2 (E_ii = 1). With full_matrices the extra
    singular vectors are arbitrary: only the first k are differentiated (as PyTorch)."""
    if gU is None and gS is None and gVh is None:
        return None
    if U.numel() == 0 and Vh.numel() == 0 and S.numel() != 0:
        raise RuntimeError(
            "linalg.svd: the singular vectors were not computed (compute_uv=False), and the SVD's derivative needs "
            "them; call it with compute_uv=True"
        )
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    if full_matrices:
        U = U.narrow(-1, 0, k)
        Vh = Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)).matmul(Vh)
    V = _mT(Vh)
    gV = _mT(gVh) if gVh is not None else None
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    eye = _eye_like(S, k)
    E = E + eye  # the diagonal of E is 0: make it 1 (its off-diagonal gets nothing from eye)
    inner = None
    if gU is not None:
        UtgU = _mT(U).matmul(gU)
        inner = ((UtgU - _mT(UtgU)) / E) * S.unsqueeze(-2)
    if gV is not None:
        VtgV = _mT(V).matmul(gV)
        term = S.unsqueeze(-1) * ((VtgV - _mT(VtgV)) / E)
        inner = term if inner is None else inner + term
    if gS is not None:
        inner = inner + ops._call_diag_embed(gS, 0, -2, -1)
    gA = U.matmul(inner).matmul(Vh)
    if gU is not None and m > k:
        proj = gU - U.matmul(_mT(U).matmul(gU))
        gA = gA + (proj / S.unsqueeze(-2)).matmul(Vh)
    if gV is not None and n > k:
        proj = gV - V.matmul(_mT(V).matmul(gV))
        gA = gA + U.matmul(_mT(proj) / S.unsqueeze(-1))
    return gA
