"""Backend settings, as ``torch.backends``.

``ember.aten.backends.cuda.matmul`` holds the cuBLAS flags and
``ember.aten.backends.cudnn`` the convolution flags. They are process-wide settings
kept in C++ (the kernels read them there), with PyTorch's defaults::

    >>> import ember.aten.backends
    >>> ember.aten.backends.cuda.matmul.allow_tf32
    False
    >>> ember.aten.backends.cudnn.allow_tf32
    True

``ember.aten.backends.mps`` answers the Apple-GPU probes (no MPS backend in ember).
"""

from __future__ import annotations

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
