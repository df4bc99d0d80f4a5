"""OpInfo entry of nn.linear (input @ weight.T + bias; one operator with its own derivative)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, tensor_from

LINEAR_TOLS = {ea.float32: (2e-5, 2e-5), ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 1.6e-2)}


# its own generator: drawing from the shared one would change every later entry's samples
_rng = np.random.default_rng(4321)


def _t(shape: tuple[int, ...], dtype: Any) -> Any:
    return tensor_from(np.round(_rng.uniform(-1, 1, shape) * 64) / 64, dtype)  # exact in float16/bfloat16


def _linear_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((3, 4), dtype), (_t((2, 4), dtype), _t((2,), dtype)), name="2-d with bias")
    yield SampleInput(_t((3, 4), dtype), (_t((2, 4), dtype), None), name="2-d without bias")
    yield SampleInput(_t((2, 3, 4), dtype), (_t((5, 4), dtype), _t((5,), dtype)), name="batched")
    yield SampleInput(_t((4,), dtype), (_t((3, 4), dtype), _t((3,), dtype)), name="1-d input")
    yield SampleInput(_t((0, 4), dtype), (_t((2, 4), dtype), _t((2,), dtype)), name="empty batch")


def ref_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    out = x @ w.T
    return out if b is None else out + b


def _linear_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(ea.zeros(4, 5), (ea.zeros(2, 3), None)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 3x2\)",
    )


OPS = [
    OpInfo(
        "linear",
        ea.nn.linear,
        FLOAT_DTYPES,
        _linear_samples,
        ref=ref_linear,
        supports_out=False,
        tol_overrides=LINEAR_TOLS,
        error_inputs=_linear_errors,
        check_unsupported=False,  # integer inputs multiply too (addmm's integer kernel), as PyTorch
        kind="linear",
    ),
]
