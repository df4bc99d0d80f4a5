"""The CUDA kernels of grid_sampler_2d (+ backward) and linalg_cross (cuda/GridSampler.cu,
cuda/Cross.cu) run on the host.

``ember_aten_testing.cuda_grid_sampler_emulation(True)`` / ``cuda_cross_emulation(True)`` put a host loop
over the kernels' own per-location / per-position code in the CPU slots of the stubs (cross:
with the same 32-bit split and offset calculator as the launch). These tests compare that
code with the CPU kernel on every mode, dtype and layout, on any CUDA build, GPU or not.
(Not checked here: the launch, atomicAdd ordering, device math -- the GPU tests in
test_grid_sampler.py / test_cross.py run the same cases.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

pytestmark = requires_emulation


@contextmanager
def emulated(toggle: Callable[[bool], bool]) -> Iterator[None]:
    assert toggle(True) is False
    try:
        assert toggle(True) is True  # already on
        yield
    finally:
        toggle(False)


def both(fn: Callable[[], Any], toggle: Callable[[bool], bool]) -> tuple[Any, Any]:
    """fn() by the CPU kernel, then by the emulated CUDA kernel."""
    cpu = fn()
    with emulated(toggle):
        emu = fn()
    return cpu, emu


def close(emu: Any, cpu: Any, tol: float) -> None:
    if cpu is None:
        assert emu is None
        return
    assert emu.dtype == cpu.dtype and tuple(emu.shape) == tuple(cpu.shape)
    half = (ea.float16, ea.bfloat16)
    e = emu.float().numpy() if emu.dtype in half else emu.numpy()
    c = cpu.float().numpy() if cpu.dtype in half else cpu.numpy()
    np.testing.assert_allclose(e, c, rtol=tol, atol=tol)


# ---- grid_sampler_2d ----------------------------------------------------------------------

GS_TOL = {ea.float32: 1e-5, ea.float64: 1e-12, ea.float16: 1e-3, ea.bfloat16: 1e-2}


def gs_inputs(dtype: Any, n: int = 2, c: int = 3, h: int = 5, w: int = 7, ho: int = 4, wo: int = 6) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(n, c, h, w))
    g = rng.uniform(-1.4, 1.4, size=(n, ho, wo, 2))
    flat = g.reshape(-1)
    flat[:8] = [-1.0, 1.0, 1.0, -1.0, 0.0, 0.0, np.nan, 0.5]  # corners, the centre, a NaN
    if flat.size > 10:
        flat[8:11] = [np.inf, -np.inf, 1e30]
    return ea.tensor(x, dtype=dtype), ea.tensor(g, dtype=dtype)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_cuda_code_matches_cpu(dtype: Any, mode: int, padding: int, align_corners: bool) -> None:
    x, g = gs_inputs(dtype)
    go = ea.tensor(np.random.default_rng(1).uniform(-1, 1, size=(2, 3, 4, 6)), dtype=dtype)
    toggle = ember_aten_testing.cuda_grid_sampler_emulation
    tol = GS_TOL[dtype]
    cpu, emu = both(lambda: ea.grid_sampler_2d(x, g, mode, padding, align_corners), toggle)
    close(emu, cpu, tol)
    for mask in ([True, True], [True, False], [False, True]):
        cpu_b, emu_b = both(
            lambda mask=mask: ea.grid_sampler_2d_backward(go, x, g, mode, padding, align_corners, mask), toggle
        )
        for e, c in zip(emu_b, cpu_b, strict=True):
            close(e, c, tol * 10)


@pytest.mark.parametrize("shape", [(0, 3, 5, 7, 4, 6), (2, 0, 5, 7, 4, 6), (2, 3, 5, 7, 0, 6), (1, 1, 1, 1, 3, 3)])
def test_grid_sampler_2d_cuda_code_edge_shapes(shape: tuple[int, ...]) -> None:
    n, c, h, w, ho, wo = shape
    rng = np.random.default_rng(2)
    x = ea.tensor(rng.uniform(-2, 2, size=(n, c, h, w)))
    g = ea.tensor(rng.uniform(-1.2, 1.2, size=(n, ho, wo, 2)))
    go = ea.ones(n, c, ho, wo)
    toggle = ember_aten_testing.cuda_grid_sampler_emulation
    for padding in (0, 1, 2):  # a 1x1 input: reflection over a single pixel
        cpu, emu = both(lambda padding=padding: ea.grid_sampler_2d(x, g, 0, padding, False), toggle)
        close(emu, cpu, 1e-6)
        cpu_b, emu_b = both(
            lambda padding=padding: ea.grid_sampler_2d_backward(go, x, g, 0, padding, True, [True, True]), toggle
        )
        for e, c_ in zip(emu_b, cpu_b, strict=True):
            close(e, c_, 1e-5)


def test_grid_sampler_2d_cuda_code_strided_inputs() -> None:
    x, g = gs_inputs(ea.float64, n=2, c=4, h=6, w=5, ho=3, wo=10)
    xt, gs = x.transpose(2, 3), g[:, :, ::2]
    assert not xt.is_contiguous() and not gs.is_contiguous()
    cpu, emu = both(lambda: ea.grid_sampler_2d(xt, gs, 0, 2, True), ember_aten_testing.cuda_grid_sampler_emulation)
    close(emu, cpu, 1e-12)


# ---- linalg_cross ---------------------------------------------------------------------------

NUMERIC = [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int64, ea.int32, ea.int16, ea.int8, ea.uint8]
CROSS_TOL = {ea.float32: 1e-6, ea.float64: 1e-14, ea.float16: 1e-3, ea.bfloat16: 1e-2}


def cross_t(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        return ea.tensor(rng.uniform(-3, 3, size=shape), dtype=dtype)
    return ea.tensor(rng.integers(0 if dtype == ea.uint8 else -5, 6, size=shape), dtype=dtype)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(
    "sa,sb,dim",
    [
        ((3,), (3,), -1),
        ((5, 3), (5, 3), -1),
        ((3, 7), (3, 7), 0),
        ((4, 3, 6), (4, 3, 6), 1),
        ((2, 1, 3), (1, 5, 3), -1),
    ],
)
def test_cross_cuda_code_matches_cpu(dtype: Any, sa: tuple[int, ...], sb: tuple[int, ...], dim: int) -> None:
    a, b = cross_t(sa, dtype), cross_t(sb, dtype, seed=1)
    cpu, emu = both(lambda: ea.linalg.cross(a, b, dim=dim), ember_aten_testing.cuda_cross_emulation)
    close(emu, cpu, CROSS_TOL.get(dtype, 0.0))  # integers: exact


def test_cross_cuda_code_strided_out_and_alias() -> None:
    a = cross_t((6, 3, 8), ea.float64)[::2].transpose(0, 2)
    b = cross_t((8, 3, 3), ea.float64, seed=1).transpose(1, 2).contiguous().transpose(1, 2)
    assert not a.is_contiguous() and not b.is_contiguous()
    toggle = ember_aten_testing.cuda_cross_emulation
    cpu, emu = both(lambda: ea.linalg.cross(a, b, dim=1), toggle)
    close(emu, cpu, 1e-14)
    np.testing.assert_allclose(emu.numpy(), np.cross(a.numpy(), b.numpy(), axis=1), rtol=1e-12, atol=1e-12)

    def into_strided_out() -> Any:
        big = ea.zeros(8, 6, 3, dtype=ea.float64)
        ea.linalg.cross(a, b, dim=1, out=big[:, ::2])
        return big

    cpu, emu = both(into_strided_out, toggle)
    close(emu, cpu, 1e-14)

    def aliased() -> Any:
        x = a.contiguous()
        ea.linalg.cross(x, b, dim=1, out=x)
        return x

    cpu, emu = both(aliased, toggle)
    close(emu, cpu, 1e-14)
