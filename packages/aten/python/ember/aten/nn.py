"""ember.aten.nn: neural-network operators (PyTorch's ``torch._C._nn``), used by ember.nn.functional.

Three sources, each name from exactly one (tests/aten/test_namespaces.py checks it):
- the operators generated from native_functions.yaml with ``python_module: nn``
  (``max_pool2d_with_indices``, ``avg_pool2d``, ``im2col``, the losses, ...);
- the convolutions, 1-d pools and pixel shuffles, which ``torch.nn.functional`` takes from
  ``torch`` itself (ember.aten's own namespace);
- the front ends PyTorch writes in ``torch.nn.functional`` by hand: max pooling with
  ``return_indices``, ``unfold`` / ``fold``, the power-average pools (_nn_functional.py), and
  ``interpolate`` / ``grid_sample`` / ``affine_grid`` (_nn_sampling.py).
"""

from __future__ import annotations

from ._generated.functions import (
    adaptive_avg_pool1d,
    avg_pool1d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    pixel_shuffle,
    pixel_unshuffle,
)
from ._generated.nn import *  # noqa: F403
from ._generated.nn import __all__ as _generated_all
from ._nn_functional import fold, lp_pool1d, lp_pool2d, max_pool1d, max_pool2d, max_pool3d, unfold
from ._nn_sampling import affine_grid, grid_sample, interpolate

__all__ = [
    "adaptive_avg_pool1d",
    "affine_grid",
    "avg_pool1d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "grid_sample",
    "interpolate",
    "lp_pool1d",
    "lp_pool2d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
]
__all__ += _generated_all
