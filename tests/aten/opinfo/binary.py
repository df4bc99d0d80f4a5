"""OpInfo entries: binary pointwise operators, comparisons, logical and bitwise
operators, and the ternary ones (lerp, addcmul, addcdiv, clamp, where).

Samples cover broadcasting (``broadcast_pairs``), Python numbers on the right (int,
float, bool: weak in type promotion), 0-dim tensors, and special values (inf, NaN,
signed zeros) where the operator gives them a meaning. Python numbers on the left and
the operator dunders are tested in ``tests/aten/test_binary.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import (
    ALL_DTYPES,
    ALL_NUMERIC,
    FLOAT_DTYPES,
    INT_DTYPES,
    ErrorInput,
    OpInfo,
    SampleInput,
    broadcast_pairs,
    expected_result_type,
    make_tensor,
    tensor_from,
)

INTEGRAL_AND_BOOL = (ea.bool, *INT_DTYPES)

# ---- samples -----------------------------------------------------------------------------


def _special(dtype: Any) -> Any:
    """inf, -inf, NaN, +-0 and ordinary values, pairwise against the same set (for floats)."""
    vals = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, -2.0])
    a, b = np.meshgrid(vals, vals)
    return tensor_from(a.ravel(), dtype), tensor_from(b.ravel(), dtype)


# PyTorch's operators whose `other` must be a Tensor (no .Scalar overload: torch.maximum(t, 2) is a
# TypeError; native_functions.yaml's python_numbers). Their tables have no Python-number samples;
# test_binary.py checks the refusal.
TENSOR_ONLY = frozenset(
    {
        "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
        "logical_xor", "heaviside", "gcd", "lcm", "nextafter", "logaddexp", "logaddexp2", "ldexp",
    }
)  # fmt: skip


def binary_samples(
    op: OpInfo,
    dtype: Any,
    *,
    rhs: dict[str, Any] | None = None,
    lhs: dict[str, Any] | None = None,
    scalars: tuple[Any, ...] = (2, 2.5, True),
    special: bool = False,
) -> Iterator[SampleInput]:
    """Broadcast pairs of `dtype`, Python numbers on the right, and special values."""
    lhs = lhs or {}
    rhs = rhs or {}
    for sa, sb, bcast in broadcast_pairs():
        yield SampleInput(
            make_tensor(sa, dtype, **lhs), (make_tensor(sb, dtype, **rhs),), broadcasts_input=bcast, name=f"{sa}x{sb}"
        )
    for s in scalars if op.name not in TENSOR_ONLY else ():
        yield SampleInput(make_tensor((3, 4), dtype, **lhs), (s,), name=f"scalar {s!r}")
    # a 0-dim tensor of another dtype is weak too: the dimensioned operand's dtype wins
    # within its category
    # (its value is one `dtype` holds exactly: the op casts it to `dtype` first)
    other = ea.float64 if dtype.is_floating_point else ea.int64
    yield SampleInput(
        make_tensor((4,), dtype, **lhs), (make_tensor((), dtype, **rhs).to(other),), name="0-dim other dtype"
    )
    if special and dtype.is_floating_point:
        a, b = _special(dtype)
        yield SampleInput(a, (b,), name="special values")


def _int_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    """Integer-only operators: no float Python numbers (those are error inputs)."""
    return binary_samples(op, dtype, scalars=(2, True))


def _wide(x: Any) -> Any:
    """int64 / float64 NumPy values, so that references do not overflow or refuse
    out-of-range Python numbers (the table wraps integer results afterwards)."""
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return a


def pow_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    base = {"low": 0.5, "high": 2.5} if dtype.is_floating_point else {"low": -3, "high": 4}
    exp = {"low": -2.0, "high": 3.0} if dtype.is_floating_point else {"low": 0, "high": 4}
    scalars: tuple[Any, ...] = (0, 1, 2, 3, True, False)
    if dtype.is_floating_point:
        scalars += (0.5, -0.5, -1, -2, 2.5, -1.5)  # the fast paths and the general one
    yield from binary_samples(op, dtype, lhs=base, rhs=exp, scalars=scalars)
    if dtype.is_floating_point:
        vals = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, -2.0, 0.5])
        exps = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, 2.0, -1.0, 3.0, 0.5, -2.0])
        a, b = np.meshgrid(vals, exps)
        yield SampleInput(tensor_from(a.ravel(), dtype), (tensor_from(b.ravel(), dtype),), name="special values")
    elif dtype != ea.uint8:
        # negative tensor exponents (not Python numbers) are allowed for integers: 1/x truncated
        b = tensor_from(np.array([1, -1, 2, -2, 0, 1, -1, 3]), dtype)
        e = tensor_from(np.array([-1, -3, -1, -2, 2, -5, -2, 2]), dtype)
        yield SampleInput(b, (e,), name="negative integer exponents")


def pow_ref(a: Any, b: Any) -> Any:
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.dtype.kind in "biu" and b_arr.dtype.kind in "biu":
        # PyTorch's integer power: a negative exponent truncates 1 / a**|b|
        a64, b64 = np.broadcast_arrays(a_arr.astype(np.int64), b_arr.astype(np.int64))
        out = np.empty(a64.shape, dtype=np.int64)
        for idx in np.ndindex(a64.shape):
            x, e = int(a64[idx]), int(b64[idx])
            out[idx] = x**e if e >= 0 else (1 if x == 1 else ((-1) ** (-e) if x == -1 else 0))
        return out
    return np.power(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


def _div_scalars(dtype: Any) -> tuple[Any, ...]:
    """Nonzero Python divisors (a negative one only where the dtype can hold it)."""
    return (2, 2.5, 3) if dtype == ea.uint8 else (2, 2.5, -3)


def _float_result(s: SampleInput, *, operands: Callable[[SampleInput], tuple[Any, ...]] | None = None) -> Any:
    ops = operands(s) if operands else (s.input, *s.args)
    t = expected_result_type(*ops)
    return t if t.is_floating_point else ea.get_default_dtype()


def _shift_bits(a: Any, b: Any) -> tuple[int, bool]:
    dt = np.asarray(a).dtype if isinstance(a, np.ndarray) else np.asarray(b).dtype
    return np.dtype(dt).itemsize * 8, np.dtype(dt).kind == "i"


def lshift_ref(a: Any, b: Any) -> Any:
    bits, _ = _shift_bits(a, b)
    a64 = np.asarray(a).astype(np.int64)
    b64 = np.asarray(b).astype(np.int64)
    ok = (b64 >= 0) & (b64 < bits)
    return np.where(ok, a64 << np.where(ok, b64, 0), 0)


def rshift_ref(a: Any, b: Any) -> Any:
    bits, signed = _shift_bits(a, b)
    a64 = np.asarray(a).astype(np.int64)
    b64 = np.asarray(b).astype(np.int64)
    limit = bits - 1 if signed else bits
    ok = (b64 >= 0) & (b64 < limit)
    return np.where(ok, a64 >> np.where(ok, b64, 0), (a64 >> 63) if signed else 0)


def shift_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield from binary_samples(op, dtype, scalars=(2, 3, True))
    # shift amounts at and past the bit width, and negative ones
    n = np.dtype(np.int64).itemsize * 8
    amounts = np.array([0, 1, 7, 8, 9, 15, 16, 31, 32, 63, n - 1] + ([-1, -8] if dtype != ea.uint8 else [100, 200]))
    values = np.where(np.arange(amounts.size) % 2 == 0, 5, -3 if dtype != ea.uint8 else 200)
    info = np.iinfo(np.dtype({ea.uint8: "u1", ea.int8: "i1", ea.int16: "i2", ea.int32: "i4", ea.int64: "i8"}[dtype]))
    amounts = np.clip(amounts, info.min, info.max)
    yield SampleInput(tensor_from(values, dtype), (tensor_from(amounts, dtype),), name="wide shifts")


# ---- ternary samples -----------------------------------------------------------------------


def lerp_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for sa, sb, bcast in broadcast_pairs():
        yield SampleInput(make_tensor(sa, dtype), (make_tensor(sb, dtype), 0.3), broadcasts_input=bcast)
    for w in (0.0, 1.0, 0.75, -0.5, 1.5):
        yield SampleInput(make_tensor((3, 4), dtype), (make_tensor((3, 4), dtype), w), name=f"weight {w}")
    # tensor weights, below and above 0.5 (the two formulas) and broadcast
    yield SampleInput(
        make_tensor((3, 4), dtype), (make_tensor((3, 4), dtype), make_tensor((3, 4), dtype, low=-1, high=2))
    )
    yield SampleInput(make_tensor((3, 4), dtype), (make_tensor((4,), dtype), make_tensor((3, 1), dtype, low=0, high=1)))
    yield SampleInput(
        make_tensor((4,), dtype), (make_tensor((4,), dtype), make_tensor((3, 4), dtype)), broadcasts_input=True
    )
    yield SampleInput(make_tensor((2, 3, 4), dtype), (make_tensor((2, 3, 4), dtype), make_tensor((), dtype)))


def lerp_ref(a: Any, b: Any, w: Any) -> Any:
    return a + np.asarray(w, dtype=np.float64) * (b - a)


def addc_samples(op: OpInfo, dtype: Any, *, div: bool = False) -> Iterator[SampleInput]:
    rhs = {"exclude_zero": True} if div else {}
    value = 2 if not dtype.is_floating_point else 0.5
    yield SampleInput(make_tensor((3, 4), dtype), (make_tensor((3, 4), dtype), make_tensor((3, 4), dtype, **rhs)))
    yield SampleInput(
        make_tensor((3, 4), dtype),
        (make_tensor((3, 4), dtype), make_tensor((3, 4), dtype, **rhs)),
        {"value": value},
        name="value",
    )
    yield SampleInput(
        make_tensor((3, 4), dtype),
        (make_tensor((4,), dtype), make_tensor((3, 1), dtype, **rhs)),
        {"value": -1},
        name="broadcast",
    )
    yield SampleInput(
        make_tensor((4,), dtype), (make_tensor((3, 4), dtype), make_tensor((3, 4), dtype, **rhs)), broadcasts_input=True
    )
    yield SampleInput(make_tensor((2, 0, 4), dtype), (make_tensor((2, 0, 4), dtype), make_tensor((4,), dtype, **rhs)))
    yield SampleInput(
        make_tensor((3,), dtype),
        (make_tensor((3,), dtype), make_tensor((3,), dtype, **rhs)),
        {"value": 3},
        name="int value",
    )


def clamp_samples(
    op: OpInfo, dtype: Any, *, tensors: bool = True, scalars: bool = True, which: str = "both"
) -> Iterator[SampleInput]:
    """Bounds as Python numbers and as (broadcast) tensors; `which` restricts to min / max."""

    def bounds(lo: Any, hi: Any) -> tuple[Any, ...]:
        if which == "min":
            return (lo,)
        if which == "max":
            return (hi,)
        return (lo, hi)

    lo_kw, hi_kw = (
        ({"low": 0, "high": 3}, {"low": 3, "high": 9})
        if dtype == ea.uint8
        else ({"low": -9, "high": 0}, {"low": 0, "high": 9})
    )
    if tensors:
        lo = make_tensor((3, 4), dtype, **lo_kw)
        hi = make_tensor((3, 4), dtype, **hi_kw)
        yield SampleInput(make_tensor((3, 4), dtype), bounds(lo, hi), name="tensor bounds")
        yield SampleInput(
            make_tensor((3, 4), dtype),
            bounds(make_tensor((4,), dtype, **lo_kw), make_tensor((3, 1), dtype, **hi_kw)),
            name="broadcast bounds",
        )
        yield SampleInput(
            make_tensor((4,), dtype),
            bounds(make_tensor((3, 4), dtype), make_tensor((3, 4), dtype)),
            broadcasts_input=True,
            name="bounds broadcast the input",
        )
        if which == "both":
            yield SampleInput(make_tensor((3, 4), dtype), (make_tensor((3, 4), dtype), None), name="tensor min only")
            yield SampleInput(make_tensor((3, 4), dtype), (None, make_tensor((3, 4), dtype)), name="tensor max only")
    if scalars:
        lo, hi = (2, 7) if dtype == ea.uint8 else (-3, 4)  # bounds must fit the dtype
        yield SampleInput(make_tensor((3, 4), dtype), bounds(lo, hi), name="int bounds")
        yield SampleInput(make_tensor((2, 3, 4), dtype), bounds(-2.5, 3.5), name="float bounds (promote ints)")
        yield SampleInput(make_tensor((5,), dtype), bounds(hi, lo), name="min > max gives max")
        if which == "both":
            yield SampleInput(make_tensor((3, 4), dtype), (), {"min": 1}, name="min keyword")
            yield SampleInput(make_tensor((3, 4), dtype), (), {"max": 1}, name="max keyword")
            yield SampleInput(make_tensor((3, 4), dtype), (None, 2), name="max only")
    if dtype.is_floating_point and scalars:
        a, _ = _special(dtype)
        yield SampleInput(a, bounds(-1, 1), name="special values")


def _np_clamp(a: Any, lo: Any = None, hi: Any = None) -> Any:
    r = np.asarray(a)
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    return r


def clamp_ref(a: Any, min: Any = None, max: Any = None) -> Any:
    return _np_clamp(a, min, max)


def _clamp_result(s: SampleInput) -> Any:
    bounds = [b for b in (*s.args, *s.kwargs.values()) if b is not None]
    if s.input.dtype.is_floating_point:
        return expected_result_type(s.input, *[b for b in bounds if isinstance(b, ea.Tensor)])
    return expected_result_type(s.input, *bounds)


def where_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    shapes = [
        ((3, 4), (3, 4), (3, 4)),
        ((3, 4), (4,), (3, 1)),
        ((4,), (3, 4), ()),
        ((2, 3, 4), (3, 1), (4,)),
        ((0, 4), (4,), (4,)),
        ((), (), ()),
    ]
    for sc, sa, sb in shapes:
        yield SampleInput(make_tensor(sc, ea.bool), (make_tensor(sa, dtype), make_tensor(sb, dtype)))
    c = make_tensor((3, 4), ea.bool)
    x = make_tensor((3, 4), dtype)
    for other in (0, 2.5, True):
        yield SampleInput(c, (x, other), name=f"other {other!r}")
        yield SampleInput(c, (other, x), name=f"input {other!r}")
    yield SampleInput(c, (x, make_tensor((), ea.float64)), name="0-dim float64 other")


def where_ref(c: Any, a: Any, b: Any) -> Any:
    return np.where(c, a, b)


# ---- errors --------------------------------------------------------------------------------


def _size_mismatch(dtype: Any = ea.float32) -> ErrorInput:
    return ErrorInput(
        SampleInput(make_tensor((3,), dtype), (make_tensor((4,), dtype),)),
        RuntimeError,
        r"size of tensor a \(3\) must match the size of tensor b \(4\)",
    )


def _zero_division_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _size_mismatch()
    for dt in (ea.int64, ea.int32, ea.uint8):
        a = tensor_from(np.array([1, 2, 3]), dt)
        yield ErrorInput(SampleInput(a, (tensor_from(np.array([1, 0, 1]), dt),)), RuntimeError, "ZeroDivisionError")
        yield ErrorInput(SampleInput(a, (0,)), RuntimeError, "ZeroDivisionError")
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.bool), (make_tensor((3,), ea.bool),)),
        RuntimeError,
        "not implemented for dtype bool",
    )


def _pow_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _size_mismatch()
    for dt in (ea.int64, ea.uint8, ea.bool):
        yield ErrorInput(
            SampleInput(make_tensor((3,), dt), (-1,)),
            RuntimeError,
            r"Integers to negative integer powers are not allowed\.",
        )
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.bool), (make_tensor((3,), ea.bool),)),
        RuntimeError,
        "pow: not implemented for dtype bool",
    )


def _float_power_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    yield ErrorInput(
        SampleInput(a, (2,), {"out": ea.empty(3)}),
        RuntimeError,
        "the output given to float_power has dtype Float but the operation's result requires dtype Double",
    )


def _float_only_errors(name: str) -> Callable[[OpInfo], Iterator[ErrorInput]]:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        yield _size_mismatch()
        yield ErrorInput(
            SampleInput(make_tensor((3,), ea.int64), (make_tensor((3,), ea.int64),)),
            RuntimeError,
            f"{name}: not implemented for dtype int64",
        )

    return gen


def _bitwise_errors(name: str) -> Callable[[OpInfo], Iterator[ErrorInput]]:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        yield _size_mismatch(ea.int64)
        a = make_tensor((3,), ea.float32)
        yield ErrorInput(SampleInput(a, (a,)), RuntimeError, f"{name}: not implemented for dtype float32")
        # an integer tensor and a Python float promote to float: also an error (gcd and lcm take no
        # Python number at all)
        if name not in TENSOR_ONLY:
            yield ErrorInput(
                SampleInput(make_tensor((3,), ea.int64), (1.5,)),
                RuntimeError,
                f"{name}: not implemented for dtype float32",
            )

    return gen


def _lerp_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    d = make_tensor((3,), ea.float64)
    yield ErrorInput(SampleInput(a, (d, 0.5)), RuntimeError, "expected dtype Float for `end` but got dtype Double")
    yield ErrorInput(SampleInput(a, (a, d)), RuntimeError, "expected dtype Float for `weight` but got dtype Double")
    i = make_tensor((3,), ea.int64)
    yield ErrorInput(SampleInput(i, (i, 0.5)), RuntimeError, "lerp: not implemented for dtype int64")
    yield ErrorInput(
        SampleInput(a, (make_tensor((4,), ea.float32), 0.5)),
        RuntimeError,
        r"size of tensor a \(3\) must match the size of tensor b \(4\)",
    )


def _addcdiv_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = make_tensor((3,), ea.float32)
    for dt in (ea.int64, ea.bool):
        i = make_tensor((3,), dt)
        yield ErrorInput(SampleInput(f, (i, i)), RuntimeError, "Integer division with addcdiv is no longer supported")


def _addcmul_errors(op: OpInfo) -> Iterator[ErrorInput]:
    b = make_tensor((3,), ea.bool)
    yield ErrorInput(SampleInput(b, (b, b)), RuntimeError, "addcmul: not implemented for dtype bool")
    f = make_tensor((3,), ea.float32)
    yield ErrorInput(SampleInput(f, (make_tensor((2,), ea.float32), f)), RuntimeError, "must match the size")


def _clamp_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    yield ErrorInput(SampleInput(a, ()), RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None")
    yield ErrorInput(SampleInput(a, (None, None)), RuntimeError, "At least one of 'min' or 'max' must not be None")
    u = make_tensor((3,), ea.uint8)
    yield ErrorInput(
        SampleInput(u, (-1, 5)), RuntimeError, "value cannot be converted to type uint8_t without overflow"
    )


def _where_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = make_tensor((3,), ea.float32)
    yield ErrorInput(
        SampleInput(x, (x, x)),
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float",
    )
    yield ErrorInput(SampleInput(make_tensor((3,), ea.uint8), (x, x)), RuntimeError, "dtype Byte")
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.bool), (x, make_tensor((4,), ea.float32))), RuntimeError, "must match the size"
    )
    yield ErrorInput(
        SampleInput(make_tensor((3,), ea.bool), (x, x), {"out": ea.empty(3, dtype=ea.float64)}),
        RuntimeError,
        "Expected out type to be Float but got Double",
    )


def _isclose_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    yield ErrorInput(SampleInput(a, (make_tensor((3,), ea.float64),)), RuntimeError, "Float did not match Double")
    yield ErrorInput(
        SampleInput(a, (a,), {"rtol": -1e-5}),
        RuntimeError,
        "rtol must be greater than or equal to zero, but got -1e-05",
    )
    yield ErrorInput(
        SampleInput(a, (a,), {"atol": float("nan")}),
        RuntimeError,
        "atol must be greater than or equal to zero, but got nan",
    )


# ---- the table -----------------------------------------------------------------------------

_as_float64 = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731


def _cmp(name: str, fn: Any, ref: Callable[..., Any]) -> OpInfo:
    return OpInfo(
        name,
        fn,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, special=True),
        ref=ref,
        result_dtype=lambda s: ea.bool,
        error_inputs=lambda op: iter([_size_mismatch()]),
        kind="binary",
        supports_autograd=False,
    )


def _true_div(name: str, fn: Any) -> OpInfo:
    return OpInfo(
        name,
        fn,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, rhs={"exclude_zero": True}, special=True),
        ref=lambda a, b: _as_float64(a) / b,
        result_dtype=_float_result,
        kind="binary",
    )


_COMPARISONS = [
    ("eq", ea.eq, np.equal),
    ("ne", ea.ne, np.not_equal),
    ("lt", ea.lt, np.less),
    ("le", ea.le, np.less_equal),
    ("gt", ea.gt, np.greater),
    ("ge", ea.ge, np.greater_equal),
    ("not_equal", ea.not_equal, np.not_equal),
    ("less", ea.less, np.less),
    ("less_equal", ea.less_equal, np.less_equal),
    ("greater", ea.greater, np.greater),
    ("greater_equal", ea.greater_equal, np.greater_equal),
    ("logical_and", ea.logical_and, np.logical_and),
    ("logical_or", ea.logical_or, np.logical_or),
    ("logical_xor", ea.logical_xor, np.logical_xor),
]


def _isclose_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in binary_samples(op, dtype, scalars=(), special=True):
        if isinstance(s.args[0], ea.Tensor) and s.args[0].dtype != dtype:
            continue  # isclose needs equal dtypes
        yield s
    if dtype.is_floating_point:
        a = make_tensor((4, 5), dtype)
        near = a + a * 1e-6  # close for the default tolerances (float32 and float64)
        far = a + 0.5
        yield SampleInput(a, (near,), name="near")
        yield SampleInput(a, (far,), name="far")
        yield SampleInput(a, (far,), {"atol": 0.6}, name="far, large atol")
        yield SampleInput(a, (far,), {"rtol": 0.0, "atol": 0.0}, name="zero tolerances")
        sp_a, sp_b = _special(dtype)
        yield SampleInput(sp_a, (sp_b,), {"equal_nan": True}, name="equal_nan")
    elif dtype != ea.bool:
        a = make_tensor((4, 5), dtype)
        b = (a + 1).to(dtype)
        yield SampleInput(a, (b,), {"atol": 2.0}, name="within atol on integers")
        yield SampleInput(a, (b,), {"atol": 0.5}, name="beyond atol on integers")


def _isclose_ref(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    return np.isclose(_as_float64(a), _as_float64(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def _equal_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    a = make_tensor((3, 4), dtype)
    yield SampleInput(a, (a.clone(),), name="equal")
    yield SampleInput(a, (make_tensor((3, 4), dtype),), name="random")
    yield SampleInput(a, (a.view(4, 3).clone(),), name="same values, other shape")
    yield SampleInput(a, (a[:1],), name="broadcastable shape")
    yield SampleInput(make_tensor((0, 3), dtype), (make_tensor((0, 3), dtype),), name="empty")
    if dtype.is_floating_point:
        n = tensor_from(np.array([1.0, np.nan]), dtype)
        yield SampleInput(n, (n,), name="NaN is not equal to itself")
    yield SampleInput(a, (a.to(ea.float64),), name="other dtype, same values")


def _equal_ref(a: Any, b: Any) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    return bool(a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64)))


def _allclose_ref(a: Any, b: Any, **kw: Any) -> Any:
    return bool(np.all(_isclose_ref(a, b, **kw)))


def xlogy_ref(x: Any, y: Any) -> Any:
    x, y = _as_float64(x), _as_float64(y)
    with np.errstate(all="ignore"):
        r = x * np.log(y)
    r = np.where(x == 0, 0.0, r)
    return np.where(np.isnan(y), np.nan, r)


def heaviside_ref(x: Any, v: Any) -> Any:
    return np.where(np.asarray(x) == 0, v, np.asarray(x) > 0)


def _heaviside_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in binary_samples(op, dtype, scalars=(), special=True):
        if isinstance(s.args[0], ea.Tensor) and s.args[0].dtype != dtype:
            continue  # heaviside needs equal dtypes
        yield s
    zeros = (
        tensor_from(np.array([0, 1, 0, -1, 0]), dtype)
        if dtype != ea.uint8
        else tensor_from(np.array([0, 1, 0, 2, 0]), dtype)
    )
    yield SampleInput(zeros, (make_tensor((5,), dtype),), name="values at zero")


def _heaviside_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    msg = r"^heaviside is not yet implemented for tensors with different dtypes\.$"
    yield ErrorInput(SampleInput(a, (make_tensor((3,), ea.float64),)), RuntimeError, msg)
    yield ErrorInput(SampleInput(a, (a,), {"out": ea.empty(3, dtype=ea.float64)}), RuntimeError, msg)


def _ldexp_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    exp = {"low": -3, "high": 4} if dtype != ea.uint8 else {"low": 0, "high": 4}
    for sa, sb, bcast in broadcast_pairs():
        yield SampleInput(make_tensor(sa, dtype), (make_tensor(sb, dtype, **exp),), broadcasts_input=bcast)
    yield SampleInput(
        make_tensor((3, 4), dtype), (make_tensor((3, 4), ea.int32, low=-3, high=4),), name="int32 exponents"
    )


def _ldexp_result(s: SampleInput) -> Any:
    other = s.args[0]
    if isinstance(other, ea.Tensor):
        scale = ea.empty(other.shape, dtype=other.dtype if other.dtype.is_floating_point else ea.get_default_dtype())
    else:
        scale = ea.empty((), dtype=ea.get_default_dtype())  # pow(2.0, number) is a 0-dim tensor
    return expected_result_type(s.input, scale)


OPS = [
    _true_div("true_divide", ea.true_divide),
    OpInfo(
        "floor_divide",
        ea.floor_divide,
        ALL_NUMERIC,
        lambda op, dt: binary_samples(op, dt, rhs={"exclude_zero": True}, scalars=_div_scalars(dt), special=True),
        ref=lambda a, b: np.floor_divide(a, b),
        error_inputs=_zero_division_errors,
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "remainder",
        ea.remainder,
        ALL_NUMERIC,
        lambda op, dt: binary_samples(op, dt, rhs={"exclude_zero": True}, scalars=_div_scalars(dt), special=True),
        ref=lambda a, b: np.remainder(a, b),
        error_inputs=_zero_division_errors,
        kind="binary",
    ),
    OpInfo(
        "fmod",
        ea.fmod,
        ALL_NUMERIC,
        lambda op, dt: binary_samples(op, dt, rhs={"exclude_zero": True}, scalars=_div_scalars(dt), special=True),
        ref=lambda a, b: np.fmod(a, b),
        error_inputs=_zero_division_errors,
        kind="binary",
    ),
    # (kind="" keeps pow out of the table's expanded-input check, whose float16 values
    # overflow; test_binary.py checks expanded inputs with values in range)
    OpInfo(
        "pow",
        ea.pow,
        ALL_NUMERIC,
        pow_samples,
        ref=pow_ref,
        error_inputs=_pow_errors,
        result_dtype=lambda s: expected_result_type(s.input, *s.args),
        tol_overrides={ea.float16: (1e-3, 2e-3), ea.bfloat16: (1e-2, 2e-2)},
    ),
    # float_power_ writes float64 only: checked in test_binary.py (the table expects a
    # float32 self to accept a float64 result)
    OpInfo(
        "float_power",
        ea.float_power,
        ALL_DTYPES,
        lambda op, dt: pow_samples(op, dt),
        ref=lambda a, b: np.power(_as_float64(a), _as_float64(b)),
        result_dtype=lambda s: ea.float64,
        error_inputs=_float_power_errors,
        supports_inplace=False,
        kind="binary",
    ),
    OpInfo(
        "atan2",
        ea.atan2,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, special=True),
        ref=lambda a, b: np.arctan2(_as_float64(a), b),
        result_dtype=_float_result,
        kind="binary",
    ),
    OpInfo(
        "arctan2",
        ea.arctan2,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, special=True),
        ref=lambda a, b: np.arctan2(_as_float64(a), b),
        result_dtype=_float_result,
        kind="binary",
    ),
    OpInfo(
        "hypot",
        ea.hypot,
        FLOAT_DTYPES,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 2.5), special=True),
        ref=lambda a, b: np.hypot(_as_float64(a), b),
        error_inputs=_float_only_errors("hypot"),
        kind="binary",
    ),
    OpInfo(
        "copysign",
        ea.copysign,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, scalars=(2, -2.5), special=True),
        ref=lambda a, b: np.copysign(_as_float64(a), b),
        result_dtype=_float_result,
        kind="binary",
    ),
    OpInfo(
        "maximum",
        ea.maximum,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, special=True),
        ref=np.maximum,
        kind="binary",
    ),
    OpInfo(
        "minimum",
        ea.minimum,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, special=True),
        ref=np.minimum,
        kind="binary",
    ),
    OpInfo(
        "fmax", ea.fmax, ALL_DTYPES, lambda op, dt: binary_samples(op, dt, special=True), ref=np.fmax, kind="binary"
    ),
    OpInfo(
        "fmin", ea.fmin, ALL_DTYPES, lambda op, dt: binary_samples(op, dt, special=True), ref=np.fmin, kind="binary"
    ),
    OpInfo(
        "bitwise_and",
        ea.bitwise_and,
        INTEGRAL_AND_BOOL,
        _int_samples,
        ref=np.bitwise_and,
        error_inputs=_bitwise_errors("bitwise_and"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "bitwise_or",
        ea.bitwise_or,
        INTEGRAL_AND_BOOL,
        _int_samples,
        ref=np.bitwise_or,
        error_inputs=_bitwise_errors("bitwise_or"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "bitwise_xor",
        ea.bitwise_xor,
        INTEGRAL_AND_BOOL,
        _int_samples,
        ref=np.bitwise_xor,
        error_inputs=_bitwise_errors("bitwise_xor"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "bitwise_left_shift",
        ea.bitwise_left_shift,
        INT_DTYPES,
        shift_samples,
        ref=lshift_ref,
        error_inputs=_bitwise_errors("bitwise_left_shift"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "bitwise_right_shift",
        ea.bitwise_right_shift,
        INT_DTYPES,
        shift_samples,
        ref=rshift_ref,
        error_inputs=_bitwise_errors("bitwise_right_shift"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "xlogy",
        ea.xlogy,
        ALL_DTYPES,
        lambda op, dt: binary_samples(
            op, dt, rhs={"low": 0.1} if dt.is_floating_point else {"low": 1}, scalars=(2, 0.5, True), special=True
        ),
        ref=xlogy_ref,
        result_dtype=_float_result,
        kind="binary",
    ),
    OpInfo(
        "logaddexp",
        ea.logaddexp,
        FLOAT_DTYPES,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 0.5), special=True),
        ref=lambda a, b: np.logaddexp(_as_float64(a), b),
        error_inputs=_float_only_errors("logaddexp"),
        kind="binary",
    ),
    OpInfo(
        "logaddexp2",
        ea.logaddexp2,
        FLOAT_DTYPES,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 0.5), special=True),
        ref=lambda a, b: np.logaddexp2(_as_float64(a), b),
        error_inputs=_float_only_errors("logaddexp2"),
        kind="binary",
    ),
    OpInfo(
        "heaviside",
        ea.heaviside,
        ALL_DTYPES,
        _heaviside_samples,
        ref=heaviside_ref,
        error_inputs=_heaviside_errors,
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "gcd",
        ea.gcd,
        INT_DTYPES,
        _int_samples,
        ref=lambda a, b: np.gcd(_wide(a), _wide(b)),
        error_inputs=_bitwise_errors("gcd"),
        kind="binary",
        supports_autograd=False,
    ),
    OpInfo(
        "lcm",
        ea.lcm,
        INT_DTYPES,
        _int_samples,
        ref=lambda a, b: np.lcm(_wide(a), _wide(b)),
        error_inputs=_bitwise_errors("lcm"),
        kind="binary",
        supports_autograd=False,
    ),
    # (a float64 reference cannot step by one float16 ulp: test_binary.py checks exact bits)
    OpInfo(
        "nextafter",
        ea.nextafter,
        FLOAT_DTYPES,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 0.5)),
        ref=lambda a, b: np.nextafter(_as_float64(a), b),
        kind="binary",
        supports_autograd=False,
        tol_overrides={ea.float16: (2e-3, 2e-3)},
    ),
    OpInfo(
        "ldexp",
        ea.ldexp,
        ALL_DTYPES,
        _ldexp_samples,
        ref=lambda a, b: _as_float64(a) * 2.0 ** _as_float64(b),
        result_dtype=_ldexp_result,
    ),
    OpInfo("multiply", ea.multiply, ALL_DTYPES, binary_samples, ref=lambda a, b: a * b, kind="binary"),
    _true_div("divide", ea.divide),
    OpInfo(
        "subtract",
        ea.subtract,
        ALL_NUMERIC,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 2.5)),
        ref=lambda a, b, alpha=1: a - alpha * np.asarray(b),
        kind="binary",
    ),
    OpInfo(
        "rsub",
        ea.rsub,
        ALL_NUMERIC,
        lambda op, dt: binary_samples(op, dt, scalars=(2, 2.5)),
        ref=lambda a, b, alpha=1: np.asarray(b) - alpha * a,
        supports_out=False,
        kind="binary",
    ),
    *[_cmp(name, fn, ref) for name, fn, ref in _COMPARISONS],
    OpInfo(
        "isclose",
        ea.isclose,
        ALL_DTYPES,
        _isclose_samples,
        ref=_isclose_ref,
        result_dtype=lambda s: ea.bool,
        supports_out=False,
        error_inputs=_isclose_errors,
        supports_autograd=False,
    ),
    OpInfo(
        "allclose",
        ea.allclose,
        ALL_DTYPES,
        _isclose_samples,
        ref=_allclose_ref,
        supports_out=False,
        error_inputs=_isclose_errors,
        supports_autograd=False,
    ),
    OpInfo("equal", ea.equal, ALL_DTYPES, _equal_samples, ref=_equal_ref, supports_out=False, supports_autograd=False),
    OpInfo(
        "lerp",
        ea.lerp,
        FLOAT_DTYPES,
        lerp_samples,
        ref=lerp_ref,
        error_inputs=_lerp_errors,
        result_dtype=lambda s: s.input.dtype,
    ),
    OpInfo(
        "addcmul",
        ea.addcmul,
        ALL_NUMERIC,
        addc_samples,
        ref=lambda a, b, c, value=1: _wide(a) + value * _wide(b) * _wide(c),
        error_inputs=_addcmul_errors,
        result_dtype=lambda s: expected_result_type(s.input, *s.args),
    ),
    OpInfo(
        "addcdiv",
        ea.addcdiv,
        FLOAT_DTYPES,
        lambda op, dt: addc_samples(op, dt, div=True),
        ref=lambda a, b, c, value=1: a + value * np.asarray(b) / c,
        error_inputs=_addcdiv_errors,
        result_dtype=lambda s: expected_result_type(s.input, *s.args),
    ),
    OpInfo(
        "clamp",
        ea.clamp,
        ALL_NUMERIC,
        clamp_samples,
        ref=clamp_ref,
        result_dtype=_clamp_result,
        error_inputs=_clamp_errors,
    ),
    OpInfo(
        "clip",
        ea.clip,
        ALL_NUMERIC,
        clamp_samples,
        ref=clamp_ref,
        result_dtype=_clamp_result,
        error_inputs=_clamp_errors,
    ),
    OpInfo(
        "clamp_min",
        ea.clamp_min,
        ALL_NUMERIC,
        lambda op, dt: clamp_samples(op, dt, which="min"),
        ref=lambda a, lo: _np_clamp(a, lo, None),
        result_dtype=_clamp_result,
    ),
    OpInfo(
        "clamp_max",
        ea.clamp_max,
        ALL_NUMERIC,
        lambda op, dt: clamp_samples(op, dt, which="max"),
        ref=lambda a, hi: _np_clamp(a, None, hi),
        result_dtype=_clamp_result,
    ),
    # Tensor.where's self is the second argument: x.where(condition, y)
    OpInfo(
        "where",
        ea.where,
        ALL_DTYPES,
        where_samples,
        ref=where_ref,
        error_inputs=_where_errors,
        method=lambda c, x, y: x.where(c, y) if isinstance(x, ea.Tensor) else ea.where(c, x, y),
        result_dtype=lambda s: expected_result_type(*s.args),
        check_unsupported=False,
    ),
]
