"""OpInfo entries of the pooling family: max / average pooling in 1-3 dims (values and
indices), adaptive average / max pooling, max_unpool2d and lp_pool2d.

References are loops over every output position, written here in float64 NumPy from
PyTorch's definitions: the output size floor((L + 2p - d(k - 1) - 1) / s) + 1 (ceil with
ceil_mode, dropping a last window that would start in the right padding); a max keeps the
first maximum of its window and lets NaN win; an average divides by the window clipped
to the padded input (count_include_pad), or to the input, or by divisor_override; an
adaptive window along I -> O is [floor(o I / O), ceil((o + 1) I / O)).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import ALL_NUMERIC, FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor

AVG_DTYPES = (*FLOAT_DTYPES, ea.int64)
AVG_TOLS = {ea.float32: (1e-5, 1e-5)}


def _t(shape: tuple[int, ...], dtype: Any, **kw: Any) -> Any:
    return make_tensor(shape, dtype, **kw)


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    return v * n if len(v) == 1 else v


def _same(s: SampleInput) -> Any:
    return s.input.dtype


# ---- references -------------------------------------------------------------------------------


def pool_out_size(size: int, k: int, p: int, s: int, d: int, ceil_mode: bool) -> int:
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _windows(n: int, x: np.ndarray, out_sp: list[int]) -> Iterator[tuple[int, tuple[int, ...]]]:
    planes = int(np.prod(x.shape[:-n], dtype=np.int64))
    for plane in range(planes):
        for o in itertools.product(*[range(v) for v in out_sp]):
            yield plane, o


def ref_max_pool(
    n: int,
    x: np.ndarray,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    k = _tuple(kernel_size, n)
    s = _tuple(stride, n) if (isinstance(stride, int) or len(tuple(stride))) else k
    p, d = _tuple(padding, n), _tuple(dilation, n)
    sp = x.shape[-n:]
    out_sp = [pool_out_size(sp[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(n)]
    flat = x.reshape(-1, *sp)
    vals = np.zeros((flat.shape[0], *out_sp), dtype=x.dtype)
    idx = np.zeros((flat.shape[0], *out_sp), dtype=np.int64)
    for plane, o in _windows(n, x, out_sp):
        best, bi = None, -1
        for tap in itertools.product(*[range(kk) for kk in k]):
            pos = tuple(o[i] * s[i] - p[i] + tap[i] * d[i] for i in range(n))
            if any(q < 0 or q >= sp[i] for i, q in enumerate(pos)):
                continue
            v = flat[(plane, *pos)]
            if bi < 0 or v > best or (isinstance(v, float) and math.isnan(v)):
                best, bi = v, int(np.ravel_multi_index(pos, sp))
        vals[(plane, *o)] = best
        idx[(plane, *o)] = bi
    shape = (*x.shape[:-n], *out_sp)
    return vals.reshape(shape), idx.reshape(shape)


def ref_avg_pool(
    n: int,
    x: np.ndarray,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> np.ndarray:
    k = _tuple(kernel_size, n)
    s = _tuple(stride, n) if (isinstance(stride, int) or len(tuple(stride))) else k
    p = _tuple(padding, n)
    sp = x.shape[-n:]
    out_sp = [pool_out_size(sp[i], k[i], p[i], s[i], 1, ceil_mode) for i in range(n)]
    flat = x.reshape(-1, *sp)
    integer = x.dtype.kind in "iu"
    out = np.zeros((flat.shape[0], *out_sp), dtype=np.int64 if integer else np.float64)
    for plane, o in _windows(n, x, out_sp):
        lo = [o[i] * s[i] - p[i] for i in range(n)]
        hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(n)]
        padded = int(np.prod([hi[i] - lo[i] for i in range(n)]))
        clo = [max(v, 0) for v in lo]
        chi = [min(hi[i], sp[i]) for i in range(n)]
        if any(clo[i] >= chi[i] for i in range(n)):
            continue
        window = flat[(plane, *[slice(clo[i], chi[i]) for i in range(n)])]
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = padded
        else:
            div = window.size
        total = window.sum()
        # integer pooling divides as C does (truncation toward zero)
        out[(plane, *o)] = int(total / div) if integer else total / div
    return out.reshape((*x.shape[:-n], *out_sp))


def _adaptive_range(o: int, size: int, out: int) -> tuple[int, int]:
    return (o * size) // out, -(-((o + 1) * size) // out)


def ref_adaptive_avg(n: int, x: np.ndarray, output_size: Any) -> np.ndarray:
    os_ = _tuple(output_size, n)
    sp = x.shape[-n:]
    flat = x.reshape(-1, *sp)
    out = np.zeros((flat.shape[0], *os_))
    for plane, o in _windows(n, x, list(os_)):
        rng = [_adaptive_range(o[i], sp[i], os_[i]) for i in range(n)]
        out[(plane, *o)] = flat[(plane, *[slice(a, b) for a, b in rng])].mean()
    return out.reshape((*x.shape[:-n], *os_))


def ref_adaptive_max(n: int, x: np.ndarray, output_size: Any) -> tuple[np.ndarray, np.ndarray]:
    os_ = _tuple(output_size, n)
    sp = x.shape[-n:]
    flat = x.reshape(-1, *sp)
    vals = np.zeros((flat.shape[0], *os_))
    idx = np.zeros((flat.shape[0], *os_), dtype=np.int64)
    for plane, o in _windows(n, x, list(os_)):
        rng = [_adaptive_range(o[i], sp[i], os_[i]) for i in range(n)]
        best, bi = None, -1
        for pos in itertools.product(*[range(a, b) for a, b in rng]):
            v = flat[(plane, *pos)]
            if bi < 0 or v > best or math.isnan(v):
                best, bi = v, int(np.ravel_multi_index(pos, sp))
        vals[(plane, *o)] = best
        idx[(plane, *o)] = bi
    shape = (*x.shape[:-n], *os_)
    return vals.reshape(shape), idx.reshape(shape)


def ref_max_unpool2d(x: np.ndarray, indices: np.ndarray, output_size: Any) -> np.ndarray:
    H, W = _tuple(output_size, 2)
    flat = x.reshape(-1, x.shape[-2] * x.shape[-1])
    ix = indices.reshape(flat.shape)
    out = np.zeros((flat.shape[0], H * W))
    for plane in range(flat.shape[0]):
        for i in range(flat.shape[1]):
            out[plane, ix[plane, i]] = flat[plane, i]
    return out.reshape((*x.shape[:-2], H, W))


def ref_lp_pool2d(
    x: np.ndarray, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> np.ndarray:
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    sp = x.shape[-2:]
    out_sp = [pool_out_size(sp[i], k[i], 0, s[i], 1, ceil_mode) for i in range(2)]
    flat = x.reshape(-1, *sp)
    out = np.zeros((flat.shape[0], *out_sp))
    for plane, o in _windows(2, x, out_sp):
        lo = [o[i] * s[i] for i in range(2)]
        window = flat[plane, lo[0] : lo[0] + k[0], lo[1] : lo[1] + k[1]]
        # PyTorch's definition (an average times the kernel area): a window clipped by
        # ceil_mode is scaled up to the full area, as if its missing elements were its mean
        out[(plane, *o)] = (np.mean(window**norm_type) * k[0] * k[1]) ** (1.0 / norm_type)
    return out.reshape((*x.shape[:-2], *out_sp))


# ---- samples ----------------------------------------------------------------------------------


def _s(x: Any, *args: Any, name: str = "", **kw: Any) -> SampleInput:
    return SampleInput(x, args, kw, name=name)


def _max1d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 4), dtype), 2, name="tiny")
    yield _s(_t((2, 7), dtype), 3, 2, 1, name="unbatched padded")
    yield _s(_t((2, 3, 7), dtype), 3, 2, 1, 1, True, name="ceil_mode")
    yield _s(_t((1, 2, 9), dtype), 2, 1, 0, 3, name="dilated")
    yield _s(_t((0, 2, 5), dtype), 2, name="empty batch")


def _max2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 4, 4), dtype), 2, name="tiny")
    yield _s(_t((2, 4, 5), dtype), (2, 3), (1, 2), (1, 1), name="unbatched, rectangular")
    yield _s(_t((1, 2, 5, 5), dtype), 3, 2, 1, ceil_mode=True, name="ceil_mode")
    yield _s(_t((1, 1, 6, 7), dtype), 2, 1, 1, (2, 3), name="dilated")
    yield _s(_t((2, 3, 7, 6), dtype), 3, 2, 1, 1, True, name="batched ceil_mode")
    yield _s(_t((2, 3, 8, 8), dtype), 2, 2, name="k2 s2")
    yield _s(_t((0, 2, 4, 4), dtype), 2, name="empty batch")


def _max3d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 2, 3, 3), dtype), 2, 1, name="tiny")
    yield _s(_t((2, 3, 4, 3), dtype), (2, 2, 1), (1, 2, 1), (1, 1, 0), name="unbatched padded")
    yield _s(_t((1, 2, 5, 4, 5), dtype), 3, 2, 1, (1, 2, 1), True, name="dilated ceil_mode")


def _avg1d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 4), dtype), 2, name="tiny")
    yield _s(_t((2, 7), dtype), 3, 2, 1, name="unbatched padded")
    yield _s(_t((2, 3, 8), dtype), 3, 2, 1, True, False, name="ceil_mode, count_include_pad=False")
    yield _s(_t((1, 2, 6), dtype), 4, 3, 2, True, True, name="ceil_mode, count_include_pad")


def _avg2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 4, 4), dtype), 2, name="tiny")
    yield _s(_t((2, 4, 5), dtype), (2, 3), (1, 2), (1, 1), name="unbatched rectangular")
    yield _s(_t((1, 2, 5, 5), dtype), 3, 2, 1, True, False, name="ceil_mode, count_include_pad=False")
    yield _s(_t((1, 1, 5, 6), dtype), 3, 2, 1, True, True, 4, name="divisor_override")
    yield _s(_t((2, 3, 7, 6), dtype), 3, 2, 1, False, True, name="count_include_pad")
    yield _s(_t((0, 2, 4, 4), dtype), 2, name="empty batch")


def _avg3d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 2, 3, 3), dtype), 2, 1, name="tiny")
    yield _s(_t((2, 4, 3, 4), dtype), (2, 2, 3), (2, 1, 1), (1, 0, 1), True, False, name="unbatched ceil_mode")
    yield _s(_t((1, 2, 4, 4, 5), dtype), 3, 2, 1, False, True, 7, name="divisor_override")


def _adaptive1d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 5), dtype), 2, name="tiny")
    yield _s(_t((2, 7), dtype), 3, name="unbatched, overlapping windows")
    yield _s(_t((2, 3, 4), dtype), 6, name="upsampling")


def _adaptive2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 3, 4), dtype), 2, name="tiny")
    yield _s(_t((2, 5, 7), dtype), (3, 2), name="unbatched")
    yield _s(_t((2, 3, 4, 5), dtype), (6, 1), name="upsampling")
    yield _s(_t((2, 3, 6, 6), dtype), 1, name="global")


def _adaptive3d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 2, 3, 3), dtype), (1, 2, 2), name="tiny")
    yield _s(_t((2, 3, 5, 4), dtype), (2, 3, 2), name="unbatched")


def _unpool_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    rng = np.random.default_rng(7)

    def indices(shape: tuple[int, ...], out_hw: int) -> Any:
        planes = int(np.prod(shape[:-2]))
        n = shape[-2] * shape[-1]
        ix = np.stack([rng.permutation(out_hw)[:n] for _ in range(planes)]).reshape(shape)
        return ea.from_numpy(ix.astype(np.int64))

    yield _s(_t((1, 1, 2, 2), dtype), indices((1, 1, 2, 2), 16), (4, 4), name="tiny")
    yield _s(_t((2, 2, 3), dtype), indices((2, 2, 3), 20), (4, 5), name="unbatched")
    yield _s(_t((2, 3, 2, 2), dtype), indices((2, 3, 2, 2), 9), (3, 3), name="batched")


def _lp2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield _s(_t((1, 1, 4, 4), dtype, low=0.5, high=2), 2, 2, name="tiny, p=2")
    yield _s(_t((2, 5, 6), dtype, low=0.5, high=2), 3, (2, 3), 2, name="unbatched, p=3")
    yield _s(_t((1, 2, 5, 5), dtype, low=0.5, high=2), 2.0, 2, 2, True, name="ceil_mode")


# ---- error inputs -----------------------------------------------------------------------------


def _err(x: Any, args: tuple[Any, ...], regex: str, error: type[BaseException] = RuntimeError, **kw: Any) -> ErrorInput:
    return ErrorInput(SampleInput(x, args, kw), error, regex)


def _max2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((2, 3, 7, 6), f)
    yield _err(
        x,
        (3, 2, 2),
        r"pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and "
        r"dilation=1",
    )
    yield _err(
        x,
        (3, 2, 2, 2),
        r"pad should be smaller than or equal to half of kernel size, but got padW = 2, "
        r"padH = 2, kW = 3, kH = 3",
    )
    yield _err(x, (0,), "stride should not be zero")
    yield _err(x, (0, 1), "kernel size should be greater than zero, but got kH: 0 kW: 0")
    yield _err(x, (2, 1, 0, 0), "dilation should be greater than zero, but got dilationH: 0 dilationW: 0")
    yield _err(x, (2, 1, -1), "pad must be non-negative, but got pad: -1")
    yield _err(_t((3, 3), f), (2,), r"non-empty 3D or 4D \(batch mode\) tensor expected for input")
    yield _err(
        _t((2, 0, 4, 4), f),
        (2,),
        r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for "
        r"input, but got:\[2, 0, 4, 4\]",
    )
    yield _err(
        _t((1, 1, 2, 2), f),
        (3,),
        r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output "
        r"size is too small",
    )
    yield _err(x, ((1, 2, 3),), "max_pool2d: kernel_size must either be a single int, or a tuple of two ints")
    yield _err(x, (2, (1, 2, 3)), "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints")
    yield _err(x, (2, 2, (1, 2, 3)), "max_pool2d: padding must either be a single int, or a tuple of two ints")
    yield _err(x, (2, 2, 0, (1, 2, 3)), "max_pool2d: dilation must be either a single int, or a tuple of two ints")
    yield _err(ea.ones(1, 1, 4, 4, dtype=ea.bool), (2,), "not implemented for dtype bool", NotImplementedError)


def _max1d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((2, 3, 7), f)
    yield _err(
        x,
        (3, 2, 2),
        "max_pool1d\\(\\) padding should be at most half of kernel size, but got padding=2 and kernel_size=3",
    )
    yield _err(x, (0,), r"max_pool1d\(\) kernel_size must be greater than zero, but got 0")
    yield _err(x, (2, 0), r"max_pool1d\(\) stride must be greater than zero, but got 0")
    yield _err(x, (2, 1, 0, 0), r"max_pool1d\(\) dilation must be greater than zero, but got 0")
    yield _err(
        _t((2, 3, 7, 1), f),
        (2,),
        r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim "
        r"batch size for input, but got:\[2, 3, 7, 1\]",
    )
    yield _err(_t((2, 3, 2), f), (3,), r"max_pool1d\(\) Invalid computed output size: 0")
    yield _err(x, ((2, 2),), r"max_pool1d\(\) argument 'kernel_size' should contain one int \(got 2\)")


def _max3d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3, 2, 2, 2), f),
        (3,),
        r"Given input size: \(3x2x2x2\). Calculated output size: "
        r"\(3x0x0x0\). Output size is too small",
    )
    yield _err(_t((2, 3, 4), f), (3, 1), r"non-empty 4D or 5D \(batch mode\) tensor expected for input")
    yield _err(_t((2, 3, 4, 4, 4), f), (3, 1, 2), "pad should be at most half of effective kernel size")
    yield _err(
        _t((2, 3, 4, 4, 4), f),
        ((1, 2),),
        "max_pool3d: kernel_size must either be a single int, or a tuple of three ints",
    )


def _avg2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((2, 3, 7, 6), f)
    yield _err(
        x, (3, 2, 2), "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"
    )
    yield _err(x, (3, 2, 1, False, True, 0), "divisor must be not zero")
    yield _err(x, (0,), "stride should not be zero")
    yield _err(
        _t((1, 1, 2, 2), f),
        (3,),
        r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output "
        r"size is too small",
    )
    yield _err(x.to(ea.int32), (2,), "not implemented for dtype int32", NotImplementedError)
    yield _err(x, ((1, 2, 3),), "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints")


def _avg3d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3, 2, 2, 2), f),
        (3,),
        r"input image \(T: 2 H: 2 W: 2\) smaller than kernel size \(kT: 3 kH: 3 "
        r"kW: 3\)",
    )
    yield _err(_t((2, 3, 4, 4, 4), f), (3, 1, 2), "pad should be at most half of effective kernel size")


def _avg1d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3, 7, 1), f),
        (2,),
        r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 "
        r"'self' \(while checking arguments for avg_pool1d\)",
    )
    yield _err(
        _t((2, 3, 2), f),
        (3,),
        r"Given input size: \(3x1x2\). Calculated output size: \(3x1x0\). Output size "
        r"is too small",
    )
    yield _err(_t((2, 3, 7), f), (3, 2, 2), "pad should be at most half of effective kernel size")


def _aap2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((2, 3, 7, 6), f),
        ((-1, 2),),
        r"adaptive_avg_pool2d: elements of output_size must be greater than or "
        r"equal to 0 but received \{-1, 2\}",
    )
    yield _err(_t((3, 3), f), (2,), r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[3, 3\]")
    yield _err(
        _t((2, 3, 0, 4), f),
        (2,),
        r"adaptive_avg_pool2d\(\): Expected input to have non-zero size for "
        r"non-batch dimensions, but input has sizes \[2, 3, 0, 4\] with dimension 2 being empty",
    )
    yield _err(_t((2, 3, 7, 6), f), ((1, 2, 3),), "adaptive_avg_pool2d: output_size must be 2")
    yield _err(_t((2, 3, 7, 6), f).long(), (2,), "not implemented for dtype int64", NotImplementedError)


def _aap1d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(
        _t((3,), f),
        (2,),
        r"Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' "
        r"\(while checking arguments for adaptive_avg_pool1d\)",
    )
    yield _err(
        _t((2, 3, 4), f),
        (-1,),
        r"elements of output_size must be greater than or equal to 0 but received "
        r"\{1, -1\}",
    )


def _amp2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    yield _err(_t((3, 3), f), (2,), r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[3, 3\]")
    yield _err(
        _t((2, 3, 0, 4), f),
        (2,),
        r"adaptive_max_pool2d\(\): Expected input to have non-zero size for "
        r"non-batch dimensions, but input has sizes \[2, 3, 0, 4\] with dimension 2 being empty",
    )
    yield _err(_t((2, 3, 4, 4), f), ((-1, 2),), "elements of output_size must be greater than or equal to 0")


def _unpool_errors(op: OpInfo) -> Iterator[ErrorInput]:
    f = ea.float32
    x = _t((1, 1, 2, 2), f)
    ix = ea.zeros(1, 1, 2, 2, dtype=ea.int64)
    yield _err(
        x,
        (ea.zeros(1, 1, 2, 3, dtype=ea.int64), (4, 4)),
        r"Expected shape of indices to be same as that of the "
        r"input tensor \(\[1, 1, 2, 2\]\) but got indices tensor with shape: \[1, 1, 2, 3\]",
    )
    yield _err(
        x,
        (ea.full((1, 1, 2, 2), 100, dtype=ea.int64), (4, 4)),
        r"Found an invalid max index: 100 \(output "
        r"volumes are of size 4x4\)",
    )
    yield _err(x, (ea.full((1, 1, 2, 2), -1, dtype=ea.int64), (4, 4)), "Found an invalid max index: -1")
    yield _err(
        x,
        (ix, (4,)),
        r"There should be exactly two elements \(height, width\) in output_size, but got 1 "
        r"elements.",
    )
    yield _err(x, (ix.int(), (4, 4)), "elements in indices should be type int64 but got: Int")
    yield _err(
        _t((2, 2), f),
        (ea.zeros(2, 2, dtype=ea.int64), (4, 4)),
        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 dimensions.",
    )
    yield _err(
        _t((1, 0, 2, 2), f),
        (ea.zeros(1, 0, 2, 2, dtype=ea.int64), (4, 4)),
        r"Expected input to have non-zero "
        r"size for non-batch dimensions, but got \[1, 0, 2, 2\] with dimension 1 being empty.",
    )


def _values(fn: Any) -> Any:
    return lambda *a, **k: fn(*a, **k)[0]


OPS = [
    OpInfo(
        "max_pool1d",
        ea.max_pool1d,
        ALL_NUMERIC,
        _max1d_samples,
        ref=_values(lambda x, *a, **k: ref_max_pool(1, x, *a, **k)),
        supports_out=False,
        result_dtype=_same,
        error_inputs=_max1d_errors,
        kind="pooling",
    ),
    OpInfo(
        "max_pool1d_with_indices",
        ea.max_pool1d_with_indices,
        ALL_NUMERIC,
        _max1d_samples,
        ref=lambda x, *a, **k: ref_max_pool(1, x, *a, **k),
        supports_out=False,
        kind="pooling",
    ),
    OpInfo(
        "max_pool2d",
        ea.max_pool2d,
        ALL_NUMERIC,
        _max2d_samples,
        ref=_values(lambda x, *a, **k: ref_max_pool(2, x, *a, **k)),
        supports_out=False,
        result_dtype=_same,
        error_inputs=_max2d_errors,
        kind="pooling",
    ),
    OpInfo(
        "max_pool2d_with_indices",
        ea.nn.max_pool2d_with_indices,
        ALL_NUMERIC,
        _max2d_samples,
        ref=lambda x, *a, **k: ref_max_pool(2, x, *a, **k),
        supports_out=False,
        kind="pooling",
    ),
    OpInfo(
        "max_pool3d",
        ea.max_pool3d,
        ALL_NUMERIC,
        _max3d_samples,
        ref=_values(lambda x, *a, **k: ref_max_pool(3, x, *a, **k)),
        supports_out=False,
        result_dtype=_same,
        error_inputs=_max3d_errors,
        kind="pooling",
    ),
    OpInfo(
        "max_pool3d_with_indices",
        ea.nn.max_pool3d_with_indices,
        ALL_NUMERIC,
        _max3d_samples,
        ref=lambda x, *a, **k: ref_max_pool(3, x, *a, **k),
        supports_out=False,
        kind="pooling",
    ),
    OpInfo(
        "avg_pool1d",
        ea.avg_pool1d,
        AVG_DTYPES,
        _avg1d_samples,
        ref=lambda x, *a, **k: ref_avg_pool(1, x, *a, **k),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        error_inputs=_avg1d_errors,
        kind="pooling",
    ),
    OpInfo(
        "avg_pool2d",
        ea.nn.avg_pool2d,
        AVG_DTYPES,
        _avg2d_samples,
        ref=lambda x, *a, **k: ref_avg_pool(2, x, *a, **k),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        error_inputs=_avg2d_errors,
        kind="pooling",
    ),
    OpInfo(
        "avg_pool3d",
        ea.nn.avg_pool3d,
        AVG_DTYPES,
        _avg3d_samples,
        ref=lambda x, *a, **k: ref_avg_pool(3, x, *a, **k),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        error_inputs=_avg3d_errors,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_avg_pool1d",
        ea.adaptive_avg_pool1d,
        FLOAT_DTYPES,
        _adaptive1d_samples,
        ref=lambda x, o: ref_adaptive_avg(1, x, o),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        error_inputs=_aap1d_errors,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_avg_pool2d",
        ea.nn.adaptive_avg_pool2d,
        FLOAT_DTYPES,
        _adaptive2d_samples,
        ref=lambda x, o: ref_adaptive_avg(2, x, o),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        error_inputs=_aap2d_errors,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_avg_pool3d",
        ea.nn.adaptive_avg_pool3d,
        FLOAT_DTYPES,
        _adaptive3d_samples,
        ref=lambda x, o: ref_adaptive_avg(3, x, o),
        supports_out=False,
        result_dtype=_same,
        tol_overrides=AVG_TOLS,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_max_pool1d",
        ea.adaptive_max_pool1d,
        FLOAT_DTYPES,
        _adaptive1d_samples,
        ref=lambda x, o: ref_adaptive_max(1, x, o),
        supports_out=False,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_max_pool2d",
        ea.nn.adaptive_max_pool2d,
        FLOAT_DTYPES,
        _adaptive2d_samples,
        ref=lambda x, o: ref_adaptive_max(2, x, o),
        supports_out=False,
        error_inputs=_amp2d_errors,
        kind="pooling",
    ),
    OpInfo(
        "adaptive_max_pool3d",
        ea.nn.adaptive_max_pool3d,
        FLOAT_DTYPES,
        _adaptive3d_samples,
        ref=lambda x, o: ref_adaptive_max(3, x, o),
        supports_out=False,
        kind="pooling",
    ),
    OpInfo(
        "max_unpool2d",
        ea.nn.max_unpool2d,
        FLOAT_DTYPES,
        _unpool_samples,
        ref=ref_max_unpool2d,
        supports_out=False,
        result_dtype=_same,
        error_inputs=_unpool_errors,
        kind="pooling",
    ),
    OpInfo(
        "lp_pool2d",
        ea.nn.lp_pool2d,
        (ea.float32, ea.float64),
        _lp2d_samples,
        ref=ref_lp_pool2d,
        supports_out=False,
        result_dtype=_same,
        tol_overrides={ea.float32: (1e-5, 1e-5)},
        check_unsupported=False,
        kind="pooling",
    ),
]
