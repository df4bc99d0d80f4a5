"""CUDA kernel of linalg_cross / cross (csrc/native/cuda/Cross.cu, cross_stub) against the CPU
kernel: every numeric dtype, each dim, broadcasting, out=, strided and aliased operands,
empty results and the argument errors. The comparisons need a GPU (marked ``cuda``); the
stub test runs on any CUDA build."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

NUMERIC = [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int64, ea.int32, ea.int16, ea.int8, ea.uint8]
TOL = {ea.float32: 1e-6, ea.float64: 1e-12, ea.float16: 1e-3, ea.bfloat16: 1e-2}


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="a CPU-only build has no CUDA kernels")
def test_cross_stub_has_a_cuda_kernel() -> None:
    assert dict(ea._C._dispatch_stubs()).get("cross_stub") is True


def test_cross_stub_is_registered() -> None:
    assert "cross_stub" in dict(ea._C._dispatch_stubs())


def t(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    if dtype.is_floating_point:
        return ea.tensor(rng.uniform(-3, 3, size=shape), dtype=dtype)
    lo = 0 if dtype == ea.uint8 else -5
    return ea.tensor(rng.integers(lo, 6, size=shape), dtype=dtype)


def to_np(x: Any) -> np.ndarray:
    x = x.cpu()
    if x.dtype in (ea.float16, ea.bfloat16):
        x = x.float()
    return x.numpy()


def same(gpu: Any, cpu: Any) -> None:
    assert gpu.is_cuda and gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    r = TOL.get(cpu.dtype, 0)
    np.testing.assert_allclose(to_np(gpu), to_np(cpu), rtol=r, atol=r)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(
    "sa,sb,dim",
    [
        ((3,), (3,), -1),
        ((5, 3), (5, 3), -1),
        ((3, 7), (3, 7), 0),
        ((4, 3, 6), (4, 3, 6), 1),
        ((2, 1, 3), (1, 5, 3), -1),  # broadcast both ways
        ((1, 3), (6, 3), 1),
    ],
)
def test_linalg_cross_matches_cpu(dtype: Any, sa: tuple[int, ...], sb: tuple[int, ...], dim: int) -> None:
    a, b = t(sa, dtype), t(sb, dtype, seed=1)
    same(ea.linalg.cross(a.cuda(), b.cuda(), dim=dim), ea.linalg.cross(a, b, dim=dim))


@pytest.mark.cuda
def test_cross_default_dim_matches_cpu() -> None:
    a, b = t((3, 4, 3), ea.float32), t((3, 4, 3), ea.float32, seed=1)
    same(ea.cross(a.cuda(), b.cuda()), ea.cross(a, b))  # the first dim of size 3
    same(ea.cross(a.cuda(), b.cuda(), dim=2), ea.cross(a, b, dim=2))


@pytest.mark.cuda
def test_linalg_cross_strided_inputs_on_cuda() -> None:
    a = t((6, 3, 8), ea.float64).cuda()[::2].transpose(0, 2)  # (8, 3, 3), non-contiguous
    b = t((8, 3, 3), ea.float64, seed=1).cuda().transpose(1, 2).contiguous().transpose(1, 2)
    assert not a.is_contiguous() and not b.is_contiguous()
    got = ea.linalg.cross(a, b, dim=1)
    same(got, ea.linalg.cross(a.cpu().contiguous(), b.cpu().contiguous(), dim=1))
    np.testing.assert_allclose(to_np(got), np.cross(to_np(a), to_np(b), axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.cuda
def test_linalg_cross_out_on_cuda() -> None:
    a, b = t((4, 3), ea.float32), t((4, 3), ea.float32, seed=1)
    want = ea.linalg.cross(a, b)
    out = ea.empty(0, device="cuda")
    assert ea.linalg.cross(a.cuda(), b.cuda(), out=out) is out
    same(out, want)
    # out aliasing an input: the result is computed in a temporary first
    a_c = a.cuda()
    ea.linalg.cross(a_c, b.cuda(), out=a_c)
    same(a_c, want)
    # a strided out
    big = ea.zeros(4, 6, device="cuda")
    ea.linalg.cross(a.cuda(), b.cuda(), out=big[:, ::2])
    same(big[:, ::2].contiguous(), want)
    assert not to_np(big[:, 1::2]).any()


@pytest.mark.cuda
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3)])
def test_linalg_cross_empty_on_cuda(shape: tuple[int, ...]) -> None:
    dim = shape.index(3)
    a = ea.zeros(*shape, device="cuda")
    r = ea.linalg.cross(a, a, dim=dim)
    assert r.is_cuda and tuple(r.shape) == shape


@pytest.mark.cuda
def test_linalg_cross_errors_on_cuda() -> None:
    a, b = t((4, 3), ea.float32).cuda(), t((4, 3), ea.float32, seed=1).cuda()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea.linalg.cross(a, b.cpu())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ea.linalg.cross(a, b, out=ea.empty(4, 3))
    with pytest.raises(RuntimeError, match=r"inputs dimension 0 must have length 3\. Got 4 and 4"):
        ea.linalg.cross(a, b, dim=0)
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        ea.linalg.cross(a, b[0])
    with pytest.raises(RuntimeError, match="expected scalar type"):
        ea.linalg.cross(a, b.double())
    with pytest.raises(RuntimeError, match="expected out tensor to have dtype"):
        ea.linalg.cross(a, b, out=ea.empty(4, 3, dtype=ea.float64, device="cuda"))
