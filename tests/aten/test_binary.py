"""Binary and ternary pointwise operators beyond the OpInfo table: the Python operator
dunders (+ - * / // % ** & | ^ << >> and comparisons; reflected and in-place; Python
numbers on either side; result dtypes as PyTorch), error messages, pow's special
cases, float_power_, allclose / equal / isclose semantics, where, clamp and lerp."""

from __future__ import annotations

import math
import operator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.binary import TENSOR_ONLY
from opinfo.core import expected_result_type, np_dtype, tensor_from

# ---- the operator dunders ---------------------------------------------------------------------

ARITH = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}
BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
INPLACE = {
    "+": operator.iadd,
    "-": operator.isub,
    "*": operator.imul,
    "/": operator.itruediv,
    "//": operator.ifloordiv,
    "%": operator.imod,
    "**": operator.ipow,
    "&": operator.iand,
    "|": operator.ior,
    "^": operator.ixor,
    "<<": operator.ilshift,
    ">>": operator.irshift,
}
ALL_OPS = {**ARITH, **BITWISE, **COMPARE}

TENSOR_DTYPES = [ea.bool, ea.uint8, ea.int8, ea.int32, ea.int64, ea.float16, ea.float32, ea.float64]
SCALARS = [True, 3, 2.5]


def _operand_tensor(dtype: Any, sym: str) -> Any:
    """Small positive values (no zero divisors, no negative powers); bools all True where
    a False divisor or exponent would matter."""
    if dtype == ea.bool:
        vals = [True, True, True] if sym in ("/", "//", "%", "**") else [True, False, True]
        return ea.tensor(vals, dtype=ea.bool)
    return ea.tensor([1, 2, 3], dtype=dtype)


def _is_float(x: Any) -> bool:
    return x.dtype.is_floating_point if isinstance(x, ea.Tensor) else isinstance(x, float)


def _is_bool(x: Any) -> bool:
    return x.dtype == ea.bool if isinstance(x, ea.Tensor) else isinstance(x, bool)


def _expected_error(sym: str, lhs: Any, rhs: Any, result: Any) -> str | None:
    """The RuntimeError PyTorch raises for this combination, as a regex (None: no error)."""
    if sym == "-" and (_is_bool(lhs) or _is_bool(rhs)):
        return "Subtraction, the `-` operator, with (two bool tensors|a bool tensor) is not supported"
    if sym in ("//", "%") and result == ea.bool:
        return "not implemented for dtype bool"
    if sym == "**" and result == ea.bool and not isinstance(rhs, bool) and lhs is not True:
        return "pow: not implemented for dtype bool"
    if sym in BITWISE and result.is_floating_point:
        return "not implemented for dtype"
    if sym in ("<<", ">>") and result == ea.bool:
        return "not implemented for dtype bool"
    return None


def _result_dtype(sym: str, lhs: Any, rhs: Any) -> Any:
    if sym in COMPARE:
        return ea.bool
    t = expected_result_type(lhs, rhs)
    if sym == "/" and not t.is_floating_point:
        return ea.get_default_dtype()
    return t


def _py_values(x: Any, n: int) -> list[Any]:
    if isinstance(x, ea.Tensor):
        return x.tolist()
    return [x] * n


def _reference(sym: str, lhs: Any, rhs: Any, result: Any) -> np.ndarray:
    """Python's own operator on each pair of elements, in the result's category."""
    n = (lhs if isinstance(lhs, ea.Tensor) else rhs).numel()
    common = expected_result_type(lhs, rhs)
    conv: Any = float if common.is_floating_point else (bool if common == ea.bool else int)
    out = []
    for a, b in zip(_py_values(lhs, n), _py_values(rhs, n), strict=True):
        out.append(ALL_OPS[sym](conv(a), conv(b)))
    if result.is_floating_point:
        return np.array(out, dtype=np.float64)
    if result == ea.bool:
        return np.array(out, dtype=np.bool_)
    return np.array(out, dtype=np.int64).astype(np_dtype(result))  # integers wrap like C


def _check_values(got: Any, expected: np.ndarray, dtype: Any) -> None:
    g = got.float().numpy() if dtype == ea.bfloat16 else got.numpy()
    if dtype.is_floating_point:
        tol = 1e-3 if dtype == ea.float16 else 1e-6
        np.testing.assert_allclose(g.astype(np.float64), expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(g, expected)


def _dunder_cases() -> list[tuple[str, Any, Any]]:
    cases = []
    for sym in ALL_OPS:
        for dt in TENSOR_DTYPES:
            for other in [*SCALARS, ea.bool, ea.int64, ea.float32]:
                cases.append((sym, dt, other))  # tensor <op> other
                if not isinstance(other, ea.dtype):
                    cases.append((sym, other, dt))  # number <op> tensor: the reflected dunder
    return cases


def _case_id(c: tuple[str, Any, Any]) -> str:
    def name(x: Any) -> str:
        return x._name if isinstance(x, ea.dtype) else repr(x)

    return f"{name(c[1])}{c[0]}{name(c[2])}"


def _make_operand(spec: Any, sym: str) -> Any:
    return _operand_tensor(spec, sym) if isinstance(spec, ea.dtype) else spec


@pytest.mark.parametrize(("sym", "lhs_spec", "rhs_spec"), _dunder_cases(), ids=[_case_id(c) for c in _dunder_cases()])
def test_dunder(sym: str, lhs_spec: Any, rhs_spec: Any) -> None:
    """a <op> b for tensors and Python numbers on either side: dtype, values or PyTorch's error."""
    lhs, rhs = _make_operand(lhs_spec, sym), _make_operand(rhs_spec, sym)
    result = _result_dtype(sym, lhs, rhs)
    err = _expected_error(sym, lhs, rhs, result)
    if err is not None:
        with pytest.raises(RuntimeError, match=err):
            ALL_OPS[sym](lhs, rhs)
        return
    got = ALL_OPS[sym](lhs, rhs)
    assert isinstance(got, ea.Tensor)
    assert got.dtype == result, f"{lhs!r} {sym} {rhs!r}: dtype {got.dtype}, expected {result}"
    assert got.shape == (3,)
    _check_values(got, _reference(sym, lhs, rhs, result), result)


def _inplace_cases() -> list[tuple[str, Any, Any]]:
    return [(sym, dt, other) for sym in INPLACE for dt in TENSOR_DTYPES for other in [*SCALARS, ea.int64, ea.float32]]


@pytest.mark.parametrize(("sym", "dtype", "rhs_spec"), _inplace_cases(), ids=[_case_id(c) for c in _inplace_cases()])
def test_inplace_dunder(sym: str, dtype: Any, rhs_spec: Any) -> None:
    """x <op>= y writes into x (same object and memory, x's dtype) or raises as PyTorch."""
    x = _operand_tensor(dtype, sym)
    rhs = _make_operand(rhs_spec, sym)
    result = _result_dtype(sym, x, rhs)
    # sub's bool check comes first, then the iterator's cast check, then the kernel's dtypes
    err = _expected_error(sym, x, rhs, result)
    if not ea.can_cast(result, dtype) and not (sym == "-" and err is not None):
        err = "can't be cast to the desired output type"
    y = x
    if err is not None:
        with pytest.raises(RuntimeError, match=err):
            y = INPLACE[sym](y, rhs)
        return
    expected = ALL_OPS[sym](x.clone(), rhs).to(dtype)
    ptr, version = x.data_ptr(), x._version
    y = INPLACE[sym](y, rhs)
    assert y is x
    assert x.data_ptr() == ptr
    assert x._version == version + 1
    assert x.dtype == dtype
    _check_values(x, expected.double().numpy() if dtype.is_floating_point else expected.numpy(), dtype)


def test_dunders_installed() -> None:
    """Every operator dunder of this family resolves to an operator (only @ waits for matmul)."""
    missing = set(ea._tensor_ops.install(ea.Tensor, ea._generated_ops))
    ours = {d for d, *_ in ea._tensor_ops._TABLE} - {"__matmul__", "__rmatmul__", "__neg__", "__abs__", "__invert__"}
    assert not (missing & ours), sorted(missing & ours)


def test_reflected_python_numbers() -> None:
    t = ea.tensor([1, 2, 4])
    assert (10 - t).tolist() == [9, 8, 6]
    assert (10 // t).tolist() == [10, 5, 2]
    assert (10 % t).tolist() == [0, 0, 2]
    assert (2**t).tolist() == [2, 4, 16]
    assert (2**t).dtype == ea.int64
    assert (2.0**t).dtype == ea.float32
    assert (1 << t).tolist() == [2, 4, 16]
    assert (64 >> t).tolist() == [32, 16, 4]
    assert (6 & t).tolist() == [0, 2, 4]
    assert (1 | t).tolist() == [1, 3, 5]
    assert (7 ^ t).tolist() == [6, 5, 3]
    assert (1 / t).dtype == ea.float32
    # a reflected comparison is the mirrored operator
    assert (2 < t).tolist() == [False, False, True]
    assert (2 >= t).tolist() == [True, True, False]


def test_weak_scalar_promotion() -> None:
    u8 = ea.tensor([200, 100], dtype=ea.uint8)
    assert (u8 + 100).dtype == ea.uint8
    assert (u8 + 100).tolist() == [44, 200]  # wraps, as PyTorch
    assert (u8 * 1.5).dtype == ea.float32
    assert (ea.tensor([1, 2], dtype=ea.int32) // 2).dtype == ea.int32
    assert (ea.tensor([True, False]) + True).dtype == ea.bool
    assert (ea.tensor([True, False]) * 2).dtype == ea.int64
    assert (ea.tensor([1.0], dtype=ea.float16) + 2.5).dtype == ea.float16
    # a 0-dim tensor is weak against dimensioned ones of its category, not across categories
    assert (ea.tensor([1], dtype=ea.int8) + ea.tensor(1000)).dtype == ea.int8
    assert (ea.tensor([1], dtype=ea.int8) + ea.tensor(1.5)).dtype == ea.float32
    assert (ea.tensor([1.0], dtype=ea.float16) < ea.tensor(1.5, dtype=ea.float64)).dtype == ea.bool


def test_non_tensor_operands() -> None:
    """Unsupported operands give Python's TypeError; == with None is identity (False)."""
    t = ea.tensor([1, 2])
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        "a" * t
    with pytest.raises(TypeError):
        _ = t < None
    assert (t == None) is False  # noqa: E711
    assert (t != None) is True  # noqa: E711
    assert t not in [None, "x"]
    y = t
    with pytest.raises(TypeError):
        y += "a"
    assert y is t


# ---- division family ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64])
@pytest.mark.parametrize(
    "fn", [ea.floor_divide, ea.remainder, ea.fmod, lambda a, b: ea.div(a, b, rounding_mode="trunc")]
)
def test_integer_division_by_zero(dtype: Any, fn: Any) -> None:
    a = ea.tensor([1, 2, 3], dtype=dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, ea.tensor([1, 0, 1], dtype=dtype))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(a, 0)
    # big enough to run on several threads
    big = ea.from_numpy(np.ones(200_000, dtype=np_dtype(dtype)))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(big, ea.from_numpy(np.zeros(200_000, dtype=np_dtype(dtype))))


@pytest.mark.parametrize("dtype", [ea.int32, ea.int64])
def test_integer_min_by_minus_one(dtype: Any) -> None:
    """INT_MIN / -1 traps in hardware; PyTorch-compatible results instead of a crash."""
    lo = -(2 ** (32 if dtype == ea.int32 else 64) // 2)
    a = ea.tensor([lo, 7], dtype=dtype)
    assert (a // -1).tolist() == [lo, -7]  # wraps
    assert (a % -1).tolist() == [0, 0]
    assert ea.fmod(a, -1).tolist() == [0, 0]
    assert ea.div(a, -1, rounding_mode="trunc").tolist() == [lo, -7]


def test_float_division_special_values() -> None:
    a = ea.tensor([1.0, -1.0, 0.0, 5.5, -5.5])
    b = ea.tensor([0.0, 0.0, 0.0, 2.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal((a // b).numpy(), np.floor_divide(a.numpy(), b.numpy()))
    r = (a % b).numpy()
    assert np.isnan(r[:3]).all() and r[3] == 1.5 and r[4] == 0.5
    assert ea.fmod(ea.tensor([-5.5]), 2.0).item() == -1.5
    assert ea.remainder(ea.tensor([-5.5]), 2.0).item() == 0.5
    assert ea.remainder(ea.tensor([-2.0]), math.inf).item() == math.inf  # Python's -2.0 % inf
    assert ea.true_divide(ea.tensor([1, 2]), ea.tensor([2, 4])).tolist() == [0.5, 0.5]


# ---- pow --------------------------------------------------------------------------------------------


def test_pow_negative_integer_exponents() -> None:
    t = ea.tensor([1, 2, 3])
    for bad in (
        lambda: t**-1,
        lambda: ea.pow(t, -2),
        lambda: t.pow(-1),
        lambda: ea.tensor([True]) ** -1,
        lambda: t.pow_(-1),
    ):
        with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
            bad()
    # a float exponent, or a tensor exponent, is fine
    assert (t**-1.0).tolist() == [1.0, 0.5, pytest.approx(1 / 3)]
    assert ea.pow(ea.tensor([1, -1, 2, -2]), ea.tensor(-1)).tolist() == [1, -1, 0, 0]
    assert ea.pow(ea.tensor([-1, -1]), ea.tensor([-2, -3])).tolist() == [1, -1]
    assert (2 ** ea.tensor([-1, 0, 3])).tolist() == [0, 1, 8]


def test_pow_special_cases() -> None:
    nan, inf = math.nan, math.inf
    x = ea.tensor([nan, inf, -inf, 0.0, -0.0, -2.0, 2.0])
    assert (x**0).tolist() == [1.0] * 7  # including NaN ** 0
    assert ea.pow(x, ea.from_numpy(np.zeros(7, dtype=np.float32))).tolist() == [1.0] * 7
    assert (1**x).tolist() == [1.0] * 7  # 1 ** NaN == 1
    assert (1**x).dtype == ea.float32
    np.testing.assert_array_equal((x**1).numpy(), x.numpy())
    np.testing.assert_array_equal((x**2).numpy(), x.numpy() ** 2)
    np.testing.assert_array_equal((x**3).numpy(), x.numpy() ** 3)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((x**-1).numpy(), np.float32(1) / x.numpy())
        np.testing.assert_array_equal((x**-2).numpy(), np.float32(1) / x.numpy() ** 2)
        np.testing.assert_array_equal((x**0.5).numpy(), np.sqrt(x.numpy()))
        np.testing.assert_allclose((x**-0.5).numpy(), 1 / np.sqrt(x.numpy()), rtol=1e-6)
        np.testing.assert_allclose((x**2.5).numpy(), np.power(x.numpy(), 2.5), rtol=1e-6)
    assert math.isnan((ea.tensor([-8.0]) ** (1 / 3)).item())
    assert (ea.tensor([-0.0]) ** -1).item() == -inf
    assert (ea.tensor([0.0]) ** -2).item() == inf


def test_pow_dtypes_and_bool() -> None:
    i = ea.tensor([1, 2, 3])
    assert (i**2).dtype == ea.int64 and (i**2).tolist() == [1, 4, 9]
    assert (i**2.0).dtype == ea.float32
    assert (i**True).tolist() == [1, 2, 3]
    assert (i**False).tolist() == [1, 1, 1]
    b = ea.tensor([True, False])
    assert (b**True).dtype == ea.bool and (b**True).tolist() == [True, False]
    assert (b**False).tolist() == [True, True]
    assert (True**b).dtype == ea.bool and (True**b).tolist() == [True, True]
    assert (b**2).dtype == ea.int64
    with pytest.raises(RuntimeError, match="pow: not implemented for dtype bool"):
        b**b
    assert (ea.tensor([2], dtype=ea.int8) ** 7).tolist() == [-128]  # wraps
    assert (ea.tensor([3], dtype=ea.int64) ** 40).tolist() == [(3**40 + 2**63) % 2**64 - 2**63]
    h = ea.tensor([1.5, -2.0], dtype=ea.float16)
    assert (h**2).dtype == ea.float16 and (h**2).tolist() == [2.25, 4.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        ea.pow(i, 0.5, out=ea.empty(3, dtype=ea.int64))


def test_float_power() -> None:
    i = ea.tensor([1, 2, 3])
    f = ea.tensor([1.0, 2.0, 3.0])
    for r in (
        ea.float_power(i, 2),
        ea.float_power(f, 2),
        ea.float_power(2, i),
        ea.float_power(f, ea.tensor([2, 2, 2])),
        i.float_power(-1),
    ):
        assert r.dtype == ea.float64
    assert ea.float_power(i, -1).tolist() == [1.0, 0.5, 1 / 3]  # no integer-power error: computed in float64
    d = ea.tensor([1.0, 4.0], dtype=ea.float64)
    r = d.float_power_(0.5)
    assert r is d and d.tolist() == [1.0, 2.0]
    with pytest.raises(
        RuntimeError,
        match=r"^the base given to float_power_ has dtype Float but the operation's result requires dtype Double$",
    ):
        f.float_power_(2)
    with pytest.raises(
        RuntimeError,
        match=r"^the output given to float_power has dtype Long but the operation's result requires dtype Double$",
    ):
        ea.float_power(f, 2, out=ea.empty(3, dtype=ea.int64))
    out = ea.empty(0, dtype=ea.float64)
    assert ea.float_power(f, 2, out=out) is out and out.tolist() == [1.0, 4.0, 9.0]


# ---- comparisons and logical operators ---------------------------------------------------------------


def test_comparison_inplace_keeps_dtype() -> None:
    x = ea.tensor([1.0, 5.0, 3.0])
    assert x.lt_(3).tolist() == [1.0, 0.0, 0.0] and x.dtype == ea.float32
    y = ea.tensor([1, 5, 3])
    y.ge_(ea.tensor([2, 2, 3]))
    assert y.tolist() == [0, 1, 1] and y.dtype == ea.int64
    z = ea.tensor([1, 2, 3])
    z.eq_(2.0)
    assert z.tolist() == [0, 1, 0]


def test_comparison_aliases_and_out() -> None:
    a, b = ea.tensor([1, 2, 3]), ea.tensor([2, 2, 2])
    for alias, op in (
        (ea.greater, ea.gt),
        (ea.greater_equal, ea.ge),
        (ea.less, ea.lt),
        (ea.less_equal, ea.le),
        (ea.not_equal, ea.ne),
    ):
        assert alias(a, b).tolist() == op(a, b).tolist()
    out = ea.empty(3, dtype=ea.float32)
    assert ea.lt(a, b, out=out) is out and out.tolist() == [1.0, 0.0, 0.0]
    nan = ea.tensor([math.nan])
    assert (nan == nan).tolist() == [False] and (nan != nan).tolist() == [True]
    assert (nan < 1).tolist() == [False] and (nan >= 1).tolist() == [False]


def test_logical_ops() -> None:
    a = ea.tensor([0.0, 1.0, math.nan, -2.0])
    b = ea.tensor([0, 0, 3, 3])
    assert ea.logical_and(a, b).tolist() == [False, False, True, True]  # NaN is true
    assert ea.logical_or(a, b).tolist() == [False, True, True, True]
    assert ea.logical_xor(a, b).tolist() == [False, True, False, False]
    assert ea.logical_and(a, b).dtype == ea.bool
    out = ea.empty(4, dtype=ea.float64)
    ea.logical_or(a, b, out=out)
    assert out.tolist() == [0.0, 1.0, 1.0, 1.0]
    x = ea.tensor([1, 0, 2])
    x.logical_and_(ea.tensor([True, True, False]))
    assert x.tolist() == [1, 0, 0] and x.dtype == ea.int64


def test_bitwise_bool_and_errors() -> None:
    t, f = ea.tensor([True, True, False]), ea.tensor([True, False, False])
    assert (t & f).tolist() == [True, False, False] and (t & f).dtype == ea.bool
    assert (t | f).tolist() == [True, True, False]
    assert (t ^ f).tolist() == [False, True, False]
    for fn in (ea.bitwise_and, ea.bitwise_or, ea.bitwise_xor, ea.bitwise_left_shift, ea.bitwise_right_shift):
        with pytest.raises(RuntimeError, match="not implemented for dtype float32"):
            fn(ea.tensor([1.0]), ea.tensor([1.0]))
    with pytest.raises(RuntimeError, match="bitwise_left_shift: not implemented for dtype bool"):
        t << f


def test_shifts() -> None:
    a = ea.tensor([1, -8, 5, -1], dtype=ea.int8)
    assert (a << 2).tolist() == [4, -32, 20, -4]
    assert (a >> 2).tolist() == [0, -2, 1, -1]
    # out-of-range shift amounts: 0 to the left, the sign to the right
    assert (a << 8).tolist() == [0, 0, 0, 0]
    assert (a << -1).tolist() == [0, 0, 0, 0]
    assert (a >> 9).tolist() == [0, -1, 0, -1]
    assert (a >> -1).tolist() == [0, -1, 0, -1]
    u = ea.tensor([200], dtype=ea.uint8)
    assert (u >> 7).tolist() == [1] and (u >> 8).tolist() == [0] and (u << 1).tolist() == [144]
    big = ea.tensor([1], dtype=ea.int64)
    assert (big << 63).tolist() == [-(2**63)] and (big << 64).tolist() == [0]


# ---- isclose / allclose / equal -----------------------------------------------------------------------


def test_allclose_returns_python_bool() -> None:
    a = ea.tensor([1.0, 2.0, 3.0])
    assert ea.allclose(a, a + 1e-7) is True
    assert ea.allclose(a, a + 1e-3) is False
    assert a.allclose(a + 1e-3, atol=1e-2) is True
    assert ea.allclose(a, ea.tensor([1.0])) is False
    assert ea.allclose(ea.tensor([[1.0, 1.0]]), ea.tensor([1.0])) is True  # broadcasts
    n = ea.tensor([math.nan, 1.0])
    assert ea.allclose(n, n) is False
    assert ea.allclose(n, n, equal_nan=True) is True
    assert ea.allclose(ea.tensor([]), ea.tensor([])) is True
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        ea.allclose(a, a.double())
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        ea.allclose(a, a, rtol=-1.0)


def test_isclose_semantics() -> None:
    inf, nan = math.inf, math.nan
    a = ea.tensor([1.0, inf, -inf, inf, nan, 1e10, 0.0])
    b = ea.tensor([1.0 + 1e-6, inf, -inf, -inf, nan, 1.000001e10, 1e-9])
    r = ea.isclose(a, b)
    assert r.dtype == ea.bool
    assert r.tolist() == [True, True, True, False, False, True, True]
    assert ea.isclose(a, b, equal_nan=True).tolist()[4] is True
    assert ea.isclose(a, b, rtol=0, atol=0).tolist() == [False, True, True, False, False, False, False]
    # integers: compared in the default float dtype; atol works on them
    i, j = ea.tensor([1, 10, 100]), ea.tensor([2, 10, 101])
    assert ea.isclose(i, j).tolist() == [False, True, False]
    assert ea.isclose(i, j, atol=1).tolist() == [True, True, True]
    assert ea.isclose(ea.tensor([True, False]), ea.tensor([True, True])).tolist() == [True, False]
    u = ea.tensor([0, 255], dtype=ea.uint8)
    assert ea.isclose(u, ea.tensor([255, 0], dtype=ea.uint8), atol=10).tolist() == [False, False]  # no wrap-around


def test_equal_semantics() -> None:
    a = ea.tensor([[1, 2], [3, 4]])
    assert ea.equal(a, a.clone()) is True
    assert a.equal(a) is True
    assert ea.equal(a, a.view(4)) is False  # same values, other shape
    assert ea.equal(a, a[:1]) is False  # broadcastable is not equal
    assert ea.equal(a, a.float()) is True  # compared after type promotion
    assert ea.equal(a, ea.tensor([[1, 2], [3, 5]])) is False
    assert ea.equal(a.t(), a.t().clone()) is True
    n = ea.tensor([math.nan])
    assert ea.equal(n, n) is False
    assert ea.equal(ea.tensor([]), ea.tensor([])) is True
    big = ea.from_numpy(np.zeros(300_000, dtype=np.float32))
    other = big.clone()
    other[-1] = 1.0
    assert ea.equal(big, big.clone()) is True and ea.equal(big, other) is False


# ---- where, clamp, lerp, addcmul, addcdiv -------------------------------------------------------------


def test_where_scalars_and_dtypes() -> None:
    c = ea.tensor([True, False, True])
    x = ea.tensor([1.0, 2.0, 3.0], dtype=ea.float16)
    assert ea.where(c, 1.0, 0.0).dtype == ea.float32
    assert ea.where(c, 1, 0).dtype == ea.int64 and ea.where(c, 1, 0).tolist() == [1, 0, 1]
    assert ea.where(c, True, False).dtype == ea.bool
    assert ea.where(c, x, 2.5).dtype == ea.float16 and ea.where(c, x, 2.5).tolist() == [1.0, 2.5, 3.0]
    assert ea.where(c, ea.tensor([1, 2, 3]), 2.5).dtype == ea.float32
    assert ea.where(c, ea.tensor([1, 2, 3], dtype=ea.uint8), ea.tensor([1.5], dtype=ea.float64)).dtype == ea.float64
    assert ea.where(c.view(3, 1), ea.tensor([1, 2]), ea.tensor([[7], [8], [9]])).tolist() == [[1, 2], [8, 8], [1, 2]]
    y = ea.tensor([7.0, 8.0, 9.0], dtype=ea.float16)
    assert x.where(c, y).tolist() == [1.0, 8.0, 3.0]  # Tensor.where: self is the value where True
    assert x.where(c, 0).tolist() == [1.0, 0.0, 3.0]
    with pytest.raises(
        RuntimeError, match=r"^where expected condition to be a boolean tensor, but got a tensor with dtype Long$"
    ):
        ea.where(ea.tensor([1, 0]), 1, 0)
    with pytest.raises(RuntimeError, match="Expected out type to be Half but got Float"):
        ea.where(c, x, x, out=ea.empty(3))


def test_clamp_semantics() -> None:
    nan = math.nan
    x = ea.tensor([-5.0, 0.5, 5.0, nan])
    assert ea.clamp(x, -1, 1).tolist()[:3] == [-1.0, 0.5, 1.0] and math.isnan(ea.clamp(x, -1, 1).tolist()[3])
    assert ea.clamp(x, 2, 1).tolist()[:3] == [1.0, 1.0, 1.0]  # min > max: everything is max
    assert all(math.isnan(v) for v in ea.clamp(x, nan, 1).tolist())  # a NaN bound with both given: NaN
    r = ea.clamp(x, min=nan).tolist()  # a single NaN bound gives NaN too (PyTorch 2.13)
    assert all(math.isnan(v) for v in r)
    lo = ea.tensor([0.0, nan, 0.0, 0.0])
    r = ea.clamp(x, lo, ea.tensor([1.0] * 4)).tolist()  # NaN in a tensor bound propagates
    assert r[0] == 0.0 and math.isnan(r[1]) and r[2] == 1.0 and math.isnan(r[3])
    i = ea.tensor([-3, 0, 3])
    assert i.clamp(min=-1).dtype == ea.int64
    assert i.clamp(min=0.5).dtype == ea.float32 and i.clamp(min=0.5).tolist() == [0.5, 0.5, 3.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.clamp_(min=0.5)
    assert ea.clip(x, -1, 1).tolist()[:3] == ea.clamp(x, -1, 1).tolist()[:3]
    assert ea.clamp_min(i, 1).tolist() == [1, 1, 3] and ea.clamp_max(i, 1).tolist() == [-3, 0, 1]
    j = ea.tensor([-3, 0, 3])
    assert ea.clamp_(j, -1, 1) is j and j.tolist() == [-1, 0, 1]
    for bad in (lambda: ea.clamp(x), lambda: x.clamp(None, None), lambda: x.clip_(), lambda: ea.clamp(x, None)):
        with pytest.raises(RuntimeError, match=r"^torch.clamp: At least one of 'min' or 'max' must not be None$"):
            bad()
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        ea.tensor([1], dtype=ea.uint8).clamp(min=-1)


def test_lerp_endpoints_and_errors() -> None:
    a = ea.tensor([1.0, -2.0, 1e30])
    b = ea.tensor([3.0, 7.0, -1e30])
    assert ea.lerp(a, b, 0.0).tolist() == a.tolist()
    assert ea.lerp(a, b, 1.0).tolist() == b.tolist()  # exact: the formula anchored at end
    w = ea.tensor([0.0, 1.0, 0.5])
    assert ea.lerp(a, b, w).tolist() == [1.0, 7.0, 0.0]
    assert a.lerp(b, 0.25).tolist() == ea.lerp(a, b, 0.25).tolist()
    c = a.clone()
    assert c.lerp_(b, w) is c and c.tolist() == [1.0, 7.0, 0.0]
    with pytest.raises(RuntimeError, match=r"^expected dtype Float for `end` but got dtype Double$"):
        ea.lerp(a, b.double(), 0.5)
    with pytest.raises(RuntimeError, match=r"^expected dtype Float for `weight` but got dtype Double$"):
        ea.lerp(a, b, w.double())


def test_addcmul_addcdiv() -> None:
    s, t1, t2 = ea.tensor([1.0, 2.0]), ea.tensor([3.0, 4.0]), ea.tensor([2.0, 8.0])
    assert ea.addcmul(s, t1, t2, value=0.5).tolist() == [4.0, 18.0]
    assert ea.addcdiv(s, t1, t2, value=2).tolist() == [4.0, 3.0]
    assert s.addcdiv(t1, t2).tolist() == [2.5, 2.5]
    i = ea.tensor([1, 2])
    assert ea.addcmul(i, i, i, value=3).tolist() == [4, 14] and ea.addcmul(i, i, i).dtype == ea.int64
    assert ea.addcmul(i, t1, i).dtype == ea.float32  # promoted over all three
    assert ea.addcdiv(i, t1, i).tolist() == [4.0, 4.0]  # one float divisor operand is enough
    with pytest.raises(
        RuntimeError,
        match=r"^Integer division with addcdiv is no longer supported, and in a future  "
        r"release addcdiv will perform a true division of tensor1 and tensor2\.",
    ):
        ea.addcdiv(s, i, i)
    x = s.clone()
    assert x.addcmul_(t1, t2) is x and x.tolist() == [7.0, 34.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clone().addcmul_(t1, t2)


def test_rsub_and_true_divide() -> None:
    a, b = ea.tensor([1, 2]), ea.tensor([10, 20])
    assert ea.rsub(a, b).tolist() == [9, 18]
    assert ea.rsub(a, b, alpha=2).tolist() == [8, 16]
    assert ea.rsub(a, 5).tolist() == [4, 3]
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        ea.rsub(ea.tensor([True]), 1)
    x = ea.tensor([1.0, 2.0])
    assert x.true_divide_(2).tolist() == [0.5, 1.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        a.true_divide_(2)


def test_maximum_minimum_nan_and_fmax() -> None:
    nan = math.nan
    a = ea.tensor([1.0, nan, 3.0, nan])
    b = ea.tensor([2.0, 2.0, nan, nan])
    mx, mn = ea.maximum(a, b).tolist(), ea.minimum(a, b).tolist()
    assert mx[0] == 2.0 and all(math.isnan(v) for v in mx[1:])
    assert mn[0] == 1.0 and all(math.isnan(v) for v in mn[1:])
    fx, fn = ea.fmax(a, b).tolist(), ea.fmin(a, b).tolist()
    assert fx[:3] == [2.0, 2.0, 3.0] and math.isnan(fx[3])
    assert fn[:3] == [1.0, 2.0, 3.0] and math.isnan(fn[3])
    assert ea.maximum(ea.tensor([True, False]), ea.tensor([False, False])).tolist() == [True, False]
    assert ea.maximum(ea.tensor([1, 5]), ea.tensor(3)).tolist() == [3, 5]
    assert ea.maximum(ea.tensor([1, 5]), ea.tensor(3.5)).dtype == ea.float32
    with pytest.raises(TypeError, match=r"maximum\(\): argument 'other' \(position 2\) must be Tensor, not int"):
        ea.maximum(ea.tensor([1, 5]), 3)  # PyTorch's maximum has no Scalar overload
    # long vectors go through the SIMD loops (NaN anywhere in a lane group)
    n = 1000
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x[::7] = np.nan
    y[::11] = np.nan
    tx, ty = ea.from_numpy(x), ea.from_numpy(y)
    np.testing.assert_array_equal(ea.maximum(tx, ty).numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(ea.minimum(tx, ty).numpy(), np.minimum(x, y))
    np.testing.assert_array_equal(ea.clamp(tx, -0.5, 0.5).numpy(), np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(ea.where(tx > 0, tx, ty).numpy(), np.where(x > 0, x, y))
    np.testing.assert_array_equal((tx > ty).numpy(), x > y)
    np.testing.assert_array_equal((tx <= 0.25).numpy(), x <= 0.25)


def test_large_inputs_run_in_parallel_chunks() -> None:
    """Above the grain size the loops run in chunks on several threads: same results."""
    n = 100_003
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    tx, ty = ea.from_numpy(x), ea.from_numpy(y)
    np.testing.assert_array_equal(ea.maximum(tx, ty).numpy(), np.maximum(x, y))
    np.testing.assert_array_equal(ea.where(tx < ty, tx, 0.0).numpy(), np.where(x < y, x, np.float32(0)))
    np.testing.assert_array_equal((tx == ty).numpy(), x == y)
    np.testing.assert_allclose(ea.lerp(tx, ty, 0.3).numpy(), x + np.float32(0.3) * (y - x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ea.addcmul(tx, tx, ty, value=2).numpy(), x + 2 * x * y, rtol=1e-5, atol=1e-6)


def test_bfloat16_and_half_values() -> None:
    for dt in (ea.float16, ea.bfloat16):
        a = tensor_from(np.array([1.0, -2.0, 3.5]), dt)
        b = tensor_from(np.array([2.0, -2.0, 0.5]), dt)
        assert ea.maximum(a, b).float().tolist() == [2.0, -2.0, 3.5]
        assert (a < b).tolist() == [True, False, False]
        assert ea.where(a > 0, a, b).float().tolist() == [1.0, -2.0, 3.5]
        assert ea.clamp(a, -1, 2).float().tolist() == [1.0, -1.0, 2.0]
        assert ea.remainder(a, 2).float().tolist() == [1.0, 0.0, 1.5]
        assert (a**2).float().tolist() == [1.0, 4.0, 12.25]


@pytest.mark.parametrize("dtype", [ea.int32, ea.float16, ea.float32, ea.float64])
def test_pow_expanded_inputs(dtype: Any) -> None:
    """Stride-0 (expanded) operands give the materialised result."""
    row = ea.tensor([[1, 2, 3, 0]], dtype=dtype).expand(3, 4)
    exp = ea.tensor([[2], [3], [0]], dtype=dtype).expand(3, 4)
    assert row.stride(0) == 0 and exp.stride(1) == 0
    expected = np.array([1, 2, 3, 0], dtype=np.float64)[None, :] ** np.array([2, 3, 0], dtype=np.float64)[:, None]
    _check_values(ea.pow(row, exp), expected, dtype)
    _check_values(row**2, np.tile(np.array([1, 4, 9, 0.0]), (3, 1)), dtype)


@pytest.mark.parametrize("dtype", [ea.float16, ea.float32, ea.float64])
def test_nextafter_exact(dtype: Any) -> None:
    nd = np_dtype(dtype)
    a = np.array([0.0, -0.0, 1.0, -1.0, 1.0, np.inf, -np.inf, 65504.0, np.nan, 1.0], dtype=nd)
    b = np.array([1.0, -1.0, 2.0, -2.0, 0.0, 0.0, 0.0, np.inf, 1.0, 1.0], dtype=nd)
    got = ea.nextafter(ea.from_numpy(a), ea.from_numpy(b)).numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.nextafter(a, b))  # bit for bit (NaN == NaN here)
    bf = tensor_from(np.array([1.0, 0.0, -1.0]), ea.bfloat16)
    up = ea.nextafter(bf, tensor_from(np.array([2.0, -1.0, -2.0]), ea.bfloat16)).float().tolist()
    assert up == [1.0 + 2.0**-7, -(2.0**-133), -1.0 - 2.0**-7]


def test_xlogy_logaddexp_heaviside() -> None:
    nan, inf = math.nan, math.inf
    x = ea.tensor([0.0, 0.0, 2.0, 1.0, 0.0])
    y = ea.tensor([0.0, nan, math.e, -1.0, inf])
    r = ea.xlogy(x, y).tolist()
    assert r[0] == 0.0 and math.isnan(r[1]) and r[2] == pytest.approx(2.0) and math.isnan(r[3]) and r[4] == 0.0
    assert ea.xlogy(ea.tensor([0, 2]), 4).tolist() == [0.0, pytest.approx(2 * math.log(4))]
    assert ea.xlogy(0, ea.tensor([3.0])).tolist() == [0.0]
    big = ea.tensor([1000.0, -inf, inf, -inf, 1.0])
    other = ea.tensor([1000.0, -inf, inf, inf, nan])
    r = ea.logaddexp(big, other).tolist()
    assert r[0] == pytest.approx(1000.0 + math.log(2)) and r[1] == -inf and r[2] == inf and r[3] == inf
    assert math.isnan(r[4])
    assert ea.logaddexp2(ea.tensor([3.0]), ea.tensor([3.0])).tolist() == [4.0]
    h = ea.heaviside(ea.tensor([-1.5, 0.0, 2.0]), ea.tensor([0.5]))
    assert h.tolist() == [0.0, 0.5, 1.0]
    assert ea.heaviside(ea.tensor([-3, 0, 3]), ea.tensor([7, 7, 7])).tolist() == [0, 7, 1]


def test_gcd_lcm_extremes() -> None:
    lo = -(2**63)
    a = ea.tensor([0, 12, -12, lo, 7, 0])
    b = ea.tensor([0, 18, 18, 6, 0, -5])
    assert ea.gcd(a, b).tolist() == [0, 6, 6, 2, 7, 5]
    # lcm(INT64_MIN, 6) = 3 * 2**63 wraps, as C's (and PyTorch's) int64 arithmetic
    assert ea.lcm(a, b).tolist() == [0, 36, 36, lo, 0, 0]
    assert ea.lcm(ea.tensor([4, -6]), ea.tensor([6, 4])).tolist() == [12, 12]
    x = ea.tensor([12, 18])
    assert x.gcd_(ea.tensor([8, 12])) is x and x.tolist() == [4, 6]


def test_ldexp_and_aliases() -> None:
    i = ea.tensor([1, 2, 3])
    assert ea.ldexp(i, i).dtype == ea.float32 and ea.ldexp(i, i).tolist() == [2.0, 8.0, 24.0]
    assert ea.ldexp(ea.tensor([1.0], dtype=ea.float64), ea.tensor([-1])).dtype == ea.float64
    f = ea.tensor([1.5, 2.0])
    assert f.ldexp_(ea.tensor([1, -1])) is f and f.tolist() == [3.0, 1.0]
    a, b = ea.tensor([6, 7]), ea.tensor([4, 2])
    assert ea.multiply(a, b).tolist() == [24, 14]
    assert ea.divide(a, b).tolist() == [1.5, 3.5]
    assert ea.divide(a, b, rounding_mode="floor").tolist() == [1, 3]
    assert ea.subtract(a, b, alpha=2).tolist() == [-2, 3]
    c = a.clone()
    assert c.multiply_(2) is c and c.tolist() == [12, 14]


@pytest.mark.parametrize("name", sorted(TENSOR_ONLY))
def test_python_number_refused_where_pytorch_types_tensor(name: str) -> None:
    """PyTorch has no .Scalar overload for these: a Python number on either side is a TypeError
    naming the argument; a 0-dim tensor is fine."""
    fn = getattr(ea, name)
    t = ea.tensor([1, 2, 3]) if name in ("gcd", "lcm") else ea.tensor([1.0, 2.0, 3.0])
    other = "values" if name == "heaviside" else "other"
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument '{other}' \(position 2\) must be Tensor, not int$"):
        fn(t, 2)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not float$"):
        fn(2.5, t)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument '{other}' \(position 1\) must be Tensor, not int$"):
        getattr(t, name)(2)
    assert tuple(fn(t, ea.tensor(2).to(t.dtype)).shape) == (3,)


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "fmod", "copysign", "rsub"])
def test_python_number_only_as_other(name: str) -> None:
    """These have PyTorch's .Scalar overload: a number as `other` only."""
    fn = getattr(ea, name)
    t = ea.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(fn(t, 2).numpy(), fn(t, ea.tensor(2.0)).numpy())
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not int$"):
        fn(2, t)
    assert (2 < t).tolist() == [False, False, True]  # the operators reflect: 2 < t is t > 2


def test_clamp_max_number_input_refused() -> None:
    t = ea.tensor([1.0, 5.0])
    assert ea.clamp_max(t, 2).tolist() == [1.0, 2.0]
    assert ea.clamp_max(t, ea.tensor([0.0, 9.0])).tolist() == [0.0, 5.0]
    with pytest.raises(TypeError, match=r"clamp_max\(\) received an invalid combination of arguments - got \(int"):
        ea.clamp_max(2, t)


def test_unbound_dunder_needs_a_tensor_self() -> None:
    t = ea.tensor([1.0, 2.0])
    assert ea.Tensor.__radd__(t, 2).tolist() == [3.0, 4.0]
    assert ea.Tensor.__rdiv__(t, 2).tolist() == [2.0, 1.0]
    with pytest.raises(TypeError, match=r"descriptor '__radd__' for 'Tensor' objects doesn't apply to a 'int' object"):
        ea.Tensor.__radd__(2, t)
    with pytest.raises(TypeError, match=r"descriptor '__rmul__'"):
        ea.Tensor.__rmul__(2, 3)
    assert (2 + t).tolist() == [3.0, 4.0]


def test_tensor_for_a_tensor_list_refused() -> None:
    t = ea.ones(2, 3)
    with pytest.raises(
        TypeError, match=r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor$"
    ):
        ea.cat(t)
    with pytest.raises(TypeError, match=r"^stack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors"):
        ea.stack(t)
    assert tuple(ea.cat((t, t)).shape) == (4, 3)
