"""Backward helpers of the convolution and pooling formulas in derivatives.yaml (section
"convolution, pooling").

Written with differentiable operators only (convolution, convolution_backward, gather),
so gradients of gradients work to any order.
"""

from __future__ import annotations

from typing import Any

from ember.aten.extension import entries as ops

__all__ = ["convolution_backward_backward", "max_pool_double_backward"]


def convolution_backward_backward(
    ggI: Any,
    ggW: Any,
    ggb: Any,
    grad_output: Any,
    input: Any,
    weight: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
    mask: Any,
) -> tuple[Any, Any, Any]:
    """Gradients of convolution_backward's inputs (grad_output, input, weight) from the gradients
    ggI, ggW, ggb of its outputs (grad_input, grad_weight, grad_bias; None when none arrived).

    y = conv(x, w) is bilinear, and convolution_backward returns (A_w^T g, B_x^T g, sum g) with
    A_w x = B_x w = conv(x, w). So: d/dg = conv(ggI, w) + conv(x, ggW) + ggb (per channel);
    d/dw <ggI, A_w^T g> = B_ggI^T g and d/dx <ggW, B_x^T g> = A_ggW^T g, both convolution_backward
    again -- true for transposed convolutions too, whose forward is another linear map.
    """
    args = (stride, padding, dilation, transposed, output_padding, groups)
    g_out = g_in = g_w = None
    if mask[0]:
        g_out = None
        if ggI is not None:
            g_out = ops._call_convolution(ggI, weight, None, *args)
        if ggW is not None:
            t = ops._call_convolution(input, ggW, None, *args)
            g_out = t if g_out is None else g_out + t
        if ggb is not None:
            shape = (1, -1) + (1,) * (grad_output.dim() - 2)
            t = ops._call_zeros_like(grad_output, None, None, None, None, None) + ggb.reshape(shape)
            g_out = t if g_out is None else g_out + t
        if g_out is None:
            g_out = ops._call_zeros_like(grad_output, None, None, None, None, None)
    if mask[1] and ggW is not None:
        g_in = ops._call_convolution_backward(grad_output, input, ggW, None, *args, (True, False, False))[0]
    if mask[2] and ggI is not None:
        g_w = ops._call_convolution_backward(grad_output, ggI, weight, None, *args, (False, True, False))[1]
    return g_out, g_in, g_w


def max_pool_double_backward(grad: Any, indices: Any, dim: int) -> Any:
    """The values of `grad` (shaped as the pooled input) at the pooled positions `indices`
    (flat over the last `dim` dims): the gradient of grad_output in max pooling's backward
    (and of max_unpool's input)."""
    lead = tuple(indices.shape)[: indices.dim() - dim]
    g = grad.reshape((*lead, -1))
    picked = g.gather(-1, indices.reshape((*lead, -1)))
    return picked.reshape(tuple(indices.shape))
