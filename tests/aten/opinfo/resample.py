"""OpInfo entries of padding, upsampling and pixel shuffling: reflection_pad1d/2d/3d,
replication_pad1d/2d/3d and their backward operators, nn.functional.pad (all modes),
upsample_nearest1d/2d/3d and upsample_bilinear2d with their backward operators,
nn.functional.interpolate, pixel_shuffle / pixel_unshuffle.

References in NumPy: padding is np.pad ('reflect' / 'edge' / 'wrap' after cropping by the
negative amounts, as PyTorch's); nearest upsampling
reads floor(o * scale) computed in float32 (scale = 1 / scale_factor when given, else
in / out), as PyTorch; bilinear upsampling is A_h x A_w^T with per-dim interpolation
matrices built from PyTorch's source-index rule (align_corners or half-pixel centres
clamped at 0). Each backward reference is the adjoint: np.add.at over the forward's index
map, or A_h^T g A_w.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import ALL_DTYPES, ALL_NUMERIC, FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor
from .pooling import ref_adaptive_avg

# weighted sums of values up to 9 whose weights may cancel (bicubic's are negative at the
# outer taps): float32 rounding reaches a few 1e-6 absolute
INTERP_F32_TOL = (5e-5, 1e-5)


def _t(shape: tuple[int, ...], dtype: Any) -> Any:
    return make_tensor(shape, dtype)


def _s(*args: Any, name: str = "", **kw: Any) -> SampleInput:
    return SampleInput(args[0], args[1:], kw, name=name)


def _err(*args: Any, regex: str, error: type[BaseException] = RuntimeError, **kw: Any) -> ErrorInput:
    return ErrorInput(SampleInput(args[0], args[1:], kw), error, regex)


# ---- padding references ---------------------------------------------------------------------


def ref_pad(x: np.ndarray, pad: Any, mode: str = "constant", value: float | None = None) -> np.ndarray:
    pad = tuple(pad)
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[d]
        sl = [slice(None)] * x.ndim
        sl[d] = slice(max(-lo, 0), size - max(-hi, 0))
        x = x[tuple(sl)]
        widths = [(0, 0)] * x.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        if mode == "circular":
            x = np.pad(x, widths, mode="wrap")
        elif mode == "constant":
            x = np.pad(x, widths, mode="constant", constant_values=0.0 if value is None else value)
        else:
            x = np.pad(x, widths, mode="reflect" if mode == "reflect" else "edge")
    return x


def _adjoint(forward: Any, grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The transpose of an index map: forward of the flat positions tells where each output came from."""
    positions = forward(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape))
    out = np.zeros(int(np.prod(shape)))
    np.add.at(out, positions.reshape(-1), grad.reshape(-1))
    return out.reshape(shape)


def _ref_pad_mode(mode: str) -> Any:
    return lambda x, padding: ref_pad(x, padding, mode)


def _ref_pad_backward(mode: str) -> Any:
    return lambda g, x, padding: _adjoint(lambda a: ref_pad(a, padding, mode), g, x.shape)


# ---- upsampling references --------------------------------------------------------------------


def nearest_exact_index(in_size: int, out_size: int, scale: float | None) -> np.ndarray:
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    o = np.arange(out_size, dtype=np.float32) + np.float32(0.5)
    return np.minimum(np.floor(o * s).astype(np.int64), in_size - 1)


def ref_nearest_exact(x: np.ndarray, output_size: Any, *scales: Any) -> np.ndarray:
    n = len(output_size)
    scales = scales + (None,) * (n - len(scales))
    for i in range(n):
        d = x.ndim - n + i
        x = np.take(x, nearest_exact_index(x.shape[d], output_size[i], scales[i]), axis=d)
    return x


def ref_nearest_exact_backward(g: np.ndarray, output_size: Any, input_size: Any, *scales: Any) -> np.ndarray:
    return _adjoint(lambda a: ref_nearest_exact(a, output_size, *scales), g, tuple(input_size))


def nearest_index(in_size: int, out_size: int, scale: float | None) -> np.ndarray:
    if out_size == in_size:
        return np.arange(out_size)
    if out_size == 2 * in_size:
        return np.arange(out_size) // 2
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    return np.minimum(np.floor(np.arange(out_size, dtype=np.float32) * s).astype(np.int64), in_size - 1)


def linear_matrix(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> np.ndarray:
    A = np.zeros((out_size, in_size))
    if out_size == in_size and not align_corners:
        return np.eye(in_size)
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    for o in range(out_size):
        real = ratio * o if align_corners else max(ratio * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(real), in_size - 1)
        l1 = min(max(real - i0, 0.0), 1.0)
        i1 = i0 + (1 if i0 < in_size - 1 else 0)
        A[o, i0] += 1.0 - l1
        A[o, i1] += l1
    return A


def ref_nearest(x: np.ndarray, output_size: Any, *scales: Any) -> np.ndarray:
    n = len(output_size)
    scales = scales + (None,) * (n - len(scales))
    for i in range(n):
        d = x.ndim - n + i
        x = np.take(x, nearest_index(x.shape[d], output_size[i], scales[i]), axis=d)
    return x


def ref_nearest_backward(g: np.ndarray, output_size: Any, input_size: Any, *scales: Any) -> np.ndarray:
    return _adjoint(lambda a: ref_nearest(a, output_size, *scales), g, tuple(input_size))


def cubic_matrix(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> np.ndarray:
    """Keys' cubic convolution (A = -0.75) over the 4 inputs around each source position,
    indices clamped into the input (PyTorch's upsample_bicubic2d)."""
    a = -0.75

    def k(x: float) -> float:
        x = abs(x)
        if x <= 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    A = np.zeros((out_size, in_size))
    for o in range(out_size):
        real = ratio * o if align_corners else ratio * (o + 0.5) - 0.5
        base = math.floor(real)
        for j in range(base - 1, base + 3):
            A[o, min(max(j, 0), in_size - 1)] += k(real - j)
    return A


def ref_bicubic(x: np.ndarray, output_size: Any, align_corners: bool, *scales: Any) -> np.ndarray:
    scales = scales + (None,) * (2 - len(scales))
    Ah = cubic_matrix(x.shape[-2], output_size[0], align_corners, scales[0])
    Aw = cubic_matrix(x.shape[-1], output_size[1], align_corners, scales[1])
    return Ah @ x @ Aw.T


def ref_bicubic_backward(
    g: np.ndarray, output_size: Any, input_size: Any, align_corners: bool, *scales: Any
) -> np.ndarray:
    scales = scales + (None,) * (2 - len(scales))
    Ah = cubic_matrix(input_size[-2], output_size[0], align_corners, scales[0])
    Aw = cubic_matrix(input_size[-1], output_size[1], align_corners, scales[1])
    return Ah.T @ g @ Aw


def ref_linear(x: np.ndarray, output_size: Any, align_corners: bool, *scales: Any) -> np.ndarray:
    """Linear interpolation over the last len(output_size) dims, one interpolation matrix per dim."""
    n = len(output_size)
    scales = scales + (None,) * (n - len(scales))
    for i in range(n):
        d = x.ndim - n + i
        A = linear_matrix(x.shape[d], output_size[i], align_corners, scales[i])
        x = np.moveaxis(np.tensordot(A, np.moveaxis(x, d, 0), axes=(1, 0)), 0, d)
    return x


def ref_linear_backward(
    g: np.ndarray, output_size: Any, input_size: Any, align_corners: bool, *scales: Any
) -> np.ndarray:
    n = len(output_size)
    scales = scales + (None,) * (n - len(scales))
    for i in range(n):
        d = g.ndim - n + i
        A = linear_matrix(input_size[d], output_size[i], align_corners, scales[i])
        g = np.moveaxis(np.tensordot(A.T, np.moveaxis(g, d, 0), axes=(1, 0)), 0, d)
    return g


def ref_bilinear(x: np.ndarray, output_size: Any, align_corners: bool, sh: Any = None, sw: Any = None) -> np.ndarray:
    Ah = linear_matrix(x.shape[-2], output_size[0], align_corners, sh)
    Aw = linear_matrix(x.shape[-1], output_size[1], align_corners, sw)
    return Ah @ x @ Aw.T


def ref_bilinear_backward(
    g: np.ndarray, output_size: Any, input_size: Any, align_corners: bool, sh: Any = None, sw: Any = None
) -> np.ndarray:
    Ah = linear_matrix(input_size[-2], output_size[0], align_corners, sh)
    Aw = linear_matrix(input_size[-1], output_size[1], align_corners, sw)
    return Ah.T @ g @ Aw


def ref_interpolate(
    x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: Any = None
) -> np.ndarray:
    n = x.ndim - 2
    if size is not None:
        out = list(size) if isinstance(size, (list, tuple)) else [size] * n
        scales: list[Any] = [None] * n
    else:
        scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * n
        out = [math.floor(x.shape[2 + i] * scales[i]) for i in range(n)]
    if mode == "nearest":
        return ref_nearest(x, out, *scales)
    if mode == "nearest-exact":
        return ref_nearest_exact(x, out, *scales)
    if mode == "area":
        return ref_adaptive_avg(n, x, out)
    if mode == "bicubic":
        return ref_bicubic(x, out, bool(align_corners), *scales)
    return ref_linear(x, out, bool(align_corners), *scales)


def ref_pixel_shuffle(x: np.ndarray, r: int) -> np.ndarray:
    *b, c, h, w = x.shape
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    nb = len(b)
    y = y.transpose(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return y.reshape(*b, c // (r * r), h * r, w * r)


def ref_pixel_unshuffle(x: np.ndarray, r: int) -> np.ndarray:
    *b, c, h, w = x.shape
    y = x.reshape(*b, c, h // r, r, w // r, r)
    nb = len(b)
    y = y.transpose(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return y.reshape(*b, c * r * r, h // r, w // r)


# ---- samples ---------------------------------------------------------------------------------

PAD_CASES = {
    1: [((1, 1, 3), (1, 2)), ((2, 5), (2, 1)), ((2, 3, 6), (0, 3)), ((1, 2, 5), (-1, 2)), ((0, 2, 4), (1, 1))],
    2: [
        ((1, 2, 2), (1, 0, 0, 1)),
        ((1, 4, 5), (1, 2, 3, 0)),
        ((2, 2, 3, 4), (2, 2, 1, 1)),
        ((1, 1, 4, 4), (-1, 2, 1, -2)),
    ],
    3: [((1, 1, 2, 2), (1, 0, 0, 0, 0, 0)), ((1, 3, 3, 4), (1, 0, 2, 1, 1, 2)), ((2, 1, 2, 3, 3), (1, 1, 1, 1, 1, 1))],
}


def _pad_samples(n: int) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, pad in PAD_CASES[n]:
            yield _s(_t(shape, dtype), pad, name=f"{shape} pad {pad}")

    return gen


def _pad_backward_samples(n: int, mode: str) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, pad in PAD_CASES[n]:
            out_shape = ref_pad(np.zeros(shape), pad, mode).shape
            yield _s(_t(out_shape, dtype), _t(shape, dtype), pad, name=f"{shape} pad {pad}")

    return gen


def _fpad_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((2, 3, 4), dtype), (1, 2), name="constant default")
    yield _s(_t((2, 3, 4), dtype), (1, -1, 2, 0), "constant", 2.0, name="constant value, crop")
    yield _s(_t((2, 3, 4), dtype), (2, 1), "reflect", name="reflect 1d")
    yield _s(_t((1, 2, 3, 4), dtype), (1, 2, 2, 1), "reflect", name="reflect 2d")
    yield _s(_t((3, 4), dtype), (2, 3), "replicate", name="replicate unbatched 1d")
    yield _s(_t((1, 2, 2, 3, 3), dtype), (1, 1, 2, 0, 0, 1), "replicate", name="replicate 3d")
    yield _s(_t((1, 2, 4), dtype), (3, 1), "circular", name="circular 1d")
    yield _s(_t((2, 3, 4), dtype), (-1, 2, 1, 3), "circular", name="circular 2d, negative")
    yield _s(_t((1, 1, 2, 2, 3), dtype), (1, 2, 0, 2, 1, 1), "circular", name="circular 3d")


NEAREST_CASES = {
    1: [((1, 2, 5), (7,), ()), ((2, 1, 4), (8,), ()), ((1, 1, 6), (4,), (0.7,)), ((1, 2, 3), (3,), ())],
    2: [((1, 2, 3, 4), (5, 7), ()), ((2, 1, 3, 3), (6, 2), (2.0, 0.6)), ((1, 1, 5, 4), (2, 9), (None, 2.3))],
    3: [
        ((1, 1, 1, 2, 2), (2, 2, 3), ()),
        ((1, 1, 2, 3, 4), (3, 6, 5), ()),
        ((1, 2, 2, 2, 3), (4, 3, 3), (2.0, 1.5, None)),
    ],
}

BILINEAR_CASES = [
    ((1, 2, 3, 4), (5, 7), False, ()),
    ((1, 2, 3, 4), (5, 7), True, ()),
    ((2, 1, 5, 6), (3, 2), False, ()),
    ((1, 1, 4, 4), (8, 6), False, (2.0, 1.5)),
    ((1, 1, 3, 5), (1, 1), True, ()),
    ((1, 3, 4, 4), (4, 4), False, ()),
]


def _nearest_samples(n: int) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, size, scales in NEAREST_CASES[n]:
            yield _s(_t(shape, dtype), size, *scales, name=f"{shape} -> {size}")

    return gen


def _nearest_backward_samples(n: int) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, size, scales in NEAREST_CASES[n]:
            yield _s(_t((*shape[:2], *size), dtype), size, shape, *scales, name=f"{shape} -> {size}")

    return gen


LINEAR_CASES = {
    1: [((1, 1, 3), (5,), False, ()), ((2, 2, 5), (3,), True, ()), ((1, 3, 4), (9,), False, (2.5,))],
    3: [
        ((1, 1, 2, 2, 2), (3, 2, 3), False, ()),
        ((1, 2, 2, 3, 2), (4, 2, 3), True, ()),
        ((1, 1, 2, 2, 3), (3, 3, 4), False, (1.5, 1.5, None)),
    ],
}


def _linear_samples(n: int) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, size, ac, scales in LINEAR_CASES[n]:
            yield _s(_t(shape, dtype), size, ac, *scales, name=f"{shape} -> {size} align_corners={ac}")

    return gen


def _linear_backward_samples(n: int) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        for shape, size, ac, scales in LINEAR_CASES[n]:
            yield _s(_t((*shape[:2], *size), dtype), size, shape, ac, *scales, name=f"{shape} -> {size}")

    return gen


def _linear_errors(n: int, name: str) -> Any:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        shape = (1, 2, 3, 4, 5)[: n + 2]
        x = _t(shape, ea.float32)
        size = (4, 5, 6)[:n]
        yield _err(x[0], size, False, regex=f"It is expected input_size equals to {n + 2}, but got size {n + 1}")
        yield _err(
            _t((1, 0, 3, 4, 5)[: n + 2], ea.float32),
            size,
            False,
            regex=rf"Non-empty {n + 2}D data tensor expected but got a tensor with sizes \[1, 0",
        )
        yield _err(x.long(), size, False, regex=f"\"{name}\" not implemented for 'Long'")

    return gen


def _bilinear_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape, size, ac, scales in BILINEAR_CASES:
        yield _s(_t(shape, dtype), size, ac, *scales, name=f"{shape} -> {size} align_corners={ac}")


def _bilinear_backward_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for shape, size, ac, scales in BILINEAR_CASES:
        yield _s(_t((*shape[:2], *size), dtype), size, shape, ac, *scales, name=f"{shape} -> {size}")


def _interpolate_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 2, 5), dtype), 8, name="nearest 1d size")
    yield _s(_t((1, 2, 3, 4), dtype), scale_factor=2, name="nearest 2d x2")
    yield _s(_t((1, 2, 3, 4), dtype), scale_factor=(1.5, 0.6), name="nearest 2d fractional")
    yield _s(_t((1, 1, 2, 3, 2), dtype), (3, 4, 5), name="nearest 3d size")
    if dtype.is_floating_point:
        yield _s(_t((1, 2, 3, 4), dtype), (6, 5), mode="bilinear", name="bilinear size")
        yield _s(_t((2, 1, 4, 3), dtype), scale_factor=1.7, mode="bilinear", align_corners=True, name="bilinear ac")
        yield _s(_t((1, 1, 4, 4), dtype), scale_factor=0.5, mode="bilinear", name="bilinear down")
        yield _s(_t((1, 2, 4, 5), dtype), (7, 3), mode="bicubic", name="bicubic size")
        yield _s(_t((1, 1, 3, 4), dtype), scale_factor=1.6, mode="bicubic", align_corners=True, name="bicubic ac")
        yield _s(_t((2, 2, 5), dtype), 8, mode="linear", name="linear size")
        yield _s(_t((1, 2, 5), dtype), scale_factor=0.7, mode="linear", align_corners=True, name="linear ac")
        yield _s(_t((1, 1, 2, 3, 3), dtype), (3, 2, 5), mode="trilinear", name="trilinear size")
        yield _s(_t((1, 2, 2, 2, 3), dtype), scale_factor=1.5, mode="trilinear", name="trilinear scale")
        yield _s(_t((1, 2, 6, 5), dtype), (3, 2), mode="area", name="area size")
        yield _s(_t((1, 2, 7), dtype), scale_factor=0.5, mode="area", name="area scale")
    yield _s(_t((1, 2, 5), dtype), 8, mode="nearest-exact", name="nearest-exact 1d")
    yield _s(_t((1, 2, 3, 5), dtype), scale_factor=(1.5, 0.7), mode="nearest-exact", name="nearest-exact 2d")
    yield _s(_t((1, 1, 2, 3, 2), dtype), (3, 4, 5), mode="nearest-exact", name="nearest-exact 3d")


def _shuffle_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 8, 2, 3), dtype), 2, name="batched")
    yield _s(_t((9, 2, 2), dtype), 3, name="unbatched")
    yield _s(_t((2, 1, 4, 1, 2), dtype), 1, name="factor 1, two batch dims")


def _unshuffle_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 2, 4, 6), dtype), 2, name="batched")
    yield _s(_t((1, 3, 3), dtype), 3, name="unbatched")
    yield _s(_t((2, 1, 2, 2, 4), dtype), 2, name="two batch dims")


# ---- errors ----------------------------------------------------------------------------------


def _pad_errors(kind: str, n: int) -> Any:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        f = ea.float32
        shape = (1, 2, 3, 4, 5)[: n + 2]
        x = _t(shape, f)
        pads = (1,) * (2 * n)
        tail = ", but got: 3" if kind == "reflection" else ""
        yield _err(x, (1, 1, 1), regex=f"padding size is expected to be {2 * n}{tail}")
        bad = _t((1, 2, 3, 4, 5, 6)[: n + 3], f)
        yield _err(
            bad,
            pads,
            regex=rf"Expected {n + 1}D or {n + 2}D \(batch mode\) tensor with possibly 0 batch size and other "
            rf"non-zero dimensions for input, but got: \[",
        )
        empty_channel = _t((1, 0, 3, 4, 5)[: n + 2], f)
        yield _err(empty_channel, pads, regex=rf"Expected {n + 1}D or {n + 2}D \(batch mode\) tensor")
        small = list(pads)
        small[0], small[1] = -shape[-1], -1  # the last dim cropped to a negative size
        yield _err(x, tuple(small), regex=r"is too small. Calculated output")
        if kind == "reflection":
            big = list(pads)
            big[0] = shape[-1]
            yield _err(
                x,
                tuple(big),
                regex=rf"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                rf"padding \({shape[-1]}, 1\) at dimension {n + 1} of input",
            )
            if n >= 2:
                big = list(pads)
                big[3] = shape[-2]
                yield _err(
                    x,
                    tuple(big),
                    regex=rf"Argument #6: Padding size should be less than the corresponding input dimension, but "
                    rf"got: padding \(1, {shape[-2]}\) at dimension {n}",
                )
        yield _err(
            ea.ones(*shape, dtype=ea.bool), pads, regex=f'"{kind}_pad{n}d" not implemented for', error=RuntimeError
        )

    return gen


def _fpad_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((1, 2, 3), ea.float32)
    yield _err(x, (1, 1), "foo", regex="Unrecognised padding mode foo", error=NotImplementedError)
    yield _err(x, (1, 1, 1), "reflect", regex="Padding length must be divisible by 2")
    yield _err(
        x,
        (1,) * 8,
        regex="Padding length should be less than or equal to two times the input dimension but got padding length 8 "
        "and input of dimension 3",
    )
    yield _err(x, (1, 1), "reflect", 1.0, regex='Padding mode "reflect" doesn\'t take in value argument')
    yield _err(
        _t((1, 2, 3, 4), ea.float32),
        (1, 1),
        "reflect",
        regex=r"Padding size 2 is not supported for 4D input tensor.\nSupported combinations for non-constant "
        r"padding:\n  - 2D or 3D input: padding size = 2 \(pads last dimension\)",
        error=NotImplementedError,
    )
    yield _err(x, (4, 1), "circular", regex="Padding value causes wrapping around more than once.")
    yield _err(x, (-2, -2), "circular", regex="Negative padding value is resulting in an empty dimension")


def _nearest_errors(n: int) -> Any:
    def gen(op: OpInfo) -> Iterator[ErrorInput]:
        x = _t((1, 2, 3, 4, 5)[: n + 2], ea.float32)
        size = (4, 5, 6)[:n]
        yield _err(x[0], size, regex=f"It is expected input_size equals to {n + 2}, but got size {n + 1}")
        yield _err(x, (*size, 2), regex=f"It is expected output_size equals to {n}, but got size {n + 1}")
        zero = (0, *size[1:])
        yield _err(x, zero, regex=r"Input and output sizes should be greater than 0, but got input \(")
        yield _err(x.long(), size, regex=f"\"upsample_nearest{n}d\" not implemented for 'Long'")

    return gen


def _bilinear_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((1, 2, 3, 4), ea.float32)
    yield _err(x[0], (5, 7), False, regex="It is expected input_size equals to 4, but got size 3")
    yield _err(
        x,
        (0, 7),
        False,
        regex=r"Input and output sizes should be greater than 0, but got input \(H: 3, W: 4\) output \(H: 0, W: 7\)",
    )
    yield _err(
        _t((1, 0, 3, 4), ea.float32),
        (5, 7),
        False,
        regex=r"Non-empty 4D data tensor expected but got a tensor with sizes \[1, 0, 3, 4\]",
    )
    yield _err(x.long(), (5, 7), False, regex="\"upsample_bilinear2d\" not implemented for 'Long'")


def _interpolate_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((1, 2, 3, 4), ea.float32)
    yield _err(x, (5, 7), 2.0, regex="only one of size or scale_factor should be defined", error=ValueError)
    yield _err(x, regex="either size or scale_factor should be defined", error=ValueError)
    yield _err(
        x,
        scale_factor=2,
        mode="nearest",
        align_corners=True,
        regex=r"align_corners option can only be set with the interpolating modes: linear \| bilinear",
        error=ValueError,
    )
    yield _err(
        _t((1, 2, 3), ea.float32),
        scale_factor=2,
        mode="bilinear",
        regex="Got 3D input, but bilinear mode needs 4D input",
        error=NotImplementedError,
    )
    yield _err(
        x,
        (2, 3, 4),
        regex=r"Input and output must have the same number of spatial dimensions, but got input with spatial "
        r"dimensions of \[3, 4\] and output size of \(2, 3, 4\)",
        error=ValueError,
    )
    yield _err(
        x,
        scale_factor=2,
        mode="foo",
        regex=r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 4D\) for the modes: nearest \| linear",
        error=NotImplementedError,
    )


def _shuffle_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((1, 8, 3, 4), ea.float32)
    yield _err(
        _t((4, 2), ea.float32),
        2,
        regex=r"pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension\(s\)",
    )
    yield _err(x, 0, regex="pixel_shuffle expects a positive upscale_factor, but got 0")
    yield _err(
        x,
        3,
        regex=r"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
        r"upscale_factor, but input.size\(-3\)=8 is not divisible by 9",
    )


def _unshuffle_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((1, 8, 3, 4), ea.float32)
    yield _err(_t((4, 2), ea.float32), 2, regex="pixel_unshuffle expects input to have at least 3 dimensions")
    yield _err(x, -1, regex="pixel_unshuffle expects a positive downscale_factor, but got -1")
    yield _err(
        x,
        2,
        regex=r"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size\(-2\)=3 is not "
        r"divisible by 2",
    )
    yield _err(
        _t((1, 1, 4, 3), ea.float32),
        2,
        regex=r"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size\(-1\)=3 is not "
        r"divisible by 2",
    )


# ---- the table -------------------------------------------------------------------------------


def _pad_ops() -> list[OpInfo]:
    ops = []
    for n in (1, 2, 3):
        for kind, mode in (("reflection", "reflect"), ("replication", "replicate")):
            name = f"{kind}_pad{n}d"
            ops.append(
                OpInfo(
                    name,
                    getattr(ea.nn, name),
                    ALL_NUMERIC,
                    _pad_samples(n),
                    ref=_ref_pad_mode(mode),
                    supports_out=False,
                    error_inputs=_pad_errors(kind, n),
                    kind="padding",
                )
            )
            ops.append(
                OpInfo(
                    f"{name}_backward",
                    getattr(ea.nn, f"{name}_backward"),
                    FLOAT_DTYPES,
                    _pad_backward_samples(n, mode),
                    ref=_ref_pad_backward(mode),
                    supports_out=False,
                    kind="padding",
                )
            )
    return ops


def _upsample_ops() -> list[OpInfo]:
    ops = []
    for n in (1, 2, 3):
        name = f"upsample_nearest{n}d"
        ops.append(
            OpInfo(
                name,
                getattr(ea.nn, name),
                (*FLOAT_DTYPES, ea.uint8),
                _nearest_samples(n),
                ref=ref_nearest,
                supports_out=False,
                error_inputs=_nearest_errors(n),
                kind="upsampling",
            )
        )
        ops.append(
            OpInfo(
                f"{name}_backward",
                getattr(ea.nn, f"{name}_backward"),
                FLOAT_DTYPES,
                _nearest_backward_samples(n),
                ref=ref_nearest_backward,
                supports_out=False,
                kind="upsampling",
            )
        )
    for n in (1, 2, 3):
        name = f"_upsample_nearest_exact{n}d"
        ops.append(
            OpInfo(
                name,
                getattr(ea.nn, name),
                (*FLOAT_DTYPES, ea.uint8),
                _nearest_samples(n),
                ref=ref_nearest_exact,
                supports_out=False,
                kind="upsampling",
            )
        )
        ops.append(
            OpInfo(
                f"{name}_backward",
                getattr(ea.nn, f"{name}_backward"),
                FLOAT_DTYPES,
                _nearest_backward_samples(n),
                ref=ref_nearest_exact_backward,
                supports_out=False,
                kind="upsampling",
            )
        )
    for n, name in ((1, "upsample_linear1d"), (3, "upsample_trilinear3d")):
        ops.append(
            OpInfo(
                name,
                getattr(ea.nn, name),
                FLOAT_DTYPES,
                _linear_samples(n),
                ref=ref_linear,
                supports_out=False,
                tol_overrides={ea.float32: INTERP_F32_TOL},
                error_inputs=_linear_errors(n, name),
                kind="upsampling",
            )
        )
        ops.append(
            OpInfo(
                f"{name}_backward",
                getattr(ea.nn, f"{name}_backward"),
                FLOAT_DTYPES,
                _linear_backward_samples(n),
                ref=ref_linear_backward,
                supports_out=False,
                tol_overrides={ea.float32: INTERP_F32_TOL},
                kind="upsampling",
            )
        )
    ops.append(
        OpInfo(
            "upsample_bicubic2d",
            ea.nn.upsample_bicubic2d,
            FLOAT_DTYPES,
            _bilinear_samples,
            ref=ref_bicubic,
            supports_out=False,
            tol_overrides={ea.float32: INTERP_F32_TOL, ea.bfloat16: (5e-2, 3e-2)},
            kind="upsampling",
        )
    )
    ops.append(
        OpInfo(
            "upsample_bicubic2d_backward",
            ea.nn.upsample_bicubic2d_backward,
            FLOAT_DTYPES,
            _bilinear_backward_samples,
            ref=ref_bicubic_backward,
            supports_out=False,
            tol_overrides={ea.float32: INTERP_F32_TOL, ea.bfloat16: (5e-2, 3e-2)},
            kind="upsampling",
        )
    )
    ops.append(
        OpInfo(
            "upsample_bilinear2d",
            ea.nn.upsample_bilinear2d,
            FLOAT_DTYPES,
            _bilinear_samples,
            ref=ref_bilinear,
            supports_out=False,
            tol_overrides={ea.float32: INTERP_F32_TOL},
            error_inputs=_bilinear_errors,
            kind="upsampling",
        )
    )
    ops.append(
        OpInfo(
            "upsample_bilinear2d_backward",
            ea.nn.upsample_bilinear2d_backward,
            FLOAT_DTYPES,
            _bilinear_backward_samples,
            ref=ref_bilinear_backward,
            supports_out=False,
            tol_overrides={ea.float32: INTERP_F32_TOL},
            kind="upsampling",
        )
    )
    return ops


OPS = [
    *_pad_ops(),
    OpInfo(
        "pad",
        ea.nn.pad,
        ALL_NUMERIC,
        _fpad_samples,
        ref=ref_pad,
        supports_out=False,
        error_inputs=_fpad_errors,
        check_unsupported=False,  # constant padding takes every dtype
        kind="padding",
    ),
    *_upsample_ops(),
    OpInfo(
        "interpolate",
        ea.nn.interpolate,
        (*FLOAT_DTYPES, ea.uint8),
        _interpolate_samples,
        ref=ref_interpolate,
        supports_out=False,
        tol_overrides={ea.float32: INTERP_F32_TOL},
        error_inputs=_interpolate_errors,
        kind="upsampling",
    ),
    OpInfo(
        "pixel_shuffle",
        ea.pixel_shuffle,
        ALL_DTYPES,
        _shuffle_samples,
        ref=ref_pixel_shuffle,
        supports_out=False,
        error_inputs=_shuffle_errors,
        check_unsupported=False,
        kind="shape",
    ),
    OpInfo(
        "pixel_unshuffle",
        ea.pixel_unshuffle,
        ALL_DTYPES,
        _unshuffle_samples,
        ref=ref_pixel_unshuffle,
        supports_out=False,
        error_inputs=_unshuffle_errors,
        check_unsupported=False,
        kind="shape",
    ),
]


# ---- grid sampling ---------------------------------------------------------------------------


def _reflect(x: float, lo2: int, hi2: int) -> float:
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = abs(x - lo)
    extra = math.fmod(x, span)
    flips = math.floor(x / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _unnormalize(coord: float, size: int, align_corners: bool) -> float:
    return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _pad(x: float, size: int, padding: int, align_corners: bool) -> float:
    if padding == 2:
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    if padding in (1, 2):
        x = min(max(x, 0.0), size - 1.0)
    return x


def _cubic_weights(t: float) -> list[float]:
    # PyTorch's cubic convolution (A = -0.75) at distances 1 + t, t, 1 - t, 2 - t
    a = -0.75
    near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1  # noqa: E731
    far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a  # noqa: E731
    return [far(1 + t), near(t), near(1 - t), far(2 - t)]


def ref_grid_sampler_2d(x: np.ndarray, grid: np.ndarray, mode: int, padding: int, align_corners: bool) -> np.ndarray:
    N, C, H, W = x.shape
    _, Ho, Wo, _ = grid.shape
    out = np.zeros((N, C, Ho, Wo))

    def at(n: int, yy: int, xx: int) -> np.ndarray:
        return x[n, :, yy, xx] if 0 <= yy < H and 0 <= xx < W else np.zeros(C)

    for n in range(N):
        for i in range(Ho):
            for j in range(Wo):
                ux = _unnormalize(grid[n, i, j, 0], W, align_corners)
                uy = _unnormalize(grid[n, i, j, 1], H, align_corners)
                if mode == 2:  # bicubic: weights from the unpadded position, each tap padded
                    x0, y0 = math.floor(ux), math.floor(uy)
                    wx, wy = _cubic_weights(ux - x0), _cubic_weights(uy - y0)
                    xs = [math.floor(_pad(x0 - 1 + k, W, padding, align_corners)) for k in range(4)]
                    ys = [math.floor(_pad(y0 - 1 + k, H, padding, align_corners)) for k in range(4)]
                    out[n, :, i, j] = sum(wy[r] * wx[k] * at(n, ys[r], xs[k]) for r in range(4) for k in range(4))
                    continue
                ix, iy = _pad(ux, W, padding, align_corners), _pad(uy, H, padding, align_corners)
                if mode == 1:
                    out[n, :, i, j] = at(n, int(np.rint(iy)), int(np.rint(ix)))
                    continue
                x0, y0 = math.floor(ix), math.floor(iy)
                fx, fy = ix - x0, iy - y0
                out[n, :, i, j] = (
                    at(n, y0, x0) * (1 - fx) * (1 - fy)
                    + at(n, y0, x0 + 1) * fx * (1 - fy)
                    + at(n, y0 + 1, x0) * (1 - fx) * fy
                    + at(n, y0 + 1, x0 + 1) * fx * fy
                )
    return out


def ref_affine_grid(theta: np.ndarray, size: Any, align_corners: bool) -> np.ndarray:
    *_, H, W = size

    def axis(s: int) -> np.ndarray:
        if s <= 1:
            return np.zeros(1)
        r = np.linspace(-1.0, 1.0, s)
        return r if align_corners else r * (s - 1) / s

    ys, xs = np.meshgrid(axis(H), axis(W), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(-1, 3)
    return np.stack([(base @ t.T).reshape(H, W, 2) for t in theta])


def _grid(shape: tuple[int, ...], dtype: Any, spread: float = 1.2) -> Any:
    return make_tensor(shape, dtype, low=-spread, high=spread)


def _grid_sampler_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 2, 3), dtype), _grid((1, 2, 2, 2), dtype), 0, 0, False, name="small bilinear zeros")
    for mode in (0, 1, 2):
        for padding in (0, 1, 2):
            for ac in (False, True):
                yield _s(
                    _t((2, 3, 4, 5), dtype),
                    _grid((2, 3, 4, 2), dtype, 1.6),
                    mode,
                    padding,
                    ac,
                    name=f"mode {mode} padding {padding} align_corners {ac}",
                )


def _grid_sampler_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x, g = _t((1, 2, 3, 4), ea.float32), _grid((1, 5, 6, 2), ea.float32)
    yield _err(
        x,
        _grid((2, 5, 6, 2), ea.float32),
        0,
        0,
        False,
        regex=r"grid_sampler\(\): expected grid and input to have same batch size, but got input with sizes "
        r"\[1, 2, 3, 4\] and grid with sizes \[2, 5, 6, 2\]",
    )
    yield _err(
        x,
        _grid((1, 5, 6, 3), ea.float32),
        0,
        0,
        False,
        regex=r"grid_sampler\(\): expected grid to have size 2 in last dimension, but got grid with sizes "
        r"\[1, 5, 6, 3\]",
    )
    yield _err(
        _t((1, 2, 0, 4), ea.float32),
        g,
        0,
        0,
        False,
        regex=r"grid_sampler\(\): expected input to have non-empty spatial dimensions, but input has sizes "
        r"\[1, 2, 0, 4\] with dimension 2 being empty",
    )
    yield _err(x, g.double(), 0, 0, False, regex=r"grid_sampler\(\): expected input and grid to have same dtype")
    yield _err(x, g, 3, 0, False, regex="grid_sampler\\(\\): invalid interpolation_mode 3")


def _affine_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 2, 3), dtype), (1, 1, 2, 3), False, name="small")
    yield _s(_t((2, 2, 3), dtype), (2, 3, 4, 5), True, name="align_corners")
    yield _s(_t((1, 2, 3), dtype), (1, 1, 1, 4), False, name="unit height")


def _affine_errors(op: OpInfo) -> Iterator[ErrorInput]:
    theta = _t((1, 2, 3), ea.float32)
    yield _err(
        _t((1, 3, 3), ea.float32),
        (1, 2, 3, 4),
        False,
        regex=r"Expected a batch of 2D affine matrices of shape Nx2x3 for size \(1, 2, 3, 4\)",
        error=ValueError,
    )
    yield _err(theta, (1, 2, 3), False, regex="affine_grid only supports 4D and 5D sizes", error=NotImplementedError)
    yield _err(
        ea.ones(1, 2, 3, dtype=ea.int64),
        (1, 2, 3, 4),
        False,
        regex="Expected theta to have floating point type, but got",
        error=ValueError,
    )


OPS += [
    OpInfo(
        "grid_sampler_2d",
        ea.grid_sampler_2d,
        FLOAT_DTYPES,
        _grid_sampler_samples,
        ref=ref_grid_sampler_2d,
        supports_out=False,
        tol_overrides={ea.float32: INTERP_F32_TOL, ea.float16: (1e-2, 1e-2), ea.bfloat16: (5e-2, 5e-2)},
        error_inputs=_grid_sampler_errors,
        nondifferentiable_args=(2, 3, 4),
        kind="sampling",
    ),
    OpInfo(
        "affine_grid",
        ea.nn.affine_grid,
        FLOAT_DTYPES,
        _affine_samples,
        ref=ref_affine_grid,
        supports_out=False,
        error_inputs=_affine_errors,
        # the base grid (linspace) is rounded to the dtype before the product, as PyTorch's
        tol_overrides={ea.float16: (2e-2, 1e-2), ea.bfloat16: (1.5e-1, 5e-2)},
        check_unsupported=False,  # ValueError, as PyTorch (tested in the error inputs)
        kind="sampling",
    ),
]
