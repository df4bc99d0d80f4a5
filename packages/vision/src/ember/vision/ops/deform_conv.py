"""deform_conv2d / DeformConv2d (Deformable ConvNets v1 and, with a mask, v2): the kernel
ember.aten.ops.vision.deform_conv2d."""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import ember.nn as nn
from ember.nn import init

from ._register import vision_ops
from ._utils import pair


def deform_conv2d(
    input: Any,
    offset: Any,
    weight: Any,
    bias: Any = None,
    stride: int | tuple[int, int] = (1, 1),
    padding: int | tuple[int, int] = (0, 0),
    dilation: int | tuple[int, int] = (1, 1),
    mask: Any = None,
) -> Any:
    """Deformable convolution: ``input`` [N, C_in, H, W], ``offset`` [N, 2 * offset_groups *
    kh * kw, H_out, W_out] (a (dy, dx) pair per kernel tap), ``weight`` [C_out, C_in / groups,
    kh, kw], ``mask`` [N, offset_groups * kh * kw, H_out, W_out] or None -> [N, C_out, H_out,
    W_out]. ``groups`` and ``offset_groups`` follow from the shapes, as in torchvision."""
    for name, t in (("input", input), ("offset", offset), ("weight", weight)):
        if not isinstance(t, ea.Tensor):
            raise TypeError(f"deform_conv2d: {name} must be a Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"deform_conv2d: expected {name} to be 4-dimensional, got shape {list(t.shape)}")
    stride_h, stride_w = pair(stride, "stride", "deform_conv2d")
    pad_h, pad_w = pair(padding, "padding", "deform_conv2d")
    dil_h, dil_w = pair(dilation, "dilation", "deform_conv2d")
    c_out, c_per_group, kh, kw = weight.shape
    taps2 = 2 * kh * kw
    offset_groups = offset.shape[1] // taps2
    if offset_groups == 0 or offset.shape[1] % taps2 != 0:
        raise RuntimeError(
            "deform_conv2d: the shape of the offset tensor at dimension 1 is not valid. It should be a multiple "
            f"of 2 * weight.size[2] * weight.size[3].\nGot offset.shape[1]={offset.shape[1]}, "
            f"while 2 * weight.size[2] * weight.size[3]={taps2}"
        )
    if c_per_group == 0 or input.shape[1] % c_per_group != 0:
        raise RuntimeError(
            f"deform_conv2d: input has {input.shape[1]} channels, not a multiple of weight.size[1]={c_per_group}"
        )
    groups = input.shape[1] // c_per_group
    use_mask = mask is not None
    if mask is None:
        mask = ea.zeros((input.shape[0], 1), dtype=input.dtype, device=input.device)
    if bias is None:
        bias = ea.zeros((c_out,), dtype=input.dtype, device=input.device)
    return vision_ops.deform_conv2d(
        input,
        weight,
        offset,
        mask,
        bias,
        stride_h,
        stride_w,
        pad_h,
        pad_w,
        dil_h,
        dil_w,
        groups,
        offset_groups,
        use_mask,
    )


class DeformConv2d(nn.Module):
    """Module form of :func:`deform_conv2d`; ``forward(input, offset, mask=None)``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = pair(kernel_size, "kernel_size", "DeformConv2d")
        self.stride = pair(stride, "stride", "DeformConv2d")
        self.padding = pair(padding, "padding", "DeformConv2d")
        self.dilation = pair(dilation, "dilation", "DeformConv2d")
        self.groups = groups
        self.weight = nn.Parameter(ea.empty((out_channels, in_channels // groups, *self.kernel_size)))
        self.bias: Any
        if bias:
            self.bias = nn.Parameter(ea.empty((out_channels,)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * self.kernel_size[0] * self.kernel_size[1]
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Any, offset: Any, mask: Any = None) -> Any:
        return deform_conv2d(input, offset, self.weight, self.bias, self.stride, self.padding, self.dilation, mask=mask)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
            f", padding={self.padding}, dilation={self.dilation}"
        )
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
