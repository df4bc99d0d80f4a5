"""ember.nn.functional: the functions the layers call (PyTorch's torch.nn.functional).

Each function checks its arguments and calls aten operators (``ember.aten`` and
``ember.aten.nn``, PyTorch's ``torch`` and ``torch._C._nn``); the kernels, and their
derivatives, live there. Signatures and defaults are PyTorch's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

_nn = ea.nn

# The resampling front ends have one definition, aten's (torch.nn.functional's code over the
# upsample_* / grid_sampler / im2col operators): re-exported here, never rewritten.
affine_grid = _nn.affine_grid
fold = _nn.fold
grid_sample = _nn.grid_sample
interpolate = _nn.interpolate
unfold = _nn.unfold

_linear = _nn.linear


# ---- linear -------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """linear(input, weight, bias=None) -> input @ weight.T + bias

    input (*, in_features), weight (out_features, in_features), bias (out_features) ->
    (*, out_features). One aten operator (one LinearBackward0 node under autograd).
    """
    return _linear(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """bilinear(input1, input2, weight, bias=None): y_k = x1^T W_k x2 + b_k

    input1 (*, in1), input2 (*, in2), weight (out, in1, in2), bias (out) -> (*, out).
    """
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
            f"{list(input2.shape[:-1])}"
        )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}"
        )
    out = ea.einsum("...i,kij,...j->...k", input1, weight, input2)
    if bias is not None:
        out = out + bias
    return out


# ---- activations ---------------------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """relu(input, inplace=False) -> max(0, x)"""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(input, inplace=False) -> min(max(0, x), 6)"""
    return _nn.hardtanh_(input, 0.0, 6.0) if inplace else _nn.relu6(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """hardtanh(input, min_val=-1., max_val=1., inplace=False) -> clamp(x, min_val, max_val)"""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """elu(input, alpha=1.0, inplace=False) -> x if x > 0 else alpha * (exp(x) - 1)"""
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _nn.elu_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """selu(input, inplace=False) -> scale * elu(x, alpha) with PyTorch's constants"""
    return ea.selu_(input) if inplace else ea.selu(input)


def selu_(input: Tensor) -> Tensor:
    return ea.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """celu(input, alpha=1.0, inplace=False) -> max(0, x) + min(0, alpha * (exp(x / alpha) - 1))"""
    return ea.celu_(input, alpha) if inplace else ea.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return ea.celu_(input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """leaky_relu(input, negative_slope=0.01, inplace=False) -> x if x >= 0 else negative_slope * x"""
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _nn.leaky_relu_(input, negative_slope)


def rrelu(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False
) -> Tensor:
    """rrelu(input, lower=1/8, upper=1/3, training=False, inplace=False)

    x for x >= 0, a x otherwise: a drawn from U(lower, upper) per element when training, else
    (lower + upper) / 2 (leaky_relu with that slope).
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = ea.empty(tuple(input.shape), dtype=input.dtype, device=input.device).uniform_(lower, upper)
    slope = ea.where(input >= 0, ea.ones_like(input), noise)
    return input.mul_(slope) if inplace else input * slope


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """prelu(input, weight) -> x if x >= 0 else weight * x, weight (1) or (C,) along dim 1."""
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    if n == 1:
        weight = weight.reshape(())  # one slope for every element: the output keeps input's shape
    else:
        if input.dim() == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if n != channels:
            raise RuntimeError(
                "prelu: Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{n} and channel size = {channels}."
            )
        if input.dim() >= 2:
            weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    return ea.where(input > 0, input, input * weight)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """gelu(input, approximate='none') -> x * Phi(x) ('tanh': the tanh approximation)"""
    return _nn.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """silu(input, inplace=False) -> x * sigmoid(x)"""
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """mish(input, inplace=False) -> x * tanh(softplus(x))"""
    return _nn.mish_(input) if inplace else _nn.mish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """hardsigmoid(input, inplace=False) -> relu6(x + 3) / 6"""
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """hardswish(input, inplace=False) -> x * relu6(x + 3) / 6"""
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """softplus(input, beta=1, threshold=20) -> log(1 + exp(beta x)) / beta (x where beta x > threshold)"""
    return _nn.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    """softsign(input) -> x / (1 + |x|)"""
    return input / (input.abs() + 1)


def sigmoid(input: Tensor) -> Tensor:
    """sigmoid(input) -> 1 / (1 + exp(-x))"""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """tanh(input)"""
    return input.tanh()


def logsigmoid(input: Tensor) -> Tensor:
    """logsigmoid(input) -> log(sigmoid(x)) = -softplus(-x)"""
    return -_nn.softplus(-input, 1.0, 20.0)


def tanhshrink(input: Tensor) -> Tensor:
    """tanhshrink(input) -> x - tanh(x)"""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """threshold(input, threshold, value, inplace=False) -> x if x > threshold else value"""
    return ea.threshold_(input, threshold, value) if inplace else ea.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return ea.threshold_(input, threshold, value)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """softshrink(input, lambd=0.5) -> x - lambd if x > lambd, x + lambd if x < -lambd, else 0"""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    zero = ea.zeros((), dtype=input.dtype, device=input.device)
    return ea.where(input > lambd, input - lambd, ea.where(input < -lambd, input + lambd, zero))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """hardshrink(input, lambd=0.5) -> x if |x| > lambd else 0"""
    zero = ea.zeros((), dtype=input.dtype, device=input.device)
    return ea.where((input > lambd) | (input < -lambd), input, zero)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """glu(input, dim=-1) -> a * sigmoid(b), a and b the two halves of input along dim"""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# ---- convolution (torch.conv*d: the aten operators themselves) -----------------------------
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1): (N, C_in, L) -> (N, C_out, L_out)"""
    return ea.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)

    (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW) -> (N, C_out, H_out, W_out);
    padding may be 'valid' or 'same'.
    """
    return ea.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)"""
    return ea.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)"""
    return ea.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)

    weight (C_in, C_out / groups, kH, kW).
    """
    return ea.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)"""
    return ea.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---- pooling -------------------------------------------------------------------------------
def _stride(stride: Any) -> Any:
    return () if stride is None else stride


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)"""
    return _nn.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)

    (N, C, H, W) -> (N, C, H_out, W_out); stride defaults to kernel_size.
    """
    return _nn.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)"""
    return _nn.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(*args: Any, **kwargs: Any) -> Any:
    kwargs["return_indices"] = True
    return max_pool1d(*args, **kwargs)


def max_pool2d_with_indices(*args: Any, **kwargs: Any) -> Any:
    kwargs["return_indices"] = True
    return max_pool2d(*args, **kwargs)


def max_pool3d_with_indices(*args: Any, **kwargs: Any) -> Any:
    kwargs["return_indices"] = True
    return max_pool3d(*args, **kwargs)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)"""
    return ea.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)"""
    return _nn.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)"""
    return _nn.avg_pool3d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override)


def _list_with_default(out_size: Any, defaults: Sequence[int]) -> list[int]:
    if isinstance(out_size, int):
        return [out_size]
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    if len(out_size) == 0:
        return []  # the kernel names the size it wants ("output_size must be 2")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :], strict=True)]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool1d(input, output_size): (N, C, L) -> (N, C, output_size)"""
    return ea.adaptive_avg_pool1d(input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool2d(input, output_size): (N, C, H, W) -> (N, C, *output_size); None keeps the input's size"""
    return _nn.adaptive_avg_pool2d(
        input, _list_with_default(output_size, input.size()) if not isinstance(output_size, int) else output_size
    )


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool3d(input, output_size)"""
    return _nn.adaptive_avg_pool3d(
        input, _list_with_default(output_size, input.size()) if not isinstance(output_size, int) else output_size
    )


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """adaptive_max_pool1d(input, output_size, return_indices=False)"""
    out, idx = ea.adaptive_max_pool1d(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """adaptive_max_pool2d(input, output_size, return_indices=False)"""
    size = _list_with_default(output_size, input.size()) if not isinstance(output_size, int) else output_size
    out, idx = _nn.adaptive_max_pool2d(input, size)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """adaptive_max_pool3d(input, output_size, return_indices=False)"""
    size = _list_with_default(output_size, input.size()) if not isinstance(output_size, int) else output_size
    out, idx = _nn.adaptive_max_pool3d(input, size)
    return (out, idx) if return_indices else out


def _unpool_output_size(
    input: Tensor, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int], output_size: Any
) -> list[int]:
    input_size = input.size()
    default_size = [
        (input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
        for d in range(len(kernel_size))
    ]
    if output_size is None:
        return default_size
    output_size = list(output_size)
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(
            f"output_size should be a sequence containing {len(kernel_size)} or {len(kernel_size) + 2} elements, "
            f"but it has a length of '{len(output_size)}'"
        )
    for d in range(len(kernel_size)):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and {max_size})')
    return output_size


def _tup(v: Any, n: int) -> tuple[int, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, output_size: Any = None
) -> Tensor:
    """max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None)"""
    k = _tup(kernel_size, 1)
    s = _tup(stride, 1) if stride is not None else k
    p = _tup(padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size)
    if isinstance(output_size, (list, tuple)):
        size = list(size)
    return _nn.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1]).squeeze(-1)


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, output_size: Any = None
) -> Tensor:
    """max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None)

    Puts each value of input at its index (from max_pool2d(..., return_indices=True)) in a zero plane.
    """
    k = _tup(kernel_size, 2)
    s = _tup(stride, 2) if stride is not None else k
    p = _tup(padding, 2)
    return _nn.max_unpool2d(input, indices, _unpool_output_size(input, k, s, p, output_size))


def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, output_size: Any = None
) -> Tensor:
    """max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None)

    Puts each value of input at its index (from max_pool3d(..., return_indices=True)) in a zero
    volume: a scatter into each (D H W) plane, whose gradient is the gather of the same indices.
    """
    k = _tup(kernel_size, 3)
    s = _tup(stride, 3) if stride is not None else k
    p = _tup(padding, 3)
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {input.dim()} dimensions."
        )
    if indices.dtype != ea.int64:
        raise RuntimeError("elements in indices should be type int64")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    size = _unpool_output_size(input, k, s, p, output_size)
    volume = size[0] * size[1] * size[2]
    planes = tuple(input.shape[:-3])
    flat_idx = indices.reshape(*planes, -1)
    if flat_idx.numel():
        lo, hi = int(flat_idx.min()), int(flat_idx.max())
        if lo < 0 or hi >= volume:
            bad = hi if hi >= volume else lo
            raise RuntimeError(
                f"Found an invalid max index: {bad} (output volumes are of size {size[0]}x{size[1]}x{size[2]})"
            )
    out = ea.zeros((*planes, volume), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(*planes, -1))
    return out.reshape(*planes, *size)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False)"""
    return _nn.lp_pool1d(input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False)"""
    return _nn.lp_pool2d(input, norm_type, kernel_size, stride, ceil_mode)


# ---- padding -------------------------------------------------------------------------------
def _pad_circular(input: Tensor, pad: Sequence[int]) -> Tensor:
    # last dim first, as F.pad's pad list; negative amounts crop
    out = input
    ndim = input.dim()
    for i in range(len(pad) // 2):
        dim = ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = out.shape[dim]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if left < 0:
            out = out.narrow(dim, -left, out.shape[dim] + left)
            left = 0
        if right < 0:
            out = out.narrow(dim, 0, out.shape[dim] + right)
            right = 0
        parts = []
        n = out.shape[dim]
        if left:
            parts.append(out.narrow(dim, n - left, left))
        parts.append(out)
        if right:
            parts.append(out.narrow(dim, 0, right))
        if len(parts) > 1:
            out = ea.cat(parts, dim)
    return out


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """pad(input, pad, mode='constant', value=None)

    ``pad`` lists (left, right) amounts from the last dim backwards: (1, 1, 2, 0) pads the
    last dim by 1 on each side and the one before by 2 at the front. Modes: 'constant',
    'reflect', 'replicate', 'circular'.
    """
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return ea.constant_pad_nd(input, list(pad), 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode == "circular":
        return _pad_circular(input, pad)
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    n = len(pad) // 2
    if input.dim() not in (n + 1, n + 2) or n > 3:
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    name = ("reflection_pad" if mode == "reflect" else "replication_pad") + f"{n}d"
    fn = getattr(_nn, name, None)
    if fn is None:
        raise NotImplementedError(f"pad: mode '{mode}' for {n}-d padding needs the aten operator {name}")
    return fn(input, list(pad))


# ---- aten operators that other helpers land: looked up on first use ------------------------
_OPS: dict[str, Any] = {}


def _op(name: str) -> Any:
    """The aten operator ``name``: ember.aten.nn's (torch._C._nn) first, then ember.aten's."""
    fn = _OPS.get(name)
    if fn is None:
        fn = getattr(_nn, name, None) or getattr(ea, name, None)
        if fn is None:
            raise NotImplementedError(f"ember.nn.functional needs the aten operator '{name}', which is not installed")
        _OPS[name] = fn
    return fn


# ---- softmax family --------------------------------------------------------------------------
def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(input, dim=None, dtype=None) -> exp(x) / sum(exp(x)) along dim"""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _op("softmax")(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """log_softmax(input, dim=None, dtype=None) -> x - logsumexp(x) along dim"""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _op("log_softmax")(input, dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmin(input, dim=None, dtype=None) -> softmax(-x)"""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _op("softmax")(-input, dim, dtype=dtype)


# ---- normalization ----------------------------------------------------------------------------
def _verify_batch_size(size: Sequence[int]) -> None:
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size: Sequence[int]) -> None:
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5)

    Normalises each channel (dim 1) by the batch statistics (training; running stats are
    updated in place with ``momentum``, the variance unbiased) or by the running ones.
    """
    if training:
        _verify_batch_size(input.size())
    return _op("batch_norm")(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
    momentum=0.1, eps=1e-5): each (sample, channel) plane normalised by its own statistics"""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _op("instance_norm")(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5): normalises the last dims"""
    return _op("layer_norm")(input, list(normalized_shape), weight, bias, eps, False)


def rms_norm(
    input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """rms_norm(input, normalized_shape, weight=None, eps=None): x / sqrt(mean(x^2) + eps) * weight"""
    return _op("rms_norm")(input, list(normalized_shape), weight, eps)


def group_norm(
    input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5
) -> Tensor:
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-5)"""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups, *input.size()[2:]])
    return _op("group_norm")(input, num_groups, weight, bias, eps, False)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0)

    x / (k + alpha * mean of x^2 over ``size`` neighbouring channels) ** beta.
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """normalize(input, p=2.0, dim=1, eps=1e-12): x / max(||x||_p, eps) along dim"""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ea.div(input, denom, out=out)


# ---- dropout ---------------------------------------------------------------------------------
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """dropout(input, p=0.5, training=True, inplace=False): zeros elements with probability p, scales by 1/(1-p)"""
    _check_p(p)
    return _op("dropout_")(input, p, training) if inplace else _op("dropout")(input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout(input, p=0.5, training=False, inplace=False): dropout keeping SELU's mean and variance"""
    _check_p(p)
    return _op("alpha_dropout_")(input, p, training) if inplace else _op("alpha_dropout")(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """feature_alpha_dropout(input, p=0.5, training=False, inplace=False): alpha dropout of whole channels"""
    _check_p(p)
    if inplace:
        return _op("feature_alpha_dropout_")(input, p, training)
    return _op("feature_alpha_dropout")(input, p, training)


def _feature_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, name: str, dims: tuple[int, int]
) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in dims:
        raise RuntimeError(
            f"{name}: Expected {dims[0]}D or {dims[1]}D input, but received a {inp_dim}D input. Note that {name} "
            f"exists to provide channel-wise dropout on inputs with {dims[0] - 1} spatial dimension"
            f"{'s' if dims[0] > 2 else ''}, a channel dimension, and an optional batch dimension (i.e. "
            f"{dims[0]}D or {dims[1]}D inputs)."
        )
    return _channel_dropout(input, p, training, inplace, is_batched=inp_dim == dims[1])


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, is_batched: bool) -> Tensor:
    """feature_dropout over (N, C, ...); an unbatched (C, ...) input goes through a view with
    a batch dimension of one, which the in-place variant writes through into `input`."""
    if is_batched:
        return _op("feature_dropout_" if inplace else "feature_dropout")(input, p, training)
    batched = input.unsqueeze(0)
    if inplace:
        _op("feature_dropout_")(batched, p, training)
        return input
    return _op("feature_dropout")(batched, p, training).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """dropout1d(input, p=0.5, training=True, inplace=False): zeros whole channels of (N, C, L) / (C, L)"""
    return _feature_dropout(input, p, training, inplace, "dropout1d", (2, 3))


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """dropout2d(input, p=0.5, training=True, inplace=False): zeros whole channels of (N, C, H, W) / (C, H, W)"""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.",
            stacklevel=2,
        )
    return _op("feature_dropout_")(input, p, training) if inplace else _op("feature_dropout")(input, p, training)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """dropout3d(input, p=0.5, training=True, inplace=False): zeros whole channels of (N, C, D, H, W) / (C, D, H, W)"""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _channel_dropout(input, p, training, inplace, is_batched=inp_dim == 5)


# ---- embeddings --------------------------------------------------------------------------------
def _no_grad_embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    # rows of weight used by input whose norm exceeds max_norm are scaled down to it, in place
    from ember.autograd import no_grad

    with no_grad():
        idx = ea.unique(input.reshape(-1))
        rows = weight.index_select(0, idx)
        norms = rows.norm(norm_type, 1, keepdim=True)
        scale = ea.where(norms > max_norm, max_norm / (norms + 1e-7), ea.ones_like(norms))
        weight.index_copy_(0, idx, rows * scale)


def _padding_index(padding_idx: int | None, num_embeddings: int, message: str) -> int:
    """padding_idx as the aten ops take it: a negative index counts from the end of the
    table, and -1 means "no padding index" (PyTorch's F.embedding / F.embedding_bag)."""
    if padding_idx is None:
        return -1
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError(message)
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
    sparse=False): the rows of weight (num_embeddings, dim) picked by the indices in input -> (*, dim)"""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight.size(0), "Padding_idx must be within num_embeddings")
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _op("embedding")(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
    mode='mean', sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None)

    Sums / means / maxes of embedding rows per bag: bags are the rows of a 2-D input, or
    the slices of a 1-D input starting at each offset.
    """
    if weight.dtype == ea.long and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})"
        )
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets)}"
            )
        offsets = ea.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    padding_idx = _padding_index(padding_idx, weight.size(0), "padding_idx must be within the number of embeddings")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    ret, _, _, _ = _op("embedding_bag")(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        mode_enum,
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
    return ret


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """one_hot(tensor, num_classes=-1): int64 (*, num_classes) with a 1 at each index"""
    if tensor.dtype != ea.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= num_classes):
        raise RuntimeError(
            "Class values must be smaller than num_classes."
            if int(tensor.min()) >= 0
            else "Class values must be non-negative."
        )
    out = ea.zeros((*tensor.shape, num_classes), dtype=ea.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# ---- distances -----------------------------------------------------------------------------------
def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """pdist(input, p=2) -> the p-norm distances between the rows of input (N, M): the
    N (N - 1) / 2 entries above the diagonal of cdist(input, input), row by row."""
    return ea.pdist(input, p)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> ||x1 - x2 + eps||_p over the last dim"""
    output_dim = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, output_dim - 1, keepdim=keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """cosine_similarity(x1, x2, dim=1, eps=1e-8) -> sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along dim"""
    a, b = ea.broadcast_tensors(x1, x2)
    na = a.norm(2, dim, keepdim=True).clamp_min(eps)
    nb = b.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((a / na) * (b / nb)).sum(dim)


# ---- losses ------------------------------------------------------------------------------------
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    r = _REDUCTIONS.get(reduction)
    if r is None:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return r


def _legacy_reduction(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> str:
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.", stacklevel=3
        )
    return ret


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> int:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). This will "
            "likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """l1_loss(input, target, reduction='mean') -> |input - target| reduced"""
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    a, b = ea.broadcast_tensors(input, target)
    return _op("l1_loss")(a, b, r)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """mse_loss(input, target, reduction='mean') -> (input - target)^2 reduced"""
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    a, b = ea.broadcast_tensors(input, target)
    return _op("mse_loss")(a, b, r)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """smooth_l1_loss(input, target, reduction='mean', beta=1.0): 0.5 d^2 / beta if |d| < beta else |d| - beta/2"""
    _warn_size(input, target)
    r = _reduction(size_average, reduce, reduction)
    a, b = ea.broadcast_tensors(input, target)
    return _op("smooth_l1_loss")(a, b, r, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """huber_loss(input, target, reduction='mean', delta=1.0): 0.5 d^2 if |d| < delta else delta (|d| - delta/2)"""
    _warn_size(input, target)
    a, b = ea.broadcast_tensors(input, target)
    return _op("huber_loss")(a, b, _reduction_enum(reduction), delta)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """soft_margin_loss(input, target, reduction='mean') -> log(1 + exp(-y x)) reduced"""
    return _op("soft_margin_loss")(input, target, _reduction(size_average, reduce, reduction))


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean')

    input (N, C) or (N, C, d1, ...) log-probabilities, target (N) or (N, d1, ...) class indices.
    """
    return _op("nll_loss_nd")(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)

    log_softmax over dim 1 then nll_loss; target holds class indices or class probabilities.
    """
    return _op("cross_entropy_loss")(
        input, target, weight, _reduction(size_average, reduce, reduction), ignore_index, label_smoothing
    )


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
    reduction='mean', ignore_index=None, label_smoothing=0.0, options=None)

    cross_entropy(linear(input, linear_weight, linear_bias), target, ...): input (N, in) or (in,),
    linear_weight (C, *out_features, in). PyTorch's `options` choose a batch-chunked evaluation
    of the same value; ember computes it whole and accepts them.
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
            f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    rows = 1
    for n in (classes, *out_features):
        rows *= n
    w = linear_weight.reshape(rows, in_features)
    b = linear_bias.reshape(rows) if linear_bias is not None else None
    logits = linear(input, w, b).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )


def _infer_size(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The broadcast shape of a and b (aligned at the right), PyTorch's error text on a mismatch."""
    ndim = max(len(a), len(b))
    out = []
    for i in range(ndim):
        da = a[len(a) - ndim + i] if len(a) - ndim + i >= 0 else 1
        db = b[len(b) - ndim + i] if len(b) - ndim + i >= 0 else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )
        out.append(db if da == 1 else da)
    return out


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """binary_cross_entropy(input, target, weight=None, reduction='mean') -> -(y log x + (1 - y) log(1 - x))"""
    r = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(_infer_size(target.size(), weight.size()))
    return _op("binary_cross_entropy")(input, target, weight, r)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy_with_logits(input, target, weight=None, reduction='mean', pos_weight=None)

    BCE of sigmoid(input), computed stably from the logits.
    """
    r = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _op("binary_cross_entropy_with_logits")(input, target, weight, pos_weight, r)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """kl_div(input, target, reduction='mean', log_target=False): target (log target - input), input log-probs"""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' "
                "divides only by the batch size, and aligns with the KL div math definition.'mean' will be changed "
                "to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        reduction_enum = 2 if reduction == "batchmean" else _reduction_enum(reduction)
    reduced = _op("kl_div")(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """margin_ranking_loss(input1, input2, target, margin=0, reduction='mean') -> max(0, -y (x1 - x2) + margin)"""
    r = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _op("margin_ranking_loss")(input1, input2, target, margin, r)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """hinge_embedding_loss(input, target, margin=1.0, reduction='mean'): x if y == 1, max(0, margin - x) if y == -1"""
    return _op("hinge_embedding_loss")(input, target, margin, _reduction(size_average, reduce, reduction))


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """cosine_embedding_loss(input1, input2, target, margin=0, reduction='mean')"""
    return _op("cosine_embedding_loss")(input1, input2, target, margin, _reduction(size_average, reduce, reduction))


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction='mean')"""
    r = _reduction(size_average, reduce, reduction)
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs"
        )
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _op("triplet_margin_loss")(anchor, positive, negative, margin, p, eps, swap, r)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
    swap=False, reduction='mean') -> max(d(a, p) - d(a, n) + margin, 0); d defaults to pairwise_distance
    and ``swap`` uses min(d(a, n), d(p, n)). A composite, as PyTorch's."""
    r = _reduction_enum(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs"
        )
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = ea.minimum(dist_neg, distance(positive, negative))
    loss = ea.clamp_min(margin + dist_pos - dist_neg, 0)
    return loss if r == 0 else (loss.mean() if r == 1 else loss.sum())


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """multilabel_soft_margin_loss(input, target, weight=None, reduction='mean')

    -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight, averaged over the class
    (last) dim, then reduced over the rest. A composite, as PyTorch's."""
    r = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    return loss if r == 0 else (loss.mean() if r == 1 else loss.sum())


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction='mean')"""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _op("poisson_nll_loss")(input, target, log_input, full, eps, _reduction_enum(reduction))


def gaussian_nll_loss(
    input: Tensor, target: Tensor, var: Any, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
) -> Tensor:
    """gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean')

    0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) with full).
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ea.full_like(input, float(var))
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _op("gaussian_nll_loss")(input, target, var, full, eps, reduction)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False)

    log_probs (T, N, C) log-softmaxed; targets (N, S) or concatenated (sum(target_lengths),).
    """
    return _op("ctc_loss")(
        log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction), zero_infinity
    )


# ---- resampling ----------------------------------------------------------------------------------
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """pixel_shuffle(input, upscale_factor): (*, C r^2, H, W) -> (*, C, H r, W r)"""
    return _op("pixel_shuffle")(input, upscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """channel_shuffle(input, groups): (N, g k, *) -> the channels as a (g, k) grid transposed:
    output channel j g + i is input channel i k + j. A view/permute composite, as PyTorch's."""
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    shape = tuple(input.shape)
    c = shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    grid = input.reshape(shape[0], groups, c // groups, *shape[2:])
    return grid.transpose(1, 2).reshape(shape)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """pixel_unshuffle(input, downscale_factor): (*, C, H r, W r) -> (*, C r^2, H, W)"""
    return _op("pixel_unshuffle")(input, downscale_factor)


def upsample(
    input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: bool | None = None
) -> Tensor:
    """upsample(...): deprecated alias of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- attention -------------------------------------------------------------------------------------
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
    scale=None, enable_gqa=False)

    softmax(Q K^T * scale + mask) V over (..., L, E) queries and (..., S, E) keys; the fused
    CPU kernel never materialises the L x S matrix for long sequences.
    """
    return _op("scaled_dot_product_attention")(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )


__all__ = sorted(
    name
    for name, obj in list(globals().items())
    if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", None) == __name__
)

# -- sequence models: multi-head attention (written in _functional_attention.py)
from ._functional_attention import multi_head_attention_forward  # noqa: E402, F401  (re-exported)

__all__ = sorted([*__all__, "multi_head_attention_forward"])
