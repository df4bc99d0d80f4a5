"""torch.nn.functional's resampling front ends, in ``ember.aten.nn``: ``interpolate`` (nearest
1-3d, bilinear) over the ``upsample_*`` operators, ``pixel_shuffle`` / ``pixel_unshuffle``
and ``scaled_dot_product_attention`` (nn.functional takes these from torch / torch._C._nn).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember.aten._generated import _ops as ops

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(
    input: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Any:
    """interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None, antialias=False)

    Resizes the spatial dims of an (N, C, d1, ..., dK) input to ``size``, or to
    floor(d_i * scale_factor_i) (the scale then also sets the source positions, as
    PyTorch's). Modes: 'nearest', 'nearest-exact' and 'area' (K = 1, 2, 3); 'linear',
    'bilinear' / 'bicubic', 'trilinear' (K = 1, 2, 3, with ``align_corners``).

    >>> ember.aten.nn.interpolate(ember.aten.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
                "trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    scale_factors: list[float] | None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {spatial} and output size of {size}. Please provide input tensor in (N, C, d1, "
                    "d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
        scale_factors = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide input "
                    "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
        output_size = [math.floor(float(spatial[i]) * scale_factors[i]) for i in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and size is None:
        recompute_scale_factor = True  # adaptive pooling takes only an output size
    if recompute_scale_factor:
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input"
        )
    scales: list[float | None] = list(scale_factors) if scale_factors is not None else [None] * max(dim, 0)
    nd = input.dim()
    if nd in (3, 4, 5):
        if mode == "nearest":
            return getattr(ops, f"_call_upsample_nearest{dim}d")(input, output_size, *scales)
        if mode == "nearest-exact":
            return getattr(ops, f"_call__upsample_nearest_exact{dim}d")(input, output_size, *scales)
        if mode == "area":
            return _adaptive_avg_pool(dim)(input, output_size)
        linear = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
        if mode in linear:
            if nd != linear[mode]:
                raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {linear[mode]}D input")
            if antialias:
                raise NotImplementedError("interpolate: antialias=True is not implemented in ember")
            name = {
                "linear": "upsample_linear1d",
                "bilinear": "upsample_bilinear2d",
                "trilinear": "upsample_trilinear3d",
                "bicubic": "upsample_bicubic2d",
            }
            return getattr(ops, f"_call_{name[mode]}")(input, output_size, align_corners, *scales)
        if mode == "lanczos":
            raise NotImplementedError(f"interpolate: mode '{mode}' is not implemented in ember")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: {_MODES} (got {mode})"
    )


def _adaptive_avg_pool(dim: int) -> Any:
    # ember.aten's namespace, which ember/aten/__init__.py fills after importing this module
    import ember.aten as ea

    return {1: ea.adaptive_avg_pool1d, 2: ea.nn.adaptive_avg_pool2d, 3: ea.nn.adaptive_avg_pool3d}[dim]


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify "
    "align_corners=True if the old behavior is desired. See the documentation of grid_sample for details."
)


def grid_sample(
    input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: bool | None = None
) -> Any:
    """grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)

    Samples an (N, C, H, W) input at the (N, H_out, W_out, 2) grid positions (x, y) in [-1, 1]
    (-1: the left / top edge or, with ``align_corners``, the centre of the first pixel).
    Modes 'bilinear' / 'nearest' / 'bicubic'; outside positions read 0 ('zeros'), the edge
    ('border') or the reflection ('reflection'). Non-finite grid values follow PyTorch's CPU
    kernel on every device (GridSamplerPoint.h).

    >>> x = ember.aten.arange(4.0).reshape(1, 1, 2, 2)
    >>> ember.aten.nn.grid_sample(x, ember.aten.zeros(1, 1, 1, 2), align_corners=False)
    tensor([[[[1.5000]]]])
    """
    if mode not in _GRID_MODES:
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _GRID_PADDING:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
            f"'{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    return ops._call_grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)


def affine_grid(theta: Any, size: Any, align_corners: bool | None = None) -> Any:
    """affine_grid(theta, size, align_corners=None)

    The (N, H, W, 2) grid (or (N, D, H, W, 3)) that grid_sample needs to apply the affine
    matrices theta (N, 2, 3) (or (N, 3, 4)) to an output of ``size`` (N, C, H, W[, D]).

    >>> ember.aten.nn.affine_grid(ember.aten.tensor([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 1, 2), False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return ops._call_affine_grid_generator(theta, size, align_corners)
