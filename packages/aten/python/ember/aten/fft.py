"""ember.aten.fft: Fourier transforms (PyTorch's ``torch.fft``).

Generated from native_functions.yaml (``python_module: fft``) into ``_generated/fft.py``;
ember has no FFT operators yet (issue 18), so the namespace is empty.
"""

from __future__ import annotations

from ._generated.fft import *  # noqa: F403
