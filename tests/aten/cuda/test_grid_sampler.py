"""CUDA kernels of grid_sampler_2d and grid_sampler_2d_backward (csrc/native/cuda/GridSampler.cu)
against the CPU kernel on the same inputs: every interpolation and padding mode, both
align_corners values, each floating dtype, both backward outputs (and output_mask), strided
inputs, empty batches and the argument errors. The comparisons need a GPU (marked ``cuda``);
the stub test runs on any CUDA build."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

GRID_SAMPLER_STUBS = ["grid_sampler_2d_stub", "grid_sampler_2d_backward_stub"]

FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]
# forward / backward tolerance (Half and BFloat16 round the float result once; the
# backward adds in another order with atomicAdd)
TOL = {ea.float32: 1e-5, ea.float64: 1e-12, ea.float16: 2e-3, ea.bfloat16: 2e-2}
MODES = [0, 1, 2]  # bilinear, nearest, bicubic
PADDINGS = [0, 1, 2]  # zeros, border, reflection


def stubs() -> dict[str, bool]:
    return dict(ea._C._dispatch_stubs())


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="a CPU-only build has no CUDA kernels")
def test_grid_sampler_stubs_have_cuda_kernels() -> None:
    assert [name for name in GRID_SAMPLER_STUBS if not stubs().get(name, False)] == []


def test_grid_sampler_stub_names_are_registered() -> None:
    assert [name for name in GRID_SAMPLER_STUBS if name not in stubs()] == []


def t(a: Any, dtype: Any = ea.float32) -> Any:
    return ea.tensor(np.asarray(a), dtype=dtype)


def to_np(x: Any) -> np.ndarray:
    x = x.cpu()
    if x.dtype in (ea.float16, ea.bfloat16):
        x = x.float()
    return x.numpy()


def same(gpu: Any, cpu: Any, dtype: Any, tol: float | None = None) -> None:
    assert gpu.is_cuda and gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    r = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(to_np(gpu), to_np(cpu), rtol=r, atol=r)


def inputs(n: int = 2, c: int = 3, h: int = 5, w: int = 7, ho: int = 4, wo: int = 6, seed: int = 0) -> tuple:
    """input (n, c, h, w) and grid (n, ho, wo, 2) with points inside, on the border and
    outside [-1, 1] (the padding modes differ there)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, c, h, w))
    g = rng.uniform(-1.4, 1.4, size=(n, ho, wo, 2))
    if g.size:
        g.reshape(-1)[:4] = [-1.0, 1.0, 1.0, -1.0]  # the corners exactly
    return x, g


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_matches_cpu(dtype: Any, mode: int, padding: int, align_corners: bool) -> None:
    x_np, g_np = inputs()
    x, g = t(x_np, dtype), t(g_np, dtype)
    cpu = ea.grid_sampler_2d(x, g, mode, padding, align_corners)
    gpu = ea.grid_sampler_2d(x.cuda(), g.cuda(), mode, padding, align_corners)
    same(gpu, cpu, dtype)

    go = t(np.random.default_rng(5).uniform(-1, 1, size=tuple(cpu.shape)), dtype)
    mask = [True, True]
    gi_c, gg_c = ea.grid_sampler_2d_backward(go, x, g, mode, padding, align_corners, mask)
    gi_g, gg_g = ea.grid_sampler_2d_backward(go.cuda(), x.cuda(), g.cuda(), mode, padding, align_corners, mask)
    same(gi_g, gi_c, dtype, tol=TOL[dtype] * 10)
    same(gg_g, gg_c, dtype, tol=TOL[dtype] * 10)
    if mode == 1:  # nearest: the grid gets no gradient
        assert not to_np(gg_g).any()


@pytest.mark.cuda
@pytest.mark.parametrize("mask", [[True, False], [False, True], [False, False]])
def test_grid_sampler_2d_backward_output_mask_on_cuda(mask: list[bool]) -> None:
    x_np, g_np = inputs(seed=1)
    x, g = t(x_np, ea.float64), t(g_np, ea.float64)
    go = t(np.random.default_rng(2).uniform(-1, 1, size=(2, 3, 4, 6)), ea.float64)
    cpu = ea.grid_sampler_2d_backward(go, x, g, 0, 2, False, mask)
    gpu = ea.grid_sampler_2d_backward(go.cuda(), x.cuda(), g.cuda(), 0, 2, False, mask)
    for want, c_, g_ in zip(mask, cpu, gpu, strict=True):
        assert (g_ is not None) == want and (c_ is not None) == want
        if want:
            same(g_, c_, ea.float64)


@pytest.mark.cuda
@pytest.mark.parametrize("mode", MODES)
def test_grid_sampler_2d_strided_inputs_on_cuda(mode: int) -> None:
    # input with its H and W swapped by a transpose, grid sliced along W: neither contiguous
    x_np, g_np = inputs(n=2, c=4, h=6, w=5, ho=3, wo=10, seed=3)
    x = t(x_np).cuda().transpose(2, 3)
    g = t(g_np).cuda()[:, :, ::2]
    assert not x.is_contiguous() and not g.is_contiguous()
    gpu = ea.grid_sampler_2d(x, g, mode, 1, True)
    cpu = ea.grid_sampler_2d(x.cpu().contiguous(), g.cpu().contiguous(), mode, 1, True)
    same(gpu, cpu, ea.float32)
    go = t(np.random.default_rng(4).uniform(-1, 1, size=tuple(cpu.shape))).cuda().transpose(2, 3).contiguous()
    go = go.transpose(2, 3)  # the right shape, transposed strides
    assert not go.is_contiguous()
    b_gpu = ea.grid_sampler_2d_backward(go, x, g, mode, 1, True, [True, True])
    b_cpu = ea.grid_sampler_2d_backward(
        go.cpu().contiguous(), x.cpu().contiguous(), g.cpu().contiguous(), mode, 1, True, [True, True]
    )
    for g_, c_ in zip(b_gpu, b_cpu, strict=True):
        same(g_, c_, ea.float32, tol=1e-4)


@pytest.mark.cuda
def test_grid_sampler_2d_non_finite_grid_on_cuda() -> None:
    x_np, _ = inputs(n=1, c=2)
    g = t([[[[np.nan, 0.0], [np.inf, 0.5], [-np.inf, -np.inf], [1e30, 0.0]]]])
    for mode in MODES:
        for padding in PADDINGS:
            cpu = ea.grid_sampler_2d(t(x_np), g, mode, padding, False)
            gpu = ea.grid_sampler_2d(t(x_np).cuda(), g.cuda(), mode, padding, False)
            np.testing.assert_array_equal(np.isnan(to_np(gpu)), np.isnan(to_np(cpu)))
            np.testing.assert_allclose(to_np(gpu), to_np(cpu), rtol=1e-6, atol=1e-6)


@pytest.mark.cuda
@pytest.mark.parametrize("shape", [(0, 3, 5, 7, 4, 6), (2, 0, 5, 7, 4, 6), (2, 3, 5, 7, 0, 6)])
def test_grid_sampler_2d_empty_on_cuda(shape: tuple[int, ...]) -> None:
    n, c, h, w, ho, wo = shape
    x_np, g_np = inputs(n, c, h, w, ho, wo)
    x, g = t(x_np).cuda(), t(g_np).cuda()
    out = ea.grid_sampler_2d(x, g, 0, 0, False)
    assert out.is_cuda and tuple(out.shape) == (n, c, ho, wo)
    go = ea.zeros(n, c, ho, wo, device="cuda")
    gi, gg = ea.grid_sampler_2d_backward(go, x, g, 0, 0, False, [True, True])
    assert tuple(gi.shape) == (n, c, h, w) and tuple(gg.shape) == (n, ho, wo, 2)
    assert not to_np(gi).any() and not to_np(gg).any()


@pytest.mark.cuda
def test_grid_sampler_2d_errors_on_cuda() -> None:
    x_np, g_np = inputs()
    x, g = t(x_np).cuda(), t(g_np).cuda()
    with pytest.raises(RuntimeError, match=r"expected input and grid to be on same device, but input is on cuda:0"):
        ea.grid_sampler_2d(x, g.cpu(), 0, 0, False)
    with pytest.raises(RuntimeError, match="expected input and grid to have same dtype"):
        ea.grid_sampler_2d(x, g.double(), 0, 0, False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        ea.grid_sampler_2d(x[:1], g, 0, 0, False)
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        ea.grid_sampler_2d(x, g[..., :1], 0, 0, False)
    with pytest.raises(RuntimeError, match="expected input to have non-empty spatial dimensions"):
        ea.grid_sampler_2d(x[:, :, :0], g, 0, 0, False)
    with pytest.raises(RuntimeError, match="\"grid_sampler_2d_cuda\" not implemented for 'Long'"):
        ea.grid_sampler_2d(x.long(), g.long(), 0, 0, False)
    with pytest.raises(RuntimeError, match="invalid padding_mode 3"):
        ea.grid_sampler_2d(x, g, 0, 3, False)
    with pytest.raises(RuntimeError, match="invalid interpolation_mode 3"):
        ea.grid_sampler_2d(x, g, 3, 0, False)
    go = ea.zeros(2, 3, 4, 6)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea.grid_sampler_2d_backward(go, x, g, 0, 0, False, [True, True])


def test_grid_sampler_2d_cpu_messages_after_the_device_check() -> None:
    """Runs anywhere: a CPU pair passes the device check, and the dtype message names the
    CPU kernel."""
    x_np, g_np = inputs()
    with pytest.raises(RuntimeError, match="expected input and grid to have same dtype"):
        ea.grid_sampler_2d(t(x_np), t(g_np, ea.float64), 0, 0, False)
    with pytest.raises(RuntimeError, match="\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Long'"):
        ea.grid_sampler_2d(t(x_np, ea.int64), t(g_np, ea.int64), 0, 0, False)
