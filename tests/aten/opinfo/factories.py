"""OpInfo entries of the factories: *_like (whose input is a tensor) and the range /
constant factories (whose "input" is their first argument), every dtype they support.

out=, requires_grad, dtype inference and the errors of the factories are tested
in test_factories.py (the table's out= check assumes an op that refuses a
narrower out dtype, which factories do not).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import ALL_DTYPES, ALL_NUMERIC, OpInfo, SampleInput, elementwise_shapes, make_tensor


def _like_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in elementwise_shapes():
        yield SampleInput(make_tensor(shape, dtype))
    yield SampleInput(make_tensor((2, 3), dtype), kwargs={"dtype": ea.float64})


def _full_like_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape in elementwise_shapes():
        yield SampleInput(make_tensor(shape, dtype), (1 if dtype == ea.bool else 3,))
    yield SampleInput(make_tensor((2, 3), dtype), (2,), {"dtype": ea.int16})


def _like_dtype(s: SampleInput) -> Any:
    return s.kwargs.get("dtype", s.input.dtype)


def _kw_dtype(s: SampleInput) -> Any:
    return s.kwargs["dtype"]


def _sized_samples(*cases: tuple[Any, tuple[Any, ...]]):
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for first, args in cases:
            yield SampleInput(first, args, {"dtype": dtype})

    return gen


def _arange_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for first, args in [(5, ()), (0, ()), (2, (9,)), (10, (0, -3)), (-4, (4, 3)), (3, (3,))]:
        yield SampleInput(first, args, {"dtype": dtype})
    if dtype.is_floating_point:
        for first, args in [(5.0, ()), (-3, (7.5, 0.25)), (1, (2.5, 0.5)), (2.0, (-2.0, -0.5))]:
            yield SampleInput(first, args, {"dtype": dtype})


def _linspace_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for first, args in [(0, (10, 11)), (-4, (4, 5)), (3, (3, 4)), (0, (8, 1)), (2, (5, 0)), (10, (0, 6))]:
        yield SampleInput(first, args, {"dtype": dtype})
    if dtype.is_floating_point:
        yield SampleInput(-1.5, (2.25, 7), {"dtype": dtype})


def _logspace_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for first, args in [(0, (2, 3)), (0, (4, 5, 2.0)), (2, (0, 3)), (1, (1, 1))]:
        yield SampleInput(first, args, {"dtype": dtype})
    if dtype.is_floating_point:
        yield SampleInput(-1.0, (1.0, 5), {"dtype": dtype})


def _no_dtype(f: Any) -> Any:
    """A NumPy reference that ignores the dtype keyword (the check casts the values)."""
    return lambda *a, dtype=None, **kw: f(*a, **kw)


OPS = [
    OpInfo(
        "zeros_like",
        ea.zeros_like,
        ALL_DTYPES,
        _like_samples,
        ref=_no_dtype(np.zeros_like),
        result_dtype=_like_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "ones_like",
        ea.ones_like,
        ALL_DTYPES,
        _like_samples,
        ref=_no_dtype(np.ones_like),
        result_dtype=_like_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "full_like",
        ea.full_like,
        ALL_DTYPES,
        _full_like_samples,
        ref=_no_dtype(lambda a, v: np.full(a.shape, v)),
        result_dtype=_like_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "zeros",
        ea.zeros,
        ALL_DTYPES,
        _sized_samples(((2, 3), ()), ((), ()), ((0, 4), ())),
        ref=_no_dtype(np.zeros),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "ones",
        ea.ones,
        ALL_DTYPES,
        _sized_samples(((2, 3), ()), ((), ())),
        ref=_no_dtype(np.ones),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "full",
        ea.full,
        ALL_DTYPES,
        _sized_samples(((2, 3), (1,)), ((), (0,)), ((3,), (True,))),
        ref=_no_dtype(np.full),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "eye",
        ea.eye,
        ALL_DTYPES,
        _sized_samples((3, ()), (2, (4,)), (4, (2,)), (0, ()), (0, (3,))),
        ref=_no_dtype(np.eye),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "arange",
        ea.arange,
        ALL_NUMERIC,
        _arange_samples,
        ref=_no_dtype(np.arange),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "linspace",
        ea.linspace,
        ALL_NUMERIC,
        _linspace_samples,
        ref=_no_dtype(np.linspace),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
    OpInfo(
        "logspace",
        ea.logspace,
        ALL_NUMERIC,
        _logspace_samples,
        ref=_no_dtype(lambda s, e, n, base=10.0: np.logspace(s, e, n, base=base)),
        result_dtype=_kw_dtype,
        supports_out=False,
        check_unsupported=False,
    ),
]
