"""OpInfo entries of the shape family: views, splits, joins, transformations, copies.

Every reference is NumPy's function of the same name where one exists (the
results must hold the very same values: these ops move elements, never compute),
so every entry covers all ten dtypes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import ALL_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor


def _same_dtype(s: SampleInput) -> Any:
    return s.input.dtype


def _samples(*cases: tuple[tuple[int, ...], tuple[Any, ...]] | tuple[tuple[int, ...], tuple[Any, ...], dict]):
    """sample_inputs from (shape, args[, kwargs]) cases."""

    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for case in cases:
            shape, args = case[0], case[1]
            kwargs = case[2] if len(case) > 2 else {}
            yield SampleInput(make_tensor(shape, dtype), args, dict(kwargs), name=f"{shape} {args} {kwargs}")

    return gen


def _list_samples(*cases: tuple[list[tuple[int, ...]], tuple[Any, ...]]):
    """sample_inputs whose input is a list of tensors (joins)."""

    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shapes, args in cases:
            yield SampleInput([make_tensor(s, dtype) for s in shapes], args, name=f"{shapes} {args}")

    return gen


def _err(input: Any, args: tuple[Any, ...], error: type[BaseException], regex: str, **kwargs: Any) -> ErrorInput:
    return ErrorInput(SampleInput(input, args, kwargs), error, regex)


# ---- references that NumPy spells differently ------------------------------------------


def _ref_split(a: np.ndarray, split_size: Any, dim: int = 0) -> tuple[np.ndarray, ...]:
    n = a.shape[dim]
    if split_size == 0:
        return (a,)
    if isinstance(split_size, int):
        bounds = list(range(split_size, n, split_size))
    else:
        bounds = list(np.cumsum(split_size)[:-1])
    return tuple(np.split(a, bounds, axis=dim))


def _ref_chunk(a: np.ndarray, chunks: int, dim: int = 0) -> tuple[np.ndarray, ...]:
    n = a.shape[dim]
    size = -(-n // chunks)
    return _ref_split(a, size, dim) if size else (a,)


def _ref_unflatten(a: np.ndarray, dim: int, sizes: tuple[int, ...]) -> np.ndarray:
    d = dim % a.ndim
    return a.reshape(a.shape[:d] + tuple(sizes) + a.shape[d + 1 :])


def _ref_flatten(a: np.ndarray, start_dim: int = 0, end_dim: int = -1) -> np.ndarray:
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return (
        a.reshape((*a.shape[:s], -1, *a.shape[e + 1 :]))
        if a.size
        else a.reshape((*a.shape[:s], int(np.prod(a.shape[s : e + 1])), *a.shape[e + 1 :]))
    )


def _ref_unfold(a: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(None, None, step)
    return w[tuple(idx)]


def _ref_narrow(a: np.ndarray, dim: int, start: int, length: int) -> np.ndarray:
    start = start % a.shape[dim] if start < 0 else start
    return np.take(a, range(start, start + length), axis=dim)


def _ref_diagonal(a: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(a, offset, dim1, dim2)


def _ref_tensor_split(a: np.ndarray, ios: Any, dim: int = 0) -> tuple[np.ndarray, ...]:
    return tuple(np.array_split(a, ios, axis=dim))


def _ref_repeat(a: np.ndarray, *reps: int) -> np.ndarray:
    if len(reps) == 1 and isinstance(reps[0], (tuple, list)):
        reps = tuple(reps[0])
    return np.tile(a.reshape((1,) * (len(reps) - a.ndim) + a.shape), reps)


def _ref_repeat_interleave(a: np.ndarray, repeats: Any, dim: int | None = None, output_size: Any = None) -> np.ndarray:
    return np.repeat(a, repeats, axis=dim)


def _ref_roll(a: np.ndarray, shifts: Any, dims: Any = None) -> np.ndarray:
    return np.roll(a, shifts, axis=dims)


def _ref_diag_embed(a: np.ndarray, offset: int = 0, dim1: int = -2, dim2: int = -1) -> np.ndarray:
    n = a.shape[-1] + abs(offset)
    out = np.zeros((*a.shape[:-1], n, n), dtype=a.dtype)
    i = np.arange(a.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = a
    nd = out.ndim
    d1, d2 = dim1 % nd, dim2 % nd
    # out has the diagonal dims last; move them to (d1, d2)
    return np.moveaxis(out, (-2, -1), (d1, d2))


def _ref_trace(a: np.ndarray) -> np.ndarray:
    r = np.trace(a)
    return np.asarray(r, dtype=np.int64 if a.dtype.kind in "biu" else np.float64)


def _ref_pad(a: np.ndarray, pad: tuple[int, ...], value: Any = 0) -> np.ndarray:
    out = a
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        idx = [slice(None)] * a.ndim
        idx[d] = slice(max(-lo, 0), out.shape[d] - max(-hi, 0))
        out = out[tuple(idx)]
        widths = [(0, 0)] * a.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
    return out


def _ref_column_stack(arrays: list[np.ndarray]) -> np.ndarray:
    return np.column_stack([x.reshape(-1, 1) if x.ndim <= 1 else x for x in arrays])


def _ref_cat(arrays: list[np.ndarray], dim: int = 0) -> np.ndarray:
    kept = [x for x in arrays if not (x.ndim == 1 and x.size == 0)]
    return np.concatenate(kept or arrays, axis=dim)


# ---- error inputs ------------------------------------------------------------------------


def _cat_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a, b = make_tensor((2, 3), ea.float32), make_tensor((2, 4), ea.float32)
    yield _err(
        [a, b],
        (0,),
        RuntimeError,
        r"Sizes of tensors must match except in dimension 0. Expected size 3 but got "
        r"size 4 for tensor number 1 in the list",
    )
    yield _err(
        [a, make_tensor((2, 3, 1), ea.float32)],
        (0,),
        RuntimeError,
        "Tensors must have same number of dimensions: got 2 and 3",
    )
    yield _err(
        [a, make_tensor((), ea.float32)],
        (),
        RuntimeError,
        r"zero-dimensional tensor \(at position 1\) cannot be concatenated",
    )
    yield _err([], (), ValueError, "expected a non-empty list of Tensors")
    yield _err([a, a], (2,), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)")


def _stack_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a, b = make_tensor((2, 3), ea.float32), make_tensor((2, 4), ea.float32)
    yield _err(
        [a, b],
        (),
        RuntimeError,
        r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and "
        r"\[2, 4\] at entry 1",
    )
    yield _err([], (), RuntimeError, "stack expects a non-empty TensorList")
    yield _err([a, a], (3,), IndexError, "Dimension out of range")


def _view_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, (4, -1), RuntimeError, r"shape '\[4, -1\]' is invalid for input of size 6")
    yield _err(a, (-1, -1), RuntimeError, "only one dimension can be inferred")
    yield _err(a.t(), (6,), RuntimeError, "view size is not compatible with input tensor's size and stride")


def _reshape_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, ((7,),), RuntimeError, r"shape '\[7\]' is invalid for input of size 6")
    yield _err(a.t(), ((4, 2),), RuntimeError, r"shape '\[4, 2\]' is invalid for input of size 6")
    yield _err(make_tensor((0, 3), ea.float32), ((-1, 0),), RuntimeError, "ambiguous")


def _split_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((4, 3), ea.float32)
    yield _err(a, ([1, 2],), RuntimeError, r"split_with_sizes expects split_sizes to sum exactly to 4")
    yield _err(a, (-1,), RuntimeError, "split expects split_size be non-negative")
    yield _err(a, (0,), RuntimeError, "split_size can only be 0 if dimension size is 0")
    yield _err(make_tensor((), ea.float32), (1,), RuntimeError, "split expects at least a 1-dimensional tensor")


def _narrow_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((4, 3), ea.float32)
    yield _err(a, (0, 2, 3), RuntimeError, r"start \(2\) \+ length \(3\) exceeds dimension size \(4\)")
    yield _err(a, (0, 5, 0), IndexError, r"start out of range \(expected to be in range of \[-4, 4\], but got 5\)")
    yield _err(a, (0, 0, -1), RuntimeError, "narrow\\(\\): length must be non-negative")
    yield _err(a, (2, 0, 1), IndexError, "Dimension out of range")
    yield _err(a, (0, ea.tensor(1.0), 1), RuntimeError, "start must be an 0-dim integral Tensor")


def _unfold_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((4, 3), ea.float32)
    yield _err(a, (0, 5, 1), RuntimeError, "maximum size for tensor at dimension 0 is 4 but size is 5")
    yield _err(a, (0, 2, 0), RuntimeError, "step is 0 but must be > 0")
    yield _err(a, (1, -1, 1), RuntimeError, "size is -1 but must be >= 0")


def _diagonal_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((4, 3), ea.float32)
    yield _err(a, (0, 1, -1), RuntimeError, "diagonal dimensions cannot be identical 1, -1")
    yield _err(a, (0, 0, 2), IndexError, "Dimension out of range")


def _movedim_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3, 4), ea.float32)
    yield _err(a, ((0, 1), (0,)), RuntimeError, "should contain the same number of dims as destination")
    yield _err(a, ((0, 0), (1, 2)), RuntimeError, r"movedim: repeated dim in `source` \(\[0, 0\]\)")
    yield _err(a, ((0, 1), (2, 2)), RuntimeError, r"movedim: repeated dim in `destination`")
    yield _err(a, (3, 0), IndexError, "Dimension out of range")


def _repeat_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(
        a, (2,), RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of dimensions"
    )
    yield _err(a, (2, -1), RuntimeError, "Trying to create tensor with negative dimension -1")


def _repeat_interleave_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, (-1,), RuntimeError, "repeats can not be negative")
    yield _err(
        a,
        (ea.tensor([1, 2]),),
        RuntimeError,
        r"repeats must have the same size as input along dim, but got "
        r"repeats.size\(0\) = 2 and input.size\(0\) = 6",
    )
    yield _err(a, (ea.tensor([1.0, 2.0]), 0), RuntimeError, "repeats has to be Long or Int tensor")
    yield _err(a, (ea.tensor([[1, 2]]), 0), RuntimeError, "repeats must be 0-dim or 1-dim tensor")
    yield _err(a, (ea.tensor([1, -2]), 0), RuntimeError, "repeats can not be negative")
    yield _err(a, (2, 0), RuntimeError, "allocated size does not match", output_size=3)


def _flip_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, ((0, 0),), RuntimeError, "dim 0 appears multiple times in the list of dims")
    yield _err(a, ((2,),), IndexError, "Dimension out of range")


def _roll_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, ((1, 2), (0,)), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1")
    yield _err(a, (1, 2), IndexError, "Dimension out of range")


def _rot90_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, (1, (0,)), RuntimeError, "expected total rotation dims == 2, but got dims = 1")
    yield _err(a, (1, (0, 0)), RuntimeError, "expected rotation dims to be different")
    yield _err(a, (1, (0, 3)), RuntimeError, "Rotation dim1 out of range, dim1 = 3")
    yield _err(a, (1, (0, -2)), RuntimeError, "expected rotation dims to be different")
    yield _err(make_tensor((3,), ea.float32), (1,), RuntimeError, "expected total dims >= 2, but got total dims = 1")


def _tril_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(
        make_tensor((3,), ea.float32), (), RuntimeError, f"{op.name}: input tensor must have at least 2 dimensions"
    )


def _diag_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(make_tensor((2, 2, 2), ea.float32), (), RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D")


def _trace_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(
        make_tensor((2, 2, 2), ea.float32), (), RuntimeError, "trace: expected a matrix, but got tensor with dim 3"
    )


def _pad_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(a, ((1, 1, 1),), RuntimeError, "Length of pad must be even but instead it equals 3")
    yield _err(a, ((1,) * 6,), RuntimeError, "Pad length is 6 while the input has 2 dimensions")
    yield _err(
        a,
        ((-2, -2),),
        RuntimeError,
        "The input size 3, plus negative padding -2 and -2 resulted in a negative "
        "output size, which is invalid. Check dimension 1 of your input.",
    )


def _flatten_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3, 4), ea.float32)
    yield _err(a, (2, 1), RuntimeError, "flatten\\(\\) has invalid args: start_dim cannot come after end_dim")
    yield _err(a, (0, 3), IndexError, "Dimension out of range")


def _unflatten_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 6), ea.float32)
    yield _err(
        a,
        (1, (4, 2)),
        RuntimeError,
        r"unflatten: Provided sizes \[4, 2\] don't multiply up to the size of dim 1 "
        r"\(6\) in the input tensor",
    )
    yield _err(a, (1, ()), RuntimeError, "unflatten: sizes must be non-empty")


def _chunk_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err(make_tensor((4,), ea.float32), (0,), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0")
    yield _err(make_tensor((), ea.float32), (1,), RuntimeError, "chunk expects at least a 1-dimensional tensor")


def _tensor_split_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((4,), ea.float32)
    yield _err(a, (0,), RuntimeError, "number of sections must be larger than 0, got 0")
    yield _err(
        a, (ea.tensor([1.0]),), RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype of long"
    )
    yield _err(
        a,
        (ea.tensor([[1]]),),
        RuntimeError,
        "to be a zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims",
    )


def _expand_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2, 3), ea.float32)
    yield _err(
        a,
        ((2, 4),),
        RuntimeError,
        r"The expanded size of the tensor \(4\) must match the existing size \(3\) at "
        "non-singleton dimension 1",
    )
    yield _err(
        a,
        ((3,),),
        RuntimeError,
        r"the number of sizes provided \(1\) must be greater or equal to the number of "
        r"dimensions in the tensor \(2\)",
    )


def _hstack_like_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield _err([], (), RuntimeError, f"{op.name} expects a non-empty TensorList")


def _meshgrid_errors(op: OpInfo) -> Iterator[ErrorInput]:
    a = make_tensor((2,), ea.float32)
    yield _err([a, make_tensor((2, 2), ea.float32)], (), RuntimeError, "Expected 0D or 1D tensor in the tensor list")
    yield _err([a, a], (), RuntimeError, 'indexing must be one of "xy" or "ij", but received: ji', indexing="ji")
    yield _err([a, make_tensor((2,), ea.int64)], (), RuntimeError, "same dtype")


# ---- the table ---------------------------------------------------------------------------


def _op(name: str, fn: Any, samples: Any, ref: Any, **kw: Any) -> OpInfo:
    kw.setdefault("supports_out", False)
    kw.setdefault("check_unsupported", False)
    kw.setdefault("result_dtype", _same_dtype)
    return OpInfo(name, fn, ALL_DTYPES, samples, ref=ref, **kw)


def _meshgrid(tensors: list[Any], indexing: str = "ij") -> Any:
    return ea.meshgrid(*tensors, indexing=indexing)


OPS = [
    # views
    _op(
        "view",
        lambda x, *a: x.view(*a),
        _samples(((2, 3), (6,)), ((2, 3), (3, -1)), ((), (1, 1)), ((0, 3), (3, 0)), ((2, 3, 4), (2, 12))),
        lambda a, *shape: a.reshape(shape),
        error_inputs=_view_errors,
        supports_noncontiguous=False,
    ),
    _op(
        "reshape",
        ea.reshape,
        _samples(
            ((2, 3), ((6,),)), ((2, 3, 4), ((4, -1),)), ((), ((1,),)), ((5,), ((5, 1, 1),)), ((0, 3), ((3, 0, 1),))
        ),
        lambda a, shape: a.reshape(shape),
        error_inputs=_reshape_errors,
    ),
    _op(
        "flatten",
        ea.flatten,
        _samples(
            ((2, 3, 4), ()), ((2, 3, 4), (1,)), ((2, 3, 4), (0, 1)), ((), ()), ((2, 0, 3), (1, 2)), ((2, 3), (1, 1))
        ),
        _ref_flatten,
        error_inputs=_flatten_errors,
    ),
    _op(
        "unflatten",
        ea.unflatten,
        _samples(((2, 6), (1, (2, 3))), ((6, 2), (0, (3, -1))), ((6,), (-1, (1, 6, 1)))),
        _ref_unflatten,
        error_inputs=_unflatten_errors,
    ),
    _op(
        "squeeze",
        ea.squeeze,
        _samples(
            ((2, 1, 3, 1), ()),
            ((2, 1, 3, 1), (1,)),
            ((2, 1, 3, 1), ((1, 3),)),
            ((2, 1, 3), (0,)),
            ((), ()),
            ((1,), (0,)),
        ),
        lambda a, dim=None: np.squeeze(
            a, axis=tuple(d for d in np.atleast_1d(dim) if a.shape[d] == 1) if dim is not None else None
        ),
    ),
    _op(
        "unsqueeze",
        ea.unsqueeze,
        _samples(((2, 3), (0,)), ((2, 3), (-1,)), ((), (0,)), ((2, 3), (1,))),
        lambda a, d: np.expand_dims(a, d),
    ),
    _op(
        "permute",
        ea.permute,
        _samples(((2, 3, 4), ((2, 0, 1),)), ((2, 3), ((-1, 0),)), ((), ((),))),
        lambda a, dims: np.transpose(a, dims),
    ),
    _op(
        "transpose",
        ea.transpose,
        _samples(((2, 3, 4), (0, 2)), ((2, 3), (-1, 0)), ((), (0, -1))),
        lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a,
    ),
    _op(
        "swapaxes",
        ea.swapaxes,
        _samples(((2, 3, 4), (0, 2)), ((2, 3), (1, 0))),
        lambda a, d0, d1: np.swapaxes(a, d0, d1),
    ),
    _op("swapdims", ea.swapdims, _samples(((2, 3, 4), (2, 1))), lambda a, d0, d1: np.swapaxes(a, d0, d1)),
    _op(
        "movedim",
        ea.movedim,
        _samples(((2, 3, 4), (0, 2)), ((2, 3, 4), ((0, 1), (2, 0))), ((2, 3, 4, 5), (-1, 0))),
        np.moveaxis,
        error_inputs=_movedim_errors,
    ),
    _op("moveaxis", ea.moveaxis, _samples(((2, 3, 4), (1, -1))), np.moveaxis),
    _op("t", ea.t, _samples(((2, 3), ()), ((4,), ()), ((), ())), lambda a: a.T),
    _op(
        "expand",
        lambda x, s: x.expand(s),
        _samples(((3, 1), ((3, 4),)), ((4,), ((2, 3, 4),)), ((), ((2, 2),)), ((3, 1), ((-1, 5),))),
        lambda a, s: np.broadcast_to(a, tuple(a.shape[i - len(s) + a.ndim] if v == -1 else v for i, v in enumerate(s))),
        error_inputs=_expand_errors,
    ),
    _op("broadcast_to", ea.broadcast_to, _samples(((3, 1), ((3, 4),)), ((4,), ((2, 3, 4),))), np.broadcast_to),
    _op(
        "narrow",
        ea.narrow,
        _samples(((5, 3), (0, 1, 3)), ((5, 3), (1, -2, 2)), ((5, 3), (-1, 0, 0))),
        _ref_narrow,
        error_inputs=_narrow_errors,
    ),
    _op("select", ea.select, _samples(((5, 3), (0, 2)), ((5, 3), (1, -1))), lambda a, d, i: np.take(a, i, axis=d)),
    _op(
        "unfold",
        lambda x, *a: x.unfold(*a),
        _samples(((7,), (0, 3, 2)), ((4, 6), (1, 2, 3)), ((4, 6), (0, 4, 1)), ((3, 5), (-1, 0, 1))),
        _ref_unfold,
        error_inputs=_unfold_errors,
    ),
    _op(
        "diagonal",
        ea.diagonal,
        _samples(
            ((4, 5), ()),
            ((4, 5), (1,)),
            ((4, 5), (-2,)),
            ((2, 3, 4), (0, 0, 2)),
            ((2, 3, 4), (1, -1, 0)),
            ((3, 3), (5,)),
        ),
        _ref_diagonal,
        error_inputs=_diagonal_errors,
    ),
    _op(
        "split",
        ea.split,
        _samples(((5, 2), (2,)), ((5, 2), ((1, 4),)), ((5, 2), (1, 1)), ((0, 2), (0,)), ((5, 2), (7,))),
        _ref_split,
        result_dtype=None,
        error_inputs=_split_errors,
    ),
    _op(
        "chunk",
        ea.chunk,
        _samples(((5, 2), (2,)), ((6, 2), (3,)), ((5, 2), (2, 1)), ((2,), (5,))),
        _ref_chunk,
        result_dtype=None,
        error_inputs=_chunk_errors,
    ),
    _op(
        "tensor_split",
        ea.tensor_split,
        _samples(((7, 2), (3,)), ((7, 2), ((1, 5),)), ((7, 2), ((4, 2, 9),)), ((3, 7), (2, 1))),
        _ref_tensor_split,
        result_dtype=None,
        error_inputs=_tensor_split_errors,
    ),
    _op(
        "unbind",
        ea.unbind,
        _samples(((3, 2), ()), ((3, 2), (1,))),
        lambda a, d=0: tuple(np.moveaxis(a, d, 0)),
        result_dtype=None,
    ),
    # copies
    _op("clone", ea.clone, _samples(((2, 3), ()), ((), ()), ((0, 2), ())), lambda a: a.copy()),
    _op("contiguous", lambda x: x.contiguous(), _samples(((2, 3), ()), ((2, 3, 4), ())), lambda a: a),
    # joins
    _op(
        "cat",
        ea.cat,
        _list_samples(
            ([(2, 3), (1, 3)], ()),
            ([(2, 3), (2, 1)], (1,)),
            ([(2, 3), (2, 3), (2, 0)], (-1,)),
            ([(4,), (0,), (2,)], ()),
            ([(2, 3), (0,)], (1,)),
            ([(0,)], ()),
        ),
        _ref_cat,
        supports_out=True,
        result_dtype=None,
        error_inputs=_cat_errors,
    ),
    _op(
        "concat",
        ea.concat,
        _list_samples(
            ([(2, 3), (1, 3)], ()),
        ),
        _ref_cat,
        supports_out=True,
        result_dtype=None,
    ),
    _op(
        "concatenate",
        ea.concatenate,
        _list_samples(
            ([(2, 3), (2, 2)], (1,)),
        ),
        _ref_cat,
        supports_out=True,
        result_dtype=None,
    ),
    _op(
        "stack",
        ea.stack,
        _list_samples(([(2, 3), (2, 3)], ()), ([(2, 3)] * 3, (2,)), ([(), ()], ()), ([(2, 3), (2, 3)], (-2,))),
        lambda xs, dim=0: np.stack(xs, axis=dim),
        supports_out=True,
        result_dtype=None,
        error_inputs=_stack_errors,
    ),
    _op(
        "hstack",
        ea.hstack,
        _list_samples(([(2, 3), (2, 1)], ()), ([(3,), (2,)], ()), ([(), (2,)], ())),
        np.hstack,
        supports_out=True,
        result_dtype=None,
        error_inputs=_hstack_like_errors,
    ),
    _op(
        "vstack",
        ea.vstack,
        _list_samples(([(2, 3), (1, 3)], ()), ([(3,), (3,)], ()), ([(2, 2, 2), (1, 2, 2)], ())),
        np.vstack,
        supports_out=True,
        result_dtype=None,
        error_inputs=_hstack_like_errors,
    ),
    _op(
        "row_stack",
        ea.row_stack,
        _list_samples(
            ([(3,), (3,)], ()),
        ),
        np.vstack,
        supports_out=True,
        result_dtype=None,
    ),
    _op(
        "dstack",
        ea.dstack,
        _list_samples(([(2, 3), (2, 3)], ()), ([(3,), (3,)], ()), ([(), ()], ())),
        np.dstack,
        supports_out=True,
        result_dtype=None,
        error_inputs=_hstack_like_errors,
    ),
    _op(
        "column_stack",
        ea.column_stack,
        _list_samples(([(3,), (3, 2)], ()), ([(), ()], ()), ([(2, 2), (2,)], ())),
        _ref_column_stack,
        supports_out=True,
        result_dtype=None,
        error_inputs=_hstack_like_errors,
    ),
    _op(
        "meshgrid",
        _meshgrid,
        _list_samples(([(3,), (2,)], ()), ([(3,), (2,), (4,)], ("xy",)), ([(), (2,)], ())),
        lambda xs, indexing="ij": tuple(np.meshgrid(*xs, indexing=indexing)),
        result_dtype=None,
        error_inputs=_meshgrid_errors,
    ),
    _op(
        "cartesian_prod",
        lambda xs: ea.cartesian_prod(*xs),
        _list_samples(([(3,), (2,)], ()), ([(2,), (2,), (3,)], ()), ([(4,)], ())),
        lambda xs: np.stack([g.reshape(-1) for g in np.meshgrid(*xs, indexing="ij")], 1) if len(xs) > 1 else xs[0],
        result_dtype=None,
    ),
    # transformations
    _op(
        "repeat",
        lambda x, *r: x.repeat(*r),
        _samples(((2, 3), (2, 1)), ((2, 3), (1, 2, 3)), ((), (2, 3)), ((3,), (0, 2)), ((2, 1), ((3, 2),))),
        _ref_repeat,
        error_inputs=_repeat_errors,
    ),
    _op("tile", ea.tile, _samples(((2, 3), ((2,),)), ((2, 3), ((2, 1, 2),)), ((3,), ((2, 2),))), np.tile),
    _op(
        "repeat_interleave",
        ea.repeat_interleave,
        _samples(
            ((2, 3), (2,)),
            ((2, 3), (2, 1)),
            ((2, 3), (0, 0)),
            ((), (3,)),
            ((4,), (2, 0)),
            ((2, 3), (3,), {"dim": 1, "output_size": 9}),
            ((2, 3), (ea.tensor([1, 0, 2]), 1)),
            ((2, 3), (ea.tensor([2]), 0)),
            ((3,), (ea.tensor(2, dtype=ea.int32),)),
        ),
        _ref_repeat_interleave,
        error_inputs=_repeat_interleave_errors,
    ),
    _op(
        "flip",
        ea.flip,
        _samples(
            ((2, 3), ((0,),)),
            ((2, 3, 4), ((0, 2),)),
            ((2, 3), ((-1, 0),)),
            ((), ((),)),
            ((0, 3), ((1,),)),
            ((5,), ((0,),)),
        ),
        lambda a, dims: np.flip(a, dims) if a.ndim else a,
        error_inputs=_flip_errors,
    ),
    _op("fliplr", ea.fliplr, _samples(((2, 3), ()), ((2, 3, 4), ())), np.fliplr),
    _op("flipud", ea.flipud, _samples(((2, 3), ()), ((4,), ())), np.flipud),
    _op(
        "roll",
        ea.roll,
        _samples(
            ((2, 5), (2, 1)),
            ((2, 5), (-3, 1)),
            ((2, 5), (3,)),
            ((2, 5), ((1, 7), (0, 1))),
            ((0, 3), (1, 0)),
            ((2, 5), (0, 0)),
        ),
        _ref_roll,
        error_inputs=_roll_errors,
    ),
    _op(
        "rot90",
        ea.rot90,
        _samples(((2, 3), ()), ((2, 3), (2,)), ((2, 3), (-1,)), ((2, 3, 4), (1, (2, 0))), ((2, 3), (4,))),
        lambda a, k=1, dims=(0, 1): np.rot90(a, k, dims),
        error_inputs=_rot90_errors,
    ),
    _op(
        "tril",
        ea.tril,
        _samples(
            ((4, 5), ()),
            ((4, 5), (1,)),
            ((4, 5), (-2,)),
            ((2, 3, 3), (0,)),
            ((0, 3), ()),
            ((3, 4), (9,)),
            ((3, 4), (-9,)),
        ),
        np.tril,
        supports_out=True,
        error_inputs=_tril_errors,
    ),
    _op(
        "triu",
        ea.triu,
        _samples(((4, 5), ()), ((4, 5), (1,)), ((4, 5), (-2,)), ((2, 3, 3), (0,)), ((3, 4), (9,))),
        np.triu,
        supports_out=True,
        error_inputs=_tril_errors,
    ),
    _op(
        "diag",
        ea.diag,
        _samples(
            ((4,), ()),
            ((4,), (2,)),
            ((4,), (-1,)),
            ((3, 5), ()),
            ((3, 5), (2,)),
            ((3, 5), (-2,)),
            ((3, 5), (7,)),
            ((0,), ()),
        ),
        np.diag,
        supports_out=True,
        error_inputs=_diag_errors,
    ),
    _op(
        "diag_embed",
        ea.diag_embed,
        _samples(((3,), ()), ((2, 3), (1,)), ((2, 3), (-1, 0, 2)), ((2, 3), (0, 1, 0))),
        _ref_diag_embed,
    ),
    _op("diagflat", ea.diagflat, _samples(((2, 2), ()), ((3,), (1,)), ((3,), (-2,))), np.diagflat),
    _op(
        "trace",
        ea.trace,
        _samples(((3, 4), ()), ((4, 3), ()), ((0, 2), ())),
        _ref_trace,
        result_dtype=lambda s: ea.int64 if not s.input.dtype.is_floating_point else s.input.dtype,
        error_inputs=_trace_errors,
    ),
    _op(
        "constant_pad_nd",
        ea.constant_pad_nd,
        _samples(
            ((2, 3), ((1, 2),)),
            ((2, 3), ((1, 0, 0, 2), 1)),
            ((2, 3, 4), ((-1, 1, 2, -1),)),
            ((2, 3), ((-1, -2),)),
            ((0, 3), ((1, 1, 1, 1), 1)),
        ),
        _ref_pad,
        error_inputs=_pad_errors,
    ),
]
