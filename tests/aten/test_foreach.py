"""The _foreach_ operators: every op and overload against NumPy, element by element, over
lists of mixed shapes (0-dim, empty, one large enough to split across threads) in four
layouts -- contiguous and dense-transposed (the fused multi-tensor loop), strided views
and mixed dtypes (the tensor-by-tensor path) -- in place and out of place, on every CPU
capability; PyTorch's argument checks and messages; in-place results, aliasing and
version counters."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.core import TOLERANCES, assert_close, make_array, tensor_from, to_reference

FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]
# the last shape crosses the parallel grain (32768 elements) on its own
SHAPES = [(), (0,), (7,), (3, 5), (2, 3, 4), (1, 1), (33000,)]
LAYOUTS = ["contiguous", "transposed", "strided", "mixed"]
# (dtype, layout): the tensor-by-tensor layouts reuse the per-tensor kernels (tested with
# their ops), so they run in two dtypes
CASES = [(dt, lay) for lay in LAYOUTS for dt in FLOATS if lay in ("contiguous", "transposed") or dt in FLOATS[:2]]
CASE_IDS = [f"{dt._name}-{lay}" for dt, lay in CASES]
FAST_LAYOUTS = ("contiguous", "transposed")  # the multi-tensor kernel (one copy per CPU capability)


_ORDER = ["default", "avx2", "avx512"]


def available_capabilities() -> list[str]:
    best = ea._C._detected_cpu_capability()
    return _ORDER[: _ORDER.index(best) + 1]


def capabilities(layout: str) -> Iterator[str]:
    """Every CPU capability for the layouts the multi-tensor kernel runs; the current one else."""
    previous = ea._C._get_cpu_capability()
    if layout not in FAST_LAYOUTS:
        yield previous
        return
    try:
        for cap in available_capabilities():
            ea._C._set_cpu_capability(cap)
            yield cap
    finally:
        ea._C._set_cpu_capability(previous)


def _layout(t: Any, layout: str) -> Any:
    """The same values laid out as `layout` asks (the list's other operands get the same)."""
    if layout == "transposed" and t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1:
        out = t.transpose(-1, -2).clone(memory_format=ea.contiguous_format).transpose(-1, -2)
        assert not out.is_contiguous()
        return out
    if layout == "strided" and t.dim() >= 1 and t.numel() > 0:
        big = ea.zeros((*t.shape[:-1], t.shape[-1] * 2), dtype=t.dtype)
        view = big[..., ::2]
        view.copy_(t)
        return view
    return t


def make_lists(
    n: int, dtype: Any, layout: str, *, low: float = -4.0, high: float = 4.0, shapes: list[tuple[int, ...]] = SHAPES
) -> tuple[list[list[Any]], list[list[np.ndarray]]]:
    """n lists of tensors (one per shape) and their float64 NumPy values."""
    tensors: list[list[Any]] = []
    arrays: list[list[np.ndarray]] = []
    for _ in range(n):
        ts, arrs = [], []
        for i, shape in enumerate(shapes):
            dt = ea.float64 if (layout == "mixed" and i % 2 == 1) else dtype
            a = make_array(shape, dt, low=low, high=high)
            ts.append(_layout(tensor_from(a, dt), layout))
            arrs.append(np.asarray(a, dtype=np.float64))
        tensors.append(ts)
        arrays.append(arrs)
    return tensors, arrays


def _copy(t: Any) -> Any:
    """A copy with t's strides (a strided view stays a strided view)."""
    out = ea.empty_strided(t.shape, t.stride(), dtype=t.dtype)
    out.copy_(t)
    return out


def _tol(dtype: Any, loose: bool = False) -> tuple[float, float]:
    atol, rtol = TOLERANCES[dtype]
    return (atol * 4, rtol * 4) if loose else (atol, rtol)


def check_results(
    got: Any, expected: list[np.ndarray], like: list[Any], dtype: Any, what: str, loose: bool = False
) -> None:
    assert isinstance(got, tuple), f"{what}: out-of-place foreach returns a tuple, got {type(got)}"
    assert len(got) == len(expected)
    for i, (g, e, x) in enumerate(zip(got, expected, like, strict=True)):
        assert g.shape == x.shape, f"{what}[{i}]: shape {g.shape} != {x.shape}"
        assert g.dtype == x.dtype, f"{what}[{i}]: dtype {g.dtype} != {x.dtype}"
        atol, rtol = _tol(x.dtype, loose)
        assert_close(g, e, x.dtype, atol=atol, rtol=rtol, msg=f"{what}[{i}] {tuple(x.shape)}")


def run_both(
    name: str,
    lists: list[list[Any]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    expected: list[np.ndarray],
    dtype: Any,
    what: str,
    loose: bool = False,
) -> None:
    """Out of place (inputs untouched) and in place (the same list returned, values written,
    versions bumped) against the same reference."""
    fn = getattr(ea, f"_foreach_{name}")
    before = [to_reference(t) for t in lists[0]]
    got = fn(lists[0], *lists[1:], *args, **kwargs)
    check_results(got, expected, lists[0], dtype, f"{what} out-of-place", loose)
    for t, b in zip(lists[0], before, strict=True):
        np.testing.assert_array_equal(to_reference(t), b)  # the inputs are untouched
    inplace = getattr(ea, f"_foreach_{name}_", None)
    if inplace is None:
        return
    self_list = [_copy(t) for t in lists[0]]
    versions = [t._version for t in self_list]
    r = inplace(self_list, *lists[1:], *args, **kwargs)
    assert r is self_list, f"{what}: in-place foreach returns its self list"
    check_results(tuple(self_list), expected, lists[0], dtype, f"{what} in-place", loose)
    assert [t._version for t in self_list] == [v + 1 for v in versions]


# ---- binary ops: .Scalar / .ScalarList / .List / .Tensor -------------------------------------

BINARY: dict[str, tuple[Callable[..., Any], tuple[float, float]]] = {
    # name: (reference(x, y), value range of the inputs)
    "add": (lambda x, y: x + y, (-4.0, 4.0)),
    "sub": (lambda x, y: x - y, (-4.0, 4.0)),
    "mul": (lambda x, y: x * y, (-4.0, 4.0)),
    "div": (lambda x, y: x / y, (0.5, 4.0)),
    "maximum": (np.maximum, (-4.0, 4.0)),
    "minimum": (np.minimum, (-4.0, 4.0)),
    "clamp_min": (np.maximum, (-4.0, 4.0)),
    "clamp_max": (np.minimum, (-4.0, 4.0)),
    "pow": (np.power, (0.5, 2.0)),
}
SCALAR_OVERLOAD = {"add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow"}
TENSOR_OVERLOAD = {"add", "mul", "div"}
ALPHA = {"add", "sub"}


def _binary_case(name: str, dtype: Any, layout: str) -> None:
    ref, (low, high) = BINARY[name]
    (xs, ys), (xa, ya) = make_lists(2, dtype, layout, low=low, high=high)
    n = len(xs)
    # .Scalar
    s = 1.5
    run_both(name, [xs], (s,), {}, [ref(x, s) for x in xa], dtype, f"{name}.Scalar")
    # .ScalarList: ints and floats mixed
    scalars = [1.5 if i % 2 else 2 for i in range(n)]
    run_both(
        name, [xs], (scalars,), {}, [ref(x, v) for x, v in zip(xa, scalars, strict=True)], dtype, f"{name}.ScalarList"
    )
    # .List
    run_both(name, [xs, ys], (), {}, [ref(x, y) for x, y in zip(xa, ya, strict=True)], dtype, f"{name}.List")
    if name in ALPHA:
        alpha = 0.25
        exp = [ref(x, alpha * y) for x, y in zip(xa, ya, strict=True)]
        run_both(name, [xs, ys], (), {"alpha": alpha}, exp, dtype, f"{name}.List alpha")
    if name in TENSOR_OVERLOAD:
        other = ea.tensor(0.75 if name != "div" else 1.25, dtype=dtype)
        v = float(other.item())
        run_both(name, [xs], (other,), {}, [ref(x, v) for x in xa], dtype, f"{name}.Tensor")
        if name in ALPHA:
            run_both(name, [xs], (other,), {"alpha": 2}, [ref(x, 2 * v) for x in xa], dtype, f"{name}.Tensor alpha")


@pytest.mark.parametrize(("dtype", "layout"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name: str, dtype: Any, layout: str) -> None:
    for _ in capabilities(layout):
        _binary_case(name, dtype, layout)


def test_tensor_overload_promotes_as_the_per_tensor_op() -> None:
    # a 0-dim float32 tensor and a 0-dim float64 `other` are both dimensionless: float64
    xs = [ea.tensor(2.0), ea.ones(3), ea.ones(2, 2)]
    other = ea.tensor(0.5, dtype=ea.float64)
    for fn in (ea._foreach_mul, ea._foreach_div, ea._foreach_add):
        got = fn(xs, other)
        assert [g.dtype for g in got] == [ea.float64, ea.float32, ea.float32]
    assert ea._foreach_mul(xs, other)[0].item() == 1.0
    assert ea._foreach_add(xs, ea.tensor(2))[1].tolist() == [3.0, 3.0, 3.0]  # an integer other: float32
    ea._foreach_mul_(xs, other)  # in place: written back in self's dtype
    assert [x.dtype for x in xs] == [ea.float32] * 3 and xs[0].item() == 1.0


def test_binary_nan_propagates() -> None:
    nan = math.nan
    xs = [ea.tensor([nan, 1.0, 2.0]), ea.tensor([3.0, nan])]
    ys = [ea.tensor([0.0, nan, 5.0]), ea.tensor([nan, 1.0])]
    for name, ref in [
        ("maximum", np.maximum),
        ("minimum", np.minimum),
        ("clamp_min", np.maximum),
        ("clamp_max", np.minimum),
    ]:
        got = getattr(ea, f"_foreach_{name}")(xs, ys)
        for g, x, y in zip(got, xs, ys, strict=True):
            np.testing.assert_array_equal(g.numpy(), ref(x.numpy(), y.numpy()))
        got = getattr(ea, f"_foreach_{name}")(xs, nan)
        assert all(np.isnan(g.numpy()).all() for g in got)


# ---- unary ops ---------------------------------------------------------------------------------

UNARY: dict[str, tuple[Callable[..., Any], tuple[float, float]]] = {
    "sqrt": (np.sqrt, (0.0, 9.0)),
    "neg": (np.negative, (-4.0, 4.0)),
    "abs": (np.abs, (-4.0, 4.0)),
    "exp": (np.exp, (-5.0, 5.0)),
    "reciprocal": (np.reciprocal, (0.25, 4.0)),
    "sign": (np.sign, (-4.0, 4.0)),
}


def _unary_case(name: str, dtype: Any, layout: str) -> None:
    ref, (low, high) = UNARY[name]
    (xs,), (xa,) = make_lists(1, dtype, layout, low=low, high=high)
    run_both(name, [xs], (), {}, [ref(x) for x in xa], dtype, name)


@pytest.mark.parametrize(("dtype", "layout"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name: str, dtype: Any, layout: str) -> None:
    for _ in capabilities(layout):
        _unary_case(name, dtype, layout)


def test_unary_special_values() -> None:
    x = [ea.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, -2.0])]
    np.testing.assert_array_equal(ea._foreach_sign(x)[0].numpy(), [0.0, 0.0, 1.0, -1.0, 0.0, -1.0])
    np.testing.assert_array_equal(ea._foreach_abs(x)[0].numpy(), [0.0, 0.0, math.inf, math.inf, math.nan, 2.0])
    assert not np.signbit(ea._foreach_abs(x)[0].numpy()[1])
    np.testing.assert_array_equal(ea._foreach_exp(x)[0].numpy()[2:5], [math.inf, 0.0, math.nan])
    np.testing.assert_array_equal(ea._foreach_reciprocal(x)[0].numpy()[:2], [math.inf, -math.inf])


# ---- addcmul / addcdiv -------------------------------------------------------------------------


def _addcmul_addcdiv_case(name: str, dtype: Any, layout: str) -> None:
    (xs, t1, t2), (xa, a1, a2) = make_lists(3, dtype, layout, low=0.5, high=3.0)

    def ref(x: np.ndarray, a: np.ndarray, b: np.ndarray, v: float) -> np.ndarray:
        return x + v * a * b if name == "addcmul" else x + v * a / b

    n = len(xs)
    run_both(
        name,
        [xs, t1, t2],
        (),
        {},
        [ref(*z, 1.0) for z in zip(xa, a1, a2, strict=True)],
        dtype,
        f"{name}.Scalar default",
        loose=True,
    )
    run_both(
        name,
        [xs, t1, t2],
        (),
        {"value": -0.5},
        [ref(*z, -0.5) for z in zip(xa, a1, a2, strict=True)],
        dtype,
        f"{name}.Scalar",
        loose=True,
    )
    vals = [0.1 * (i + 1) for i in range(n)]
    exp = [ref(x, a, b, v) for x, a, b, v in zip(xa, a1, a2, vals, strict=True)]
    run_both(name, [xs, t1, t2], (vals,), {}, exp, dtype, f"{name}.ScalarList", loose=True)
    # .Tensor: a 1-d tensor of one scalar per tensor (what Adam's foreach path passes)
    packed = ea.tensor(vals, dtype=ea.float64)
    exp = [ref(x, a, b, float(v)) for x, a, b, v in zip(xa, a1, a2, packed.tolist(), strict=True)]
    run_both(name, [xs, t1, t2], (packed,), {}, exp, dtype, f"{name}.Tensor", loose=True)


@pytest.mark.parametrize(("dtype", "layout"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name: str, dtype: Any, layout: str) -> None:
    for _ in capabilities(layout):
        _addcmul_addcdiv_case(name, dtype, layout)


def test_addcmul_same_tensor_twice() -> None:
    # exp_avg_sq.addcmul_(grad, grad): tensor1 is tensor2
    v = [ea.ones(5), ea.ones(3, 3)]
    g = [ea.full((5,), 2.0), ea.full((3, 3), 3.0)]
    ea._foreach_addcmul_(v, g, g, value=0.5)
    np.testing.assert_allclose(v[0].numpy(), np.full(5, 3.0))
    np.testing.assert_allclose(v[1].numpy(), np.full((3, 3), 5.5))


# ---- lerp ----------------------------------------------------------------------------------------


def _lerp_case(dtype: Any, layout: str) -> None:
    (xs, ends, ws), (xa, ea_, wa) = make_lists(3, dtype, layout, low=-2.0, high=2.0)
    n = len(xs)
    for w in (0.1, 0.5, 0.9, 1.0):  # both of PyTorch's formulas (|w| < 0.5 and the rest)
        run_both(
            "lerp",
            [xs, ends],
            (w,),
            {},
            [x + w * (e - x) for x, e in zip(xa, ea_, strict=True)],
            dtype,
            f"lerp.Scalar {w}",
            loose=True,
        )
    weights = [0.2 if i % 2 else 0.8 for i in range(n)]
    exp = [x + w * (e - x) for x, e, w in zip(xa, ea_, weights, strict=True)]
    run_both("lerp", [xs, ends], (weights,), {}, exp, dtype, "lerp.ScalarList", loose=True)
    exp = [x + w * (e - x) for x, e, w in zip(xa, ea_, wa, strict=True)]
    run_both("lerp", [xs, ends, ws], (), {}, exp, dtype, "lerp.List", loose=True)


@pytest.mark.parametrize(("dtype", "layout"), CASES, ids=CASE_IDS)
def test_lerp(dtype: Any, layout: str) -> None:
    for _ in capabilities(layout):
        _lerp_case(dtype, layout)


def test_lerp_endpoints_exact() -> None:
    x = [ea.tensor([1.0, -3.0, 1e8])]
    e = [ea.tensor([2.0, 5.0, -1e-8])]
    np.testing.assert_array_equal(ea._foreach_lerp(x, e, 0.0)[0].numpy(), x[0].numpy())
    np.testing.assert_array_equal(ea._foreach_lerp(x, e, 1.0)[0].numpy(), e[0].numpy())


# ---- pow with a number base, zero_, copy_, norm ---------------------------------------------------


def _scalar_pow_zero_copy_case(dtype: Any, layout: str) -> None:
    (xs, src), (xa, sa) = make_lists(2, dtype, layout, low=-2.0, high=2.0)
    got = ea._foreach_pow(0.9, xs)  # pow.ScalarAndTensor: bias corrections beta ** step
    check_results(got, [np.power(0.9, x) for x in xa], xs, dtype, "pow.ScalarAndTensor")
    targets = [t.clone() for t in xs]
    versions = [t._version for t in targets]
    assert ea._foreach_copy_(targets, src) is targets
    check_results(tuple(targets), sa, xs, dtype, "copy_")
    assert [t._version for t in targets] == [v + 1 for v in versions]
    ea._foreach_zero_(targets)
    check_results(tuple(targets), [np.zeros_like(x) for x in xa], xs, dtype, "zero_")


@pytest.mark.parametrize(("dtype", "layout"), CASES, ids=CASE_IDS)
def test_scalar_pow_zero_copy(dtype: Any, layout: str) -> None:
    for _ in capabilities(layout):
        _scalar_pow_zero_copy_case(dtype, layout)


def test_zero_and_copy_of_strided_views_leave_the_rest() -> None:
    base = ea.ones(4, 6)
    view = base[:, ::2]
    ea._foreach_zero_([view])
    np.testing.assert_array_equal(base.numpy(), np.tile([0.0, 1.0], (4, 3)))
    ea._foreach_copy_([view], [ea.full((4, 3), 7, dtype=ea.int64)])  # copy_ casts, as Tensor.copy_
    np.testing.assert_array_equal(base.numpy(), np.tile([7.0, 1.0], (4, 3)))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("ord", [2, 1, 3.0, math.inf, -math.inf, 0])
def test_norm(dtype: Any, ord: float) -> None:
    shapes = [s for s in SHAPES if s != (0,) or ord not in (math.inf, -math.inf)]  # max of nothing
    (xs,), (xa,) = make_lists(1, dtype, "contiguous", low=-3.0, high=3.0, shapes=shapes)
    got = ea._foreach_norm(xs, ord)
    assert isinstance(got, tuple) and len(got) == len(xs)
    for g, x, a in zip(got, xs, xa, strict=True):
        assert g.shape == () and g.dtype == x.dtype
        flat = a.reshape(-1)
        if ord == 0:
            exp = np.count_nonzero(flat)
        elif ord in (math.inf, -math.inf):
            exp = np.abs(flat).max() if ord > 0 else np.abs(flat).min()
        else:
            exp = np.sum(np.abs(flat) ** ord) ** (1.0 / ord)
        atol, rtol = TOLERANCES[dtype]
        assert_close(g, np.asarray(exp), dtype, atol=atol * 10, rtol=rtol * 10, msg=f"norm ord={ord}")


def test_norm_dtype_and_default() -> None:
    xs = [ea.tensor([3.0, 4.0], dtype=ea.float16), ea.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=ea.float16)]
    got = ea._foreach_norm(xs, 2, dtype=ea.float64)
    assert [g.dtype for g in got] == [ea.float64, ea.float64]
    assert [g.item() for g in got] == [5.0, 5.0]
    assert [g.item() for g in ea._foreach_norm(xs)] == [5.0, 5.0]


# ---- integer lists take the per-tensor ops' dtype rules -----------------------------------------


def test_integer_lists_follow_the_per_tensor_dtype_rules() -> None:
    xs = [ea.tensor([1, 2, 3]), ea.tensor([[4, -5]])]
    assert [t.dtype for t in ea._foreach_add(xs, 2)] == [ea.int64, ea.int64]
    assert [t.tolist() for t in ea._foreach_add(xs, 2)] == [[3, 4, 5], [[6, -3]]]
    half = ea._foreach_add(xs, 1.5)
    assert [t.dtype for t in half] == [ea.float32, ea.float32]
    assert half[0].tolist() == [2.5, 3.5, 4.5]
    assert [t.dtype for t in ea._foreach_div(xs, 2)] == [ea.float32, ea.float32]
    assert ea._foreach_div(xs, 2)[1].tolist() == [[2.0, -2.5]]
    assert [t.dtype for t in ea._foreach_sqrt(xs)] == [ea.float32, ea.float32]
    assert ea._foreach_abs(xs)[1].tolist() == [[4, 5]]
    assert ea._foreach_sign(xs)[1].tolist() == [[1, -1]]
    assert ea._foreach_maximum(xs, [2, 0])[0].tolist() == [2, 2, 3]
    ea._foreach_mul_(xs, 3)
    assert xs[0].tolist() == [3, 6, 9]
    with pytest.raises(RuntimeError, match=r"result type Float can't be cast to the desired output type Long"):
        ea._foreach_add_(xs, 1.5)
    with pytest.raises(RuntimeError, match=r"result type Float can't be cast to the desired output type Long"):
        ea._foreach_sqrt_(xs)
    with pytest.raises(RuntimeError, match=r"Integers to negative integer powers are not allowed\."):
        ea._foreach_pow(xs, -1)
    with pytest.raises(RuntimeError, match=r"Integer division with addcdiv is no longer supported"):
        ea._foreach_addcdiv(xs, xs, xs)
    b = [ea.tensor([True, False])]
    with pytest.raises(RuntimeError, match=r"Subtraction, the `-` operator, with a bool tensor is not supported"):
        ea._foreach_sub(b, 1)
    with pytest.raises(RuntimeError, match=r"Negation, the `-` operator, on a bool tensor is not supported"):
        ea._foreach_neg(b)


def test_mixed_dtypes_and_broadcasting_take_the_per_tensor_path() -> None:
    xs = [ea.ones(2, 3), ea.ones(4, dtype=ea.float64)]
    ys = [ea.arange(3.0), ea.full((1,), 2.0, dtype=ea.float32)]  # broadcast into self, as add_
    out = ea._foreach_add(xs, ys)
    assert out[0].tolist() == [[1.0, 2.0, 3.0]] * 2
    assert out[1].dtype == ea.float64 and out[1].tolist() == [3.0] * 4
    ea._foreach_mul_(xs, ys)
    assert xs[0].tolist() == [[0.0, 1.0, 2.0]] * 2 and xs[1].tolist() == [2.0] * 4


def test_the_same_tensor_twice_in_place() -> None:
    x = ea.zeros(40000)
    ea._foreach_add_([x, x, x], 1.0)  # three adds, none lost to a race between threads
    assert float(x.min()) == 3.0 and float(x.max()) == 3.0


def test_in_place_writes_through_views() -> None:
    base = ea.zeros(3, 8)
    views = [base[0], base[1, ::2], base[2, 1:3]]
    ea._foreach_add_(views, [1.0, 2.0, 3.0])
    exp = np.zeros((3, 8))
    exp[0] = 1.0
    exp[1, ::2] = 2.0
    exp[2, 1:3] = 3.0
    np.testing.assert_array_equal(base.numpy(), exp)


def test_tuple_arguments_and_returns() -> None:
    xs = (ea.ones(2), ea.ones(3))
    r = ea._foreach_mul(xs, (ea.full((2,), 2.0), ea.full((3,), 3.0)))
    assert isinstance(r, tuple) and r[1].tolist() == [3.0, 3.0, 3.0]
    assert ea._foreach_add_(xs, 1) is xs
    assert xs[0].tolist() == [2.0, 2.0]


# ---- argument checks -------------------------------------------------------------------------------


def test_errors() -> None:
    a = [ea.ones(2), ea.ones(3)]
    b = [ea.ones(2), ea.ones(3), ea.ones(4)]
    with pytest.raises(RuntimeError, match=r"^Tensor list must have at least one tensor\.$"):
        ea._foreach_add([], 1)
    with pytest.raises(RuntimeError, match=r"^Tensor list must have at least one tensor\.$"):
        ea._foreach_norm([])
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 3$"):
        ea._foreach_add(a, b)
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 3$"):
        ea._foreach_mul_(a, b)
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 3$"):
        ea._foreach_addcmul_(a, a, b)
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 3$"):
        ea._foreach_lerp(a, b, 0.5)
    with pytest.raises(RuntimeError, match=r"^Tensor lists must have the same number of tensors, got 2 and 3$"):
        ea._foreach_copy_(a, b)
    with pytest.raises(RuntimeError, match=r"^Tensor list must have same number of elements as scalar list\.$"):
        ea._foreach_add(a, [1.0])
    with pytest.raises(RuntimeError, match=r"^Tensor list must have same number of elements as scalar list\.$"):
        ea._foreach_addcdiv_(a, a, a, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"^Tensor list must have same number of elements as scalar list\.$"):
        ea._foreach_lerp(a, a, [0.5])
    with pytest.raises(
        RuntimeError, match=r"^scalar tensor expected to be 0 dim but it has 1 dimensions and 2 elements\.$"
    ):
        ea._foreach_add(a, ea.ones(2))
    with pytest.raises(
        RuntimeError, match=r"^scalar tensor expected to be 0 dim but it has 1 dimensions and 1 elements\.$"
    ):
        ea._foreach_mul_(a, ea.ones(1))
    with pytest.raises(
        RuntimeError, match=r"^Expected length of scalars to match input of length 2 but got 3 instead\.$"
    ):
        ea._foreach_addcmul(a, a, a, ea.ones(3))
    with pytest.raises(RuntimeError, match=r"^Expected packed scalar Tensor to be of dimension 1\. Got 2 instead\.$"):
        ea._foreach_addcdiv(a, a, a, ea.ones(1, 2))
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b"):
        ea._foreach_add(a, [ea.ones(2), ea.ones(4)])
    with pytest.raises(RuntimeError, match=r"(?i)expected dtype float for `end` but got dtype double"):
        ea._foreach_lerp([ea.ones(2)], [ea.ones(2, dtype=ea.float64)], 0.5)
    with pytest.raises(RuntimeError, match=r"Expected a floating point or complex tensor as input\. Got Long"):
        ea._foreach_norm([ea.ones(2, dtype=ea.int64)])
    with pytest.raises(TypeError, match=r"_foreach_add"):
        ea._foreach_add(a, "x")


def test_errors_leave_a_partially_updated_list_untouched_before_the_first_tensor() -> None:
    # the checks run before any tensor is written
    a = [ea.ones(2), ea.ones(3)]
    with pytest.raises(RuntimeError):
        ea._foreach_add_(a, [1.0, 2.0, 3.0])
    assert a[0].tolist() == [1.0, 1.0] and a[1].tolist() == [1.0, 1.0, 1.0]
