"""Backward helpers of the linear-algebra formulas in derivatives.yaml (section "linear algebra").

Written with differentiable operators only (matmul, linalg.solve, tril, ...), so the
gradients are themselves differentiable. Real dtypes: the conjugates of PyTorch's
formulas are no-ops here. Notation: A = the input, X^T = X.mT, G = the output's gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ember.aten as ea
from ember.aten.extension import entries as ops

__all__ = [
    "cholesky_backward",
    "linalg_cross",
    "linalg_det_backward",
    "linalg_eigh_backward",
    "linalg_inv",
    "linalg_qr_backward",
    "linalg_solve_backward",
    "linalg_solve_triangular_backward",
    "lu_factor_ex_backward",
    "lu_unpack_backward",
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


# ---- decompositions (csrc/native/LinalgDecompositions.cpp) ----------------------------------------


def _st(A: Any, B: Any, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:
    return ops._call_linalg_solve_triangular(A, B, upper, left, unitriangular)


def linalg_eigh_backward(gL: Any, gV: Any, L: Any, V: Any) -> Any:
    """A = V diag(L) V^T: gA = V (diag(gL) + skew(V^T gV) / E) V^T, E_ij = L_j - L_i.

    Only the skew-symmetric part of V^T gV enters (the gauge of the eigenvectors leaves the
    rest undetermined), which makes gA symmetric: the gradient of the symmetric input that
    eigh reads one triangle of.
    """
    if gV is None and gL is None:
        return None
    n = L.shape[-1]
    if gV is None:
        inner = ops._call_diag_embed(gL, 0, -2, -1)
    else:
        VtgV = _mT(V).matmul(gV)
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L, n)
        inner = 0.5 * (VtgV - _mT(VtgV)) / E
        if gL is not None:
            inner = inner + ops._call_diag_embed(gL, 0, -2, -1)
    return V.matmul(inner).matmul(_mT(V))


def _lu_backward(gL: Any, gU: Any, P: Any, L: Any, U: Any) -> Any:
    """A = P L U (L unit lower m x k, U upper k x n): the gradient of A.

    Square: gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T. Tall (m > n), with L = [L1; L2]:
    the top block as the square case with triu(gU U^T - L2^T gL2), the bottom gL2 U^-T.
    Wide (m < n), with U = [U1 U2]: the left block with tril(L^T gL - gU2 U2^T, -1) and
    triu(gU1 U1^T), the right block L^-T gU2.
    """
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if gL is None:
        gL = ea.zeros_like(L)
    if gU is None:
        gU = ea.zeros_like(U)
    if m == n:
        M = _mT(L).matmul(gL).tril(-1) + gU.matmul(_mT(U)).triu()
        return P.matmul(_st(_mT(L), _st(_mT(U), M, False, left=False), True, unitriangular=True))
    if m > n:
        L1, L2 = L[..., :k, :], L[..., k:, :]
        gL1, gL2 = gL[..., :k, :], gL[..., k:, :]
        M = _mT(L1).matmul(gL1).tril(-1) + (gU.matmul(_mT(U)) - _mT(L2).matmul(gL2)).triu()
        top = _st(_mT(L1), _st(_mT(U), M, False, left=False), True, unitriangular=True)
        bottom = _st(_mT(U), gL2, False, left=False)
        return P.matmul(ops._call_cat([top, bottom], -2))
    U1, U2 = U[..., :, :k], U[..., :, k:]
    gU1, gU2 = gU[..., :, :k], gU[..., :, k:]
    M = (_mT(L).matmul(gL) - gU2.matmul(_mT(U2))).tril(-1) + gU1.matmul(_mT(U1)).triu()
    left = _st(_mT(L), _st(_mT(U1), M, False, left=False), True, unitriangular=True)
    right = _st(_mT(L), gU2, True, unitriangular=True)
    return P.matmul(ops._call_cat([left, right], -1))


def lu_factor_ex_backward(grad: Any, LU: Any, pivots: Any) -> Any:
    """The gradient of the packed LU (L - I + U): its strict lower part is gL, its upper part gU."""
    P, L, U = ops._call_lu_unpack(LU, pivots, True, True)
    k = min(LU.shape[-2], LU.shape[-1])
    return _lu_backward(grad[..., :, :k].tril(-1), grad[..., :k, :].triu(), P, L, U)


def lu_unpack_backward(gL: Any, gU: Any, shape: Sequence[int]) -> Any:
    """L = tril(LU, -1) + I (m x k), U = triu(LU) (k x n): both gradients land back in the packed LU."""
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    parts = []
    if gL is not None:
        g = gL.tril(-1)
        if n > k:  # wide: L is m x m, pad its gradient with zero columns
            g = ops._call_cat([g, ea.zeros_like(g[..., :, :1]).expand(*g.shape[:-1], n - k)], -1)
        parts.append(g)
    if gU is not None:
        g = gU.triu()
        if m > k:  # tall: U is n x n, pad its gradient with zero rows
            g = ops._call_cat([g, ea.zeros_like(g[..., :1, :]).expand(*g.shape[:-2], m - k, n)], -2)
        parts.append(g)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def linalg_solve_triangular_backward(
    grad: Any, A: Any, X: Any, upper: bool, left: bool, unitriangular: bool, mask: Sequence[bool]
) -> Any:
    """AX = B: gB = A^-T G, gA = -gB X^T; XA = B: gB = G A^-T, gA = -X^T gB; gA kept to A's triangle."""
    gB = _st(_mT(A), grad, not upper, left, unitriangular)
    gA = None
    if mask[0]:
        gA = -(gB.matmul(_mT(X))) if left else -(_mT(X).matmul(gB))
        gA = gA.triu(1 if unitriangular else 0) if upper else gA.tril(-1 if unitriangular else 0)
    return gA, (gB if mask[1] else None)
