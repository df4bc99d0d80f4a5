"""OpInfo entries of the convolution family: conv1d/2d/3d (int and 'same'/'valid' padding),
conv_transpose1d/2d/3d, and im2col / col2im (nn.functional.unfold / fold).

The references are written out here in float64 NumPy, independently of im2col: a
convolution is a sum over kernel offsets of strided slices of the zero-padded input times
one weight tap each (``ref_conv``); a transposed convolution scatters every input element
times the kernel into a canvas, then crops the padding (``ref_conv_transpose``). The
samples cover strides, padding, dilation, groups (depthwise too), 1x1 kernels, bias or
none, unbatched inputs and empty batches; the first ones are small enough for the
autograd tests' gradcheck / gradgradcheck.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor

# sums of products: float32 rounding grows with the number of taps
CONV_TOLS = {ea.float32: (2e-5, 2e-5), ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 1.6e-2)}


def _t(shape: tuple[int, ...], dtype: Any) -> Any:
    return make_tensor(shape, dtype, low=-1, high=1)


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def _same(s: SampleInput) -> Any:
    return s.input.dtype


# ---- references -------------------------------------------------------------------------------


def ref_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> np.ndarray:
    """Direct convolution (cross-correlation, as PyTorch's) of a (N, C, *spatial) or unbatched input."""
    n = w.ndim - 2
    unbatched = x.ndim == n + 1
    if unbatched:
        x = x[None]
    k = w.shape[2:]
    s, d = _tuple(stride, n), _tuple(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * n
        else:  # same: total d (k - 1), the extra element on the right
            pads = [(d[i] * (k[i] - 1) // 2, d[i] * (k[i] - 1) - d[i] * (k[i] - 1) // 2) for i in range(n)]
    else:
        pads = [(p, p) for p in _tuple(padding, n)]
    xp = np.pad(x, [(0, 0), (0, 0), *pads])
    N, C = x.shape[:2]
    O = w.shape[0]
    cg, og = C // groups, O // groups
    out_sp = [(xp.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(n)]
    out = np.zeros((N, O, *out_sp))
    for g in range(groups):
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (out_sp[i] - 1) + 1, s[i]) for i in range(n))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg), *sl)]
            wk = w[(slice(g * og, (g + 1) * og), slice(None), *tap)]
            out[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    if b is not None:
        out += b.reshape(1, -1, *([1] * n))
    return out[0] if unbatched else out


def ref_conv_transpose(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> np.ndarray:
    """Transposed convolution by its definition: every input element, times the kernel, added into
    a canvas at stride spacing; the result is the canvas without `padding` on each side."""
    n = w.ndim - 2
    unbatched = x.ndim == n + 1
    if unbatched:
        x = x[None]
    k = w.shape[2:]
    s, p, op, d = _tuple(stride, n), _tuple(padding, n), _tuple(output_padding, n), _tuple(dilation, n)
    N, C = x.shape[:2]
    cg, og = C // groups, w.shape[1]
    in_sp = x.shape[2:]
    full = [(in_sp[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(n)]
    canvas = np.zeros((N, og * groups, *full))
    for g in range(groups):
        xg = x[:, g * cg : (g + 1) * cg]
        for tap in itertools.product(*[range(kk) for kk in k]):
            sl = tuple(slice(tap[i] * d[i], tap[i] * d[i] + s[i] * (in_sp[i] - 1) + 1, s[i]) for i in range(n))
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None), *tap)]
            canvas[(slice(None), slice(g * og, (g + 1) * og), *sl)] += np.einsum("nc...,co->no...", xg, wk)
    out_sp = [full[i] - 2 * p[i] for i in range(n)]
    out = canvas[(slice(None), slice(None), *[slice(p[i], p[i] + out_sp[i]) for i in range(n)])]
    if b is not None:
        out = out + b.reshape(1, -1, *([1] * n))
    return out[0] if unbatched else out


def ref_im2col(x: np.ndarray, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> np.ndarray:
    """nn.functional.unfold: rows (c, kh, kw), columns the block positions, row-major."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    k, d, p, s = (_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    N, C = x.shape[:2]
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((N, C, k[0], k[1], oh * ow))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        sl = xp[
            :, :, i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0], j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]
        ]
        out[:, :, i, j] = sl.reshape(N, C, oh * ow)
    out = out.reshape(N, C * k[0] * k[1], oh * ow)
    return out[0] if unbatched else out


def ref_col2im(
    cols: np.ndarray, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> np.ndarray:
    """nn.functional.fold: each column element added back to the image position it covers."""
    unbatched = cols.ndim == 2
    if unbatched:
        cols = cols[None]
    H, W = _tuple(output_size, 2)
    k, d, p, s = (_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    N = cols.shape[0]
    C = cols.shape[1] // (k[0] * k[1])
    oh = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    c = cols.reshape(N, C, k[0], k[1], oh, ow)
    canvas = np.zeros((N, C, H + 2 * p[0], W + 2 * p[1]))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        canvas[
            :, :, i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0], j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]
        ] += c[:, :, i, j]
    out = canvas[:, :, p[0] : p[0] + H, p[1] : p[1] + W]
    return out[0] if unbatched else out


# ---- samples ----------------------------------------------------------------------------------


def _conv_sample(
    dtype: Any, x: tuple[int, ...], w: tuple[int, ...], bias: bool, name: str = "", **kw: Any
) -> SampleInput:
    b = _t((w[0],), dtype) if bias else None
    return SampleInput(_t(x, dtype), (_t(w, dtype), b), kw, name=name)


def _conv1d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _conv_sample(dtype, (1, 1, 5), (1, 1, 2), True, "tiny")
    yield _conv_sample(
        dtype, (1, 2, 7), (2, 1, 3), True, "grouped strided dilated", stride=2, padding=1, dilation=2, groups=2
    )
    yield _conv_sample(dtype, (2, 6), (3, 2, 2), False, "unbatched", padding=1)
    yield _conv_sample(dtype, (1, 2, 6), (2, 2, 4), True, "same, even kernel", padding="same")
    yield _conv_sample(dtype, (2, 3, 9), (4, 3, 3), True, "batched", stride=(2,), padding=(2,), dilation=(1,))
    yield _conv_sample(dtype, (2, 4, 8), (4, 1, 3), False, "depthwise", groups=4, padding="valid")
    yield _conv_sample(dtype, (0, 3, 5), (2, 3, 2), True, "empty batch")


def _conv2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _conv_sample(dtype, (1, 1, 3, 3), (1, 1, 2, 2), True, "tiny")
    yield _conv_sample(
        dtype,
        (1, 2, 4, 5),
        (2, 1, 2, 2),
        True,
        "grouped strided dilated",
        stride=(2, 1),
        padding=(1, 0),
        dilation=(1, 2),
        groups=2,
    )
    yield _conv_sample(dtype, (2, 4, 4), (1, 2, 2, 3), False, "unbatched", padding=1)
    yield _conv_sample(dtype, (1, 1, 4, 4), (1, 1, 2, 3), False, "same, even kernel", padding="same")
    yield _conv_sample(
        dtype, (2, 4, 5, 6), (6, 2, 3, 3), True, "groups=2", stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2
    )
    yield _conv_sample(dtype, (2, 3, 6, 5), (4, 3, 1, 1), True, "1x1 kernel")
    yield _conv_sample(dtype, (1, 4, 7, 7), (8, 1, 3, 3), False, "depthwise x2", padding=1, groups=4)
    yield _conv_sample(dtype, (2, 2, 5, 5), (3, 2, 4, 2), True, "same, dilated", padding="same", dilation=(1, 2))
    yield _conv_sample(dtype, (1, 3, 6, 6), (2, 3, 3, 3), False, "valid", padding="valid", stride=2)
    yield _conv_sample(dtype, (0, 2, 4, 4), (3, 2, 3, 3), True, "empty batch")
    yield _conv_sample(dtype, (2, 0, 4, 4), (3, 0, 3, 3), True, "no input channels")


def _conv3d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _conv_sample(dtype, (1, 1, 2, 3, 3), (1, 1, 1, 2, 2), True, "tiny")
    yield _conv_sample(
        dtype, (1, 2, 3, 3, 4), (2, 1, 2, 1, 2), True, "grouped strided", stride=(1, 2, 2), padding=(1, 0, 1), groups=2
    )
    yield _conv_sample(dtype, (2, 3, 3, 3), (2, 2, 2, 2, 2), False, "unbatched", padding=1, dilation=(2, 1, 1))
    yield _conv_sample(dtype, (2, 2, 4, 5, 4), (3, 2, 3, 2, 3), True, "batched", stride=2, padding=(1, 1, 2))
    yield _conv_sample(dtype, (1, 2, 4, 4, 4), (2, 2, 2, 3, 2), True, "same", padding="same")


def _tconv_sample(
    dtype: Any, x: tuple[int, ...], w: tuple[int, ...], bias: bool, name: str = "", groups: int = 1, **kw: Any
) -> SampleInput:
    b = _t((w[1] * groups,), dtype) if bias else None
    if groups != 1:
        kw["groups"] = groups
    return SampleInput(_t(x, dtype), (_t(w, dtype), b), kw, name=name)


def _tconv1d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _tconv_sample(dtype, (1, 1, 3), (1, 1, 2), True, "tiny", stride=2)
    yield _tconv_sample(dtype, (1, 2, 4), (2, 2, 3), True, "output_padding", stride=3, padding=1, output_padding=2)
    yield _tconv_sample(dtype, (2, 5), (2, 1, 3), False, "unbatched grouped", groups=2, dilation=2)
    yield _tconv_sample(dtype, (2, 4, 5), (4, 3, 2), True, "batched", stride=2, padding=1, output_padding=1, groups=2)


def _tconv2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _tconv_sample(dtype, (1, 1, 2, 2), (1, 1, 2, 2), True, "tiny", stride=2)
    yield _tconv_sample(
        dtype,
        (1, 2, 2, 3),
        (2, 1, 2, 2),
        True,
        "grouped output_padding",
        groups=2,
        stride=(2, 3),
        padding=(1, 0),
        output_padding=(1, 2),
    )
    yield _tconv_sample(dtype, (2, 3, 3), (2, 1, 2, 3), False, "unbatched dilated", dilation=(2, 1), padding=1)
    yield _tconv_sample(dtype, (2, 4, 3, 4), (4, 3, 3, 3), True, "batched", stride=2, padding=1, output_padding=1)
    yield _tconv_sample(
        dtype,
        (1, 2, 3, 3),
        (2, 2, 3, 3),
        True,
        "dilation > output_padding >= stride",
        stride=1,
        dilation=3,
        output_padding=2,
    )
    yield _tconv_sample(dtype, (2, 3, 4, 4), (3, 2, 1, 1), False, "1x1 kernel")
    yield _tconv_sample(dtype, (0, 2, 3, 3), (2, 2, 2, 2), True, "empty batch")


def _tconv3d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _tconv_sample(dtype, (1, 1, 2, 2, 2), (1, 1, 1, 2, 2), True, "tiny", stride=(1, 2, 1))
    yield _tconv_sample(
        dtype, (1, 2, 2, 3, 2), (2, 1, 2, 2, 2), True, "grouped", groups=2, stride=2, padding=1, output_padding=1
    )
    yield _tconv_sample(dtype, (2, 2, 2, 2), (2, 2, 2, 2, 2), False, "unbatched", dilation=2)


def _im2col_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    def s(shape: tuple[int, ...], k: Any, d: Any, p: Any, st: Any, name: str) -> SampleInput:
        return SampleInput(_t(shape, dtype), (k, d, p, st), name=name)

    yield s((1, 1, 3, 3), (2, 2), (1, 1), (0, 0), (1, 1), "tiny")
    yield s((2, 2, 5, 6), (3, 2), (1, 2), (1, 0), (2, 1), "strided dilated padded")
    yield s((2, 4, 4), 2, 1, 1, 2, "unbatched, int arguments")
    yield s((0, 3, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1), "empty batch")


def _col2im_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    def s(shape: tuple[int, ...], out: Any, k: Any, d: Any, p: Any, st: Any, name: str) -> SampleInput:
        return SampleInput(_t(shape, dtype), (out, k, d, p, st), name=name)

    yield s((1, 4, 4), (3, 3), (2, 2), (1, 1), (0, 0), (1, 1), "tiny")
    yield s((2, 12, 12), (5, 6), (3, 2), (1, 2), (1, 0), (2, 1), "strided dilated padded")
    yield s((8, 9), (4, 4), 2, 1, 1, 2, "unbatched, int arguments")
    yield s((0, 4, 4), (3, 3), (2, 2), (1, 1), (0, 0), (1, 1), "empty batch")


# ---- error inputs -----------------------------------------------------------------------------


def _err(x: Any, args: tuple[Any, ...], regex: str, error: type[BaseException] = RuntimeError, **kw: Any) -> ErrorInput:
    return ErrorInput(SampleInput(x, args, kw), error, regex)


def _conv2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x, w = _t((2, 4, 5, 5), f), _t((6, 2, 3, 3), f)
    yield _err(
        _t((5,), f),
        (w, None),
        r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input "
        r"of size: \[5\]",
    )
    yield _err(
        _t((1, 4, 5, 5), f),
        (_t((5, 2, 3, 3), f), None),
        r"Given groups=2, expected weight to be divisible by "
        r"2 at dimension 0, but got weight of size \[5, 2, 3, 3\] instead",
        groups=2,
    )
    yield _err(
        _t((1, 4, 5, 5), f), (_t((1, 2, 3, 3), f), None), "expected weight to be at least 2 at dimension 0", groups=2
    )
    yield _err(
        _t((1, 3, 5, 5), f),
        (w, None),
        r"Given groups=2, weight of size \[6, 2, 3, 3\], expected "
        r"input\[1, 3, 5, 5\] to have 4 channels, but got 3 channels instead",
        groups=2,
    )
    yield _err(
        x, (w, _t((5,), f)), r"expected bias to be 1-dimensional with 6 elements, but got bias of size \[5\]", groups=2
    )
    yield _err(x, (w, None), "negative padding is not supported", padding=-1, groups=2)
    yield _err(x, (w, None), "non-positive stride is not supported", stride=0, groups=2)
    yield _err(x, (w, None), "non-positive dilation is not supported", dilation=0, groups=2)
    yield _err(x, (w, None), "non-positive groups is not supported", groups=0)
    yield _err(
        x,
        (_t((6, 2, 7, 7), f), None),
        r"Calculated padded input size per channel: \(5 x 5\). Kernel size: "
        r"\(7 x 7\). Kernel size can't be greater than actual input size",
        groups=2,
    )
    yield _err(
        x, (w, None), "padding='same' is not supported for strided convolutions", stride=2, padding="same", groups=2
    )
    yield _err(x, (w, None), "Invalid padding string: 'foo'", padding="foo", groups=2)
    yield _err(
        x,
        (w, None),
        r"expected stride to be a single integer value or a list of 2 values to match the "
        r"convolution dimensions, but got stride=\[1, 2, 3\]",
        stride=(1, 2, 3),
        groups=2,
    )
    yield _err(x, (w.double(), None), r"Input type \(float\) and weight type \(double\) should be the same", groups=2)
    yield _err(
        x, (w, _t((6,), ea.float64)), r"Input type \(float\) and bias type \(double\) should be the same", groups=2
    )
    yield _err(x.bool(), (w.bool(), None), "not implemented for dtype bool", NotImplementedError, groups=2)


def _tconv2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((2, 4, 5, 5), f)
    yield _err(
        x,
        (_t((4, 3, 3, 3), f), None),
        "output padding must be smaller than either stride or dilation, but got "
        "output_padding_height: 2 output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 "
        "dilation_width: 1",
        stride=2,
        output_padding=2,
    )
    yield _err(
        x,
        (_t((3, 3, 3, 3), f), None),
        r"Given transposed=1, weight of size \[3, 3, 3, 3\], expected "
        r"input\[2, 4, 5, 5\] to have 3 channels, but got 4 channels instead",
    )
    yield _err(
        x,
        (_t((4, 3, 3, 3), f), _t((3,), f)),
        r"Given transposed=1, weight of size \[4, 3, 3, 3\], expected "
        r"bias to be 1-dimensional with 6 elements, but got bias of size \[3\] instead",
        groups=2,
    )
    yield _err(
        _t((3, 3), f),
        (_t((4, 3, 3, 3), f), None),
        r"Expected 3D \(unbatched\) or 4D \(batched\) input to "
        r"conv_transpose2d, but got input of size: \[3, 3\]",
    )
    yield _err(
        _t((1, 4, 1, 1), f),
        (_t((4, 3, 1, 1), f), None),
        r"Given input size per channel: \(1 x 1\). "
        r"Calculated output size per channel: \(-3 x -3\). Output size is too small",
        padding=2,
    )
    yield _err(x, (_t((4, 3, 3, 3), f), None), "negative output_padding is not supported", output_padding=-1)


def _im2col_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((2, 3, 7, 6), f)
    yield _err(
        x,
        ((9, 9), (1, 1), (0, 0), (1, 1)),
        r"Given input with spatial size \(7, 6\), kernel_size=\(9, 9\), "
        r"dilation=\(1, 1\), padding=\(0, 0\), calculated shape of the array of sliding blocks as \(-1, -2\), "
        r"but its components must be at least one.",
    )
    yield _err(
        x,
        ((0, 0), (1, 1), (0, 0), (1, 1)),
        "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0",
    )
    yield _err(
        x,
        ((2, 2), (1, 1), (0, 0), (0, 0)),
        "stride should be greater than zero, but got stride_height: 0 stride_width: 0",
    )
    yield _err(x, ((2, 2), (0, 0), (0, 0), (1, 1)), "dilation should be greater than zero")
    yield _err(
        x, ((2, 2), (1, 1), (-1, -1), (1, 1)), "padding should be non-negative, but got pad_height: -1 pad_width: -1"
    )
    yield _err(x, ((1, 2, 3), (1, 1), (0, 0), (1, 1)), "It is expected kernel_size equals to 2, but got size 3")
    yield _err(
        _t((2, 0, 4, 4), f),
        ((2, 2), (1, 1), (0, 0), (1, 1)),
        r"Expected 3D or 4D \(batch mode\) tensor with "
        r"possibly 0 batch size and other non-zero dimensions for input, but got: \[2, 0, 4, 4\]",
    )
    yield _err(
        x.long(), ((2, 2), (1, 1), (0, 0), (1, 1)), "im2col: not implemented for dtype int64", NotImplementedError
    )


def _col2im_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 12, 9), f),
        ((4, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
        r"Given output_size=\(4, 5\), "
        r"kernel_size=\(2, 2\), dilation=\(1, 1\), padding=\(0, 0\), stride=\(1, 1\), expected size of input's "
        r"dimension 2 to match the calculated number of sliding blocks 3 \* 4 = 12, but got input.size\(2\)=9.",
    )
    yield _err(
        _t((2, 11, 12), f),
        ((4, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
        r"Expected size of input's dimension 1 "
        r"to be divisible by the product of kernel_size, but got input.size\(1\)=11 and kernel_size=\(2, 2\).",
    )
    yield _err(
        _t((1, 2, 12, 12), f),
        ((4, 5), (2, 2), (1, 1), (0, 0), (1, 1)),
        r"Expected 2D or 3D \(batch mode\) "
        r"tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: "
        r"\[1, 2, 12, 12\]",
    )
    yield _err(
        _t((2, 12, 12), f),
        ((4, 5, 6), (2, 2), (1, 1), (0, 0), (1, 1)),
        "It is expected output_size equals to 2, but got size 3",
    )


OPS = [
    OpInfo(
        "conv1d",
        ea.conv1d,
        FLOAT_DTYPES,
        _conv1d_samples,
        ref=ref_conv,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "conv2d",
        ea.conv2d,
        FLOAT_DTYPES,
        _conv2d_samples,
        ref=ref_conv,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        error_inputs=_conv2d_errors,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "conv3d",
        ea.conv3d,
        FLOAT_DTYPES,
        _conv3d_samples,
        ref=ref_conv,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "conv_transpose1d",
        ea.conv_transpose1d,
        FLOAT_DTYPES,
        _tconv1d_samples,
        ref=ref_conv_transpose,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "conv_transpose2d",
        ea.conv_transpose2d,
        FLOAT_DTYPES,
        _tconv2d_samples,
        ref=ref_conv_transpose,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        error_inputs=_tconv2d_errors,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "conv_transpose3d",
        ea.conv_transpose3d,
        FLOAT_DTYPES,
        _tconv3d_samples,
        ref=ref_conv_transpose,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        check_unsupported=False,  # integers run on the CPU (test_conv.py), not on CUDA
        kind="conv",
    ),
    OpInfo(
        "im2col",
        ea.nn.im2col,
        FLOAT_DTYPES,
        _im2col_samples,
        ref=ref_im2col,
        supports_out=False,
        result_dtype=_same,
        error_inputs=_im2col_errors,
        kind="conv",
    ),
    OpInfo(
        "col2im",
        ea.nn.col2im,
        FLOAT_DTYPES,
        _col2im_samples,
        ref=ref_col2im,
        supports_out=False,
        result_dtype=_same,
        tol_overrides=CONV_TOLS,
        error_inputs=_col2im_errors,
        kind="conv",
    ),
]
