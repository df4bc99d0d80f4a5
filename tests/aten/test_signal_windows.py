"""ember.aten.signal.windows (PyTorch's torch.signal.windows) against scipy.signal.windows in
float64: one table row per window, symmetric and periodic, lengths 0..9; dtypes and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.aten.signal import windows
from scipy.signal import windows as sw

# name, ember call (M, sym, dtype), scipy reference (M, sym)
WINDOWS: list[tuple[str, Callable[..., Any], Callable[[int, bool], np.ndarray]]] = [
    ("hann", lambda M, sym, dt: windows.hann(M, sym=sym, dtype=dt), lambda M, sym: sw.hann(M, sym=sym)),
    ("hamming", lambda M, sym, dt: windows.hamming(M, sym=sym, dtype=dt), lambda M, sym: sw.hamming(M, sym=sym)),
    ("blackman", lambda M, sym, dt: windows.blackman(M, sym=sym, dtype=dt), lambda M, sym: sw.blackman(M, sym=sym)),
    ("bartlett", lambda M, sym, dt: windows.bartlett(M, sym=sym, dtype=dt), lambda M, sym: sw.bartlett(M, sym=sym)),
    ("nuttall", lambda M, sym, dt: windows.nuttall(M, sym=sym, dtype=dt), lambda M, sym: sw.nuttall(M, sym=sym)),
    ("cosine", lambda M, sym, dt: windows.cosine(M, sym=sym, dtype=dt), lambda M, sym: sw.cosine(M, sym=sym)),
    (
        "gaussian",
        lambda M, sym, dt: windows.gaussian(M, std=1.7, sym=sym, dtype=dt),
        lambda M, sym: sw.gaussian(M, 1.7, sym=sym),
    ),
    (
        "exponential",
        lambda M, sym, dt: windows.exponential(M, tau=2.5, sym=sym, dtype=dt),
        lambda M, sym: sw.exponential(M, tau=2.5, sym=sym),
    ),
    (
        "general_hamming",
        lambda M, sym, dt: windows.general_hamming(M, alpha=0.61, sym=sym, dtype=dt),
        lambda M, sym: sw.general_hamming(M, 0.61, sym=sym),
    ),
    (
        "general_cosine",
        lambda M, sym, dt: windows.general_cosine(M, a=[0.5, 0.3, 0.2], sym=sym, dtype=dt),
        lambda M, sym: sw.general_cosine(M, [0.5, 0.3, 0.2], sym=sym),
    ),
]


@pytest.mark.parametrize(("name", "fn", "ref"), WINDOWS, ids=[w[0] for w in WINDOWS])
@pytest.mark.parametrize("sym", [True, False])
def test_window_matches_scipy(
    name: str, fn: Callable[..., Any], ref: Callable[[int, bool], np.ndarray], sym: bool
) -> None:
    for M in range(10):
        got = fn(M, sym, ea.float64)
        assert got.dtype == ea.float64 and tuple(got.shape) == (M,)
        np.testing.assert_allclose(got.numpy(), ref(M, sym), rtol=1e-12, atol=1e-14, err_msg=f"{name} M={M}")
        got32 = fn(M, sym, ea.float32)
        assert got32.dtype == ea.float32
        np.testing.assert_allclose(got32.numpy(), ref(M, sym), rtol=1e-5, atol=1e-6)


def test_window_defaults_and_factory_options() -> None:
    assert windows.hann(5).dtype == ea.get_default_dtype()
    w = windows.gaussian(4, requires_grad=True, dtype=ea.float64)
    assert w.requires_grad and w.is_leaf
    assert not windows.hann(4).requires_grad
    np.testing.assert_allclose(windows.exponential(5, center=1.0, sym=False).numpy(), sw.exponential(5, 1.0, sym=False))


@pytest.mark.parametrize("name", [w[0] for w in WINDOWS if not w[0].startswith("general")] + ["general_hamming"])
def test_window_errors(name: str) -> None:
    fn = getattr(windows, name)
    # the cosine-sum windows check in general_cosine, as PyTorch's (its message names that)
    name = "general_cosine" if name in ("hann", "hamming", "blackman", "nuttall", "general_hamming") else name
    with pytest.raises(ValueError, match=f"{name} requires non-negative window length, got M=-1"):
        fn(-1)
    with pytest.raises(ValueError, match=f"{name} expects float32 or float64 dtypes, got: .*int64"):
        fn(3, dtype=ea.int64)
    with pytest.raises(ValueError, match=f"{name} is implemented for strided tensors only"):
        fn(3, layout=ea.sparse_coo)


def test_window_option_errors() -> None:
    with pytest.raises(ValueError, match=r"Tau must be positive, got: 0\.0 instead\."):
        windows.exponential(3, tau=0.0)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        windows.exponential(3, center=1.0)
    with pytest.raises(ValueError, match=r"Standard deviation must be positive, got: -1\.0 instead\."):
        windows.gaussian(3, std=-1.0)
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        windows.general_cosine(3, a=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        windows.general_cosine(3, a=[])
