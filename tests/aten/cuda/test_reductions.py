"""CUDA reductions, scans and sorting against the CPU kernels (and NumPy).

Every GPU test runs the op on a CPU tensor and on its CUDA copy and compares: the
CPU kernels are the reference (their own tests check them against NumPy). The
layouts of the CUDA reduction framework (inner, columns, split) are reached through
the shapes. Without a GPU these tests skip; test_cuda_kernels_are_registered runs on
any CUDA build.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

requires_cuda = pytest.mark.cuda  # deselected without a GPU (tests/conftest.py); gpu_check.sh selects -m cuda
nan, inf = math.nan, math.inf

FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]
INTS = [ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64]

# (shape, dims): inner (reduced dim contiguous), columns (kept dim contiguous, reduced
# dims outer), split (few outputs, long reductions), several dims, every dim
LAYOUTS = [
    ((7, 33), (1,)),
    ((300, 5), (0,)),
    ((3, 200_000), (1,)),
    ((200_000, 3), (0,)),
    ((1_000_003,), (0,)),
    ((4, 5, 6), (0, 2)),
    ((2, 3, 4, 5), (1, 3)),
    ((6, 7), ()),
]


def np_of(x: Any) -> Any:
    x = x.cpu()
    return x.float().numpy() if x.dtype in (ea.bfloat16,) else x.numpy()


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    if dtype == ea.bool:
        return ea.from_numpy(rng.random(shape) < 0.5)
    if dtype in INTS:
        lo = 0 if dtype == ea.uint8 else -5
        return ea.from_numpy(rng.integers(lo, 6, shape).astype(np.int64)).to(dtype)
    return ea.from_numpy(rng.standard_normal(shape)).to(dtype)


def tol(dtype: Any) -> dict[str, float]:
    if dtype == ea.float16:
        return {"rtol": 2e-3, "atol": 2e-3}
    if dtype == ea.bfloat16:
        return {"rtol": 1.6e-2, "atol": 1e-2}
    if dtype == ea.float32:
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 1e-10, "atol": 1e-10}


def same(cpu: Any, cuda: Any, exact: bool = False, **kw: float) -> None:
    if isinstance(cpu, tuple):
        assert isinstance(cuda, tuple) and len(cpu) == len(cuda)
        for a, b in zip(cpu, cuda, strict=True):
            same(a, b, exact, **kw)
        return
    assert cuda.is_cuda
    assert cuda.dtype == cpu.dtype and tuple(cuda.shape) == tuple(cpu.shape)
    a, b = np_of(cpu), np_of(cuda)
    if exact or not np.issubdtype(a.dtype, np.floating):
        np.testing.assert_array_equal(b, a)
    else:
        np.testing.assert_allclose(b, a, equal_nan=True, **(kw or tol(cpu.dtype)))


def compare(fn: Callable[[Any], Any], x: Any, exact: bool = False, **kw: float) -> None:
    same(fn(x), fn(x.cuda()), exact, **kw)


# ---- registration (any CUDA build, no GPU needed) -------------------------------------

COVERED_STUBS = [
    "sum_stub",
    "nansum_stub",
    "amax_stub",
    "amin_stub",
    "argmax_stub",
    "argmin_stub",
    "var_stub",
    "norm_stub",
    "logsumexp_stub",
    "norm_other_stub",
    "prod_stub",
    "all_stub",
    "any_stub",
    "count_nonzero_stub",
    "nanmean_divide_stub",
    "cumsum_stub",
    "cumprod_stub",
    "logcumsumexp_stub",
    "cummax_stub",
    "cummin_stub",
    "sort_stub",
    "pick_sorted_stub",
]


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="a CPU-only build has no CUDA kernels")
def test_cuda_kernels_are_registered() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    missing = [s for s in COVERED_STUBS if not stubs.get(s)]
    assert not missing, f"stubs without a CUDA kernel: {missing}"


# ---- sum, mean, nansum, prod ------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize(("shape", "dims"), LAYOUTS)
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int32, ea.int64, ea.bool])
def test_sum_layouts(shape: tuple[int, ...], dims: tuple[int, ...], dtype: Any) -> None:
    x = sample(shape, dtype)
    kw = tol(dtype) if dtype in FLOATS else {}
    if dtype in (ea.float16, ea.bfloat16) and math.prod(shape) > 1000:
        kw = {"rtol": 2e-2, "atol": 0.5}  # the CPU sums in another order; both round once to half
    compare(lambda t: t.sum(dim=list(dims)), x, **kw)
    compare(lambda t: t.sum(dim=list(dims), keepdim=True), x, **kw)


@requires_cuda
@pytest.mark.parametrize(("shape", "dims"), LAYOUTS)
def test_mean_nansum_nanmean_prod(shape: tuple[int, ...], dims: tuple[int, ...]) -> None:
    x = sample(shape, ea.float64)
    d = list(dims)
    compare(lambda t: t.mean(dim=d), x)
    y = x.clone()
    y.view(-1)[::7] = nan
    compare(lambda t: t.nansum(dim=d), y)
    compare(lambda t: t.nanmean(dim=d), y)
    if len(dims) == 1:
        small = ea.from_numpy(np.random.default_rng(1).uniform(0.9, 1.1, shape))
        compare(lambda t: t.prod(dims[0]), small, rtol=1e-9, atol=0)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS + INTS + [ea.bool])
def test_sum_prod_dtypes(dtype: Any) -> None:
    x = sample((5, 37), dtype)
    compare(lambda t: t.sum(), x)
    compare(lambda t: t.sum(0), x)
    compare(lambda t: t.sum(1, dtype=ea.float64), x)
    compare(lambda t: t.prod(1), x, rtol=1e-2, atol=1e-2)
    compare(lambda t: t.prod(), sample((6,), dtype), rtol=1e-2, atol=1e-2)


@requires_cuda
def test_integer_sum_wraps_like_int64() -> None:
    x = ea.tensor([2**62, 2**62, 2**62, 5], dtype=ea.int64)
    compare(lambda t: t.sum(), x)
    compare(lambda t: t.prod(), ea.tensor([2**40, 2**40, 3], dtype=ea.int64))


@requires_cuda
def test_half_sums_accumulate_in_float() -> None:
    x = ea.full((10_000,), 1.0, dtype=ea.float16).cuda()
    assert x.sum().item() == 10_000.0
    assert ea.full((4096,), 1.0, dtype=ea.bfloat16).cuda().sum().item() == 4096.0


@requires_cuda
def test_long_float_sum_is_accurate() -> None:
    a = np.full(10**7, 0.1, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    got = ea.from_numpy(a).cuda().sum().item()
    assert abs(got - exact) / exact < 1e-5


@requires_cuda
def test_results_are_reproducible() -> None:
    x = sample((3, 500_000), ea.float32).cuda()
    a, b = x.sum(1).cpu().numpy(), x.sum(1).cpu().numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(x.var(1).cpu().numpy(), x.var(1).cpu().numpy())


# ---- max, min, amax, amin, argmax, argmin --------------------------------------------


@requires_cuda
@pytest.mark.parametrize(("shape", "dims"), LAYOUTS)
@pytest.mark.parametrize("dtype", [ea.float32, ea.float16, ea.int64, ea.uint8, ea.bool])
def test_amax_amin_layouts(shape: tuple[int, ...], dims: tuple[int, ...], dtype: Any) -> None:
    x = sample(shape, dtype)
    compare(lambda t: t.amax(dim=list(dims)), x, exact=True)
    compare(lambda t: t.amin(dim=list(dims), keepdim=True), x, exact=True)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize(("shape", "dim"), [((7, 33), 1), ((300, 5), 0), ((3, 200_000), 1), ((200_000, 3), 0)])
def test_max_min_dim_and_arg(dtype: Any, shape: tuple[int, ...], dim: int) -> None:
    # few distinct values: many ties, which go to the first index
    x = sample(shape, dtype).clamp(-2, 2) if dtype != ea.uint8 else sample(shape, dtype)
    compare(lambda t: tuple(t.max(dim)), x, exact=True)
    compare(lambda t: tuple(t.min(dim, keepdim=True)), x, exact=True)
    compare(lambda t: t.argmax(dim), x, exact=True)
    compare(lambda t: t.argmin(dim), x, exact=True)
    compare(lambda t: t.argmax(), x, exact=True)
    compare(lambda t: t.argmin(), x, exact=True)
    compare(lambda t: t.max(), x, exact=True)
    compare(lambda t: t.min(), x, exact=True)


@requires_cuda
def test_nan_wins_max_min_and_arg() -> None:
    x = ea.tensor([[1.0, nan, 3.0, nan], [2.0, 5.0, -inf, inf], [nan, nan, 0.0, 1.0]])
    for f in (
        lambda t: t.amax(1),
        lambda t: t.amin(1),
        lambda t: t.argmax(1),
        lambda t: t.argmin(1),
        lambda t: t.argmax(),
        lambda t: tuple(t.max(1)),
        lambda t: tuple(t.min(0)),
        lambda t: t.max(),
    ):
        compare(f, x, exact=True)
    assert x.cuda().argmax(1).cpu().tolist() == [1, 3, 0]
    assert x.cuda().argmin(1).cpu().tolist() == [1, 2, 0]
    big = ea.zeros(1_000_000)
    big[123_457] = nan
    big[999_000] = nan
    assert big.cuda().argmax().item() == 123_457
    assert math.isnan(big.cuda().amax().item())


@requires_cuda
def test_aminmax() -> None:
    x = sample((40, 50), ea.float32)
    compare(lambda t: tuple(ea.aminmax(t, dim=1)), x, exact=True)
    compare(lambda t: tuple(ea.aminmax(t)), x, exact=True)


# ---- all, any, count_nonzero -------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS + INTS + [ea.bool])
def test_all_any_count_nonzero(dtype: Any) -> None:
    x = sample((30, 41), dtype)
    if dtype in FLOATS:
        x = (x > 0.5).to(dtype)
    for f in (
        lambda t: t.all(),
        lambda t: t.any(),
        lambda t: t.all(dim=1),
        lambda t: t.any(dim=0, keepdim=True),
        lambda t: ea.count_nonzero(t),
        lambda t: ea.count_nonzero(t, dim=0),
    ):
        compare(f, x, exact=True)
    compare(lambda t: t.any(), ea.tensor([0.0, nan]), exact=True)


# ---- var, std, norms, logsumexp --------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize(("shape", "dims"), LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std_layouts(shape: tuple[int, ...], dims: tuple[int, ...], dtype: Any) -> None:
    x = sample(shape, dtype) + 3
    d = list(dims)
    compare(lambda t: t.var(dim=d), x)
    compare(lambda t: t.std(dim=d, correction=0, keepdim=True), x)
    compare(lambda t: tuple(ea.var_mean(t, dim=d, correction=2)), x)
    compare(lambda t: tuple(ea.std_mean(t, dim=d)), x)


@requires_cuda
def test_var_edge_cases() -> None:
    x = ea.tensor([[1.0, 2.0, 4.0], [5.0, nan, 1.0]])
    compare(lambda t: t.var(1), x)
    compare(lambda t: t.var(1, correction=3), x)  # n - correction <= 0
    compare(lambda t: t.var(0), ea.ones(1, 4))  # one element, unbiased: nan
    big = ea.from_numpy(np.random.default_rng(0).standard_normal(1_000_000) + 1e4)
    compare(lambda t: t.var(), big, rtol=1e-9, atol=0)


@requires_cuda
@pytest.mark.parametrize("ord", [0, 1, 2, inf, -inf, 3, 0.5, -1.5])
@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_norms(ord: float, dtype: Any) -> None:
    x = sample((64, 70), dtype)
    x[3, 4] = 0.0
    compare(lambda t: ea.linalg.vector_norm(t, ord), x)
    compare(lambda t: ea.linalg.vector_norm(t, ord, dim=1), x)
    compare(lambda t: ea.linalg.vector_norm(t, ord, dim=0, keepdim=True), x)
    compare(lambda t: ea.linalg.vector_norm(t, ord, dim=(0, 1)), x)
    y = x.clone()
    y[0, 0] = nan
    compare(lambda t: ea.linalg.vector_norm(t, ord, dim=1), y)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp(dtype: Any) -> None:
    x = sample((50, 300), dtype) * 30
    compare(lambda t: ea.logsumexp(t, 1), x)
    compare(lambda t: ea.logsumexp(t, [0], keepdim=True), x)
    special = ea.tensor([[1000.0, 1000.0], [-inf, -inf], [inf, 1.0], [nan, 1.0], [-inf, 2.0]]).to(dtype)
    compare(lambda t: ea.logsumexp(t, 1), special)
    compare(lambda t: ea.logsumexp(t, 1), ea.tensor([[1, 2, 3]]))  # integers: default dtype


# ---- empty inputs, 0-dim, errors -------------------------------------------------------


@requires_cuda
def test_empty_and_zero_dim_inputs() -> None:
    e = ea.zeros(0, 4)
    for f in (
        lambda t: t.sum(0),
        lambda t: t.prod(0),
        lambda t: t.mean(0),
        lambda t: t.sum(1),
        lambda t: t.all(0),
        lambda t: t.any(0),
        lambda t: ea.count_nonzero(t, 0),
        lambda t: t.var(0),
        lambda t: ea.logsumexp(t, 0),
        lambda t: ea.linalg.vector_norm(t, 2, dim=0),
        lambda t: t.amax(1),
    ):
        compare(f, e)
    z = ea.tensor(2.5)
    for f in (lambda t: t.sum(), lambda t: t.amax(), lambda t: t.argmax(), lambda t: t.var(correction=0)):
        compare(f, z)
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.cuda().amax(0)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        e.cuda().argmax()


@requires_cuda
def test_non_contiguous_and_out_arguments() -> None:
    x = sample((20, 30, 4), ea.float32).permute(2, 0, 1)
    compare(lambda t: t.sum(1), x)
    compare(lambda t: t[:, ::2, 1::3].amax((0, 2)), x, exact=True)
    out = ea.empty(0, dtype=ea.float64).cuda()
    r = x.cuda().sum(0, out=out)
    assert r is out and out.dtype == ea.float64
    np.testing.assert_allclose(out.cpu().numpy(), x.sum(0, dtype=ea.float64).numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="same device"):
        x.cuda().sum(0, out=ea.empty(0))


# ---- scans ----------------------------------------------------------------------------

# (shape, dim): short rows (a thread per row), long contiguous rows (a block per row,
# several tiles), outer dims (a thread per column), a long single row
SCAN_LAYOUTS = [((5, 7), 1), ((3, 1000), 1), ((1000, 3), 0), ((4, 300, 6), 1), ((70_000,), 0), ((2, 3, 4), 2)]


@requires_cuda
@pytest.mark.parametrize(("shape", "dim"), SCAN_LAYOUTS)
@pytest.mark.parametrize(
    "dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int32, ea.int64, ea.uint8, ea.bool]
)
def test_cumsum_cumprod(shape: tuple[int, ...], dim: int, dtype: Any) -> None:
    x = sample(shape, dtype)
    kw = {} if dtype not in FLOATS else ({"rtol": 1e-2, "atol": 1.0} if dtype in (ea.float16, ea.bfloat16) else {})
    compare(lambda t: t.cumsum(dim), x, **kw)
    small = x if dtype not in FLOATS else (x * 0.01 + 1).to(dtype)
    compare(lambda t: t.cumprod(dim), small if dtype != ea.int64 else small.clamp(-2, 2), **kw)


@requires_cuda
@pytest.mark.parametrize(("shape", "dim"), SCAN_LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(shape: tuple[int, ...], dim: int, dtype: Any) -> None:
    x = sample(shape, dtype) * 10
    compare(lambda t: t.logcumsumexp(dim), x, **({"rtol": 1e-2, "atol": 1e-1} if dtype != ea.float64 else {}))
    special = ea.tensor([[-inf, -inf, 1.0, inf, 2.0], [1.0, nan, 2.0, -inf, 3.0]]).to(dtype)
    compare(lambda t: t.logcumsumexp(1), special)


@requires_cuda
@pytest.mark.parametrize(("shape", "dim"), SCAN_LAYOUTS)
@pytest.mark.parametrize("dtype", [ea.float32, ea.float16, ea.int64, ea.uint8, ea.bool])
def test_cummax_cummin(shape: tuple[int, ...], dim: int, dtype: Any) -> None:
    x = sample(shape, dtype)
    if dtype in FLOATS:
        x = x.clamp(-1, 1)  # ties: the later index wins
    compare(lambda t: tuple(t.cummax(dim)), x, exact=True)
    compare(lambda t: tuple(t.cummin(dim)), x, exact=True)


@requires_cuda
def test_cummax_nan_and_out_dtype_rules() -> None:
    x = ea.tensor([[1.0, nan, 3.0, nan, 0.0], [2.0, 2.0, 1.0, 2.0, inf]])
    compare(lambda t: tuple(t.cummax(1)), x, exact=True)
    compare(lambda t: tuple(t.cummin(1)), x, exact=True)
    assert x.cuda().cummax(1).indices.cpu().tolist() == [[0, 1, 1, 3, 3], [0, 1, 1, 3, 4]]
    compare(lambda t: t.cumsum(0, dtype=ea.float64), ea.tensor([1, 2, 3], dtype=ea.int32))
    i = ea.tensor([1, 2, 3], dtype=ea.int16).cuda()
    assert i.cumsum(0).dtype == ea.int64
    compare(lambda t: t.cumsum(0), ea.zeros(0, 3))
    compare(lambda t: t.cumsum(0), ea.tensor(4.0))


# ---- sorting --------------------------------------------------------------------------

SORT_LAYOUTS = [((6, 9), 1), ((9, 6), 0), ((3, 5000), 1), ((5000, 3), 0), ((2, 3, 40), 1), ((100_000,), 0)]


@requires_cuda
@pytest.mark.parametrize(("shape", "dim"), SORT_LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS + INTS + [ea.bool])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_cpu(shape: tuple[int, ...], dim: int, dtype: Any, descending: bool) -> None:
    # few distinct values: stability decides the indices
    x = sample(shape, dtype)
    if dtype in FLOATS:
        x = (x * 2).round().to(dtype)
    compare(lambda t: tuple(t.sort(dim, descending=descending)), x, exact=True)
    compare(lambda t: t.argsort(dim, descending=descending), x, exact=True)


@requires_cuda
def test_sort_nan_and_signed_zero() -> None:
    x = ea.tensor([3.0, nan, -0.0, 0.0, -inf, nan, inf, 1.0, -0.0])
    for desc in (False, True):
        compare(lambda t, d=desc: tuple(t.sort(descending=d)), x, exact=True)
    assert x.cuda().sort().indices.cpu().tolist() == [4, 2, 3, 8, 7, 0, 6, 1, 5]
    assert x.cuda().sort(descending=True).indices.cpu().tolist() == [1, 5, 6, 0, 7, 2, 3, 8, 4]


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float16, ea.int64, ea.int8])
def test_topk_kthvalue_median_mode(dtype: Any) -> None:
    x = sample((7, 301), dtype)
    if dtype in FLOATS:
        x = (x * 3).round().to(dtype)
    compare(lambda t: tuple(t.topk(5, 1)), x, exact=True)
    compare(lambda t: tuple(t.topk(4, 0, largest=False)), x, exact=True)
    compare(lambda t: tuple(t.kthvalue(17, 1)), x, exact=True)
    compare(lambda t: tuple(t.kthvalue(3, 0, keepdim=True)), x, exact=True)
    compare(lambda t: tuple(t.median(1)), x, exact=True)
    compare(lambda t: t.median(), x, exact=True)
    compare(lambda t: tuple(t.mode(1)), x, exact=True)
    compare(lambda t: tuple(t.mode(0)), x, exact=True)
    if dtype in FLOATS:
        compare(lambda t: tuple(t.nanmedian(1)), x, exact=True)
        compare(lambda t: t.nanmedian(), x, exact=True)


@requires_cuda
def test_median_nan_rules() -> None:
    x = ea.tensor([[1.0, nan, 3.0, 2.0], [nan, nan, nan, nan], [4.0, 1.0, 2.0, 3.0]])
    for f in (
        lambda t: tuple(t.median(1)),
        lambda t: tuple(t.nanmedian(1)),
        lambda t: t.median(),
        lambda t: t.nanmedian(),
    ):
        compare(f, x, exact=True)
    assert math.isnan(ea.empty(0).cuda().median().item())


# ---- unique, bincount, histc ------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float16, ea.int64, ea.uint8, ea.bool])
def test_unique_matches_cpu(dtype: Any) -> None:
    x = sample((40, 50), dtype)
    if dtype in FLOATS:
        x = (x * 2).round().to(dtype)
    for f in (
        lambda t: ea.unique(t),
        lambda t: tuple(ea.unique(t, return_inverse=True, return_counts=True)),
        lambda t: tuple(ea.unique_consecutive(t, return_inverse=True, return_counts=True)),
        lambda t: tuple(ea.unique_consecutive(t.view(-1).sort().values, return_counts=True)),
        lambda t: tuple(ea.unique(t[:6], dim=0, return_inverse=True, return_counts=True)),
        lambda t: tuple(ea.unique_consecutive(t[:, :3], dim=1, return_counts=True)),
    ):
        compare(f, x, exact=True)


@requires_cuda
def test_unique_nan_and_empty() -> None:
    compare(
        lambda t: tuple(ea.unique(t, return_inverse=True, return_counts=True)), ea.tensor([1.0, nan, -0.0, nan, 0.0])
    )
    u = ea.unique(ea.tensor([1.0, nan, nan]).cuda())
    assert len(u) == 3  # NaNs are never equal
    compare(lambda t: tuple(ea.unique(t, return_inverse=True, return_counts=True)), ea.zeros(0))


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.uint8, ea.int32, ea.int64])
def test_bincount(dtype: Any) -> None:
    x = ea.from_numpy(np.random.default_rng(0).integers(0, 50, 100_000)).to(dtype)
    compare(lambda t: t.bincount(), x, exact=True)
    compare(lambda t: t.bincount(minlength=80), x, exact=True)
    w = ea.from_numpy(np.random.default_rng(1).random(100_000))
    compare(lambda t: t.bincount(w.to(t.device)), x, rtol=1e-9, atol=1e-9)
    compare(lambda t: t.bincount(w.float().to(t.device)), x, rtol=1e-4, atol=1e-3)
    compare(lambda t: t.bincount(minlength=3), ea.zeros(0, dtype=dtype), exact=True)
    with pytest.raises(RuntimeError, match="non-negative"):
        ea.tensor([1, -1]).cuda().bincount()


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
def test_histc(dtype: Any) -> None:
    x = sample((10_000,), dtype)
    compare(lambda t: t.histc(bins=30, min=-2, max=2), x, exact=True)
    compare(lambda t: t.histc(bins=7), x, exact=True)  # the data's range
    y = ea.tensor([1.0, 2.0, 1.0, 4.0, 2.5, nan, 7.0]).to(dtype)
    compare(lambda t: t.histc(bins=4, min=0, max=4), y, exact=True)
    compare(lambda t: t.histc(bins=3), y, exact=True)
    compare(lambda t: t.histc(bins=3), ea.tensor([nan, nan]).to(dtype), exact=True)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        x.cuda().histc(bins=3, min=2, max=1)
