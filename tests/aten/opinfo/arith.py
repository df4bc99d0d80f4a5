"""OpInfo entries: add, sub, mul, div, neg, exp."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import (
    ALL_DTYPES,
    ALL_NUMERIC,
    ErrorInput,
    OpInfo,
    SampleInput,
    broadcast_pairs,
    elementwise_shapes,
    expected_result_type,
    make_tensor,
)


def binary_samples(op: OpInfo, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    for sa, sb, bcast in broadcast_pairs():
        yield SampleInput(make_tensor(sa, dtype), (make_tensor(sb, dtype, **kw),), broadcasts_input=bcast)
    # Python numbers on the right (weak scalars)
    yield SampleInput(make_tensor((3, 4), dtype), (2,))
    if dtype.is_floating_point:
        yield SampleInput(make_tensor((3, 4), dtype), (2.5,))


def unary_samples(op: OpInfo, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    for shape in elementwise_shapes():
        yield SampleInput(make_tensor(shape, dtype, **kw))


def _float_result(s: SampleInput) -> Any:
    """Integer inputs of a true-division-like op give the default float dtype."""
    t = expected_result_type(s.input, *s.args)
    return t if t.is_floating_point else ea.get_default_dtype()


def _add_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    b = make_tensor((4,), ea.float32)
    yield ErrorInput(
        SampleInput(a, (b,)), RuntimeError, r"size of tensor a \(3\) must match the size of tensor b \(4\)"
    )
    i = make_tensor((3,), ea.int64)
    yield ErrorInput(SampleInput(i, (i,), {"alpha": 1.5}), RuntimeError, "alpha must not be a floating point")


def _div_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((3,), ea.float32)
    yield ErrorInput(SampleInput(a, (a,), {"rounding_mode": "nearest"}), ValueError, "rounding_mode")


OPS = [
    OpInfo(
        "add",
        ea.add,
        ALL_DTYPES,
        binary_samples,
        ref=lambda a, b, alpha=1: a + alpha * np.asarray(b),
        error_inputs=_add_errors,
        kind="binary",
    ),
    OpInfo(
        "sub", ea.sub, ALL_NUMERIC, binary_samples, ref=lambda a, b, alpha=1: a - alpha * np.asarray(b), kind="binary"
    ),
    OpInfo("mul", ea.mul, ALL_DTYPES, binary_samples, ref=lambda a, b: a * b, kind="binary"),
    OpInfo(
        "div",
        ea.div,
        ALL_DTYPES,
        lambda op, dt: binary_samples(op, dt, exclude_zero=True),
        ref=lambda a, b: np.asarray(a, dtype=np.float64) / b,
        result_dtype=lambda s: _float_result(s),
        error_inputs=_div_errors,
        kind="binary",
    ),
    OpInfo("neg", ea.neg, ALL_NUMERIC, unary_samples, ref=lambda a: -a, kind="unary"),
    OpInfo(
        "exp",
        ea.exp,
        ALL_DTYPES,
        lambda op, dt: unary_samples(op, dt, low=-8, high=8),
        ref=lambda a: np.exp(np.asarray(a, dtype=np.float64)),
        result_dtype=lambda s: _float_result(s),
        kind="unary",
    ),
]
