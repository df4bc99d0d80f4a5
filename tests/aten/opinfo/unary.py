"""OpInfo entries: unary pointwise operators and activations.

References are float64 NumPy (or ``math``) computations; where NumPy has no such
function (lgamma, digamma, erfinv, gelu), a float64 reference is written here from
``math`` alone. Every entry also gets an "extremes" sample: NaN, +-inf, +-0.0 and the
dtype's large and tiny values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import (
    ALL_DTYPES,
    ALL_NUMERIC,
    FLOAT_DTYPES,
    ErrorInput,
    OpInfo,
    SampleInput,
    elementwise_shapes,
    make_tensor,
    tensor_from,
)

# ---- float64 references NumPy does not have ---------------------------------------------


def _vectorize(f: Callable[[float], float]) -> Callable[[Any], np.ndarray]:
    def g(a: Any) -> np.ndarray:
        arr = np.asarray(a, dtype=np.float64)
        return np.array([f(float(v)) for v in arr.reshape(-1)], dtype=np.float64).reshape(arr.shape)

    return g


def lgamma_scalar(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf  # poles and -inf
    return math.lgamma(x)


def digamma_scalar(x: float) -> float:
    """psi(x): reflection for x < 0, recurrence up to x >= 30, then the asymptotic series."""
    if math.isnan(x):
        return x
    if x == 0:
        return math.copysign(math.inf, -x)
    if x == math.inf:
        return x
    if x < 0:
        if math.isinf(x) or x == math.floor(x):
            return math.nan
        return digamma_scalar(1 - x) - math.pi / math.tan(math.pi * (x - round(x)))
    acc = 0.0
    while x < 30:
        acc -= 1 / x
        x += 1
    inv2 = 1 / (x * x)
    # Bernoulli terms B2k / (2k x^2k), k = 1..6
    series = inv2 * (
        1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132 - inv2 * 691 / 32760))))
    )
    return acc + math.log(x) - 0.5 / x - series


def erfinv_scalar(y: float) -> float:
    """Bisection on erf (on erfc above 0.5, where 1 - y is exact) to float64 precision."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if y == 0:
        return y
    ay = abs(y)
    lo, hi = 0.0, 10.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # the bracket is two adjacent doubles
            return math.copysign(mid, y)
        too_big = (math.erf(mid) > ay) if ay <= 0.5 else (math.erfc(mid) < 1 - ay)
        if too_big:
            hi = mid
        else:
            lo = mid


def gelu_scalar(x: float) -> float:
    if math.isnan(x):
        return x
    return x * 0.5 * math.erfc(-x / math.sqrt(2))


ref_lgamma = _vectorize(lgamma_scalar)
ref_digamma = _vectorize(digamma_scalar)
ref_erfinv = _vectorize(erfinv_scalar)
ref_gelu = _vectorize(gelu_scalar)
ref_erf = _vectorize(lambda v: math.erf(v) if not math.isnan(v) else v)
ref_erfc = _vectorize(lambda v: math.erfc(v) if not math.isnan(v) else v)

# ---- samples ---------------------------------------------------------------------------------

# (large, tiny) per floating dtype: large stays finite, tiny is well inside the normal
# range (so that 1/tiny is finite in the same dtype; subnormals are tested in test_unary.py)
_EXTREMES = {
    ea.float16: (6.0e4, 1.0e-4),
    ea.bfloat16: (1.0e30, 1.0e-30),
    ea.float32: (1.0e30, 1.0e-30),
    ea.float64: (1.0e300, 1.0e-300),
}


def extremes(dtype: Any, big: dict[Any, float] | None = None) -> Any:
    """NaN, +-inf, +-0.0, +-large, +-tiny (floats); 0, +-1, +-50 (integers); both bools.

    `big` overrides the large value per dtype for ops whose result would overflow the
    dtype but not float64 (square, lgamma in float16)."""
    if dtype == ea.bool:
        return ea.tensor([True, False])
    if not dtype.is_floating_point:
        # +-50: exp-like ops of these stay finite in float32, as in float64
        return ea.tensor([0, 1, 50] if dtype == ea.uint8 else [-50, -1, 0, 1, 50], dtype=dtype)
    large, tiny = _EXTREMES[dtype]
    if big and dtype in big:
        large = big[dtype]
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, large, -large, tiny, -tiny, 1.0, -1.0, 0.5, -0.5]
    return tensor_from(np.array(vals, dtype=np.float64), dtype)


def unary_samples(
    low: float | None = None,
    high: float | None = None,
    *,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    big: dict[Any, float] | None = None,
) -> Callable[[OpInfo, Any], Iterator[SampleInput]]:
    """Sample generator: every elementwise shape (values in [low, high)), then the extremes."""

    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        lo, hi = low, high
        if not dtype.is_floating_point and dtype != ea.bool and low is not None and high is not None:
            lo, hi = math.floor(low), max(math.ceil(high), math.floor(low) + 2)  # integer range around it
        for shape in elementwise_shapes():
            yield SampleInput(make_tensor(shape, dtype, low=lo, high=hi), args, dict(kwargs or {}))
        yield SampleInput(extremes(dtype, big), args, dict(kwargs or {}), name="extremes")

    return gen


def _float_result(s: SampleInput) -> Any:
    """Floating inputs keep their dtype; bool and integer inputs give the default float dtype."""
    return s.input.dtype if s.input.dtype.is_floating_point else ea.get_default_dtype()


def _same_dtype(s: SampleInput) -> Any:
    return s.input.dtype


def _bool_result(s: SampleInput) -> Any:
    return ea.bool


def f64(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def float_op(
    name: str,
    ref: Callable[..., Any],
    *,
    low: float | None = None,
    high: float | None = None,
    big: dict[Any, float] | None = None,
    **kw: Any,
) -> OpInfo:
    """An integer-to-float unary op (sin, log, ...) over every dtype."""
    return OpInfo(
        name,
        getattr(ea, name),
        ALL_DTYPES,
        unary_samples(low, high, big=big),
        ref=lambda a, **k: ref(f64(a), **k),
        result_dtype=_float_result,
        kind="unary",
        **kw,
    )


# ---- reference helpers for the same-dtype ops ---------------------------------------------------


def _sign_ref(a: Any) -> Any:
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return a
    return np.where(np.isnan(a), 0, np.sign(a)) if a.dtype.kind == "f" else np.sign(a)


def _square_ref(a: Any) -> Any:
    a = np.asarray(a)
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    return a * a


def _square_dtype(s: SampleInput) -> Any:
    return ea.int64 if s.input.dtype == ea.bool else s.input.dtype


def _int_or(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Integer tensors pass through floor/ceil/round/trunc unchanged."""
    return lambda a: np.asarray(a) if np.asarray(a).dtype.kind in "iu" else f(a)


def _nan_to_num_ref(a: Any, nan: float | None = None, posinf: float | None = None, neginf: float | None = None) -> Any:
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return a
    return np.nan_to_num(a, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def _nan_to_num_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    kw = {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}
    for shape in elementwise_shapes():
        yield SampleInput(make_tensor(shape, dtype), (), dict(kw))
    yield SampleInput(extremes(dtype), (), dict(kw), name="extremes")
    yield SampleInput(extremes(dtype), (2.0, 50.0, -50.0), name="extremes positional")


def _bitwise_not_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32)), RuntimeError, r"\"bitwise_not_cpu\" not implemented for 'Float'"
    )
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float64)), RuntimeError, r"\"bitwise_not_cpu\" not implemented for 'Double'"
    )


def _signbit_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32), (), {"out": ea.empty((3,))}),
        RuntimeError,
        "signbit does not support non-boolean outputs",
    )


def _posinf_errors(name: str) -> Callable[[OpInfo], Iterator[ErrorInput]]:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        yield ErrorInput(
            SampleInput(make_tensor((3,), ea.float32), (), {"out": ea.empty((3,))}),
            RuntimeError,
            f"{name} does not support non-boolean outputs",
        )

    return gen


def _nan_to_num_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32), (), {"out": ea.empty((3,), dtype=ea.float64)}),
        RuntimeError,
        "nan_to_num: dtype of out: Double should be same as input: Float",
    )


def _float_out_errors(op: OpInfo) -> Iterator[ErrorInput]:
    # an integer out= cannot receive a float result
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.int64), (), {"out": ea.empty((3,), dtype=ea.int64)}),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    )


def _logit_ref(a: Any, eps: float | None = None) -> Any:
    a = f64(a)
    if eps is not None:
        a = np.where(np.isnan(a), a, np.clip(a, eps, 1 - eps))
    return np.log(a / (1 - a))


def _logit_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in elementwise_shapes():
        yield SampleInput(
            make_tensor(
                shape, dtype, low=0.01 if dtype.is_floating_point else 0, high=0.99 if dtype.is_floating_point else 2
            )
        )
    yield SampleInput(extremes(dtype), name="extremes")
    yield SampleInput(
        make_tensor(
            (3, 4), dtype, low=-0.5 if dtype.is_floating_point else -2, high=1.5 if dtype.is_floating_point else 3
        ),
        (0.2,),
        name="eps",
    )
    yield SampleInput(extremes(dtype), (), {"eps": 0.25}, name="extremes eps")


# ---- activations ---------------------------------------------------------------------------------

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _elu_ref(a: Any, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    a = f64(a)
    return np.where(a > 0, a * scale, alpha * scale * np.expm1(a * input_scale))


def _activation(
    name: str,
    fn: Any,
    ref: Callable[..., Any],
    samples: Callable[[OpInfo, Any], Iterator[SampleInput]],
    *,
    inplace: Any = None,
    dtypes: tuple[Any, ...] = FLOAT_DTYPES,
    kind: str = "unary",
    **kw: Any,
) -> OpInfo:
    return OpInfo(name, fn, dtypes, samples, ref=ref, inplace=inplace, result_dtype=_same_dtype, kind=kind, **kw)


def _elu_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples()(op, dtype)
    yield SampleInput(make_tensor((3, 4), dtype), (0.5, 2.0, 1.5), name="alpha scale input_scale")
    yield SampleInput(extremes(dtype), (), {"alpha": 2.0, "scale": 0.5}, name="extremes kwargs")


def _celu_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples()(op, dtype)
    yield SampleInput(make_tensor((3, 4), dtype), (2.5,), name="alpha")
    yield SampleInput(extremes(dtype), (), {"alpha": 0.5}, name="extremes alpha")


def _celu_ref(a: Any, alpha: float = 1.0) -> Any:
    return _elu_ref(a, alpha, 1.0, 1.0 / alpha)


def _celu_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32), (0.0,)),
        RuntimeError,
        "ZeroDivisionError: alpha cannot be 0 for CELU",
    )


def _gelu_ref(a: Any, approximate: str = "none") -> Any:
    a = f64(a)
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
    return ref_gelu(a)


def _gelu_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples()(op, dtype)
    for shape in ((5,), (3, 4)):
        yield SampleInput(make_tensor(shape, dtype), (), {"approximate": "tanh"}, name="tanh")
    yield SampleInput(extremes(dtype), (), {"approximate": "tanh"}, name="extremes tanh")


def _gelu_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.float32), (), {"approximate": "erf"}),
        RuntimeError,
        "approximate argument must be either none or tanh",
    )


def _softplus_ref(a: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    a = f64(a)
    with np.errstate(over="ignore"):
        return np.where(a * beta > threshold, a, np.log1p(np.exp(a * beta)) / beta)


def _softplus_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples(-30, 30)(op, dtype)
    yield SampleInput(make_tensor((3, 4), dtype, low=-10, high=10), (2.0, 5.0), name="beta threshold")
    yield SampleInput(make_tensor((3, 4), dtype), (), {"beta": 0.5}, name="beta")


def _threshold_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    args = (0.5, -2.0) if dtype.is_floating_point else (1, 7)
    for shape in elementwise_shapes():
        yield SampleInput(make_tensor(shape, dtype), args)
    yield SampleInput(extremes(dtype), args, name="extremes")


def _hardtanh_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples()(op, dtype)
    lim = (-2.5, 3.5) if dtype.is_floating_point else (-2, 3)
    yield SampleInput(make_tensor((3, 4), dtype), lim, name="limits")
    yield SampleInput(extremes(dtype), (), {"min_val": lim[0], "max_val": lim[1]}, name="extremes limits")


def _hardtanh_ref(a: Any, min_val: float = -1, max_val: float = 1) -> Any:
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        min_val, max_val = int(min_val), int(max_val)
        return np.clip(a.astype(np.int64), min_val, max_val)
    return np.clip(a, min_val, max_val)


def _hardtanh_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.uint8)),
        RuntimeError,
        "cannot do hardtanh on an unsigned type with negative limits",
    )
    yield ErrorInput(SampleInput(ea.tensor([True, False])), RuntimeError, "Bool inputs not supported for hardtanh")


def _relu_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ea.tensor([True, False])), RuntimeError, "Boolean inputs not supported for relu")


def _leaky_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples()(op, dtype)
    yield SampleInput(make_tensor((3, 4), dtype), (0.2,), name="slope")
    yield SampleInput(extremes(dtype), (), {"negative_slope": -0.5}, name="extremes slope")


def _leaky_ref(a: Any, negative_slope: float = 0.01) -> Any:
    a = f64(a)
    return np.where(a > 0, a, a * negative_slope)


def _hardsigmoid_ref(a: Any) -> Any:
    return np.clip(f64(a) + 3, 0, 6) / 6


def _silu_ref(a: Any) -> Any:
    a = f64(a)
    with np.errstate(over="ignore"):
        return a / (1 + np.exp(-a))


def _mish_ref(a: Any) -> Any:
    a = f64(a)
    with np.errstate(over="ignore"):
        return a * np.tanh(np.log1p(np.exp(a)))


def _sigmoid_ref(a: Any) -> Any:
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-a))


nn = ea.nn

OPS = [
    # ---- same dtype in and out
    OpInfo("abs", ea.abs, ALL_NUMERIC, unary_samples(), ref=np.abs, kind="unary"),
    OpInfo("absolute", ea.absolute, ALL_NUMERIC, unary_samples(), ref=np.abs, kind="unary"),
    OpInfo("sign", ea.sign, ALL_DTYPES, unary_samples(), ref=_sign_ref, kind="unary"),
    OpInfo("sgn", ea.sgn, ALL_DTYPES, unary_samples(), ref=_sign_ref, kind="unary"),
    OpInfo(
        "square",
        ea.square,
        ALL_DTYPES,
        unary_samples(big={ea.float16: 200.0, ea.bfloat16: 1e18, ea.float32: 1e18, ea.float64: 1e150}),
        ref=_square_ref,
        result_dtype=_square_dtype,
        kind="unary",
    ),
    OpInfo("floor", ea.floor, ALL_NUMERIC, unary_samples(), ref=_int_or(np.floor), kind="unary"),
    OpInfo("ceil", ea.ceil, ALL_NUMERIC, unary_samples(), ref=_int_or(np.ceil), kind="unary"),
    OpInfo("trunc", ea.trunc, ALL_NUMERIC, unary_samples(), ref=_int_or(np.trunc), kind="unary"),
    OpInfo("fix", ea.fix, ALL_NUMERIC, unary_samples(), ref=_int_or(np.trunc), kind="unary"),
    OpInfo("round", ea.round, ALL_NUMERIC, unary_samples(), ref=_int_or(np.rint), kind="unary"),
    OpInfo("frac", ea.frac, FLOAT_DTYPES, unary_samples(), ref=lambda a: a - np.trunc(a), kind="unary"),
    OpInfo(
        "nan_to_num",
        ea.nan_to_num,
        ALL_DTYPES,
        _nan_to_num_samples,
        ref=_nan_to_num_ref,
        result_dtype=_same_dtype,
        error_inputs=_nan_to_num_errors,
        kind="unary",
    ),
    OpInfo(
        "bitwise_not",
        ea.bitwise_not,
        (ea.bool, *ALL_NUMERIC[:5]),
        unary_samples(),
        ref=np.invert,
        error_inputs=_bitwise_not_errors,
        kind="unary",
    ),
    OpInfo("positive", ea.positive, ALL_NUMERIC, unary_samples(), ref=lambda a: a, supports_out=False, kind="unary"),
    # ---- bool results
    OpInfo(
        "logical_not",
        ea.logical_not,
        ALL_DTYPES,
        unary_samples(),
        ref=np.logical_not,
        result_dtype=_bool_result,
        kind="unary",
    ),
    OpInfo(
        "signbit",
        ea.signbit,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.signbit(f64(a)),
        result_dtype=_bool_result,
        error_inputs=_signbit_errors,
        kind="unary",
    ),
    OpInfo(
        "isnan",
        ea.isnan,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.isnan(f64(a)),
        result_dtype=_bool_result,
        supports_out=False,
        kind="unary",
    ),
    OpInfo(
        "isinf",
        ea.isinf,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.isinf(f64(a)),
        result_dtype=_bool_result,
        supports_out=False,
        kind="unary",
    ),
    OpInfo(
        "isfinite",
        ea.isfinite,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.isfinite(f64(a)),
        result_dtype=_bool_result,
        supports_out=False,
        kind="unary",
    ),
    OpInfo(
        "isposinf",
        ea.isposinf,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.isposinf(f64(a)),
        result_dtype=_bool_result,
        error_inputs=_posinf_errors("isposinf"),
        kind="unary",
    ),
    OpInfo(
        "isneginf",
        ea.isneginf,
        ALL_DTYPES,
        unary_samples(),
        ref=lambda a: np.isneginf(f64(a)),
        result_dtype=_bool_result,
        error_inputs=_posinf_errors("isneginf"),
        kind="unary",
    ),
    # ---- integer inputs promote to the default float dtype
    float_op("exp2", np.exp2, low=-14, high=14),
    float_op("expm1", np.expm1, low=-5, high=5),
    float_op("log", np.log, low=0.01, high=50, error_inputs=_float_out_errors),
    float_op("log2", np.log2, low=0.01, high=50),
    float_op("log10", np.log10, low=0.01, high=50),
    float_op("log1p", np.log1p, low=-0.9, high=50),
    float_op("sqrt", np.sqrt, low=0, high=50),
    float_op("rsqrt", lambda a: 1 / np.sqrt(a), low=0.01, high=50),
    float_op("reciprocal", lambda a: 1 / a),
    float_op("sin", np.sin),
    float_op("cos", np.cos),
    float_op("tan", np.tan, low=-1.5, high=1.5),
    float_op("asin", np.arcsin, low=-1, high=1),
    float_op("arcsin", np.arcsin, low=-1, high=1),
    float_op("acos", np.arccos, low=-1, high=1),
    float_op("arccos", np.arccos, low=-1, high=1),
    float_op("atan", np.arctan),
    float_op("arctan", np.arctan),
    float_op("sinh", np.sinh, low=-5, high=5),
    float_op("cosh", np.cosh, low=-5, high=5),
    float_op("tanh", np.tanh),
    float_op("asinh", np.arcsinh),
    float_op("arcsinh", np.arcsinh),
    float_op("acosh", np.arccosh, low=1, high=20),
    float_op("arccosh", np.arccosh, low=1, high=20),
    float_op("atanh", np.arctanh, low=-0.99, high=0.99),
    float_op("arctanh", np.arctanh, low=-0.99, high=0.99),
    float_op("sigmoid", _sigmoid_ref, low=-20, high=20),
    float_op("erf", ref_erf, low=-4, high=4),
    float_op("erfc", ref_erfc, low=-4, high=8),
    float_op("erfinv", ref_erfinv, low=-1, high=1),
    float_op("lgamma", ref_lgamma, low=-9, high=30, big={ea.float16: 5000.0}),
    float_op("digamma", ref_digamma, low=-9, high=30),
    OpInfo("logit", ea.logit, ALL_DTYPES, _logit_samples, ref=_logit_ref, result_dtype=_float_result, kind="unary"),
    # ---- activations
    _activation(
        "relu",
        ea.relu,
        lambda a: np.where(np.asarray(a) < 0, 0, a).astype(np.asarray(a).dtype),
        unary_samples(),
        dtypes=ALL_NUMERIC,
        supports_out=False,
        error_inputs=_relu_errors,
    ),
    # kind "": the generic expanded-input test calls ops without arguments
    _activation(
        "threshold",
        ea.threshold,
        lambda a, t, v: np.where(np.asarray(a) <= t, v, a),
        _threshold_samples,
        dtypes=ALL_NUMERIC,
        inplace=ea.threshold_,
        kind="",
    ),
    # uint8 needs explicit non-negative limits: test_unary.py; with the defaults it raises (error_inputs)
    _activation(
        "hardtanh",
        nn.hardtanh,
        _hardtanh_ref,
        _hardtanh_samples,
        dtypes=ALL_NUMERIC[1:],
        inplace=nn.hardtanh_,
        error_inputs=_hardtanh_errors,
    ),
    _activation(
        "relu6",
        nn.relu6,
        lambda a: np.clip(a, 0, 6),
        unary_samples(),
        dtypes=ALL_NUMERIC,
        inplace=nn.relu6_,
        supports_out=False,
    ),
    _activation("elu", nn.elu, _elu_ref, _elu_samples, inplace=nn.elu_),
    _activation(
        "selu",
        ea.selu,
        lambda a: _elu_ref(a, SELU_ALPHA, SELU_SCALE),
        unary_samples(),
        inplace=ea.selu_,
        supports_out=False,
    ),
    _activation(
        "celu", ea.celu, _celu_ref, _celu_samples, inplace=ea.celu_, supports_out=False, error_inputs=_celu_errors
    ),
    _activation("gelu", nn.gelu, _gelu_ref, _gelu_samples, inplace=nn.gelu_, error_inputs=_gelu_errors),
    _activation("silu", nn.silu, _silu_ref, unary_samples(-20, 20), inplace=nn.silu_),
    _activation("mish", nn.mish, _mish_ref, unary_samples(-20, 20), inplace=nn.mish_),
    _activation("softplus", nn.softplus, _softplus_ref, _softplus_samples),
    _activation("leaky_relu", nn.leaky_relu, _leaky_ref, _leaky_samples, inplace=nn.leaky_relu_),
    _activation("hardsigmoid", nn.hardsigmoid, _hardsigmoid_ref, unary_samples(), inplace=nn.hardsigmoid_),
    _activation(
        "hardswish", nn.hardswish, lambda a: f64(a) * _hardsigmoid_ref(a), unary_samples(), inplace=nn.hardswish_
    ),
]
