"""OpInfo entries of the linear-algebra family: matrix products (mm, bmm, addmm, ..., matmul,
einsum, tensordot, kron), cross products, norms and the LAPACK decompositions.

References are NumPy's (in float64 / int64: integer products wrap as the dtype does, which
``result_dtype`` makes the table check). Samples mix transposed, strided and broadcast
(stride-0) operands, broadcast batches and empty matrices; test_ops.py adds its own
non-contiguous layouts on top. Decompositions whose results are unique only up to signs
(the SVD) are compared through a sign-normalising wrapper, and Cholesky is called on
``A + A^T`` so that gradients see a symmetric input (as PyTorch's gradcheck wrapper does).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np
from ember.c10py import LinAlgError

from .core import ALL_DTYPES, ALL_NUMERIC, ErrorInput, OpInfo, SampleInput, make_tensor

FLOATS = (ea.float32, ea.float64)
# sums of products: float32 rounding grows with k; float16/bfloat16 round once at the end
_GEMM_TOLS = {ea.float32: (1e-4, 1e-5), ea.float16: (1e-2, 2e-3), ea.bfloat16: (5e-2, 1.6e-2)}
# einsum chains contractions: each intermediate is rounded to float16 / bfloat16 (as PyTorch's)
_EINSUM_TOLS = {ea.float32: (1e-4, 1e-5), ea.float16: (0.1, 5e-3), ea.bfloat16: (0.5, 2e-2)}
_LAPACK_TOLS = {ea.float32: (1e-4, 1e-4), ea.float64: (1e-9, 1e-9)}


def _t(shape: tuple[int, ...], dtype: Any, **kw: Any) -> Any:
    kw.setdefault("low", -3)
    kw.setdefault("high", 4)
    return make_tensor(shape, dtype, **kw)


def _transposed(shape: tuple[int, ...], dtype: Any) -> Any:
    """A tensor of `shape` whose last two dims are swapped in memory (a BLAS 'T' operand)."""
    s = (*shape[:-2], shape[-1], shape[-2])
    return _t(s, dtype).transpose(-2, -1)


def _expanded(shape: tuple[int, ...], dtype: Any) -> Any:
    """A tensor of `shape` whose first dim has stride 0."""
    return _t((1, *shape[1:]), dtype).expand(*shape)


def _wide(*arrays: Any) -> Any:
    """Integer arrays as int64 (the reference computes exactly; the table wraps it to the dtype)."""
    return tuple(a.astype(np.int64) if a.dtype.kind in "biu" else a for a in arrays)


def _same(s: SampleInput) -> Any:
    return s.input.dtype


def _err(input: Any, args: tuple[Any, ...], error: type[BaseException], regex: str, **kwargs: Any) -> ErrorInput:
    return ErrorInput(SampleInput(input, args, kwargs), error, regex)


def _is_float(dtype: Any) -> bool:
    return dtype.is_floating_point


# ---- mm / bmm / mv / dot ---------------------------------------------------------------------


def _mm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in [
        ((3, 4), (4, 2)),
        ((1, 3), (3, 1)),
        ((4, 1), (1, 3)),
        ((0, 3), (3, 4)),
        ((3, 0), (0, 4)),
        ((2, 3), (3, 0)),
        ((5, 7), (7, 6)),
    ]:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} @ {b}")
    yield SampleInput(_transposed((3, 4), dtype), (_t((4, 2), dtype),), name="A^T")
    yield SampleInput(_t((3, 4), dtype), (_transposed((4, 2), dtype),), name="B^T")
    yield SampleInput(_expanded((3, 4), dtype), (_transposed((4, 5), dtype),), name="A stride-0 rows")
    yield SampleInput(_t((3, 8), dtype)[:, ::2], (_t((4, 6), dtype)[:, 1:4],), name="strided")


def _mm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3), f), (_t((4, 5), f),), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    )
    yield _err(
        _t((2, 3), f),
        (_t((3, 4), ea.float64),),
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: float != double",
    )
    yield _err(_t((2, 2, 3), f), (_t((3, 4), f),), RuntimeError, "self must be a matrix")
    yield _err(_t((2, 3), f), (_t((3,), f),), RuntimeError, "mat2 must be a matrix")
    yield _err(_t((2, 3), ea.bool), (_t((3, 4), ea.bool),), RuntimeError, "not implemented for")


def _bmm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in [
        ((2, 3, 4), (2, 4, 2)),
        ((1, 2, 2), (1, 2, 2)),
        ((0, 3, 4), (0, 4, 2)),
        ((2, 0, 3), (2, 3, 4)),
        ((2, 3, 0), (2, 0, 4)),
        ((3, 5, 4), (3, 4, 6)),
    ]:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} @ {b}")
    yield SampleInput(_transposed((2, 3, 4), dtype), (_transposed((2, 4, 2), dtype),), name="both transposed")
    yield SampleInput(_expanded((4, 3, 4), dtype), (_t((4, 4, 2), dtype),), name="stride-0 batch")
    yield SampleInput(_t((2, 3, 4), dtype).transpose(0, 1), (_t((3, 4, 2), dtype),), name="batch dim not outer")


def _bmm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 2, 3), f),
        (_t((2, 4, 4), f),),
        RuntimeError,
        r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[2, 4\]\.",
    )
    yield _err(_t((2, 3), f), (_t((2, 3, 4), f),), RuntimeError, "batch1 must be a 3D tensor")
    yield _err(_t((2, 2, 3), f), (_t((3, 4), f),), RuntimeError, "batch2 must be a 3D tensor")
    yield _err(
        _t((2, 2, 3), f), (_t((2, 3, 4), ea.float64),), RuntimeError, "expected scalar type Float but found Double"
    )


def _mv_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in [((3, 4), (4,)), ((1, 1), (1,)), ((0, 3), (3,)), ((3, 0), (0,)), ((6, 5), (5,))]:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} @ {b}")
    yield SampleInput(_transposed((3, 4), dtype), (_t((8,), dtype)[::2],), name="A^T, strided vec")
    yield SampleInput(_t((3, 4), dtype), (_t((1,), dtype).expand(4),), name="stride-0 vec")


def _mv_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((2, 3), f), (_t((4,), f),), RuntimeError, r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)")
    yield _err(_t((2, 3), f), (_t((3, 1), f),), RuntimeError, "vector \\+ matrix @ vector expected, got 1, 2, 2")
    yield _err(
        _t((2, 3), f),
        (_t((3,), ea.float64),),
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Float, and Double",
    )


def _dot_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for n in (5, 1, 0, 17):
        yield SampleInput(_t((n,), dtype), (_t((n,), dtype),), name=f"{n}")
    yield SampleInput(_t((10,), dtype)[::2], (_t((1,), dtype).expand(5),), name="strided, stride-0")


def _dot_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((2, 3), f), (_t((3,), f),), RuntimeError, "1D tensors expected, but got 2D and 1D tensors")
    yield _err(
        _t((3,), f),
        (_t((4,), f),),
        RuntimeError,
        r"inconsistent tensor size, expected tensor \[3\] and src \[4\] to have the same number of elements, "
        r"but got 3 and 4 elements respectively",
    )
    yield _err(
        _t((3,), f),
        (_t((3,), ea.float64),),
        RuntimeError,
        "dot : expected both vectors to have same dtype, but found Float and Double",
    )


# ---- addmm / addmv / addbmm / baddbmm / addr ----------------------------------------------------


def _scalars(dtype: Any) -> list[dict[str, Any]]:
    if _is_float(dtype):
        return [{}, {"beta": 0.5, "alpha": -1.5}, {"beta": 0, "alpha": 2.0}]
    return [{}, {"beta": 2, "alpha": -1}, {"beta": 0, "alpha": 3}]


def _nan_self(shape: tuple[int, ...], dtype: Any) -> Any:
    return ea.full(shape, math.nan, dtype=dtype)


def _addmm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for kw in _scalars(dtype):
        yield SampleInput(_t((3, 2), dtype), (_t((3, 4), dtype), _t((4, 2), dtype)), dict(kw), name=f"{kw}")
    yield SampleInput(_t((2,), dtype), (_t((3, 4), dtype), _t((4, 2), dtype)), broadcasts_input=True, name="row self")
    yield SampleInput(
        _t((), dtype), (_transposed((3, 4), dtype), _t((4, 2), dtype)), broadcasts_input=True, name="0-dim self, A^T"
    )
    yield SampleInput(
        _t((3, 1), dtype),
        (_t((3, 0), dtype), _t((0, 2), dtype)),
        {"beta": 2} if not _is_float(dtype) else {"beta": 0.5},
        broadcasts_input=True,
        name="k = 0: beta * self",
    )
    yield SampleInput(_t((0, 2), dtype), (_t((0, 3), dtype), _t((3, 2), dtype)), name="m = 0")
    if _is_float(dtype):
        yield SampleInput(
            _nan_self((3, 2), dtype), (_t((3, 4), dtype), _t((4, 2), dtype)), {"beta": 0}, name="beta = 0 ignores NaN"
        )


def _addmm_ref(self: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    self, a, b = _wide(self, a, b)
    prod = alpha * np.matmul(a, b)
    return prod if beta == 0 else beta * self + prod


def _addmm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 4), f),
        (_t((2, 3), f), _t((2, 4), f)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x4\)",
    )
    yield _err(_t((2, 4), f), (_t((3,), f), _t((3, 4), f)), RuntimeError, "mat1 must be a matrix, got 1-D tensor")
    yield _err(
        _t((2, 4), ea.float64),
        (_t((2, 3), f), _t((3, 4), f)),
        RuntimeError,
        "self and mat2 must have the same dtype, but got Double and Float",
    )
    yield _err(
        _t((3,), f),
        (_t((2, 3), f), _t((3, 4), f)),
        RuntimeError,
        r"The expanded size of the tensor \(4\) must match the existing size \(3\) at non-singleton dimension 1",
    )


def _addmv_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for kw in _scalars(dtype):
        yield SampleInput(_t((3,), dtype), (_t((3, 4), dtype), _t((4,), dtype)), dict(kw), name=f"{kw}")
    yield SampleInput(
        _t((1,), dtype), (_transposed((3, 4), dtype), _t((4,), dtype)), broadcasts_input=True, name="(1,) self, A^T"
    )
    yield SampleInput(_t((), dtype), (_t((2, 0), dtype), _t((0,), dtype)), broadcasts_input=True, name="k = 0")
    if _is_float(dtype):
        yield SampleInput(
            _nan_self((3,), dtype), (_t((3, 4), dtype), _t((4,), dtype)), {"beta": 0}, name="beta = 0 ignores NaN"
        )


def _addmv_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3,), f),
        (_t((2, 3), f), _t((3,), f)),
        RuntimeError,
        r"size mismatch, got input \(3\), mat \(2x3\), vec \(3\)",
    )
    yield _err(
        _t((2, 1), f), (_t((2, 3), f), _t((3,), f)), RuntimeError, "vector \\+ matrix @ vector expected, got 2, 2, 1"
    )
    yield _err(
        _t((2,), ea.float64),
        (_t((2, 3), f), _t((3,), f)),
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Double, Float, and Float",
    )


def _baddbmm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for kw in _scalars(dtype):
        yield SampleInput(_t((2, 3, 2), dtype), (_t((2, 3, 4), dtype), _t((2, 4, 2), dtype)), dict(kw), name=f"{kw}")
    yield SampleInput(
        _t((2,), dtype), (_transposed((2, 3, 4), dtype), _t((2, 4, 2), dtype)), broadcasts_input=True, name="row self"
    )
    yield SampleInput(_t((0, 3, 2), dtype), (_t((0, 3, 4), dtype), _t((0, 4, 2), dtype)), name="empty batch")
    if _is_float(dtype):
        yield SampleInput(
            _nan_self((2, 3, 2), dtype),
            (_t((2, 3, 4), dtype), _t((2, 4, 2), dtype)),
            {"beta": 0},
            name="beta = 0 ignores NaN",
        )


def _baddbmm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 2, 4), ea.float64),
        (_t((2, 2, 3), f), _t((2, 3, 4), f)),
        RuntimeError,
        "Input dtypes must be the same, got: input double, batch1: float, batch2: float",
    )
    yield _err(
        _t((2, 2, 5), f),
        (_t((2, 2, 3), f), _t((2, 3, 4), f)),
        RuntimeError,
        r"The expanded size of the tensor \(4\) must match the existing size \(5\)",
    )


def _addbmm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for kw in _scalars(dtype):
        yield SampleInput(_t((3, 2), dtype), (_t((2, 3, 4), dtype), _t((2, 4, 2), dtype)), dict(kw), name=f"{kw}")
    yield SampleInput(
        _t((2,), dtype), (_transposed((3, 3, 4), dtype), _t((3, 4, 2), dtype)), broadcasts_input=True, name="row self"
    )
    yield SampleInput(_t((3, 2), dtype), (_t((0, 3, 4), dtype), _t((0, 4, 2), dtype)), name="no batches")
    if _is_float(dtype):
        yield SampleInput(
            _nan_self((3, 2), dtype),
            (_t((2, 3, 4), dtype), _t((2, 4, 2), dtype)),
            {"beta": 0},
            name="beta = 0 ignores NaN",
        )


def _addbmm_ref(self: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    self, a, b = _wide(self, a, b)
    prod = alpha * np.matmul(a, b).sum(0)
    return prod if beta == 0 else beta * self + prod


def _addbmm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 4), f),
        (_t((3, 2, 3), f), _t((2, 3, 4), f)),
        RuntimeError,
        "batch1 and batch2 must have same number of batches, got 3 and 2",
    )
    yield _err(
        _t((2, 2), f),
        (_t((3, 2, 3), f), _t((3, 2, 2), f)),
        RuntimeError,
        r"Incompatible matrix sizes for bmm \(2x3 and 2x2\)",
    )


def _addr_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    if dtype == ea.bool:
        kws: list[dict[str, Any]] = [{}, {"beta": False}, {"alpha": False}]
    else:
        kws = _scalars(dtype)
    for kw in kws:
        yield SampleInput(_t((3, 4), dtype), (_t((3,), dtype), _t((4,), dtype)), dict(kw), name=f"{kw}")
    yield SampleInput(
        _t((4,), dtype),
        (_t((6,), dtype)[::2], _t((1,), dtype).expand(4)),
        broadcasts_input=True,
        name="row self, strided and stride-0 vectors",
    )
    yield SampleInput(_t((0, 2), dtype), (_t((0,), dtype), _t((2,), dtype)), name="empty")
    if _is_float(dtype):
        yield SampleInput(
            _nan_self((3, 4), dtype), (_t((3,), dtype), _t((4,), dtype)), {"beta": 0}, name="beta = 0 ignores NaN"
        )


def _addr_ref(self: Any, v1: Any, v2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    self, v1, v2 = _wide(self, v1, v2)
    prod = alpha * np.multiply.outer(v1, v2)
    return prod if beta == 0 else beta * self + prod


def _addr_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3), f), (_t((2, 1), f), _t((3,), f)), RuntimeError, "addr: Expected 1-D argument vec1, but got 2-D"
    )
    yield _err(
        _t((2, 3), ea.int64),
        (_t((2,), ea.int64), _t((3,), ea.int64)),
        RuntimeError,
        "For integral input tensors, argument alpha must not be a floating point number.",
        alpha=1.5,
    )
    yield _err(
        _t((2, 3), ea.int64),
        (_t((2,), ea.int64), _t((3,), ea.int64)),
        RuntimeError,
        "For integral input tensors, argument beta must not be a floating point number.",
        beta=0.5,
    )
    yield _err(
        _t((3, 3), f),
        (_t((2,), f), _t((3,), f)),
        RuntimeError,
        r"The expanded size of the tensor \(2\) must match the existing size \(3\) at non-singleton dimension 0",
    )


# ---- outer / matmul / einsum / tensordot / kron -------------------------------------------------


def _outer_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in [((3,), (4,)), ((1,), (1,)), ((0,), (3,)), ((5,), (0,))]:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} x {b}")
    yield SampleInput(_t((8,), dtype)[::2], (_t((1,), dtype).expand(3),), name="strided, stride-0")


def _outer_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((2, 2), f), (_t((3,), f),), RuntimeError, "outer: Expected 1-D argument self, but got 2-D")
    yield _err(_t((3,), f), (_t((), f),), RuntimeError, "outer: Expected 1-D argument vec2, but got 0-D")


_MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((2, 2, 3), (3, 4)),
    ((4,), (2, 4, 3)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 3, 4), (2, 4, 1)),
    ((0, 3), (3, 2)),
    ((2, 0, 3), (3, 4)),
    ((3, 0), (0,)),
    ((0,), (0,)),
    ((1, 2, 3), (4, 3, 2)),
    ((2, 3, 4, 5), (2, 3, 5, 2)),
]


def _matmul_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in _MATMUL_SHAPES:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} @ {b}")
    yield SampleInput(_transposed((2, 3, 4), dtype), (_transposed((4, 2), dtype),), name="transposed N-D @ 2-D")
    yield SampleInput(_expanded((3, 2, 4), dtype), (_t((3, 4, 2), dtype),), name="stride-0 batch")


def _matmul_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3,), f),
        (ea.tensor(2.0),),
        RuntimeError,
        "both arguments to matmul need to be at least 1D, but they are 1D and 0D",
    )
    yield _err(_t((3,), f), (_t((4,), f),), RuntimeError, "inconsistent tensor size")
    yield _err(
        _t((3,), f), (_t((4, 5), f),), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 4x5\)"
    )
    yield _err(_t((4, 5), f), (_t((3,), f),), RuntimeError, r"size mismatch, got input \(4\), mat \(4x5\), vec \(3\)")
    yield _err(
        _t((2, 4, 5), f),
        (_t((3, 5, 6), f),),
        RuntimeError,
        r"The size of tensor a \(2\) must match the size of tensor b \(3\) at non-singleton dimension 0",
    )
    yield _err(
        _t((3, 4), f),
        (_t((4, 5), ea.float64),),
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: float != double",
    )


# (equation, operand shapes): NumPy's einsum is the reference
EINSUM_CASES: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]),
    ("ijk,ikl,ilm->jm", [(2, 3, 4), (2, 4, 3), (2, 3, 2)]),
    ("ba", [(2, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,i->i", [(1,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    (",->", [(), ()]),
    ("i,->i", [(3,), ()]),
    ("ij,kl->ijkl", [(2, 0), (3, 2)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


def _einsum_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for eq, shapes in EINSUM_CASES:
        yield SampleInput(eq, tuple(_t(s, dtype) for s in shapes), name=eq)


def _einsum_ref(eq: str, *arrays: Any) -> Any:
    return np.einsum(eq.replace(" ", ""), *arrays)


def _einsum_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    v3, v4 = _t((3,), f), _t((4,), f)
    yield _err("i1,i", (v3, v3), RuntimeError, "invalid subscript given at index 1 in the equation string")
    yield _err("i", (v3, v3), RuntimeError, "more operands were provided than specified in the equation")
    yield _err("i,i", (v3,), RuntimeError, "fewer operands were provided than specified in the equation")
    yield _err(
        "ij",
        (v3,),
        RuntimeError,
        r"the number of subscripts in the equation \(2\) does not match the number of dimensions \(1\) for "
        "operand 0 and no ellipsis was given",
    )
    yield _err("i->j", (v3,), RuntimeError, "output subscript j does not appear in the equation for any input operand")
    yield _err("ij->ii", (_t((3, 3), f),), RuntimeError, "output subscript i appears more than once in the output")
    yield _err(
        "i,i->",
        (v3, v4),
        RuntimeError,
        "subscript i has size 4 for operand 1 which does not broadcast with previously seen size 3",
    )
    yield _err(
        "ii->i", (_t((3, 4), f),), RuntimeError, "subscript i is repeated for operand 0 but the sizes don't match"
    )
    yield _err("...i...", (v3,), RuntimeError, "found '.' for operand 0 for which an ellipsis was already found")
    yield _err(
        "ij,jk->ik",
        (_t((2, 3), f), _t((3, 2), ea.float64)),
        RuntimeError,
        "expected m1 and m2 to have the same dtype, but got: float != double",
    )


def _tensordot_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((3, 4, 5), dtype), (_t((4, 5, 2), dtype),), name="dims=2")
    yield SampleInput(_t((3, 4), dtype), (_t((4, 2), dtype),), {"dims": 1}, name="dims=1")
    yield SampleInput(_t((2, 3), dtype), (_t((3, 2), dtype),), {"dims": 0}, name="dims=0")
    yield SampleInput(_t((3, 4, 5), dtype), (_t((5, 4, 2), dtype),), {"dims": ([1, 2], [1, 0])}, name="pair")
    yield SampleInput(_transposed((3, 4), dtype), (_t((3, 2), dtype),), {"dims": ([0], [0])}, name="transposed")
    yield SampleInput(_t((0, 4), dtype), (_t((4, 2), dtype),), {"dims": 1}, name="empty")


def _tensordot_ref(a: Any, b: Any, dims: Any = 2) -> Any:
    return np.tensordot(a, b, axes=dims)


def _tensordot_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3, 4, 5), f),
        (_t((4, 6, 6), f),),
        RuntimeError,
        "contracted dimensions need to match, but first has size 5 in dim -1 and second has size 6 in dim 1",
        dims=2,
    )
    yield _err(_t((3, 4), f), (_t((4, 6), ea.float64),), RuntimeError, "both inputs should have same dtype", dims=1)
    yield _err(_t((3, 4), f), (_t((4, 6), f),), RuntimeError, "tensordot expects dims >= 0, but got dims=-1", dims=-1)


def _kron_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for a, b in [((2, 3), (3, 2)), ((2, 3), (4,)), ((3,), (2, 2)), ((), (3,)), ((2, 1, 2), (2, 3)), ((0, 2), (2, 2))]:
        yield SampleInput(_t(a, dtype), (_t(b, dtype),), name=f"{a} x {b}")
    yield SampleInput(_transposed((2, 3), dtype), (_t((2, 2), dtype),), name="transposed")


# ---- cross -------------------------------------------------------------------------------------


def _cross_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((3,), dtype), (_t((3,), dtype),), {"dim": -1}, name="3")
    yield SampleInput(_t((4, 3), dtype), (_t((4, 3), dtype),), {"dim": 1}, name="rows")
    yield SampleInput(_t((4, 3), dtype), (_t((1, 3), dtype),), {"dim": -1}, name="broadcast")
    yield SampleInput(_t((3, 4), dtype), (_t((3, 4), dtype),), {"dim": 0}, name="dim 0")
    yield SampleInput(_transposed((2, 3, 5), dtype), (_t((2, 3, 5), dtype),), {"dim": 1}, name="transposed")
    yield SampleInput(_t((0, 3), dtype), (_t((0, 3), dtype),), {"dim": 1}, name="empty")


def _cross_ref(a: Any, b: Any, dim: int = -1) -> Any:
    a, b = np.broadcast_arrays(a, b)
    return np.cross(a, b, axis=dim)


def _cross_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((4, 2), f),
        (_t((4, 2), f),),
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
        dim=-1,
    )
    yield _err(
        _t((2, 3), f),
        (_t((3,), f),),
        RuntimeError,
        "linalg.cross: inputs must have the same number of dimensions.",
        dim=-1,
    )
    yield _err(
        _t((3,), f), (_t((3,), ea.float64),), RuntimeError, "expected scalar type Float but found Double", dim=-1
    )


# ---- norms -----------------------------------------------------------------------------------

_MATRIX_ORDS: list[Any] = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


def _matrix_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for o in _MATRIX_ORDS:
        yield SampleInput(_t((3, 4), dtype), (o,), name=f"ord={o}")
    yield SampleInput(_t((2, 3, 2), dtype), ("nuc",), {"dim": (0, 2), "keepdim": True}, name="dims (0, 2) keepdim")
    yield SampleInput(_transposed((2, 4, 3), dtype), (1,), {"dim": (-1, -2)}, name="dims (-1, -2)")
    yield SampleInput(_t((2, 3, 4), dtype), (math.inf,), {"keepdim": True}, name="keepdim")
    yield SampleInput(_t((0, 4), dtype), ("fro",), name="empty")
    yield SampleInput(_t((4, 0), dtype), (2,), name="empty 2-norm")


def _matrix_norm_ref(a: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False) -> Any:
    if a.size == 0:  # every norm of an empty matrix is 0 (NumPy's SVD refuses empty inputs)
        return np.zeros(a.shape).sum(axis=tuple(dim), keepdims=keepdim)
    return np.linalg.norm(a, ord=ord, axis=tuple(dim), keepdims=keepdim)


def _matrix_norm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3,), f), ("fro",), RuntimeError, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
    )
    yield _err(_t((3, 4), f), (3,), RuntimeError, "linalg.matrix_norm: Order 3 not supported.")
    yield _err(_t((3, 4), f), ("abc",), RuntimeError, "linalg.matrix_norm: Order abc not supported.")
    yield _err(
        _t((3, 4), ea.int64),
        ("fro",),
        RuntimeError,
        "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long",
    )
    yield _err(
        _t((3, 4), f), ("fro",), RuntimeError, r"linalg.matrix_norm: dims must be different. Got \(0, 0\)", dim=(0, 0)
    )
    yield _err(
        _t((3, 4), ea.float64),
        ("fro",),
        RuntimeError,
        r"linalg.matrix_norm: the dtype of the input \(Double\) should be convertible without narrowing to the "
        r"specified dtype \(Float\)",
        dtype=ea.float32,
    )


def _norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((3, 4), dtype), name="default")
    yield SampleInput(_t((2, 3, 4), dtype), name="default 3-D")
    yield SampleInput(_t((5,), dtype), (3,), name="vector ord 3")
    yield SampleInput(_t((3, 4), dtype), ("nuc",), name="nuc")
    yield SampleInput(_t((3, 4), dtype), (-math.inf,), name="matrix -inf")
    yield SampleInput(_t((2, 3, 4), dtype), (2,), {"dim": (1, 2)}, name="2-norm over (1, 2)")
    yield SampleInput(_t((2, 3, 4), dtype), (0.5,), {"dim": 1, "keepdim": True}, name="vector dim 1")
    yield SampleInput(_t((2, 3, 4), dtype), (), {"dim": (0, 2)}, name="fro over (0, 2)")
    yield SampleInput(_t((0, 3), dtype), name="empty")


def _norm_ref(a: Any, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Any:
    if dim is None and ord is None:
        r = np.linalg.norm(a.reshape(-1))
        return r.reshape((1,) * a.ndim) if keepdim else r
    return np.linalg.norm(a, ord=ord, axis=dim, keepdims=keepdim)


def _norm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3, 4, 5), f),
        (2,),
        RuntimeError,
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    )
    yield _err(
        _t((3, 4, 5), f),
        (),
        RuntimeError,
        r"linalg.norm: If dim is specified, it must be of length 1 or 2. Got \[0, 1, 2\]",
        dim=(0, 1, 2),
    )
    yield _err(
        _t((3,), f), ("fro",), RuntimeError, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
    )


# ---- LAPACK ------------------------------------------------------------------------------------


def _well_conditioned(shape: tuple[int, ...], dtype: Any) -> Any:
    """Random square matrices made diagonally dominant (far from singular)."""
    n = shape[-1]
    a = np.random.default_rng(7).uniform(-1, 1, size=shape)
    a = a + np.eye(n) * (n + 1) if n else a
    return ea.from_numpy(a).to(dtype)


def _square_errors(name: str, args: tuple[Any, ...] = ()) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((3,), f), args, RuntimeError, f"{name}: The input tensor A must have at least 2 dimensions.")
    yield _err(
        _t((2, 3), f), args, RuntimeError, f"{name}: A must be batches of square matrices, but they are 2 by 3 matrices"
    )
    yield _err(
        _t((2, 2), ea.int64),
        args,
        RuntimeError,
        f"{name}: Expected a floating point or complex tensor as input. Got Long",
    )


def _solve_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    w = _well_conditioned
    yield SampleInput(w((3, 3), dtype), (_t((3,), dtype),), name="vector")
    yield SampleInput(w((3, 3), dtype), (_t((3, 2), dtype),), name="matrix")
    yield SampleInput(w((2, 3, 3), dtype), (_t((2, 3), dtype),), name="batch of vectors")
    yield SampleInput(w((3, 3), dtype), (_t((2, 3), dtype),), {"left": False}, name="XA = B")
    yield SampleInput(w((2, 1, 3, 3), dtype), (_t((4, 3, 2), dtype),), name="broadcast batches")
    yield SampleInput(w((2, 3, 3), dtype).transpose(-2, -1), (_transposed((2, 3, 2), dtype),), name="transposed")
    yield SampleInput(w((0, 0), dtype), (_t((0,), dtype),), name="empty")
    yield SampleInput(w((2, 0, 0), dtype), (_t((2, 0, 3), dtype),), name="empty batch")


def _solve_ref(A: Any, B: Any, left: bool = True) -> Any:
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    B2 = B[..., None] if vector else B
    if not left:
        A, B2 = np.swapaxes(A, -1, -2), np.swapaxes(B2, -1, -2)
    batch = np.broadcast_shapes(A.shape[:-2], B2.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    B2 = np.broadcast_to(B2, batch + B2.shape[-2:])
    X = np.linalg.solve(A, B2) if A.shape[-1] else np.zeros(B2.shape)
    if not left:
        X = np.swapaxes(X, -1, -2)
    return X[..., 0] if vector else X


def _solve_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield from _square_errors("linalg.solve", (_t((3,), f),))
    yield _err(
        _t((2, 2), f),
        (_t((2,), ea.float64),),
        RuntimeError,
        "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double instead",
    )
    yield _err(
        _t((2, 2), f),
        (_t((3,), f),),
        RuntimeError,
        r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)",
    )
    yield _err(
        _t((2, 2), f),
        (_t((2,), f),),
        RuntimeError,
        r"linalg.solve: Incompatible shapes of A and B for the equation XA = B \(2x2 and 2x1\)",
        left=False,
    )
    yield _err(
        ea.zeros(2, 2),
        (_t((2, 1), f),),
        LinAlgError,
        "torch.linalg.solve: The solver failed because the input matrix is singular.",
    )
    yield _err(
        ea.stack([ea.eye(2), ea.zeros(2, 2)]),
        (_t((2, 2, 1), f),),
        LinAlgError,
        r"torch.linalg.solve: \(Batch element 1\): The solver failed because the input matrix is singular.",
    )


def _inv_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_well_conditioned((3, 3), dtype), name="3x3")
    yield SampleInput(_well_conditioned((2, 4, 4), dtype), name="batch")
    yield SampleInput(_well_conditioned((1, 1), dtype), name="1x1")
    yield SampleInput(_well_conditioned((3, 3), dtype).t(), name="transposed")
    yield SampleInput(_t((0, 0), dtype), name="empty")
    yield SampleInput(_t((0, 2, 2), dtype), name="empty batch")


def _inv_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield from _square_errors("linalg.inv")
    yield _err(
        ea.zeros(2, 2),
        (),
        LinAlgError,
        "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input "
        "matrix is singular.",
    )
    yield _err(
        ea.stack([ea.eye(2), ea.tensor([[1.0, 2.0], [2.0, 4.0]])]),
        (),
        LinAlgError,
        r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero",
    )


def _det_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((3, 3), dtype), name="3x3")
    yield SampleInput(_t((2, 2, 2), dtype), name="batch")
    yield SampleInput(_t((3, 3), dtype).t(), name="transposed")
    yield SampleInput(ea.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]], dtype=dtype), name="singular")
    yield SampleInput(_t((1, 1), dtype), name="1x1")
    yield SampleInput(_t((0, 0), dtype), name="empty: 1")
    yield SampleInput(_t((0, 3, 3), dtype), name="empty batch")


def _slogdet_ref(A: Any) -> Any:
    s, l = np.linalg.slogdet(A)
    return s, l


def _cholesky_op(A: Any, upper: bool = False, out: Any = None) -> Any:
    sym = A + A.mT
    if out is None:
        return ea.linalg.cholesky(sym, upper=upper)
    return ea.linalg.cholesky(sym, upper=upper, out=out)


def _spd_half(shape: tuple[int, ...], dtype: Any) -> Any:
    """M with M + M^T symmetric positive definite."""
    n = shape[-1]
    m = np.random.default_rng(3).uniform(-1, 1, size=shape)
    spd = m @ np.swapaxes(m, -1, -2) + np.eye(n) * n
    return ea.from_numpy(spd / 2).to(dtype)


def _cholesky_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_spd_half((3, 3), dtype), name="3x3")
    yield SampleInput(_spd_half((2, 3, 3), dtype), name="batch")
    yield SampleInput(_spd_half((4, 4), dtype), kwargs={"upper": True}, name="upper")
    yield SampleInput(_spd_half((0, 0), dtype), name="empty")


def _cholesky_ref(A: Any, upper: bool = False) -> Any:
    sym = A + np.swapaxes(A, -1, -2)
    L = np.linalg.cholesky(sym) if sym.size else sym
    return np.swapaxes(L, -1, -2) if upper else L


def _cholesky_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(
        -ea.eye(2),
        (),
        LinAlgError,
        r"linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
        r"\(the leading minor of order 1 is not positive-definite\).",
    )
    yield _err(
        ea.stack([ea.eye(2), ea.tensor([[1.0, 2.0], [2.0, 1.0]])]),
        (),
        LinAlgError,
        r"linalg.cholesky: \(Batch element 1\): The factorization could not be completed because the input is "
        r"not positive-definite \(the leading minor of order 2 is not positive-definite\).",
    )


def _qr_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((4, 3), dtype), name="tall")
    yield SampleInput(_t((3, 3), dtype), name="square")
    yield SampleInput(_t((2, 4), dtype), name="wide")
    yield SampleInput(_t((2, 4, 3), dtype), name="batch")
    yield SampleInput(_t((4, 3), dtype), ("complete",), name="complete")
    yield SampleInput(_t((3, 5), dtype), ("complete",), name="complete wide")
    yield SampleInput(_t((4, 3), dtype), ("r",), name="r")
    yield SampleInput(_transposed((4, 3), dtype), name="transposed")
    yield SampleInput(_t((0, 3), dtype), name="empty rows")
    yield SampleInput(_t((3, 0), dtype), ("complete",), name="empty cols complete")


def _qr_ref(A: Any, mode: str = "reduced") -> Any:
    if mode == "r":
        return np.zeros((0,)), np.linalg.qr(A, mode="r")
    return tuple(np.linalg.qr(A, mode=mode))


def _qr_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((4, 3), f),
        ("x",),
        RuntimeError,
        "qr received unrecognized mode 'x' but expected one of 'reduced' \\(default\\), 'r', or 'complete'",
    )
    yield _err(_t((4,), f), (), RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions.")
    yield _err(
        _t((4, 3), ea.int64),
        (),
        RuntimeError,
        "linalg.qr: Expected a floating point or complex tensor as input. Got Long",
    )


def _gauge(U: Any, S: Any, Vh: Any) -> Any:
    """(U[:, :k], S, Vh[:k]) with each singular pair's sign fixed: the largest |entry| of each
    column of U positive (works for ember tensors and NumPy arrays alike)."""
    k = S.shape[-1]
    U = U[..., :, :k]
    Vh = Vh[..., :k, :]
    if isinstance(U, np.ndarray):
        idx = np.abs(U).argmax(-2)[..., None, :]
        sign = np.sign(np.take_along_axis(U, idx, -2))
        sign[sign == 0] = 1
        return U * sign, S, Vh * np.swapaxes(sign, -1, -2)
    with _NoGrad():
        un = U.detach().cpu().numpy() if U.numel() else np.zeros(tuple(U.shape))
        idx = np.abs(un).argmax(-2)[..., None, :] if U.numel() else np.zeros((*U.shape[:-2], 1, k), dtype=np.int64)
        sign = np.sign(np.take_along_axis(un, idx, -2)) if U.numel() else np.ones((*U.shape[:-2], 1, k))
        sign[sign == 0] = 1
    s = ea.from_numpy(np.ascontiguousarray(sign)).to(U.dtype).to(U.device)
    return U * s, S, Vh * s.transpose(-2, -1)


class _NoGrad:
    """no_grad when ember.autograd is installed (the aten-only session has no grad mode)."""

    def __enter__(self) -> None:
        try:
            from ember.autograd import no_grad
        except ImportError:
            self._ctx = None
            return
        self._ctx = no_grad()
        self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def _svd_op(A: Any, full_matrices: bool = True) -> Any:
    return _gauge(*ea.linalg.svd(A, full_matrices=full_matrices))


def _svd_ref(A: Any, full_matrices: bool = True) -> Any:
    k = min(A.shape[-2:])
    if A.size == 0:
        return np.zeros((*A.shape[:-1], k)), np.zeros((*A.shape[:-2], k)), np.zeros((*A.shape[:-2], k, A.shape[-1]))
    return _gauge(*np.linalg.svd(A, full_matrices=full_matrices))


def _svd_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((4, 3), dtype), kwargs={"full_matrices": False}, name="tall")
    yield SampleInput(_t((2, 4), dtype), kwargs={"full_matrices": False}, name="wide")
    yield SampleInput(_t((3, 3), dtype), name="square")
    yield SampleInput(_t((2, 3, 2), dtype), name="batch, full")
    yield SampleInput(_transposed((5, 3), dtype), name="transposed")
    yield SampleInput(_t((0, 3), dtype), name="empty")


def _svd_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((4,), f), (), RuntimeError, "linalg.svd: The input tensor A must have at least 2 dimensions.")
    yield _err(
        _t((4, 3), ea.int64),
        (),
        RuntimeError,
        "linalg.svd: Expected a floating point or complex tensor as input. Got Long",
    )
    yield _err(
        ea.full((3, 3), math.nan),
        (),
        LinAlgError,
        "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.",
    )


def _svdvals_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in [(4, 3), (2, 5), (2, 3, 3), (0, 2)]:
        yield SampleInput(_t(s, dtype), name=f"{s}")
    yield SampleInput(_transposed((3, 4), dtype), name="transposed")


def _svdvals_ref(A: Any) -> Any:
    if A.size == 0:
        return np.zeros((*A.shape[:-2], min(A.shape[-2:])))
    return np.linalg.svd(A, compute_uv=False)


OPS = [
    OpInfo(
        "mm",
        ea.mm,
        ALL_NUMERIC,
        _mm_samples,
        ref=np.matmul,
        result_dtype=_same,
        error_inputs=_mm_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "bmm",
        ea.bmm,
        ALL_NUMERIC,
        _bmm_samples,
        ref=np.matmul,
        result_dtype=_same,
        error_inputs=_bmm_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "mv",
        ea.mv,
        ALL_NUMERIC,
        _mv_samples,
        ref=np.matmul,
        result_dtype=_same,
        error_inputs=_mv_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "dot",
        ea.dot,
        ALL_NUMERIC,
        _dot_samples,
        ref=np.dot,
        result_dtype=_same,
        error_inputs=_dot_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "vdot",
        ea.vdot,
        ALL_NUMERIC,
        _dot_samples,
        ref=np.vdot,
        result_dtype=_same,
        error_inputs=_dot_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "addmm",
        ea.addmm,
        ALL_NUMERIC,
        _addmm_samples,
        ref=_addmm_ref,
        result_dtype=_same,
        error_inputs=_addmm_errors,
        tol_overrides=_GEMM_TOLS,
        supports_inplace=False,
        kind="matmul",
    ),
    OpInfo(
        "addmv",
        ea.addmv,
        ALL_NUMERIC,
        _addmv_samples,
        ref=_addmm_ref,
        result_dtype=_same,
        error_inputs=_addmv_errors,
        tol_overrides=_GEMM_TOLS,
        supports_inplace=False,
        kind="matmul",
    ),
    OpInfo(
        "baddbmm",
        ea.baddbmm,
        ALL_NUMERIC,
        _baddbmm_samples,
        ref=_addmm_ref,
        result_dtype=_same,
        error_inputs=_baddbmm_errors,
        tol_overrides=_GEMM_TOLS,
        supports_inplace=False,
        kind="matmul",
    ),
    OpInfo(
        "addbmm",
        ea.addbmm,
        ALL_NUMERIC,
        _addbmm_samples,
        ref=_addbmm_ref,
        result_dtype=_same,
        error_inputs=_addbmm_errors,
        tol_overrides=_GEMM_TOLS,
        supports_inplace=False,
        kind="matmul",
    ),
    OpInfo(
        "addr",
        ea.addr,
        ALL_DTYPES,
        _addr_samples,
        ref=_addr_ref,
        result_dtype=_same,
        error_inputs=_addr_errors,
        tol_overrides=_GEMM_TOLS,
        supports_inplace=False,
        check_unsupported=False,
        kind="matmul",
    ),
    OpInfo(
        "outer",
        ea.outer,
        ALL_DTYPES,
        _outer_samples,
        ref=np.multiply.outer,
        result_dtype=_same,
        error_inputs=_outer_errors,
        check_unsupported=False,
        kind="matmul",
    ),
    OpInfo(
        "ger",
        ea.ger,
        ALL_DTYPES,
        _outer_samples,
        ref=np.multiply.outer,
        result_dtype=_same,
        error_inputs=_outer_errors,
        check_unsupported=False,
        kind="matmul",
    ),
    OpInfo(
        "matmul",
        ea.matmul,
        ALL_NUMERIC,
        _matmul_samples,
        ref=np.matmul,
        result_dtype=_same,
        error_inputs=_matmul_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "einsum",
        ea.einsum,
        ALL_NUMERIC,
        _einsum_samples,
        ref=_einsum_ref,
        supports_out=False,
        error_inputs=_einsum_errors,
        tol_overrides=_EINSUM_TOLS,
        check_unsupported=False,
        kind="matmul",
    ),
    OpInfo(
        "tensordot",
        ea.tensordot,
        ALL_NUMERIC,
        _tensordot_samples,
        ref=_tensordot_ref,
        result_dtype=_same,
        error_inputs=_tensordot_errors,
        tol_overrides=_GEMM_TOLS,
        kind="matmul",
    ),
    OpInfo(
        "kron",
        ea.kron,
        ALL_DTYPES,
        _kron_samples,
        ref=np.kron,
        result_dtype=_same,
        check_unsupported=False,
        kind="matmul",
    ),
    OpInfo(
        "linalg_cross",
        ea.linalg.cross,
        ALL_NUMERIC,
        _cross_samples,
        ref=_cross_ref,
        result_dtype=_same,
        error_inputs=_cross_errors,
        kind="matmul",
    ),
    OpInfo("cross", ea.cross, ALL_NUMERIC, _cross_samples, ref=_cross_ref, result_dtype=_same, kind="matmul"),
    OpInfo(
        "linalg_matrix_norm",
        ea.linalg.matrix_norm,
        FLOATS,
        _matrix_norm_samples,
        ref=_matrix_norm_ref,
        result_dtype=_same,
        error_inputs=_matrix_norm_errors,
        tol_overrides=_LAPACK_TOLS,
        check_unsupported=False,
        kind="linalg",
    ),
    OpInfo(
        "linalg_norm",
        ea.linalg.norm,
        FLOATS,
        _norm_samples,
        ref=_norm_ref,
        result_dtype=_same,
        error_inputs=_norm_errors,
        tol_overrides=_LAPACK_TOLS,
        check_unsupported=False,
        kind="linalg",
    ),
    OpInfo(
        "linalg_solve",
        ea.linalg.solve,
        FLOATS,
        _solve_samples,
        ref=_solve_ref,
        result_dtype=_same,
        error_inputs=_solve_errors,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_inv",
        ea.linalg.inv,
        FLOATS,
        _inv_samples,
        ref=np.linalg.inv,
        result_dtype=_same,
        error_inputs=_inv_errors,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_det",
        ea.linalg.det,
        FLOATS,
        _det_samples,
        ref=np.linalg.det,
        result_dtype=_same,
        error_inputs=lambda op: _square_errors("linalg.det"),
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "det",
        ea.det,
        FLOATS,
        _det_samples,
        ref=np.linalg.det,
        result_dtype=_same,
        supports_out=False,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_slogdet",
        ea.linalg.slogdet,
        FLOATS,
        _det_samples,
        ref=_slogdet_ref,
        error_inputs=lambda op: _square_errors("linalg.slogdet"),
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_cholesky",
        _cholesky_op,
        FLOATS,
        _cholesky_samples,
        ref=_cholesky_ref,
        result_dtype=_same,
        error_inputs=_cholesky_errors,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_qr",
        ea.linalg.qr,
        FLOATS,
        _qr_samples,
        ref=_qr_ref,
        error_inputs=_qr_errors,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_svd",
        _svd_op,
        FLOATS,
        _svd_samples,
        ref=_svd_ref,
        supports_out=False,
        error_inputs=_svd_errors,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
    OpInfo(
        "linalg_svdvals",
        ea.linalg.svdvals,
        FLOATS,
        _svdvals_samples,
        ref=_svdvals_ref,
        result_dtype=_same,
        tol_overrides=_LAPACK_TOLS,
        kind="linalg",
    ),
]
