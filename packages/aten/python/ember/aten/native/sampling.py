"""Composite kernels of padding and pixel shuffling.

``pad(input, pad, mode, value)`` dispatches as PyTorch's ``_pad_enum``: ``constant`` to
``constant_pad_nd``, the other modes by padding length and input rank to
``reflection_pad{1,2,3}d`` / ``replication_pad{1,2,3}d`` (C++: csrc/native/Resample.cpp) or
``_pad_circular`` (per padded dim: crop by the negative amounts, then an ``index_select``
wrapping around what is left, out[o] = core[(o - max(left, 0)) mod size(core)], as PyTorch's).
``pixel_shuffle`` / ``pixel_unshuffle`` are a reshape, a permute and a reshape (one copy),
so their gradients come from those views.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
from ember.aten._generated import _ops as ops

_UNSUPPORTED_PAD = (
    "Padding size {n} is not supported for {d}D input tensor.\n"
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def pad(self: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Any:
    pad = tuple(pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    dim = self.dim()
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > dim * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {dim}"
        )
    if mode == "constant":
        return ops._call_constant_pad_nd(self, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n in (1, 2, 3) and dim in (n + 1, n + 2):
        if mode == "circular":
            return ops._call__pad_circular(self, pad)
        kind = "reflection" if mode == "reflect" else "replication"
        return getattr(ops, f"_call_{kind}_pad{n}d")(self, pad)
    raise NotImplementedError(_UNSUPPORTED_PAD.format(n=len(pad), d=dim))


def pad_circular(self: Any, pad: Any) -> Any:
    pad = tuple(pad)
    n = len(pad) // 2
    x = self
    for i in range(n):
        d = self.dim() - 1 - i  # pad holds the last dim first
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.size(d)
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out = size + lo + hi
        if out < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # negative amounts crop first; the positive ones then wrap around what is left
        x = x.narrow(d, max(-lo, 0), size - max(-lo, 0) - max(-hi, 0))
        core = x.size(d)
        if core and (lo > 0 or hi > 0):
            index = [(o - max(lo, 0)) % core for o in range(out)]
            x = x.index_select(d, ea.tensor(index, dtype=ea.int64, device=self.device))
    return x


def _check_shuffle(name: str, what: str, self: Any, factor: int) -> None:
    if self.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with {self.dim()} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(self: Any, upscale_factor: int) -> Any:
    r = upscale_factor
    _check_shuffle("pixel_shuffle", "upscale_factor", self, r)
    *batch, c, h, w = self.shape
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    nb = len(batch)
    oc = c // (r * r)
    x = self.reshape((*batch, oc, r, r, h, w))
    x = x.permute((*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return x.reshape((*batch, oc, h * r, w * r))


def pixel_unshuffle(self: Any, downscale_factor: int) -> Any:
    r = downscale_factor
    _check_shuffle("pixel_unshuffle", "downscale_factor", self, r)
    *batch, c, h, w = self.shape
    if h % r != 0:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not "
            f"divisible by {r}"
        )
    if w % r != 0:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not "
            f"divisible by {r}"
        )
    nb = len(batch)
    x = self.reshape((*batch, c, h // r, r, w // r, r))
    x = x.permute((*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return x.reshape((*batch, c * r * r, h // r, w // r))


def grid_sampler(input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    if input.dim() == 5:
        raise NotImplementedError("grid_sampler: 5-D input (grid_sampler_3d) is not implemented in ember")
    return ops._call_grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


def _linspace_from_neg_one(theta: Any, steps: int, align_corners: bool) -> Any:
    if steps <= 1:
        return ea.zeros((1,), dtype=theta.dtype)
    r = ea.linspace(-1.0, 1.0, steps, dtype=theta.dtype)
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid_generator(theta: Any, size: Any, align_corners: bool) -> Any:
    """The sampling grid of affine transforms: base grid (x, y[, z], 1) at each output position
    (coordinates in [-1, 1], pixel centres unless align_corners) times theta^T, per batch."""

    size = tuple(size)
    spatial = size[2:]
    n = len(spatial)
    axes = [_linspace_from_neg_one(theta, s, align_corners) for s in reversed(spatial)]  # x first
    mesh = ea.meshgrid(*reversed(axes), indexing="ij")  # (d, h, w) order
    base = ea.stack([*reversed(mesh), ea.ones(mesh[0].shape, dtype=theta.dtype)], -1)
    count = 1
    for s in spatial:
        count *= s
    base = base.reshape((1, count, n + 1)).expand((size[0], count, n + 1))
    grid = base.bmm(theta.transpose(1, 2))
    return grid.reshape((size[0], *spatial, n))
