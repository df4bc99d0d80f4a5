"""Loads the compiled operators and wires their backward operators to the Autograd key.

``ember.vision._C`` defines the ``vision`` namespace (``ember.aten.ops.vision.*``) and
registers the CPU (and CUDA) kernels of every forward and backward operator; here each
forward operator gets its derivative with ``ember.aten.library.register_autograd``, the
way torchvision's autograd kernels call its ``_*_backward`` operators. Without
ember-autograd installed the operators still run, with no graph.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
from ember.aten import library

from .. import _C  # noqa: F401  (its EMBER_LIBRARY blocks define the operators)

vision_ops: Any = ea.ops.vision


def _roi_align_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned = inputs
    ctx.save_for_backward(rois)
    ctx.input_shape = tuple(input.shape)
    ctx.args = (spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


def _roi_align_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    (rois,) = ctx.saved_tensors
    scale, ph, pw, sampling_ratio, aligned = ctx.args
    n, c, h, w = ctx.input_shape
    grad_input = vision_ops._roi_align_backward(grad, rois, scale, ph, pw, n, c, h, w, sampling_ratio, aligned)
    return grad_input, None, None, None, None, None, None


def _roi_pool_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, rois, spatial_scale, pooled_height, pooled_width = inputs
    argmax = output[1]
    ctx.mark_non_differentiable(argmax)
    ctx.save_for_backward(rois, argmax)
    ctx.input_shape = tuple(input.shape)
    ctx.args = (spatial_scale, pooled_height, pooled_width)


def _roi_pool_backward(ctx: Any, grad: Any, _grad_argmax: Any) -> tuple[Any, ...]:
    rois, argmax = ctx.saved_tensors
    scale, ph, pw = ctx.args
    n, c, h, w = ctx.input_shape
    grad_input = vision_ops._roi_pool_backward(grad, rois, argmax, scale, ph, pw, n, c, h, w)
    return grad_input, None, None, None, None


def _deform_conv2d_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, weight, offset, mask, bias, *args = inputs
    # detached: the backward operator only reads them (no double backward), and ember's
    # saved-tensor check does not accept a Parameter (a Tensor subclass) as a saved input yet
    ctx.save_for_backward(*(t.detach() for t in (input, weight, offset, mask, bias)))
    ctx.args = tuple(args)


def _deform_conv2d_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    input, weight, offset, mask, bias = ctx.saved_tensors
    grads = vision_ops._deform_conv2d_backward(grad, input, weight, offset, mask, bias, *ctx.args)
    grad_input, grad_weight, grad_offset, grad_mask, grad_bias = grads
    use_mask = ctx.args[-1]
    return (grad_input, grad_weight, grad_offset, grad_mask if use_mask else None, grad_bias, *([None] * 9))


library.register_autograd("vision::roi_align", _roi_align_backward, setup_context=_roi_align_setup)
library.register_autograd("vision::roi_pool", _roi_pool_backward, setup_context=_roi_pool_setup)
library.register_autograd("vision::deform_conv2d", _deform_conv2d_backward, setup_context=_deform_conv2d_setup)
