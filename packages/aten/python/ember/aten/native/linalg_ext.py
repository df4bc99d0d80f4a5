"""Python kernels of torch.linalg's composites over the LAPACK kernels of
csrc/native/LinalgDecompositions.cpp (eigh, lu_factor_ex, lu_unpack, solve_triangular,
cholesky_ex, geqrf) and BatchLinearAlgebra.cpp (solve, inv, svd, qr, ...).

Each takes its schema's arguments positionally (native_functions.yaml, section "linear
algebra (decompositions)") and calls operators through the dispatcher, so autograd
differentiates it through the operators it calls: eigvalsh through _linalg_eigh's
formula, lu / lu_solve through lu_factor_ex's and solve_triangular's, pinv / lstsq
through the SVD's, householder_product through its products of reflectors.
"""

from __future__ import annotations

import math
from typing import Any

import ember.c10py as _c10
from ember.aten._generated import _ops as ops
from ember.c10py import LinAlgError

from .linalg import _ST_NAMES, _set_out

_wrap = _c10.maybe_wrap_dim


def _ea() -> Any:
    import ember.aten as ea  # the package is importing us: resolve it at call time

    return ea


def _st(dtype: Any) -> str:
    return _ST_NAMES.get(str(dtype).rsplit(".", 1)[-1], str(dtype))


def _mT(x: Any) -> Any:
    return x.transpose(-2, -1)


def _eps(dtype: Any) -> float:
    return 1.1920928955078125e-07 if str(dtype).endswith("float32") else 2.220446049250313e-16


def _check_matrix(A: Any, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def _check_square(A: Any, name: str) -> None:
    _check_matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _check_floating(A: Any, name: str) -> None:
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_st(A.dtype)}")


def _eye(n: int, like: Any) -> Any:
    return ops._call_eye(n, like.dtype, None, like.device, None)


# ---- eigh -------------------------------------------------------------------------------------


def linalg_eigh(self: Any, UPLO: str) -> Any:
    return ops._call__linalg_eigh(self, UPLO, True)


def linalg_eigh_eigvals(self: Any, UPLO: str, eigvals: Any, eigvecs: Any) -> Any:
    w, v = ops._call__linalg_eigh(self, UPLO, True)
    return _set_out(eigvals, w, "linalg_eigh"), _set_out(eigvecs, v, "linalg_eigh")


def linalg_eigvalsh(self: Any, UPLO: str) -> Any:
    # the eigenvectors are only needed for the gradient
    return ops._call__linalg_eigh(self, UPLO, bool(getattr(self, "requires_grad", False)))[0]


def linalg_eigvalsh_out(self: Any, UPLO: str, out: Any) -> Any:
    return _set_out(out, linalg_eigvalsh(self, UPLO), "linalg_eigvalsh")


# ---- LU -----------------------------------------------------------------------------------------


def _raise_lu_errors(info: Any, api: str) -> None:
    bad = [i for i, v in enumerate(info.reshape(-1).tolist()) if v > 0]
    if bad:
        b = bad[0]
        v = int(info.reshape(-1)[b].item())
        prefix = f"(Batch element {b}): " if info.dim() > 0 else ""
        raise LinAlgError(
            f"{api}: {prefix}U[{v},{v}] is zero and using it on lu_solve would result in a division by zero. "
            "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)"
        )


def linalg_lu_factor(A: Any, pivot: bool) -> Any:
    LU, piv, info = ops._call_linalg_lu_factor_ex(A, pivot, False)
    _raise_lu_errors(info, "torch.linalg.lu_factor")
    return LU, piv


def linalg_lu_factor_out(A: Any, pivot: bool, LU: Any, pivots: Any) -> Any:
    lu, piv = linalg_lu_factor(A, pivot)
    return _set_out(LU, lu, "linalg_lu_factor"), _set_out(pivots, piv, "linalg_lu_factor")


def linalg_lu(A: Any, pivot: bool) -> Any:
    LU, piv, _ = ops._call_linalg_lu_factor_ex(A, pivot, False)
    return ops._call_lu_unpack(LU, piv, True, True)


def linalg_lu_out(A: Any, pivot: bool, P: Any, L: Any, U: Any) -> Any:
    p, l, u = linalg_lu(A, pivot)
    return _set_out(P, p, "linalg_lu"), _set_out(L, l, "linalg_lu"), _set_out(U, u, "linalg_lu")


def linalg_lu_solve(LU: Any, pivots: Any, B: Any, left: bool, adjoint: bool) -> Any:
    """A X = B with A = P L U given by lu_factor: X = U^-1 L^-1 P^T B (adjoint: A^T X = B)."""
    name = "linalg.lu_solve"
    _check_square(LU, name)
    if B.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if LU.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected LU and B to have the same dtype, but found LU of type {_st(LU.dtype)} "
            f"and B of type {_st(B.dtype)} instead"
        )
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    P, L, U = ops._call_lu_unpack(LU, pivots, True, True)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(linalg_lu_solve(LU, pivots, _mT(B), True, not adjoint))
    st = ops._call_linalg_solve_triangular
    if not adjoint:
        y = st(L, _mT(P).matmul(B), False, True, True)
        return st(U, y, True, True, False)
    # A^T = U^T L^T P^T
    y = st(_mT(U), B, False, True, False)
    return P.matmul(st(_mT(L), y, True, True, True))


def linalg_lu_solve_out(LU: Any, pivots: Any, B: Any, left: bool, adjoint: bool, out: Any) -> Any:
    return _set_out(out, linalg_lu_solve(LU, pivots, B, left, adjoint), "linalg_lu_solve")


def lu_solve(self: Any, LU_data: Any, LU_pivots: Any) -> Any:
    return linalg_lu_solve(LU_data, LU_pivots, self, True, False)


def linalg_solve_ex(A: Any, B: Any, left: bool, check_errors: bool) -> Any:
    _check_square(A, "linalg.solve_ex")
    _check_floating(A, "linalg.solve_ex")
    LU, piv, info = ops._call_linalg_lu_factor_ex(A, True, False)
    if not bool((info > 0).any().item()):
        return ops._call_linalg_solve(A, B, left), info
    if check_errors:
        ops._call_linalg_solve(A, B, left)  # raises linalg.solve's error for the singular matrix
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    B2 = B.unsqueeze(-1) if vector else B
    X = linalg_lu_solve(LU, piv, B2, left, False)
    return (X.squeeze(-1) if vector else X), info


def linalg_inv_ex(A: Any, check_errors: bool) -> Any:
    _check_square(A, "linalg.inv_ex")
    _check_floating(A, "linalg.inv_ex")
    LU, piv, info = ops._call_linalg_lu_factor_ex(A, True, False)
    if not bool((info > 0).any().item()):
        return ops._call_linalg_inv(A), info
    if check_errors:
        ops._call_linalg_inv(A)  # raises linalg.inv's error naming the zero pivot
    eye = _eye(A.shape[-1], A).expand(*A.shape)
    return linalg_lu_solve(LU, piv, eye, True, False), info


# ---- triangular and Cholesky --------------------------------------------------------------------


def triangular_solve(self: Any, A: Any, upper: bool, transpose: bool, unitriangular: bool) -> Any:
    """The legacy solve of A X = self (A^T X = self when transpose): (solution, a copy of A)."""
    if self.dim() < 2 or A.dim() < 2:
        raise RuntimeError(
            f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {self.dim()} dimensions "
            "instead"
            if self.dim() < 2
            else f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.dim()} "
            "dimensions instead"
        )
    Ause = _mT(A) if transpose else A
    X = ops._call_linalg_solve_triangular(Ause, self, upper != transpose, True, unitriangular)
    return X, A.clone()


def cholesky(self: Any, upper: bool) -> Any:
    return ops._call_linalg_cholesky(self, upper)


def _cholesky_solve_check(B: Any, L: Any) -> None:
    name = "cholesky_solve"
    if B.dim() < 2 or L.dim() < 2:
        raise RuntimeError(f"{name}: Expected b and A to have at least 2 dimensions.")
    if B.dtype != L.dtype:
        raise RuntimeError(
            f"{name}: Expected b and A to have the same dtype, but found b of type {_st(B.dtype)} "
            f"and A of type {_st(L.dtype)} instead."
        )
    _check_square(L, name)


def cholesky_solve(self: Any, input2: Any, upper: bool) -> Any:
    """A X = B with A = L L^T (input2 = L, or U = L^T when upper)."""
    _cholesky_solve_check(self, input2)
    st = ops._call_linalg_solve_triangular
    L = _mT(input2) if upper else input2
    y = st(L, self, False, True, False)
    return st(_mT(L), y, True, True, False)


def cholesky_inverse(self: Any, upper: bool) -> Any:
    _check_square(self, "cholesky_inverse")
    _check_floating(self, "cholesky_inverse")
    eye = _eye(self.shape[-1], self).expand(*self.shape)
    return cholesky_solve(eye, self, upper)


# ---- Householder products -------------------------------------------------------------------------


def linalg_householder_product(input: Any, tau: Any) -> Any:
    """Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i below the diagonal of column i of input."""
    name = "torch.linalg.householder_product"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to {tau.dim()} "
            f"and input.ndim is equal to {input.dim()}"
        )
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {list(tau.shape[:-1])}"
        )
    if input.dtype != tau.dtype:
        raise RuntimeError(f"{name}: tau dtype {_st(tau.dtype)} does not match input dtype {_st(input.dtype)}")
    _check_floating(input, name)
    k = tau.shape[-1]
    # the reflectors: unit diagonal, zeros above it
    V = input.tril(-1) + _eye(m, input)[:, :n]
    Q = _eye(m, input).expand(*input.shape[:-2], m, m)
    # apply from the right: Q <- Q H_i (i = 1..k), keeping every step differentiable
    for i in range(k):
        v = V[..., :, i : i + 1]
        t = tau[..., i : i + 1].unsqueeze(-1)
        Q = Q - (Q.matmul(v) * t).matmul(_mT(v))
    return Q[..., :, :n]


def orgqr(self: Any, input2: Any) -> Any:
    return linalg_householder_product(self, input2)


def ormqr(self: Any, input2: Any, input3: Any, left: bool, transpose: bool) -> Any:
    """Q C, Q^T C, C Q or C Q^T with Q (m x m) the product of geqrf's reflectors (self, input2)."""
    name = "torch.ormqr"
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input3.dim() < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    m = self.shape[-2]
    other_dim = input3.shape[-2] if left else input3.shape[-1]
    if other_dim != m:
        raise RuntimeError(f"{name}: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    k = input2.shape[-1]
    if k > m:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to tau.shape[-1]")
    # Q = H_1 ... H_k (m x m): pad the reflectors with zero columns (tau = 0 is the identity)
    A = self[..., :, :k]
    if k < m:
        pad = ops._call_zeros([*self.shape[:-2], m, m - k], self.dtype, None, self.device, None)
        A = ops._call_cat([A, pad], -1)
        tpad = ops._call_zeros([*input2.shape[:-1], m - k], input2.dtype, None, input2.device, None)
        tau = ops._call_cat([input2, tpad], -1)
    else:
        tau = input2
    Q = linalg_householder_product(A, tau)
    if transpose:
        Q = _mT(Q)
    return Q.matmul(input3) if left else input3.matmul(Q)


# ---- least squares, pseudo-inverse, rank -------------------------------------------------------------


def _svd_tol(S: Any, atol: Any, rtol: Any, m: int, n: int) -> Any:
    """max(atol, rtol * sigma_1) per matrix (keepdim), with PyTorch's defaults: rtol is
    eps * max(m, n) when neither is given, 0 when only atol is."""
    ea = _ea()
    if S.shape[-1] > 0:
        smax = S.amax(-1, True)
    else:
        smax = ops._call_zeros([*S.shape[:-1], 1], S.dtype, None, S.device, None)
    if rtol is None:
        rtol = _eps(S.dtype) * max(m, n) if atol is None else 0.0
    if isinstance(rtol, ea.Tensor):
        tol = smax * (rtol.to(S.dtype).unsqueeze(-1) if rtol.dim() > 0 else rtol.to(S.dtype))
    else:
        tol = smax * float(rtol)
    if atol is None:
        return tol
    if isinstance(atol, ea.Tensor):
        a = atol.to(S.dtype)
        return ea.maximum(tol, a.unsqueeze(-1) if a.dim() > 0 else a)
    return tol.clamp(float(atol), None)


def _pinv(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    ea = _ea()
    _check_matrix(A, "linalg.pinv")
    _check_floating(A, "linalg.pinv")
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return ops._call_zeros([*A.shape[:-2], n, m], A.dtype, None, A.device, None)
    if hermitian:
        L, V = ops._call__linalg_eigh(A, "L", True)
        absL = L.abs()
        tol = _svd_tol(absL, atol, rtol, m, n)
        inv = ea.where(absL > tol, 1.0 / L, ea.zeros_like(L))
        return (V * inv.unsqueeze(-2)).matmul(_mT(V))
    U, S, Vh = ops._call__linalg_svd(A, False, True, None)
    tol = _svd_tol(S, atol, rtol, m, n)
    inv = ea.where(S > tol, 1.0 / S, ea.zeros_like(S))
    return (_mT(Vh) * inv.unsqueeze(-2)).matmul(_mT(U))


def linalg_pinv_atol_rtol_tensor(self: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    return _pinv(self, atol, rtol, hermitian)


def linalg_pinv_atol_rtol_float(self: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    return _pinv(self, atol, rtol, hermitian)


def linalg_pinv(self: Any, rcond: float, hermitian: bool) -> Any:
    return _pinv(self, 0.0, rcond, hermitian)


def linalg_pinv_rcond_tensor(self: Any, rcond: Any, hermitian: bool) -> Any:
    return _pinv(self, 0.0, rcond, hermitian)


def pinverse(self: Any, rcond: float) -> Any:
    return _pinv(self, 0.0, rcond, False)


def _matrix_rank(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    ea = _ea()
    _check_matrix(A, "linalg.matrix_rank")
    _check_floating(A, "linalg.matrix_rank")
    m, n = A.shape[-2], A.shape[-1]
    if hermitian:
        S = ops._call__linalg_eigh(A.detach(), "L", False)[0].abs()
    else:
        S = ops._call__linalg_svd(A.detach(), False, False, None)[1]
    if S.shape[-1] == 0:
        return ops._call_zeros(list(A.shape[:-2]), ea.int64, None, A.device, None)
    tol = _svd_tol(S, atol, rtol, m, n)
    return (S > tol).sum(-1)


def linalg_matrix_rank_atol_rtol_tensor(input: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    return _matrix_rank(input, atol, rtol, hermitian)


def linalg_matrix_rank_atol_rtol_float(self: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    return _matrix_rank(self, atol, rtol, hermitian)


def linalg_matrix_rank(self: Any, tol: float, hermitian: bool) -> Any:
    return _matrix_rank(self, tol, 0.0, hermitian)


def linalg_matrix_rank_tol_tensor(input: Any, tol: Any, hermitian: bool) -> Any:
    return _matrix_rank(input, tol, 0.0, hermitian)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def linalg_lstsq(self: Any, b: Any, rcond: float | None, driver: str | None) -> Any:
    """min ||A X - B||_F: (solution, residuals, rank, singular_values) as PyTorch's CPU drivers return them.

    gels: QR (A of full rank); gelsy / gelsd / gelss: the minimum-norm solution, the
    rank counting singular values above rcond * sigma_1. residuals (the squared
    column norms of A X - B) exist when m > n, the driver is not gelsy and every
    matrix has rank n; singular_values for gelsd / gelss.
    """
    ea = _ea()
    name = "torch.linalg.lstsq"
    A = self
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if b.dim() < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if A.dtype != b.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but got input's dtype "
            f"{_st(A.dtype)} and other's dtype {_st(b.dtype)}"
        )
    _check_floating(A, name)
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = b.dim() == A.dim() - 1
    if vector:
        if A.shape[-2] != b.shape[-1]:
            raise RuntimeError(f"{name}: input.size(-2) should match other.size(-1)")
        B = b.unsqueeze(-1)
    else:
        if A.shape[-2] != b.shape[-2]:
            raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
        B = b
    m, n = A.shape[-2], A.shape[-1]
    batch = _broadcast(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    A = A.expand(*batch, m, n)
    B = B.expand(*batch, m, B.shape[-1])
    if rcond is None or rcond < 0:
        rcond = _eps(A.dtype) * max(m, n)
    empty = ops._call_zeros([0], A.dtype, None, A.device, None)
    if driver == "gels":
        X = _lstsq_qr(A, B)
        rank = ops._call_zeros([0], ea.int64, None, A.device, None)
        S_out = empty
        full_rank = True
    else:
        U, S, Vh = ops._call__linalg_svd(A, False, True, None)
        if S.shape[-1] > 0:
            keep = S > S.amax(-1, True) * rcond
        else:
            keep = S > 0
        inv = ea.where(keep, 1.0 / S, ea.zeros_like(S))
        X = (_mT(Vh) * inv.unsqueeze(-2)).matmul(_mT(U).matmul(B))
        rank = keep.sum(-1)
        S_out = S if driver in ("gelsd", "gelss") else empty
        full_rank = bool((rank == n).all().item()) if rank.numel() > 0 else True
    residuals = empty
    if m > n and driver != "gelsy" and full_rank:
        r = A.matmul(X) - B
        residuals = (r * r).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    if vector:
        X = X.squeeze(-1)
    return X, residuals, rank, S_out


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return tuple(out)


def _lstsq_qr(A: Any, B: Any) -> Any:
    """gels: m >= n: R X = Q^T B; m < n: the minimum-norm X = Q R^-T B from A^T = Q R."""
    st = ops._call_linalg_solve_triangular
    m, n = A.shape[-2], A.shape[-1]
    if m >= n:
        Q, R = ops._call_linalg_qr(A, "reduced")
        return st(R, _mT(Q).matmul(B), True, True, False)
    Q, R = ops._call_linalg_qr(_mT(A), "reduced")
    return Q.matmul(st(_mT(R), B, False, True, False))


# ---- products and shapes -----------------------------------------------------------------------------


def linalg_matrix_power(self: Any, n: int) -> Any:
    _check_square(self, "linalg.matrix_power")
    if n == 0:
        return _eye(self.shape[-1], self).expand(*self.shape).clone()
    A = self
    if n < 0:
        A = ops._call_linalg_inv(self)
        n = -n
    # binary powering: log2(n) squarings
    result = None
    base = A
    while n > 0:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


def matrix_power(self: Any, n: int) -> Any:
    return linalg_matrix_power(self, n)


def linalg_multi_dot(tensors: Any) -> Any:
    """A chain of mm in the order of fewest multiply-adds (the classic O(n^3) dynamic programme)."""
    ts = list(tensors)
    k = len(ts)
    if k < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {k}")
    first, last = ts[0], ts[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, k - 1):
        if ts[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ts[i].dim()}D")
    for i in range(1, k):
        if ts[i].dtype != first.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {_st(first.dtype)} "
                f"and tensor {i} is {_st(ts[i].dtype)}"
            )
        if ts[i].device != first.device:
            raise RuntimeError(
                f"multi_dot(): all tensors must be on the same device but tensor 0 is on {first.device} "
                f"and tensor {i} is on {ts[i].device}"
            )
    row = first.dim() == 1
    col = last.dim() == 1
    if row:
        ts[0] = first.unsqueeze(0)
    if col:
        ts[-1] = last.unsqueeze(-1)
    for i in range(k - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(ts[i].shape)} and "
                f"{list(ts[i + 1].shape)} cannot be multiplied"
            )
    dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            best = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, s
            cost[i][j] = best if best is not None else 0

    def chain(i: int, j: int) -> Any:
        if i == j:
            return ts[i]
        s = split[i][j]
        return ops._call_mm(chain(i, s), chain(s + 1, j))

    out = chain(0, k - 1)
    if row and col:
        return out.reshape([])
    if row:
        return out.squeeze(0)
    if col:
        return out.squeeze(-1)
    return out


def linalg_vander(x: Any, N: int | None) -> Any:
    """x[..., i, j] = x_i ** j for j < N (N = x.size(-1) by default), by a cumulative product."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    if x.dtype == _ea().bool:
        raise RuntimeError("linalg.vander supports only integer, floating point and complex tensors, got Bool")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        if N is not None:
            raise RuntimeError("N must be greater than 1.")
    ones = ops._call_ones([*x.shape, 1], x.dtype, None, x.device, None)
    if n <= 1:
        return ones[..., :n]
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1)
    return ops._call_cat([ones, powers.cumprod(-1)], -1)


def linalg_vecdot(x: Any, y: Any, dim: int) -> Any:
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {_st(x.dtype)} "
            f"and y of type {_st(y.dtype)} instead"
        )
    return (x * y).sum(dim)


def linalg_diagonal(A: Any, offset: int, dim1: int, dim2: int) -> Any:
    return ops._call_diagonal(A, offset, dim1, dim2)


def linalg_tensorinv(self: Any, ind: int) -> Any:
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(self.shape)
    out_shape = shape[ind:] + shape[:ind]
    rows = math.prod(shape[:ind])
    cols = math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
            f"but got {cols} != {rows}"
        )
    return ops._call_linalg_inv(self.reshape([rows, cols])).reshape(out_shape)


def linalg_tensorsolve(self: Any, other: Any, dims: Any) -> Any:
    A = self
    if dims is not None:
        nd = A.dim()
        src = [_wrap(d, nd) for d in dims]
        A = A.movedim(src, list(range(nd - len(src), nd)))
    rest = list(A.shape[other.dim() :])
    rows = other.numel()
    cols = math.prod(rest)
    if tuple(A.shape[: other.dim()]) != tuple(other.shape) or rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
            f"but got {cols} != {math.prod(A.shape[: other.dim()])}"
        )
    x = ops._call_linalg_solve(A.reshape([rows, cols]), other.reshape([rows]), True)
    return x.reshape(rest)


def logdet(self: Any) -> Any:
    """log(det(A)): NaN where det < 0, -inf where det == 0."""
    ea = _ea()
    sign, logabs = ops._call_linalg_slogdet(self)
    return ea.where(sign < 0, ea.full_like(logabs, math.nan), logabs)


def _cond_vals(A: Any) -> Any:
    return ops._call__linalg_svd(A, False, bool(getattr(A, "requires_grad", False)), None)[1]


def linalg_cond(self: Any, p: Any) -> Any:
    """kappa_p(A) = ||A||_p ||A^-1||_p; p in (None, 2, -2) through the singular values."""
    _check_matrix(self, "linalg.cond")
    _check_floating(self, "linalg.cond")
    if p is None or p in (2, -2):
        S = _cond_vals(self)
        if S.shape[-1] == 0:
            return ops._call_zeros(list(self.shape[:-2]), self.dtype, None, self.device, None)
        hi, lo = S[..., 0], S[..., -1]
        return lo / hi if p == -2 else hi / lo
    _check_square(self, "linalg.cond")
    ea = _ea()
    return ea.linalg.matrix_norm(self, p) * ea.linalg.matrix_norm(ops._call_linalg_inv(self), p)


def linalg_cond_p_str(self: Any, p: str) -> Any:
    _check_square(self, "linalg.cond")
    _check_floating(self, "linalg.cond")
    ea = _ea()
    return ea.linalg.matrix_norm(self, p) * ea.linalg.matrix_norm(ops._call_linalg_inv(self), p)
