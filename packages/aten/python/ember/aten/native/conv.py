"""Composite kernels of the convolution and pooling family: PyTorch's front ends over the
C++ operators (csrc/native/Convolution.cpp, Pooling.cpp).

``conv1d/2d/3d`` and ``conv_transpose1d/2d/3d`` accept unbatched inputs and (convNd)
``padding='same' / 'valid'``, then call ``convolution``; the 1-d pools run as 2-d pools
over a size-1 height; ``max_pool2d`` is ``max_pool2d_with_indices`` without its indices
(as PyTorch's CPU path), so its gradient is the indexed one. Each function takes its
schema's arguments positionally (int lists arrive as tuples) and calls operators through
their dispatcher entries, so autograd follows the operators they call.
"""

from __future__ import annotations

import warnings
from typing import Any

from ember.aten._generated import _ops as ops

# ---- convolution ---------------------------------------------------------------------------


def _shape(t: Any) -> list[int]:
    return list(t._impl.sizes)


def _batchify(name: str, n: int, input: Any) -> tuple[Any, bool]:
    """(batched input, was unbatched) for an n-d convolution: PyTorch's input-rank rule."""
    nd = input.dim()
    if nd not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of size: "
            f"{_shape(input)}"
        )
    if nd == n + 1:
        return ops._call_unsqueeze(input, 0), True
    return input, False


def _conv(
    name: str,
    n: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
) -> Any:
    x, unbatched = _batchify(name, n, input)
    out = ops._call_convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return ops._call_squeeze_dims(out, (0,)) if unbatched else out


def _expand(v: Any, n: int) -> tuple[int, ...]:
    v = tuple(v)
    return v * n if len(v) == 1 else v


def _conv_padding_mode(
    name: str, n: int, input: Any, weight: Any, bias: Any, stride: Any, padding: str, dilation: Any, groups: int
) -> Any:
    """convNd with padding='valid' (none) or 'same' (output size = input size; an odd total
    padding puts the extra element on the right, by padding the input first, as PyTorch)."""
    if padding == "valid":
        return _conv(name, n, input, weight, bias, stride, (0,), dilation, False, (0,), groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    x, unbatched = _batchify(name, n, input)
    if weight.dim() != n + 2:  # convolution reports it
        out = ops._call_convolution(x, weight, bias, stride, (0,), dilation, False, (0,), groups)
        return ops._call_squeeze_dims(out, (0,)) if unbatched else out
    dil = _expand(dilation, n)
    if len(dil) != n:
        raise RuntimeError(
            f"expected dilation to be a single integer value or a list of {n} values to match the convolution "
            f"dimensions, but got dilation={list(dilation)}"
        )
    kernel = _shape(weight)[2:]
    left = [d * (k - 1) // 2 for d, k in zip(dil, kernel, strict=True)]
    extra = [d * (k - 1) - 2 * lp for d, k, lp in zip(dil, kernel, left, strict=True)]
    if any(extra):
        warnings.warn(
            "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of the "
            "input be created",
            UserWarning,
            stacklevel=3,
        )
        pad: list[int] = []
        for e in reversed(extra):  # constant_pad_nd lists the last dim first
            pad += [0, e]
        x = ops._call_constant_pad_nd(x, tuple(pad), 0)
    out = ops._call_convolution(x, weight, bias, stride, tuple(left), dil, False, (0,), groups)
    return ops._call_squeeze_dims(out, (0,)) if unbatched else out


def conv1d(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, False, (0,), groups)


def conv2d(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, False, (0,), groups)


def conv3d(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Any:
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, False, (0,), groups)


def conv1d_padding(input: Any, weight: Any, bias: Any, stride: Any, padding: str, dilation: Any, groups: int) -> Any:
    return _conv_padding_mode("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d_padding(input: Any, weight: Any, bias: Any, stride: Any, padding: str, dilation: Any, groups: int) -> Any:
    return _conv_padding_mode("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d_padding(input: Any, weight: Any, bias: Any, stride: Any, padding: str, dilation: Any, groups: int) -> Any:
    return _conv_padding_mode("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any, groups: int, dilation: Any
) -> Any:
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, True, output_padding, groups)


def conv_transpose2d_input(
    input: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any, groups: int, dilation: Any
) -> Any:
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, True, output_padding, groups)


def conv_transpose3d_input(
    input: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any, groups: int, dilation: Any
) -> Any:
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, True, output_padding, groups)


# ---- pooling ---------------------------------------------------------------------------------


def _check_1d_rank(op: str, self: Any) -> None:
    nd = self.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for argument #1 'self' (while checking "
            f"arguments for {op})"
        )


def _one(op: str, name: str, v: Any, allow_empty: bool = False) -> tuple[int, ...]:
    """An int[1] argument: one int (or, for stride, nothing)."""
    v = tuple(v)
    if len(v) == 1 or (allow_empty and not v):
        return v
    raise RuntimeError(f"{op}() argument '{name}' should contain one int (got {len(v)})")


def max_pool1d_with_indices(
    self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> Any:
    if self.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{_shape(self)}"
        )
    k = _one("max_pool1d", "kernel_size", kernel_size)
    s = _one("max_pool1d", "stride", stride, allow_empty=True) or k
    p = _one("max_pool1d", "padding", padding)
    d = _one("max_pool1d", "dilation", dilation)
    out, idx = ops._call_max_pool2d_with_indices(
        ops._call_unsqueeze(self, -2), (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode
    )
    return ops._call_squeeze_dims(out, (-2,)), ops._call_squeeze_dims(idx, (-2,))


def max_pool1d(self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    # PyTorch's max_pool1d checks (with its own wording) before pooling
    if self.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{_shape(self)}"
        )
    k = _one("max_pool1d", "kernel_size", kernel_size)[0]
    s = (_one("max_pool1d", "stride", stride, allow_empty=True) or (k,))[0]
    p = _one("max_pool1d", "padding", padding)[0]
    d = _one("max_pool1d", "dilation", dilation)[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    length = self.shape[-1]
    num = length + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out_len = num // s + 1
    if ceil_mode and (out_len - 1) * s >= length + p:
        out_len -= 1
    if out_len <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out_len}")
    return max_pool1d_with_indices(self, (k,), (s,), (p,), (d,), ceil_mode)[0]


def max_pool2d(self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    return ops._call_max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d(self: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool) -> Any:
    return ops._call_max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool1d(self: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool) -> Any:
    _check_1d_rank("avg_pool1d", self)
    k = _one("avg_pool1d", "kernel_size", kernel_size)
    s = _one("avg_pool1d", "stride", stride, allow_empty=True) or k
    p = _one("avg_pool1d", "padding", padding)
    out = ops._call_avg_pool2d(
        ops._call_unsqueeze(self, -2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad, None
    )
    return ops._call_squeeze_dims(out, (-2,))


def adaptive_avg_pool1d(self: Any, output_size: Any) -> Any:
    _check_1d_rank("adaptive_avg_pool1d", self)
    o = _one("adaptive_avg_pool1d", "output_size", output_size)
    out = ops._call__adaptive_avg_pool2d(ops._call_unsqueeze(self, -2), (1, o[0]))
    return ops._call_squeeze_dims(out, (-2,))


def adaptive_avg_pool2d(self: Any, output_size: Any) -> Any:
    return ops._call__adaptive_avg_pool2d(self, output_size)


def adaptive_avg_pool3d(self: Any, output_size: Any) -> Any:
    return ops._call__adaptive_avg_pool3d(self, output_size)


def adaptive_max_pool1d(self: Any, output_size: Any) -> Any:
    _check_1d_rank("adaptive_max_pool1d", self)
    o = _one("adaptive_max_pool1d", "output_size", output_size)
    out, idx = ops._call_adaptive_max_pool2d(ops._call_unsqueeze(self, -2), (1, o[0]))
    return ops._call_squeeze_dims(out, (-2,)), ops._call_squeeze_dims(idx, (-2,))
