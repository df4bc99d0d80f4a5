"""torch.special (csrc/native/SpecialFunctions.h through SpecialOps.cpp, and the aliases of
ember/aten/native/special.py) against scipy.special in float64: one table row per function
with its points -- 0, negative, large, inf, nan, near the branch switches of each formula --
and float32 / integer inputs (promoted to the default float dtype), batched, non-contiguous
and empty inputs, out=, and the errors. Gradients: tests/autograd/test_linalg_special_grad.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from scipy import special as sp

inf, nan = np.inf, np.nan

BESSEL_X = [
    0.0,
    1e-300,
    1e-8,
    1e-5,
    1e-3,
    0.1,
    0.5,
    1.0,
    1.9,
    2.0,
    2.1,
    3.0,
    5.0,
    8.0,
    10.0,
    20.0,
    24.9,
    25.0,
    25.1,
    30.0,
    31.0,
    50.0,
    100.0,
    700.0,
    713.0,
    800.0,
    1e4,
    1e8,
    inf,
    nan,
]
BESSEL_XS = BESSEL_X + [-x for x in BESSEL_X if x > 0]
# J / Y beyond 1e4: Cephes (SciPy's) loses digits in its phase x - pi/4 (~ulp(x) / |result|);
# ember's phase keeps them, so the large points are checked against the expansion below
JY_XS = [x for x in BESSEL_XS if abs(x) <= 1e4 or not np.isfinite(x)]


def _limits(ref: Callable[..., Any], at_inf: float, odd: bool = False, even: bool = True) -> Callable[..., Any]:
    """SciPy's value, except at +-inf where Cephes computes inf / inf or cos(inf) (NaN): ember
    returns the limit there (inf for I0 / I1, 0 for J / Y)."""

    def f(x: np.ndarray) -> np.ndarray:
        r = ref(x)
        neg = (-at_inf if odd else at_inf) if even else np.nan  # Y is NaN below 0
        return np.where(np.isposinf(x), at_inf, np.where(np.isneginf(x), neg, r))

    return f


NORMAL_X = [
    -1e3,
    -40.0,
    -38.0,
    -20.0,
    -10.0,
    -5.0,
    -1.0,
    -0.1,
    0.0,
    0.1,
    1.0,
    3.0,
    5.0,
    8.0,
    10.0,
    40.0,
    inf,
    -inf,
    nan,
]
ERFCX_X = [
    -30.0,
    -26.0,
    -10.0,
    -5.0,
    -4.9,
    -1.0,
    0.0,
    1e-8,
    0.5,
    1.0,
    4.9,
    5.0,
    5.1,
    10.0,
    26.0,
    30.0,
    1e3,
    1e9,
    1e300,
    inf,
    -inf,
    nan,
]
P_X = [0.0, 1e-300, 1e-100, 1e-20, 1e-5, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-10, 1.0, -0.1, 1.1, nan]

# name, ember function, scipy reference, points, rtol (float64)
UNARY: list[tuple[str, Callable[..., Any], Callable[..., Any], list[float], float]] = [
    ("i0", ea.i0, _limits(sp.i0, inf), BESSEL_XS, 1e-13),
    ("special.i0", ea.special.i0, _limits(sp.i0, inf), BESSEL_XS, 1e-13),
    ("special.modified_bessel_i0", ea.special.modified_bessel_i0, _limits(sp.i0, inf), BESSEL_XS, 1e-13),
    ("special.i0e", ea.special.i0e, sp.i0e, BESSEL_XS, 1e-13),
    ("special.i1", ea.special.i1, _limits(sp.i1, inf, odd=True), BESSEL_XS, 1e-13),
    ("special.modified_bessel_i1", ea.special.modified_bessel_i1, _limits(sp.i1, inf, odd=True), BESSEL_XS, 1e-13),
    ("special.i1e", ea.special.i1e, sp.i1e, BESSEL_XS, 1e-13),
    ("special.modified_bessel_k0", ea.special.modified_bessel_k0, sp.k0, BESSEL_XS, 1e-12),
    ("special.modified_bessel_k1", ea.special.modified_bessel_k1, sp.k1, BESSEL_XS, 1e-12),
    ("special.scaled_modified_bessel_k0", ea.special.scaled_modified_bessel_k0, sp.k0e, BESSEL_XS, 1e-12),
    ("special.scaled_modified_bessel_k1", ea.special.scaled_modified_bessel_k1, sp.k1e, BESSEL_XS, 1e-12),
    ("special.bessel_j0", ea.special.bessel_j0, _limits(sp.j0, 0.0), JY_XS, 1e-11),
    ("special.bessel_j1", ea.special.bessel_j1, _limits(sp.j1, 0.0), JY_XS, 1e-11),
    ("special.bessel_y0", ea.special.bessel_y0, _limits(sp.y0, 0.0, even=False), JY_XS, 1e-11),
    ("special.bessel_y1", ea.special.bessel_y1, _limits(sp.y1, 0.0, even=False), JY_XS, 1e-11),
    ("special.spherical_bessel_j0", ea.special.spherical_bessel_j0, lambda x: sp.spherical_jn(0, x), BESSEL_XS, 1e-14),
    ("special.erfcx", ea.special.erfcx, sp.erfcx, ERFCX_X, 1e-13),
    ("special.ndtr", ea.special.ndtr, sp.ndtr, NORMAL_X, 1e-13),
    ("special.log_ndtr", ea.special.log_ndtr, sp.log_ndtr, NORMAL_X, 1e-13),
    ("special.ndtri", ea.special.ndtri, sp.ndtri, P_X, 1e-12),
    ("special.entr", ea.special.entr, sp.entr, [0.0, 1e-300, 0.5, 1.0, 2.0, 1e300, inf, -1.0, -inf, nan], 1e-14),
    ("sinc", ea.sinc, np.sinc, [0.0, 1e-10, 0.5, 1.0, -1.5, 2.0, 10.25, 1e6 + 0.5, nan, -3.0], 1e-12),
    ("special.sinc", ea.special.sinc, np.sinc, [0.0, 0.5, -2.5], 1e-14),
    ("special.psi", ea.special.psi, sp.psi, [0.5, 1.0, 3.0, -0.5, 10.0], 1e-12),
    ("special.digamma", ea.special.digamma, sp.digamma, [0.5, 1.0, 3.0], 1e-12),
    ("special.gammaln", ea.special.gammaln, sp.gammaln, [0.5, 1.0, 3.0, 100.0], 1e-13),
    ("special.erf", ea.special.erf, sp.erf, [-2.0, 0.0, 0.5, 3.0], 1e-14),
    ("special.erfc", ea.special.erfc, sp.erfc, [-2.0, 0.0, 0.5, 3.0, 20.0], 1e-13),
    ("special.erfinv", ea.special.erfinv, sp.erfinv, [-0.9, 0.0, 0.5, 0.999], 1e-12),
    ("special.expit", ea.special.expit, sp.expit, [-50.0, -1.0, 0.0, 2.0, 50.0], 1e-14),
    ("special.exp2", ea.special.exp2, sp.exp2, [-3.0, 0.0, 0.5, 10.0], 1e-14),
    ("special.expm1", ea.special.expm1, sp.expm1, [-3.0, 1e-10, 0.5, 10.0], 1e-14),
    ("special.log1p", ea.special.log1p, sp.log1p, [-0.5, 1e-10, 0.5, 10.0], 1e-14),
    ("special.logit", ea.special.logit, sp.logit, [0.01, 0.5, 0.9], 1e-13),
]


@pytest.mark.parametrize(("name", "fn", "ref", "points", "rtol"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_scipy_float64(
    name: str, fn: Callable[..., Any], ref: Callable[..., Any], points: list[float], rtol: float
) -> None:
    x = np.array(points, dtype=np.float64)
    with np.errstate(all="ignore"):
        expected = ref(x)
    got = fn(ea.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-15 if "ndtri" in name else 1e-300, equal_nan=True)


@pytest.mark.parametrize(("name", "fn", "ref", "points", "rtol"), UNARY[:22], ids=[u[0] for u in UNARY[:22]])
def test_unary_float32_integers_layouts_and_empty(
    name: str, fn: Callable[..., Any], ref: Callable[..., Any], points: list[float], rtol: float
) -> None:
    finite = [p for p in points if np.isfinite(p) and abs(p) < 50]
    x = np.array(finite, dtype=np.float32)
    with np.errstate(all="ignore"):
        expected = ref(x.astype(np.float64))
    got = fn(ea.from_numpy(x.copy()))
    assert got.dtype == ea.float32
    fits = ~(np.abs(expected) > 3.4e38)  # beyond float32's range the float32 result is inf
    np.testing.assert_allclose(got.numpy()[fits], expected[fits], rtol=2e-6, atol=1e-6, equal_nan=True)
    # integers compute in the default float dtype
    ints = ea.tensor([0, 1, 2, 3])
    r = fn(ints)
    assert r.dtype == ea.float32
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(r.numpy(), ref(np.arange(4.0)), rtol=2e-6, atol=1e-6, equal_nan=True)
    # batched, transposed input; empty input
    b = np.abs(np.random.default_rng(0).standard_normal((3, 4))) * 0.9 + 0.05
    t = ea.from_numpy(b.T.copy()).mT
    assert not t.is_contiguous()
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fn(t).numpy(), ref(b), rtol=rtol * 10, equal_nan=True)
    assert tuple(fn(ea.zeros(0, 3, dtype=ea.float64)).shape) == (0, 3)


def test_bessel_j_y_at_large_x_follow_hankels_expansion() -> None:
    # two terms of DLMF 10.17.3 are exact to ~1e-24 at x = 1e8; the phase is reduced in long double
    x = np.array([1e8, 3.5e9])
    xl = x.astype(np.longdouble)
    for nu, fj, fy in (
        (0, ea.special.bessel_j0, ea.special.bessel_y0),
        (1, ea.special.bessel_j1, ea.special.bessel_y1),
    ):
        mu = 4.0 * nu * nu
        w = xl - (nu / 2 + 0.25) * np.pi
        p, q = 1 - (mu - 1) * (mu - 9) / (128 * xl * xl), (mu - 1) / (8 * xl)
        amp = np.sqrt(2 / (np.pi * xl))
        j = (amp * (p * np.cos(w) - q * np.sin(w))).astype(np.float64)
        y = (amp * (p * np.sin(w) + q * np.cos(w))).astype(np.float64)
        np.testing.assert_allclose(fj(ea.from_numpy(x.copy())).numpy(), j, rtol=1e-6, atol=1e-9 * float(amp.max()))
        np.testing.assert_allclose(fy(ea.from_numpy(x.copy())).numpy(), y, rtol=1e-6, atol=1e-9 * float(amp.max()))


def test_out_and_inplace_variants() -> None:
    x = ea.tensor([0.5, 1.0, 2.0], dtype=ea.float64)
    out = ea.empty(3, dtype=ea.float64)
    ea.special.i0e(x, out=out)
    np.testing.assert_allclose(out.numpy(), sp.i0e([0.5, 1.0, 2.0]), rtol=1e-14)
    y = x.clone()
    y.i0_()
    np.testing.assert_allclose(y.numpy(), sp.i0([0.5, 1.0, 2.0]), rtol=1e-14)
    y = x.clone()
    y.sinc_()
    np.testing.assert_allclose(y.numpy(), np.sinc([0.5, 1.0, 2.0]), atol=1e-15)
    with pytest.raises(RuntimeError):
        ea.special.ndtr(x, out=ea.empty(3, dtype=ea.int64))  # a float result cannot go to an integer out


POLY_X = [-2.0, -1.0, -0.7, -0.3, 0.0, 0.25, 0.6, 1.0, 1.5, 3.0]
POLY_N = [-1, 0, 1, 2, 3, 5, 7, 10, 20]
BINARY: list[tuple[str, Callable[..., Any], Callable[..., Any], list[float], list[float], float]] = [
    ("special.chebyshev_polynomial_t", ea.special.chebyshev_polynomial_t, sp.eval_chebyt, POLY_X, POLY_N, 1e-11),
    ("special.chebyshev_polynomial_u", ea.special.chebyshev_polynomial_u, sp.eval_chebyu, POLY_X, POLY_N, 1e-11),
    ("special.chebyshev_polynomial_v", ea.special.chebyshev_polynomial_v, None, POLY_X, POLY_N, 1e-11),
    ("special.chebyshev_polynomial_w", ea.special.chebyshev_polynomial_w, None, POLY_X, POLY_N, 1e-11),
    (
        "special.shifted_chebyshev_polynomial_t",
        ea.special.shifted_chebyshev_polynomial_t,
        sp.eval_sh_chebyt,
        POLY_X,
        POLY_N,
        1e-10,
    ),
    (
        "special.shifted_chebyshev_polynomial_u",
        ea.special.shifted_chebyshev_polynomial_u,
        sp.eval_sh_chebyu,
        POLY_X,
        POLY_N,
        1e-10,
    ),
    ("special.hermite_polynomial_h", ea.special.hermite_polynomial_h, sp.eval_hermite, POLY_X, POLY_N, 1e-12),
    ("special.hermite_polynomial_he", ea.special.hermite_polynomial_he, sp.eval_hermitenorm, POLY_X, POLY_N, 1e-12),
    ("special.laguerre_polynomial_l", ea.special.laguerre_polynomial_l, sp.eval_laguerre, POLY_X, POLY_N, 1e-11),
    ("special.legendre_polynomial_p", ea.special.legendre_polynomial_p, sp.eval_legendre, POLY_X, POLY_N, 1e-11),
]


def _cheb_v(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """V_n(x) = U_n(x) - U_{n-1}(x) (third kind)."""
    return sp.eval_chebyu(n, x) - np.where(n > 0, sp.eval_chebyu(np.maximum(n - 1, 0), x), 0)


def _cheb_w(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """W_n(x) = U_n(x) + U_{n-1}(x) (fourth kind)."""
    return sp.eval_chebyu(n, x) + np.where(n > 0, sp.eval_chebyu(np.maximum(n - 1, 0), x), 0)


@pytest.mark.parametrize(("name", "fn", "ref", "xs", "ns", "rtol"), BINARY, ids=[b[0] for b in BINARY])
def test_polynomials_match_scipy(
    name: str, fn: Callable[..., Any], ref: Any, xs: list[float], ns: list[float], rtol: float
) -> None:
    x, n = np.meshgrid(np.array(xs), np.array(ns, dtype=np.float64))
    if ref is None:
        ref = _cheb_v if name.endswith("_v") else _cheb_w
    expected = np.where(n < 0, 0.0, ref(np.maximum(n, 0).astype(np.int64), x))
    got = fn(ea.from_numpy(x.copy()), ea.from_numpy(n.copy())).numpy()
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-9 * np.abs(expected).max())
    # a Python number degree, an integer tensor x (promoted), nan
    assert fn(ea.tensor([0.5], dtype=ea.float64), 2).dtype == ea.float64
    assert fn(ea.tensor([1, 2]), ea.tensor([2, 3])).dtype == ea.float32
    assert np.isnan(fn(ea.tensor([nan], dtype=ea.float64), 2).item())


def test_zeta_gammainc_xlog1py_match_scipy() -> None:
    s = np.array([1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 0.5, 2.0, 2.0, 3.0, nan])
    q = np.array([1.0, 2.0, 1.0, 0.5, 20.0, 1e-3, 1.0, 1.0, -1.0, -1.5, 1e6, 1.0])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            ea.special.zeta(ea.from_numpy(s), ea.from_numpy(q)).numpy(), sp.zeta(s, q), rtol=1e-12, equal_nan=True
        )
    a = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 0.0, 0.0, 3.0, -1.0, 1.0, 2.0])
    x = np.array([0.1, 1.0, 3.0, 5.0, 20.0, 90.0, 1.0, 0.0, 0.0, 1.0, inf, nan])
    for fn, ref in (
        (ea.special.gammainc, sp.gammainc),
        (ea.special.gammaincc, sp.gammaincc),
        (ea.igamma, sp.gammainc),
        (ea.igammac, sp.gammaincc),
    ):
        np.testing.assert_allclose(
            fn(ea.from_numpy(a), ea.from_numpy(x)).numpy(), ref(a, x), rtol=1e-12, atol=1e-300, equal_nan=True
        )
    u = np.array([0.0, 0.0, 1.0, 2.0, -3.0, 1.0])
    v = np.array([-1.0, 2.0, -0.5, 1e-10, 3.0, nan])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            ea.special.xlog1py(ea.from_numpy(u), ea.from_numpy(v)).numpy(), sp.xlog1py(u, v), rtol=1e-14, equal_nan=True
        )
    np.testing.assert_allclose(
        ea.special.xlogy(ea.tensor([0.0, 2.0]), ea.tensor([0.0, 3.0])).numpy(), [0.0, 2 * np.log(3.0)], rtol=1e-6
    )
    # broadcasting and a scalar operand
    out = ea.special.zeta(ea.tensor([[2.0], [3.0]], dtype=ea.float64), ea.tensor([1.0, 2.0], dtype=ea.float64))
    np.testing.assert_allclose(out.numpy(), sp.zeta([[2.0], [3.0]], [1.0, 2.0]), rtol=1e-13)
    np.testing.assert_allclose(
        ea.special.zeta(ea.tensor([2.0], dtype=ea.float64), 1.0).numpy(), [np.pi**2 / 6], rtol=1e-13
    )


def test_polygamma_multigammaln_and_errors() -> None:
    x = np.array([0.25, 0.5, 1.0, 3.0, 10.0, -0.5, 1e3])
    for n in range(5):
        got = ea.polygamma(n, ea.from_numpy(x.copy())).numpy()
        np.testing.assert_allclose(got, sp.polygamma(n, x), rtol=1e-11)
        np.testing.assert_allclose(
            ea.special.polygamma(n, ea.from_numpy(x.copy())).numpy(), sp.polygamma(n, x), rtol=1e-11
        )
    with pytest.raises(RuntimeError, match="polygamma\\(n, x\\) does not support negative n"):
        ea.polygamma(-1, ea.tensor([1.0]))
    y = np.array([1.5, 2.0, 5.0])
    for p in (1, 2, 3):
        np.testing.assert_allclose(
            ea.special.multigammaln(ea.from_numpy(y.copy()), p).numpy(),
            sp.multigammaln(y[:, None], p)[:, 0] if False else [sp.multigammaln(v, p) for v in y],
            rtol=1e-12,
        )
        np.testing.assert_allclose(
            ea.mvlgamma(ea.from_numpy(y.copy()), p).numpy(), [sp.multigammaln(v, p) for v in y], rtol=1e-12
        )
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        ea.mvlgamma(ea.tensor([0.5]), 3)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ea.special.multigammaln(ea.tensor([2.0]), 0)


def test_softmax_family_and_round_aliases() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4))
    t = ea.from_numpy(x.copy())
    np.testing.assert_allclose(ea.special.softmax(t, 1).numpy(), sp.softmax(x, axis=1), rtol=1e-12)
    np.testing.assert_allclose(ea.special.log_softmax(t, 0).numpy(), sp.log_softmax(x, axis=0), rtol=1e-12)
    np.testing.assert_allclose(ea.special.logsumexp(t, [1]).numpy(), sp.logsumexp(x, axis=1), rtol=1e-12)
    assert ea.special.softmax(t, 1, dtype=ea.float32).dtype == ea.float32
    np.testing.assert_allclose(ea.special.round(ea.tensor([1.2345, 2.5]), decimals=2).numpy(), [1.23, 2.5], rtol=1e-6)
    np.testing.assert_allclose(ea.special.round(ea.tensor([1.5, 2.5])).numpy(), [2.0, 2.0])


def test_unsupported_dtype_is_refused() -> None:
    with pytest.raises(RuntimeError):
        ea.special.bessel_j0(ea.tensor([True, False]).to(ea.bool), out=ea.empty(2, dtype=ea.bool))
