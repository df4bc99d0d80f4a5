"""gradcheck + gradgradcheck (float64) of the decompositions of LinalgDecompositions.cpp, the
composites over them (eigvalsh, lu, lu_solve, solve_triangular, pinv, lstsq,
householder_product, ...) and torch.special's differentiable functions.

Results unique only up to a gauge (eigenvectors' signs) are compared through functions
that do not see it (V diag(w) V^T, V * V); inputs of the symmetric solvers are
symmetrised first, as PyTorch's own gradchecks do. ``CASES`` is also read by
test_derivative_coverage.py: each derivatives.yaml entry of these ops is reached here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import pytest
from ember.autograd import gradcheck, gradgradcheck
from helpers import rand


def _m(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> Any:
    return rand(*shape, requires_grad=True, seed=seed, low=low, high=high)


def _sym(a: Any) -> Any:
    return a + a.mT


def _spd(a: Any) -> Any:
    n = a.shape[-1]
    return a.matmul(a.mT) + n * ea.eye(n, dtype=a.dtype)


def _well_conditioned(a: Any) -> Any:
    n = a.shape[-1]
    return a + 3 * ea.eye(n, dtype=a.dtype)


def _eigh_gauge_free(a: Any) -> Any:
    w, v = ea.linalg.eigh(_sym(a))
    return w, v * v


def _triangular(upper: bool, unit: bool, left: bool) -> Callable[..., Any]:
    def f(a: Any, b: Any) -> Any:
        A = (a.triu() if upper else a.tril()) + 3 * ea.eye(a.shape[-1], dtype=a.dtype)
        return ea.linalg.solve_triangular(A, b, upper=upper, left=left, unitriangular=unit)

    return f


CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("_linalg_eigh", _eigh_gauge_free, lambda: (_m(3, 3),)),
    ("_linalg_eigh", lambda a: ea.linalg.eigvalsh(_sym(a), UPLO="U"), lambda: (_m(2, 4, 4, seed=1),)),
    (
        "_linalg_eigh",
        lambda a: (lambda wv: wv[1].matmul(wv[0].diag_embed()).matmul(wv[1].mT))(ea.linalg.eigh(_sym(a))),
        lambda: (_m(4, 4, seed=2),),
    ),
    ("linalg_lu_factor_ex", lambda a: ea.linalg.lu_factor_ex(_well_conditioned(a)).LU, lambda: (_m(2, 3, 3),)),
    ("lu_unpack", lambda a: ea.linalg.lu(a)[1:], lambda: (_m(4, 4, seed=3),)),
    ("lu_unpack", lambda a: ea.linalg.lu(a)[1:], lambda: (_m(5, 3, seed=4),)),
    ("lu_unpack", lambda a: ea.linalg.lu(a)[1:], lambda: (_m(3, 5, seed=5),)),
    (
        "linalg_solve_triangular",
        _triangular(upper=True, unit=False, left=True),
        lambda: (_m(3, 3), _m(3, 2, seed=1)),
    ),
    (
        "linalg_solve_triangular",
        _triangular(upper=False, unit=True, left=False),
        lambda: (_m(2, 3, 3, seed=2), _m(4, 3, seed=3)),
    ),
    (
        "linalg_cholesky_ex",
        lambda a: ea.linalg.cholesky_ex(_spd(a)).L,
        lambda: (_m(3, 3),),
    ),
    (
        "linalg_cholesky_ex",
        lambda a: ea.linalg.cholesky_ex(_spd(a), upper=True).L,
        lambda: (_m(2, 3, 3, seed=1),),
    ),
    ("i0", ea.i0, lambda: (_m(5, low=-3.0, high=3.0),)),
    ("special_i0e", ea.special.i0e, lambda: (_m(5, low=-3.0, high=3.0),)),
    ("special_i1", ea.special.i1, lambda: (_m(5, low=-3.0, high=3.0),)),
    ("special_i1e", ea.special.i1e, lambda: (_m(5, low=-3.0, high=3.0),)),
    ("special_ndtr", ea.special.ndtr, lambda: (_m(5, low=-3.0, high=3.0),)),
    ("special_ndtri", ea.special.ndtri, lambda: (_m(5, low=0.05, high=0.95),)),
    ("special_log_ndtr", ea.special.log_ndtr, lambda: (_m(5, low=-6.0, high=3.0),)),
    ("special_erfcx", ea.special.erfcx, lambda: (_m(5, low=-2.0, high=8.0),)),
    ("special_entr", ea.special.entr, lambda: (_m(5, low=0.1, high=3.0),)),
    ("sinc", ea.sinc, lambda: (_m(5, low=-2.0, high=2.0),)),
    ("special_xlog1py", ea.special.xlog1py, lambda: (_m(4), _m(4, seed=1, low=-0.5, high=2.0))),
    (
        "special_zeta",
        lambda q: ea.special.zeta(ea.tensor([2.0, 3.5, 5.0], dtype=ea.float64), q),
        lambda: (_m(3, low=0.5, high=3.0),),
    ),
    ("polygamma", lambda x: ea.polygamma(1, x), lambda: (_m(4, low=0.5, high=3.0),)),
    ("polygamma", lambda x: ea.special.polygamma(2, x), lambda: (_m(4, low=0.5, high=3.0),)),
    (
        "igamma",
        lambda x: ea.igamma(ea.tensor([0.5, 2.0, 4.0], dtype=ea.float64), x),
        lambda: (_m(3, low=0.5, high=3.0),),
    ),
    (
        "igammac",
        lambda x: ea.special.gammaincc(ea.tensor([0.5, 2.0, 4.0], dtype=ea.float64), x),
        lambda: (_m(3, low=0.5, high=3.0),),
    ),
]

# composites: differentiated through the kernels above (and svd / qr / solve)
COMPOSITES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    (
        "linalg.lu_solve",
        lambda a, b: ea.linalg.lu_solve(*ea.linalg.lu_factor(_well_conditioned(a)), b),
        lambda: (_m(3, 3), _m(3, 2, seed=1)),
    ),
    (
        "linalg.lu_solve adjoint right",
        lambda a, b: ea.linalg.lu_solve(*ea.linalg.lu_factor(_well_conditioned(a)), b, left=False, adjoint=True),
        lambda: (_m(3, 3), _m(2, 3, seed=1)),
    ),
    (
        "linalg.solve_ex",
        lambda a, b: ea.linalg.solve_ex(_well_conditioned(a), b).result,
        lambda: (_m(3, 3), _m(3, seed=1)),
    ),
    ("linalg.inv_ex", lambda a: ea.linalg.inv_ex(_well_conditioned(a)).inverse, lambda: (_m(2, 3, 3),)),
    (
        "cholesky_solve",
        lambda a, b: ea.cholesky_solve(b, ea.linalg.cholesky(_spd(a))),
        lambda: (_m(3, 3), _m(3, 2, seed=1)),
    ),
    ("cholesky_inverse", lambda a: ea.cholesky_inverse(ea.linalg.cholesky(_spd(a)), upper=False), lambda: (_m(3, 3),)),
    (
        "triangular_solve",
        lambda a, b: ea.triangular_solve(b, _well_conditioned(a).triu(), transpose=True)[0],
        lambda: (_m(3, 3), _m(3, 2, seed=1)),
    ),
    ("linalg.pinv", lambda a: ea.linalg.pinv(a), lambda: (_m(4, 3),)),
    ("linalg.pinv hermitian", lambda a: ea.linalg.pinv(_spd(a), hermitian=True), lambda: (_m(3, 3),)),
    (
        "linalg.lstsq gelsd",
        lambda a, b: ea.linalg.lstsq(a, b, driver="gelsd").solution,
        lambda: (_m(5, 3), _m(5, 2, seed=1)),
    ),
    (
        "linalg.lstsq gels",
        lambda a, b: ea.linalg.lstsq(a, b, driver="gels").solution,
        lambda: (_m(5, 3), _m(5, 2, seed=1)),
    ),
    ("linalg.householder_product", ea.linalg.householder_product, lambda: (_m(4, 3), _m(3, seed=1))),
    ("linalg.matrix_power", lambda a: ea.linalg.matrix_power(a, 3), lambda: (_m(3, 3),)),
    ("linalg.matrix_power -2", lambda a: ea.linalg.matrix_power(_well_conditioned(a), -2), lambda: (_m(3, 3),)),
    (
        "linalg.multi_dot",
        lambda a, b, c: ea.linalg.multi_dot([a, b, c]),
        lambda: (_m(2, 3), _m(3, 4, seed=1), _m(4, seed=2)),
    ),
    ("linalg.vander", lambda x: ea.linalg.vander(x, N=4), lambda: (_m(3),)),
    ("linalg.vecdot", lambda x, y: ea.linalg.vecdot(x, y, dim=0), lambda: (_m(3, 2), _m(3, 2, seed=1))),
    (
        "linalg.tensorinv",
        lambda a: ea.linalg.tensorinv(_well_conditioned(a).reshape(2, 2, 4), ind=2),
        lambda: (_m(4, 4),),
    ),
    (
        "linalg.tensorsolve",
        lambda a, b: ea.linalg.tensorsolve(_well_conditioned(a).reshape(2, 2, 4), b),
        lambda: (_m(4, 4), _m(2, 2, seed=1)),
    ),
    ("logdet", lambda a: ea.logdet(_spd(a)), lambda: (_m(3, 3),)),
    ("linalg.cond", lambda a: ea.linalg.cond(a), lambda: (_m(3, 3),)),
    ("special.multigammaln", lambda x: ea.special.multigammaln(x, 3), lambda: (_m(3, low=2.0, high=4.0),)),
]


@pytest.mark.parametrize(("name", "fn", "make"), CASES + COMPOSITES, ids=[c[0] for c in CASES + COMPOSITES])
def test_gradcheck_and_gradgradcheck(name: str, fn: Callable[..., Any], make: Callable[[], tuple[Any, ...]]) -> None:
    inputs = make()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_geqrf_has_no_derivative() -> None:
    a = _m(3, 2)
    out = ea.geqrf(a)
    with pytest.raises(RuntimeError, match="geqrf"):
        out.a.sum().backward()


def test_zeta_wrt_its_exponent_is_not_implemented() -> None:
    s = _m(3, low=2.0, high=3.0)
    out = ea.special.zeta(s, ea.tensor([1.0, 2.0, 3.0], dtype=ea.float64))
    with pytest.raises(RuntimeError, match="zeta"):
        out.sum().backward()


@pytest.mark.parametrize(
    "fn",
    [ea.special.bessel_j0, ea.special.bessel_y1, ea.special.modified_bessel_k0, ea.special.spherical_bessel_j0],
)
def test_functions_pytorch_leaves_undifferentiated_record_nothing(fn: Callable[..., Any]) -> None:
    x = _m(3, low=0.5, high=2.0)
    assert not fn(x).requires_grad
    assert not ea.special.chebyshev_polynomial_t(x, 3).requires_grad
