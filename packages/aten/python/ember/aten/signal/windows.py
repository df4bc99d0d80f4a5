"""Window functions, as PyTorch's ``torch.signal.windows`` (SciPy's ``scipy.signal.windows``
definitions): composites of linspace / cos / exp, as PyTorch's are.

Every window takes the length ``M`` and keyword-only options; ``sym=True`` gives a
symmetric window (filter design), ``sym=False`` a periodic one (spectral analysis: the
symmetric window of length M + 1 without its last sample). ``dtype`` (float32 / float64,
the default dtype when None), ``layout`` (strided only), ``device`` and ``requires_grad``
are the factories' options.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import ember.aten as _ea

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "nuttall",
]


def _check(name: str, M: int, dtype: Any, layout: Any) -> None:
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _ea.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_ea.float32, _ea.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype: Any) -> Any:
    return _ea.get_default_dtype() if dtype is None else dtype


def _factory(dtype: Any, device: Any, requires_grad: bool) -> dict[str, Any]:
    return {"dtype": dtype, "device": device, "requires_grad": requires_grad}


def _done(t: Any, requires_grad: bool) -> Any:
    return t.requires_grad_(True) if requires_grad else t


def _linspace(start: float, end: float, M: int, dtype: Any, device: Any) -> Any:
    return _ea.linspace(start, end, M, dtype=dtype, device=device)


def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """exponential(M, *, center=None, tau=1.0, sym=True, ...) -> exp(-|n - center| / tau)"""
    dtype = _dtype(dtype)
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _ea.empty((0,), **_factory(dtype, device, requires_grad))
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _linspace(-center / tau, (-center + (M - 1)) / tau, M, dtype, device)
    return _done(_ea.exp(-_ea.abs(k)), requires_grad)


def cosine(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """cosine(M, *, sym=True, ...) -> sin(pi (n + 1/2) / M) (the sine window)"""
    dtype = _dtype(dtype)
    _check("cosine", M, dtype, layout)
    if M == 0:
        return _ea.empty((0,), **_factory(dtype, device, requires_grad))
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device)
    return _done(_ea.sin(k), requires_grad)


def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """gaussian(M, *, std=1.0, sym=True, ...) -> exp(-(n - (M - 1)/2)^2 / (2 std^2))"""
    dtype = _dtype(dtype)
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _ea.empty((0,), **_factory(dtype, device, requires_grad))
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device)
    return _done(_ea.exp(-(k * k)), requires_grad)


def bartlett(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """bartlett(M, *, sym=True, ...) -> the triangular window 1 - |2n / (M - 1) - 1|"""
    dtype = _dtype(dtype)
    _check("bartlett", M, dtype, layout)
    if M == 0:
        return _ea.empty((0,), **_factory(dtype, device, requires_grad))
    if M == 1:
        return _ea.ones((1,), **_factory(dtype, device, requires_grad))
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(-1.0, -1.0 + (M - 1) * constant, M, dtype, device)
    return _done(1 - _ea.abs(k), requires_grad)


def general_cosine(
    M: int,
    *,
    a: Iterable[float],
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """general_cosine(M, *, a, sym=True, ...) -> sum_i (-1)^i a_i cos(2 pi i n / (M - 1))"""
    dtype = _dtype(dtype)
    _check("general_cosine", M, dtype, layout)
    if M == 0:
        return _ea.empty((0,), **_factory(dtype, device, requires_grad))
    if M == 1:
        return _ea.ones((1,), **_factory(dtype, device, requires_grad))
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    coefficients = list(a)
    if not coefficients:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0.0, (M - 1) * constant, M, dtype, device)
    a_i = _ea.tensor([(-1) ** i * w for i, w in enumerate(coefficients)], dtype=dtype, device=device)
    i = _ea.arange(len(coefficients), dtype=dtype, device=device)
    return _done((a_i.unsqueeze(-1) * _ea.cos(i.unsqueeze(-1) * k)).sum(0), requires_grad)


def general_hamming(
    M: int,
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """general_hamming(M, *, alpha=0.54, sym=True, ...) -> alpha - (1 - alpha) cos(2 pi n / (M - 1))"""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hamming(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """hamming(M, *, sym=True, ...) -> general_hamming with alpha = 0.54"""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """hann(M, *, sym=True, ...) -> general_hamming with alpha = 0.5"""
    return general_hamming(
        M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def blackman(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """blackman(M, *, sym=True, ...) -> general_cosine with a = [0.42, 0.5, 0.08]"""
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def nuttall(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = _ea.strided,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """nuttall(M, *, sym=True, ...) -> general_cosine with Nuttall's four coefficients"""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )
