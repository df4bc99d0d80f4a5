"""OpInfo entries: torch.special's unary functions (csrc/native/SpecialFunctions.h).

References are scipy.special's float64 functions (imported when a reference is first
called, so that the layers whose tests only read this table's samples need no SciPy).
Each entry's samples are the elementwise shapes over the function's natural domain and an
"edges" sample of its special points (0, the switches between series and asymptotic
forms, large values, inf, nan). At +-inf ember returns the limits (inf for I0 / I1, 0 for
J / Y) where Cephes computes inf / inf or cos(inf); the references say so too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import ALL_DTYPES, OpInfo, SampleInput, elementwise_shapes, make_tensor


def _scipy(name: str, at_inf: float | None = None, odd: bool = False) -> Callable[..., Any]:
    def ref(a: Any) -> np.ndarray:
        from scipy import special as sp

        x = np.asarray(a, dtype=np.float64)
        with np.errstate(all="ignore"):
            r = np.asarray(getattr(sp, name)(x), dtype=np.float64)
        if at_inf is not None:
            r = np.where(np.isposinf(x), at_inf, np.where(np.isneginf(x), -at_inf if odd else at_inf, r))
        return r

    return ref


def _float_result(s: SampleInput) -> Any:
    return s.input.dtype if s.input.dtype.is_floating_point else ea.get_default_dtype()


def _samples(low: float, high: float, edges: list[float]) -> Callable[[OpInfo, Any], Iterator[SampleInput]]:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        lo, hi = (
            (low, high) if dtype.is_floating_point or dtype == ea.bool else (int(low), max(int(high), int(low) + 2))
        )
        for shape in elementwise_shapes():
            yield SampleInput(make_tensor(shape, dtype, low=lo, high=hi))
        if dtype.is_floating_point:
            # the half types: only the points whose results stay in their range
            def fits(v: float) -> bool:
                r = float(op.ref(np.array([v]))[0]) if op.ref is not None else 0.0
                return not np.isfinite(v) or not np.isfinite(r) or (abs(r) < 6e4 and (v == 0 or abs(v) >= 1e-3))

            e = [v for v in edges if dtype in (ea.float32, ea.float64) or fits(v)]
            yield SampleInput(ea.tensor(e, dtype=ea.float64).to(dtype), name="edges")

    return gen


_INF, _NAN = float("inf"), float("nan")
_BESSEL_EDGES = [0.0, 1e-5, 0.5, 2.0, 2.5, 24.5, 25.5, 29.0, 31.0, 80.0, _INF, -_INF, _NAN]
_POSITIVE_EDGES = [1e-5, 0.5, 2.0, 2.5, 24.5, 25.5, 29.0, 31.0, 80.0, _INF, _NAN]
_NORMAL_EDGES = [-40.0, -10.0, -1.0, 0.0, 1.0, 5.0, 10.0, _INF, -_INF, _NAN]


def _special_op(
    name: str,
    fn: Any,
    ref: Callable[..., Any],
    low: float,
    high: float,
    edges: list[float],
    *,
    autograd: bool,
    inplace: bool = False,
    **kw: Any,
) -> OpInfo:
    return OpInfo(
        name,
        fn,
        ALL_DTYPES,
        _samples(low, high, edges),
        ref=ref,
        result_dtype=_float_result,
        supports_inplace=inplace,
        supports_autograd=autograd,
        kind="unary",
        # the half types round a float64 result once; float32 rounds its input first
        tol_overrides={ea.float32: (1e-5, 2e-6)},
        **kw,
    )


OPS: list[OpInfo] = [
    _special_op("i0", ea.i0, _scipy("i0", _INF), -8, 8, _BESSEL_EDGES, autograd=True, inplace=True),
    _special_op("special.i0e", ea.special.i0e, _scipy("i0e"), -8, 8, _BESSEL_EDGES, autograd=True),
    _special_op("special.i1", ea.special.i1, _scipy("i1", _INF, odd=True), -8, 8, _BESSEL_EDGES, autograd=True),
    _special_op("special.i1e", ea.special.i1e, _scipy("i1e"), -8, 8, _BESSEL_EDGES, autograd=True),
    _special_op("special.ndtr", ea.special.ndtr, _scipy("ndtr"), -5, 5, _NORMAL_EDGES, autograd=True),
    _special_op("special.log_ndtr", ea.special.log_ndtr, _scipy("log_ndtr"), -8, 5, _NORMAL_EDGES, autograd=True),
    _special_op(
        "special.erfcx",
        ea.special.erfcx,
        _scipy("erfcx"),
        -3,
        8,
        [-5.0, -1.0, 0.0, 1.0, 5.0, 10.0, 30.0, _INF, -_INF, _NAN],
        autograd=True,
    ),
    _special_op(
        "special.ndtri",
        ea.special.ndtri,
        _scipy("ndtri"),
        0.02,
        0.98,
        [0.0, 1e-30, 0.5, 1.0, 2.0, _NAN],
        autograd=True,
        atol=1e-12,
    ),
    _special_op("special.entr", ea.special.entr, _scipy("entr"), 0.05, 4, [0.0, 1.0, -1.0, _INF, _NAN], autograd=True),
    _special_op(
        "sinc",
        ea.sinc,
        lambda a: np.sinc(np.asarray(a, dtype=np.float64)),
        -3,
        3,
        [0.0, 0.5, -1.0, 7.5, _NAN],
        autograd=True,
        inplace=True,
        atol=1e-12,
    ),
    _special_op(
        "special.bessel_j0", ea.special.bessel_j0, _scipy("j0", 0.0), -30, 30, _BESSEL_EDGES, autograd=False, atol=1e-12
    ),
    _special_op(
        "special.bessel_j1", ea.special.bessel_j1, _scipy("j1", 0.0), -30, 30, _BESSEL_EDGES, autograd=False, atol=1e-12
    ),
    _special_op(
        "special.bessel_y0",
        ea.special.bessel_y0,
        _scipy("y0", 0.0),
        0.1,
        30,
        _POSITIVE_EDGES,
        autograd=False,
        atol=1e-12,
    ),
    _special_op(
        "special.bessel_y1",
        ea.special.bessel_y1,
        _scipy("y1", 0.0),
        0.1,
        30,
        _POSITIVE_EDGES,
        autograd=False,
        atol=1e-12,
    ),
    _special_op(
        "special.modified_bessel_k0",
        ea.special.modified_bessel_k0,
        _scipy("k0"),
        0.1,
        10,
        _POSITIVE_EDGES,
        autograd=False,
    ),
    _special_op(
        "special.modified_bessel_k1",
        ea.special.modified_bessel_k1,
        _scipy("k1"),
        0.1,
        10,
        _POSITIVE_EDGES,
        autograd=False,
    ),
    _special_op(
        "special.scaled_modified_bessel_k0",
        ea.special.scaled_modified_bessel_k0,
        _scipy("k0e"),
        0.1,
        10,
        _POSITIVE_EDGES,
        autograd=False,
    ),
    _special_op(
        "special.scaled_modified_bessel_k1",
        ea.special.scaled_modified_bessel_k1,
        _scipy("k1e"),
        0.1,
        10,
        _POSITIVE_EDGES,
        autograd=False,
    ),
]
