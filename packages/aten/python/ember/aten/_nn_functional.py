"""torch.nn.functional's own front ends for convolution and pooling, in ``ember.aten.nn``.

``ember.aten.nn`` mirrors ``torch._C._nn`` (generated from native_functions.yaml:
``max_pool2d_with_indices``, ``avg_pool2d``, ``adaptive_max_pool2d`` returning
``(output, indices)``, ``im2col``, ...). The functions here are the ones PyTorch writes in
``torch.nn.functional`` under names ``torch._C._nn`` does not use: ``max_pool1d/2d/3d``
with ``return_indices``, ``unfold`` / ``fold`` (over im2col / col2im), ``lp_pool1d/2d``,
and the convolutions and 1-d pools, which nn.functional takes from ``torch`` itself.
"""

from __future__ import annotations

from typing import Any

from ember.aten._generated import _ops as ops


def _pair(v: Any) -> Any:
    return (v, v) if isinstance(v, int) else v


def max_pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)

    Max over sliding windows of the last dim of a (N, C, L) or (C, L) input; with
    ``return_indices`` also the position of each maximum in L.

    >>> ember.aten.nn.max_pool1d(ember.aten.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    stride = () if stride is None else stride
    if return_indices:
        return ops._call_max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return ops._call_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)

    (N, C, H, W) or (C, H, W) -> (..., H_out, W_out) with
    H_out = floor((H + 2 padding - dilation (kernel_size - 1) - 1) / stride) + 1 (ceil with
    ``ceil_mode``, keeping the last window's start inside the input or its left padding).
    Indices are flat positions h * W + w in each input plane.

    >>> ember.aten.nn.max_pool2d(ember.aten.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    stride = () if stride is None else stride
    if return_indices:
        return ops._call_max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return ops._call_max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)

    (N, C, D, H, W) or (C, D, H, W); indices are d * H * W + h * W + w.

    >>> ember.aten.nn.max_pool3d(ember.aten.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    stride = () if stride is None else stride
    if return_indices:
        return ops._call_max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return ops._call_max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """unfold(input, kernel_size, dilation=1, padding=0, stride=1)

    Sliding blocks of a (N, C, H, W) (or (C, H, W)) input as columns:
    (N, C * kH * kW, L), L the number of block positions (im2col).

    >>> ember.aten.nn.unfold(ember.aten.ones(1, 2, 3, 3), 2).shape
    ember.aten.Size([1, 8, 4])
    """
    return ops._call_im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)

    The inverse walk of unfold: sums the columns of a (N, C * kH * kW, L) input (or
    (C * kH * kW, L)) back into (N, C, *output_size) images (col2im).

    >>> x = ember.aten.ones(1, 1, 3, 3)
    >>> ember.aten.nn.fold(ember.aten.nn.unfold(x, 2), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    return ops._call_col2im(
        input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    )


def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False) -> Any:
    """lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False)

    (sum over each window of x ** p) ** (1 / p), computed as PyTorch does from avg_pool1d.

    >>> ember.aten.nn.lp_pool1d(ember.aten.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    s = () if stride is None else stride
    out = ops._call_avg_pool1d(input.pow(norm_type), kernel_size, s, 0, ceil_mode, True)
    return (out.sign() * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Any:
    """lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False)

    (sum over each kH x kW window of x ** p) ** (1 / p), from avg_pool2d (as PyTorch).

    >>> ember.aten.nn.lp_pool2d(ember.aten.ones(1, 2, 2), 1, 2)
    tensor([[[4.]]])
    """
    kh, kw = _pair(kernel_size)
    s = () if stride is None else stride
    out = ops._call_avg_pool2d(input.pow(norm_type), kernel_size, s, 0, ceil_mode, True, None)
    return (out.sign() * out.abs().relu()).mul(kh * kw).pow(1.0 / norm_type)


# nn.functional's versions of these are the torch-level functions themselves
