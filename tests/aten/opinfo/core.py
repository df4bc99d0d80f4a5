"""OpInfo: the table that drives aten's operator tests (as PyTorch's OpInfo).

One OpInfo per operator says how to call it (function, method, in-place variant,
out=), which dtypes it supports, how to make sample inputs, and the NumPy (or
float64, written-out) reference it must match. ``tests/aten/test_ops.py`` runs
every entry through the same checks: reference values for every supported dtype,
non-contiguous inputs (transposed, strided slices, expanded), 0-dim and empty
tensors, out= (and a wrong-dtype out), in-place variants (same data_ptr, an error
when broadcasting would resize self), unsupported dtypes raising, every CPU
capability, and the op's own error inputs.

Op families add their entries in their own module of this package (pointwise.py,
reductions.py, ...) as a list named ``OPS``; ``op_db`` collects them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ember.aten as ea
import numpy as np

# ---- dtypes ---------------------------------------------------------------------

ALL_DTYPES = (
    ea.bool,
    ea.uint8,
    ea.int8,
    ea.int16,
    ea.int32,
    ea.int64,
    ea.float16,
    ea.bfloat16,
    ea.float32,
    ea.float64,
)
FLOAT_DTYPES = (ea.float16, ea.bfloat16, ea.float32, ea.float64)
INT_DTYPES = (ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64)
ALL_NUMERIC = INT_DTYPES + FLOAT_DTYPES  # everything but bool
ALL_WITH_BOOL = ALL_DTYPES

# (atol, rtol) when comparing against a float64 reference
TOLERANCES = {
    ea.float16: (1e-3, 1e-3),
    ea.bfloat16: (1e-2, 1.6e-2),
    ea.float32: (1e-5, 1.3e-6),
    ea.float64: (1e-7, 1e-7),
}

# The spacing of the reduced-precision dtypes' subnormals (their smallest positive value):
# an explicit tighter atol cannot be met by a result near zero, which can only be rounded
# to a multiple of it (e.g. float16 special.bessel_y1 at a zero of Y1).
SUBNORMAL_SPACING = {ea.float16: 2.0**-24, ea.bfloat16: 2.0**-133}

_NP_OF = {
    ea.bool: np.bool_,
    ea.uint8: np.uint8,
    ea.int8: np.int8,
    ea.int16: np.int16,
    ea.int32: np.int32,
    ea.int64: np.int64,
    ea.float16: np.float16,
    ea.float32: np.float32,
    ea.float64: np.float64,
}


def np_dtype(dtype: Any) -> Any:
    """NumPy dtype for an ember dtype (bfloat16 -> float32: NumPy has none)."""
    return _NP_OF.get(dtype, np.float32)


# ---- making tensors -----------------------------------------------------------------

_rng = np.random.default_rng(1234)


def rng() -> np.random.Generator:
    return _rng


def make_array(
    shape: tuple[int, ...],
    dtype: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    exclude_zero: bool = False,
) -> np.ndarray:
    """Random NumPy values exactly representable in `dtype` (so the tensor holds the same numbers)."""
    r = _rng
    if dtype == ea.bool:
        return r.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in INT_DTYPES:
        lo = 0 if dtype == ea.uint8 else (-9 if low is None else int(low))
        hi = 10 if high is None else int(high)
        if dtype == ea.uint8:
            lo = max(lo, 0)
        a = r.integers(lo, hi, size=shape).astype(np_dtype(dtype))
        if exclude_zero:
            a[a == 0] = 1
        return a
    lo = -9.0 if low is None else low
    hi = 9.0 if high is None else high
    a = r.uniform(lo, hi, size=shape)
    if exclude_zero:
        a[np.abs(a) < 1e-2] = 1.0
    # round through the dtype so the reference sees exactly the tensor's values
    if dtype == ea.bfloat16:
        bits = a.astype(np.float32).view(np.uint32)
        bits = ((bits.astype(np.uint64) + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
        return bits.view(np.float32).astype(np.float64)
    return a.astype(np_dtype(dtype)).astype(np.float64 if dtype in FLOAT_DTYPES else np_dtype(dtype))


def tensor_from(a: np.ndarray, dtype: Any) -> Any:
    """An ember tensor of `dtype` holding the values of `a`."""
    if dtype == ea.bfloat16:
        return ea.from_numpy(np.ascontiguousarray(a, dtype=np.float32).reshape(np.shape(a))).to(ea.bfloat16)
    return ea.from_numpy(np.ascontiguousarray(a).astype(np_dtype(dtype)).reshape(np.shape(a))).clone()


def make_tensor(shape: tuple[int, ...], dtype: Any, **kw: Any) -> Any:
    return tensor_from(make_array(shape, dtype, **kw), dtype)


def to_numpy(x: Any) -> Any:
    """Tensor -> NumPy (bfloat16 via float32); anything else unchanged, recursively."""
    if isinstance(x, ea.Tensor):
        if x.dtype == ea.bfloat16:
            x = x.float()
        return x.detach().cpu().numpy().copy()
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x) if not hasattr(x, "_fields") else type(x)(*[to_numpy(v) for v in x])
    return x


def to_reference(x: Any) -> Any:
    """Tensor -> float64 (or int64/bool) NumPy for computing references."""
    if isinstance(x, ea.Tensor):
        a = to_numpy(x)
        if a.dtype.kind == "f":
            return a.astype(np.float64)
        return a
    if isinstance(x, (list, tuple)):
        return type(x)(to_reference(v) for v in x)
    return x


def assert_close(
    actual: Any,
    expected: Any,
    dtype: Any,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Compare a result (tensor or tuple of tensors) with a NumPy reference."""
    if isinstance(actual, (tuple, list)):
        assert isinstance(expected, (tuple, list)) and len(actual) == len(expected), msg
        for a, e in zip(actual, expected, strict=True):
            assert_close(a, e, dtype, atol=atol, rtol=rtol, equal_nan=equal_nan, msg=msg)
        return
    if isinstance(actual, ea.Tensor):
        got = to_numpy(actual)
    else:
        got = np.asarray(actual)
    exp = np.asarray(expected)
    assert got.shape == exp.shape, f"{msg}: shape {got.shape} != expected {exp.shape}"
    if got.dtype.kind in "biu" and exp.dtype.kind in "biu":
        np.testing.assert_array_equal(got, exp, err_msg=msg)
        return
    d_atol, d_rtol = TOLERANCES.get(dtype, (1e-5, 1.3e-6))
    atol = d_atol if atol is None else atol
    if dtype in SUBNORMAL_SPACING:  # a correctly rounded subnormal result is off by up to half of it
        atol = max(atol, SUBNORMAL_SPACING[dtype])
    np.testing.assert_allclose(
        got.astype(np.float64),
        exp.astype(np.float64),
        atol=atol,
        rtol=d_rtol if rtol is None else rtol,
        equal_nan=equal_nan,
        err_msg=msg,
    )


# ---- layouts: the same values, other strides ----------------------------------------------


def noncontiguous_variants(t: Any) -> Iterator[tuple[str, Any]]:
    """(name, tensor equal in value to t but laid out differently)."""
    if t.numel() <= 1:
        return
    # every other element of a twice-as-long last dim
    if t.dim() >= 1:
        shape = (*t.shape[:-1], t.shape[-1] * 2)
        big = ea.empty(shape, dtype=t.dtype, device=t.device)
        strided = big[..., ::2]
        strided.copy_(t)
        assert not strided.is_contiguous()
        yield "sliced", strided
    # transposed storage
    if t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1:
        tt = t.transpose(-1, -2).clone(memory_format=ea.contiguous_format).transpose(-1, -2)
        assert not tt.is_contiguous()
        yield "transposed", tt


# ---- the table -------------------------------------------------------------------


@dataclass
class SampleInput:
    input: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    # in-place would have to resize `input` (the op broadcasts it to a bigger shape)
    broadcasts_input: bool = False
    name: str = ""
    # False: the op's gradient here differs by design from the derivative of its forward
    # (embedding's padding_idx row, scale_grad_by_freq): the gradient tests skip the sample
    gradcheck: bool = True

    def tensors(self) -> list[Any]:
        return [x for x in (self.input, *self.args) if isinstance(x, ea.Tensor)]


@dataclass
class ErrorInput:
    sample: SampleInput
    error_type: type[BaseException]
    error_regex: str


@dataclass
class OpInfo:
    name: str
    op: Callable[..., Any]
    dtypes: tuple[Any, ...]
    sample_inputs: Callable[[OpInfo, Any], Iterator[SampleInput]]
    # NumPy reference: ref(*numpy args, **kwargs) with tensors turned into float64 / int arrays
    ref: Callable[..., Any] | None = None
    method: Callable[..., Any] | None = None  # Tensor.name (default: looked up by name)
    inplace: Callable[..., Any] | None = None  # Tensor.name_ (default: looked up by name)
    supports_out: bool = True
    error_inputs: Callable[[OpInfo], Iterator[ErrorInput]] | None = None
    # ops whose result dtype is bool (comparisons) or float for int inputs (exp, div)
    result_dtype: Callable[[SampleInput], Any] | None = None
    supports_noncontiguous: bool = True
    supports_inplace_autograd: bool = True
    # False: the in-place method exists but follows other rules than the table's
    # (float_power_ accepts only a float64 self); tested by hand instead
    supports_inplace: bool = True
    atol: float | None = None
    rtol: float | None = None
    # dtypes compared with looser tolerances (reduced precision computing in float)
    tol_overrides: dict[Any, tuple[float, float]] = field(default_factory=dict)
    # not every dtype outside `dtypes` must raise (e.g. an op defined for all)
    check_unsupported: bool = True
    # differentiable w.r.t. floating inputs (used by the autograd tests)
    supports_autograd: bool = True
    gradcheck_sample_limit: int = 4
    # arguments autograd does not differentiate (PyTorch raises when they require grad):
    # positions in (input, *args) or keyword names, held constant by the gradient tests
    nondifferentiable_args: tuple[int | str, ...] = ()
    kind: str = ""

    def __post_init__(self) -> None:
        if self.method is None:
            self.method = getattr(ea.Tensor, self.name, None)
        if self.inplace is None and self.supports_inplace:
            self.inplace = getattr(ea.Tensor, self.name + "_", None)

    def tolerance(self, dtype: Any) -> tuple[float | None, float | None]:
        if dtype in self.tol_overrides:
            return self.tol_overrides[dtype]
        return self.atol, self.rtol


# ---- devices: the same sample on another device ------------------------------------------


def to_device(x: Any, device: Any) -> Any:
    """`x` with every tensor in it (also inside lists, tuples, dicts) moved to `device`."""
    if isinstance(x, ea.Tensor):
        return x.to(device)
    if isinstance(x, list):
        return [to_device(v, device) for v in x]
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(to_device(v, device) for v in x)
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x


def _has_tensor(x: Any) -> bool:
    if isinstance(x, ea.Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    if isinstance(x, dict):
        return any(_has_tensor(v) for v in x.values())
    return False


def _accepts_device(fn: Callable[..., Any] | None) -> bool:
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return any(p.name == "device" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def sample_to_device(s: SampleInput, device: Any, fn: Callable[..., Any] | None = None) -> SampleInput:
    """The sample with its tensors on `device`; a sample without tensors (a factory's) gets
    ``device=`` instead when `fn` takes that keyword. "cpu" returns `s` itself."""
    if str(device) == "cpu":
        return s
    kwargs = to_device(s.kwargs, device)
    if not _has_tensor((s.input, s.args, s.kwargs)) and _accepts_device(fn):
        kwargs["device"] = device
    return SampleInput(
        to_device(s.input, device),
        to_device(s.args, device),
        kwargs,
        broadcasts_input=s.broadcasts_input,
        name=s.name,
        gradcheck=s.gradcheck,
    )


def elementwise_shapes() -> list[tuple[int, ...]]:
    """Shapes every pointwise op is tried on: 0-dim, empty, vectors, matrices, 3-d."""
    return [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


def broadcast_pairs() -> list[tuple[tuple[int, ...], tuple[int, ...], bool]]:
    """(shape a, shape b, a is broadcast to a bigger shape)."""
    return [
        ((3, 4), (3, 4), False),
        ((3, 4), (4,), False),
        ((3, 1), (1, 4), True),
        ((2, 3, 4), (3, 1), False),
        ((4,), (2, 3, 4), True),
        ((), (3, 4), True),
        ((3, 4), (), False),
        ((0, 4), (4,), False),
    ]


def expected_result_type(*operands: Any) -> Any:
    """PyTorch's result_type, written here on top of c10's promote_types (whose table
    tests/c10py checks pair by pair), independently of aten's C++ version."""
    from ember.c10py import promote_types

    def promote(a: Any, b: Any) -> Any:
        if a is None:
            return b
        if b is None:
            return a
        return promote_types(a, b)

    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, ea.Tensor):
            if x.dim() == 0:
                zero = promote(zero, x.dtype)
            else:
                dim = promote(dim, x.dtype)
        elif isinstance(x, bool):
            wrapped = promote(wrapped, ea.bool)
        elif isinstance(x, int):
            wrapped = promote(wrapped, ea.int64)
        elif isinstance(x, float):
            wrapped = promote(wrapped, ea.get_default_dtype())

    def combine(higher: Any, lower: Any) -> Any:
        if higher is not None and higher.is_floating_point:
            return higher
        if higher == ea.bool or (lower is not None and lower.is_floating_point):
            return promote(higher, lower)
        return higher if higher is not None else lower

    return combine(dim, combine(zero, wrapped))


def isclose_nan(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b
