"""Reductions, scans, sorting: what the OpInfo table cannot express.

Accuracy of long float sums, determinism across thread counts, NaN propagation,
index tie rules, stable sorting, PyTorch's dtype and out= rules, error messages,
named-tuple results, and the loop layouts of the reduction framework (inner,
column, split) on large inputs.
"""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

nan, inf = math.nan, math.inf


def t(values: Any, dtype: Any = None) -> Any:
    return ea.tensor(values, dtype=dtype)


def np_of(x: Any) -> Any:
    return x.float().numpy() if x.dtype == ea.bfloat16 else x.numpy()


@pytest.fixture
def threads() -> Any:
    """Restores the thread count a test changes."""
    before = ea.get_num_threads()
    yield
    ea.set_num_threads(before)


# ---- accuracy -------------------------------------------------------------------------


def test_sum_of_ten_million_tenths_is_accurate(capability: str) -> None:
    a = np.full(10**7, 0.1, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    got = ea.from_numpy(a).sum().item()
    assert abs(got - exact) / exact < 1e-6, (got, exact)
    # a naive running float32 sum is off by ~7%: the cascade matters
    assert abs(got - exact) / exact < abs(float(np.cumsum(a)[-1]) - exact) / exact / 1000


def test_sum_and_mean_of_16m_float32_match_float64(capability: str) -> None:
    a = np.random.default_rng(0).standard_normal(16 * 2**20).astype(np.float32) + np.float32(3.0)
    exact = a.astype(np.float64).sum()
    x = ea.from_numpy(a)
    assert abs(x.sum().item() - exact) / exact < 1e-6
    assert abs(x.mean().item() - exact / a.size) / (exact / a.size) < 1e-6


def test_column_sums_are_accurate() -> None:
    # reducing the outer dim of a (rows, cols) tensor: the column loop
    a = np.full((2**20, 8), 0.1, dtype=np.float32)
    got = ea.from_numpy(a).sum(0).numpy()
    exact = a.astype(np.float64).sum(0)
    np.testing.assert_allclose(got, exact, rtol=1e-6)


def test_half_sums_accumulate_in_float() -> None:
    x = ea.ones(4096, dtype=ea.float16)
    assert x.sum().item() == 4096.0  # a float16 running sum would stop at 2048
    assert ea.ones(4096, dtype=ea.bfloat16).sum().item() == 4096.0


def test_var_is_accurate_with_a_large_offset() -> None:
    rng = np.random.default_rng(1)
    a = (1e4 + rng.standard_normal(100_000)).astype(np.float32)
    got = ea.from_numpy(a).var().item()
    exact = a.astype(np.float64).var(ddof=1)
    assert abs(got - exact) / exact < 1e-5
    got_cols = ea.from_numpy(a.reshape(-1, 10)).var(0).numpy()
    np.testing.assert_allclose(got_cols, a.reshape(-1, 10).astype(np.float64).var(0, ddof=1), rtol=1e-5)


def test_var_overloads() -> None:
    x = t([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    a = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    assert x.var(False).item() == pytest.approx(a.var())  # var(input, unbiased)
    assert ea.std(x, True).item() == pytest.approx(a.std(ddof=1))
    np.testing.assert_allclose(x.var(1, False).numpy(), a.var(1))  # var(input, dim, unbiased)
    np.testing.assert_allclose(x.std(0, correction=0, keepdim=True).numpy(), a.std(0, keepdims=True))
    np.testing.assert_allclose(x.var(dim=(0, 1), correction=2).numpy(), a.var(ddof=2))
    v, m = ea.std_mean(x, 1, unbiased=False)
    np.testing.assert_allclose(v.numpy(), a.std(1)) and np.testing.assert_allclose(m.numpy(), a.mean(1))
    assert math.isnan(t([1.0]).var().item())  # one element, correction 1: 0/0


def test_logsumexp_is_stable_for_large_inputs() -> None:
    x = t([1e4, 1e4, -1e4])
    assert ea.logsumexp(x, 0).item() == pytest.approx(1e4 + math.log(2))
    assert ea.logsumexp(-x, 0).item() == pytest.approx(1e4)
    assert ea.logsumexp(t([-inf, -inf]), 0).item() == -inf
    assert ea.logsumexp(t([inf, 1.0]), 0).item() == inf
    assert math.isnan(ea.logsumexp(t([nan, 1.0]), 0).item())
    big = ea.from_numpy(np.full((3, 5000), 1e4, dtype=np.float32))
    np.testing.assert_allclose(ea.logsumexp(big, 1).numpy(), 1e4 + math.log(5000), rtol=1e-6)


# ---- determinism and the loop layouts -----------------------------------------------------


def test_results_do_not_depend_on_the_thread_count(threads: Any) -> None:
    a = np.random.default_rng(2).standard_normal(3 * 2**20).astype(np.float32)
    x = ea.from_numpy(a)
    results = []
    for n in (1, 2, 3):
        ea.set_num_threads(n)
        results.append(
            (
                x.sum().item(),
                x.reshape(8, -1).sum(1).numpy(),
                x.reshape(-1, 4).sum(0).numpy(),
                x.var().item(),
                x.argmax().item(),
            )
        )
    for r in results[1:]:
        assert r[0] == results[0][0]
        np.testing.assert_array_equal(r[1], results[0][1])
        np.testing.assert_array_equal(r[2], results[0][2])
        assert r[3] == results[0][3] and r[4] == results[0][4]
    assert x.sum().item() == x.sum().item()


@pytest.mark.parametrize(
    "shape, dims",
    [
        ((64, 3000), (1,)),
        ((3000, 64), (0,)),
        ((4, 50000), (1,)),
        ((50000, 4), (0,)),
        ((30, 40, 50), (0, 2)),
        ((30, 40, 50), (1,)),
        ((200000,), (0,)),
    ],
)
def test_layouts_match_numpy(shape: tuple[int, ...], dims: tuple[int, ...]) -> None:
    a = np.random.default_rng(3).standard_normal(shape)
    rev = tuple(reversed(range(a.ndim)))
    # contiguous, and the same values in reversed-stride storage
    for x in (ea.from_numpy(a.copy()), ea.from_numpy(np.ascontiguousarray(a.transpose(rev))).permute(rev)):
        np.testing.assert_allclose(x.sum(dims).numpy(), a.sum(dims), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(x.amax(dims).numpy(), a.max(dims))
        np.testing.assert_allclose(x.var(dims).numpy(), a.var(dims, ddof=1), rtol=1e-10)
        np.testing.assert_allclose(
            ea.logsumexp(x, dims).numpy(), np.log(np.exp(a - a.max()).sum(dims)) + a.max(), rtol=1e-10
        )
        if len(dims) == 1:
            v, i = x.max(dims[0])
            np.testing.assert_array_equal(i.numpy(), a.argmax(dims[0]))
            np.testing.assert_array_equal(v.numpy(), a.max(dims[0]))
            np.testing.assert_array_equal(x.argmin(dims[0]).numpy(), a.argmin(dims[0]))


def test_expanded_input_reductions() -> None:
    row = t([[1.0, 2.0, 3.0]]).expand(4, 3)
    assert row.stride(0) == 0
    np.testing.assert_array_equal(row.sum(0).numpy(), [4.0, 8.0, 12.0])
    np.testing.assert_array_equal(row.sum(1).numpy(), [6.0] * 4)
    assert row.sum().item() == 24.0


def test_argmax_of_a_large_tensor() -> None:
    a = np.random.default_rng(4).standard_normal(5_000_000).astype(np.float32)
    a[3_999_999] = 100.0
    a[4_500_000] = 100.0  # a later tie: the first one wins
    x = ea.from_numpy(a)
    assert x.argmax().item() == 3_999_999
    assert x.max(0).indices.item() == 3_999_999
    a[123] = -100.0
    assert ea.from_numpy(a).argmin().item() == 123


# ---- NaN -----------------------------------------------------------------------------------


def test_max_min_propagate_nan() -> None:
    x = t([1.0, nan, 3.0, nan])
    assert math.isnan(x.max().item()) and math.isnan(x.min().item())
    assert math.isnan(x.amax().item()) and math.isnan(x.amin().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1  # the first NaN
    v, i = x.max(0)
    assert math.isnan(v.item()) and i.item() == 1
    m = t([[1.0, 2.0], [nan, 0.0]])
    v, i = m.min(1)
    assert v[0].item() == 1.0 and math.isnan(v[1].item())
    assert i.tolist() == [0, 0]
    big = np.zeros(100_000, dtype=np.float32)
    big[77_777] = np.nan
    assert math.isnan(ea.from_numpy(big).max().item())
    assert ea.from_numpy(big).argmax().item() == 77_777
    mn, mx = ea.aminmax(ea.from_numpy(big))
    assert math.isnan(mn.item()) and math.isnan(mx.item())


def test_nan_reductions() -> None:
    x = t([1.0, nan, 3.0])
    assert ea.nansum(x).item() == 4.0
    assert ea.nanmean(x).item() == 2.0
    assert math.isnan(x.sum().item()) and math.isnan(x.mean().item())
    assert math.isnan(ea.nanmean(t([nan, nan])).item())


def test_sort_puts_nan_last_and_first_when_descending() -> None:
    x = t([3.0, nan, -inf, 1.0, inf, nan, -0.0, 0.0])
    v, i = x.sort()
    assert v[:6].tolist() == [-inf, -0.0, 0.0, 1.0, 3.0, inf]
    assert all(math.isnan(e) for e in v[6:].tolist())
    assert i.tolist() == [2, 6, 7, 3, 0, 4, 1, 5]  # -0.0 == 0.0: input order kept
    v, i = x.sort(descending=True)
    assert i.tolist() == [1, 5, 4, 0, 3, 6, 7, 2]
    big = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
    big[[10, 500]] = np.nan
    v, i = ea.from_numpy(big).sort()
    assert i[-2:].tolist() == [10, 500]


def test_median_nan_rules() -> None:
    x = t([[2.0, nan, 1.0, nan], [4.0, 1.0, 3.0, 2.0]])
    v, i = x.median(1)
    assert math.isnan(v[0].item()) and i[0].item() == 1  # the first NaN
    assert v[1].item() == 2.0 and i[1].item() == 3  # the lower median
    assert math.isnan(x.median().item())
    v, i = x.nanmedian(1)
    assert v.tolist() == [1.0, 2.0] and i.tolist() == [2, 3]
    assert x.nanmedian().item() == 2.0
    v, i = t([[nan, nan]]).nanmedian(1)
    assert math.isnan(v.item()) and i.item() == 0


# ---- tie rules -----------------------------------------------------------------------------


def test_argmax_argmin_return_the_first_extreme() -> None:
    x = t([[1, 5, 5, 0, 0], [2, 2, 2, 2, 2]])
    assert x.argmax(1).tolist() == [1, 0]
    assert x.argmin(1).tolist() == [3, 0]
    assert x.argmax().item() == 1
    assert x.max(1).indices.tolist() == [1, 0]
    assert x.min(0).indices.tolist() == [0, 1, 1, 0, 0]
    long_ties = ea.zeros(10_000)
    assert long_ties.argmax().item() == 0 and long_ties.argmin().item() == 0


def test_cummax_cummin_take_the_latest_tie_and_nan() -> None:
    v, i = t([1, 3, 3, 2, 3]).cummax(0)
    assert v.tolist() == [1, 3, 3, 3, 3] and i.tolist() == [0, 1, 2, 2, 4]
    v, i = t([2, 1, 1, 3]).cummin(0)
    assert v.tolist() == [2, 1, 1, 1] and i.tolist() == [0, 1, 2, 2]
    v, i = t([1.0, nan, 5.0, nan]).cummax(0)
    assert v[0].item() == 1.0 and all(math.isnan(e) for e in v[1:].tolist())
    assert i.tolist() == [0, 1, 1, 3]


def test_mode_is_the_smallest_most_frequent_value_at_its_last_index() -> None:
    v, i = ea.mode(t([6, 3, 8, 3, 0, 3, 6, 6]))
    assert v.item() == 3 and i.item() == 5
    b = t(
        [
            [0, 0, 0, 2, 0, 0, 2],
            [0, 3, 0, 0, 2, 0, 1],
            [2, 2, 2, 0, 0, 0, 3],
            [2, 2, 3, 0, 1, 1, 0],
            [1, 1, 0, 0, 2, 0, 2],
        ]
    )
    v, i = ea.mode(b, 0)
    assert v.tolist() == [0, 2, 0, 0, 0, 0, 2] and i.tolist() == [1, 3, 4, 4, 2, 4, 4]


def test_sort_is_stable() -> None:
    keys = np.random.default_rng(6).integers(0, 5, size=5000)
    x = ea.from_numpy(keys)
    np.testing.assert_array_equal(x.sort().indices.numpy(), np.argsort(keys, kind="stable"))
    np.testing.assert_array_equal(x.argsort(stable=True).numpy(), np.argsort(keys, kind="stable"))
    # descending keeps equal keys in input order too
    np.testing.assert_array_equal(x.sort(descending=True).indices.numpy(), np.argsort(-keys, kind="stable"))
    small = t([2, 1, 2, 1, 2])
    assert small.sort(stable=True).indices.tolist() == [1, 3, 0, 2, 4]


def test_sort_large_rows_all_dtypes(threads: Any) -> None:
    rng = np.random.default_rng(7)
    for dt, arr in [
        (ea.float32, rng.standard_normal(300_000).astype(np.float32)),
        (ea.float64, rng.standard_normal(300_000)),
        (ea.int64, rng.integers(-(2**62), 2**62, size=300_000)),
        (ea.int16, rng.integers(-300, 300, size=300_000).astype(np.int16)),
        (ea.uint8, rng.integers(0, 256, size=300_000).astype(np.uint8)),
    ]:
        x = ea.from_numpy(arr)
        for n in (1, 2):
            ea.set_num_threads(n)
            v, i = x.sort()
            np.testing.assert_array_equal(i.numpy(), np.argsort(arr, kind="stable"), err_msg=str(dt))
            np.testing.assert_array_equal(v.numpy(), np.sort(arr, kind="stable"))
    f16 = rng.standard_normal(5000).astype(np.float16)
    np.testing.assert_array_equal(ea.from_numpy(f16).sort().indices.numpy(), np.argsort(f16, kind="stable"))


def test_topk() -> None:
    x = t([1.0, 5.0, 3.0, 5.0, 2.0])
    v, i = x.topk(2)
    assert v.tolist() == [5.0, 5.0] and sorted(i.tolist()) == [1, 3]
    v, i = x.topk(2, largest=False)
    assert v.tolist() == [1.0, 2.0] and i.tolist() == [0, 4]
    v, _ = t([1.0, nan, 2.0]).topk(1)
    assert math.isnan(v.item())


def test_kthvalue_and_median() -> None:
    x = t([[3.0, 1.0, 2.0, 5.0], [1.0, 1.0, 1.0, 0.0]])
    v, i = x.kthvalue(2, 1)
    assert v.tolist() == [2.0, 1.0] and i.tolist() == [2, 0]
    v, i = x.median(1, keepdim=True)
    assert v.shape == (2, 1) and v.flatten().tolist() == [2.0, 1.0]
    assert t([1.0, 2.0, 3.0, 4.0]).median().item() == 2.0  # the lower median, not the average
    assert math.isnan(ea.median(ea.empty(0)).item())


# ---- dtype rules ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.bool, ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64])
def test_integral_sums_and_products_give_int64(dtype: Any) -> None:
    x = ea.ones((2, 3), dtype=dtype)
    for r in (x.sum(), x.sum(0), x.prod(), x.prod(1), x.cumsum(0), x.cumprod(1), ea.nansum(x)):
        assert r.dtype == ea.int64
    assert x.sum().item() == 6


def test_sum_wraps_like_int64() -> None:
    x = t([2**62, 2**62, 2**62, 2**62])
    assert x.sum().item() == 0  # 2**64 wraps to 0


def test_dtype_argument_casts_the_input_first() -> None:
    x = t([1.5, 2.5])
    assert x.sum(dtype=ea.float64).dtype == ea.float64
    assert x.sum(dtype=ea.int32).dtype == ea.int32 and x.sum(dtype=ea.int32).item() == 3
    assert t([1, 2, 4]).mean(dtype=ea.float32).item() == pytest.approx(7 / 3)
    assert t([1, 2, 3]).cumsum(0, dtype=ea.float32).dtype == ea.float32
    big = t([200, 100], dtype=ea.uint8)
    assert big.sum().item() == 300 and big.sum(dtype=ea.uint8).item() == 44


def test_mean_of_integers_is_an_error() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"mean\(\): could not infer output dtype. Input dtype must be either a "
        r"floating point or complex dtype. Got: Long",
    ):
        t([1, 2]).mean()
    with pytest.raises(RuntimeError, match="Got: Bool"):
        t([True]).mean()
    with pytest.raises(RuntimeError, match=r"nanmean\(\): expected input to have floating point"):
        ea.nanmean(t([1, 2]))


def test_all_any_dtypes() -> None:
    assert t([1, 0], dtype=ea.uint8).all().dtype == ea.uint8
    assert t([1, 0], dtype=ea.uint8).any().item() == 1
    assert t([1.0, 2.0]).all().dtype == ea.bool
    assert t([0.0, nan]).any().item() is True  # NaN is nonzero
    assert ea.empty(0).all().item() is True and ea.empty(0).any().item() is False
    x = t([[True, False], [True, True]])
    assert x.all(1).tolist() == [False, True] and x.any(0).tolist() == [True, True]
    assert ea.count_nonzero(t([[0, 1, 2], [0, 0, 3]]), 1).tolist() == [2, 1]
    assert ea.count_nonzero(t([[0, 1, 2], [0, 0, 3]])).dtype == ea.int64


def test_logsumexp_promotes_integers() -> None:
    r = ea.logsumexp(t([0, 0]), 0)
    assert r.dtype == ea.get_default_dtype() and r.item() == pytest.approx(math.log(2))


def test_bincount_dtypes() -> None:
    x = t([0, 1, 1, 3])
    assert x.bincount().tolist() == [1, 2, 0, 1] and x.bincount().dtype == ea.int64
    assert x.bincount(t([1.0, 2.0, 3.0, 4.0])).dtype == ea.float32
    assert x.bincount(t([1, 2, 3, 4])).dtype == ea.float64
    assert x.bincount(minlength=6).tolist() == [1, 2, 0, 1, 0, 0]


def test_histc() -> None:
    x = t([1.0, 2.0, 1.0, 4.0, 2.5, nan, 7.0])
    assert x.histc(bins=4, min=0, max=4).tolist() == [0.0, 2.0, 2.0, 1.0]  # 4.0 lands in the last bin
    assert t([1.0, 2.0, 1.0, 4.0, 2.5]).histc(bins=3).tolist() == [2.0, 2.0, 1.0]  # the data's range [1, 4]


# ---- out= and in-place ------------------------------------------------------------------------


def test_sum_out_computes_in_the_out_dtype() -> None:
    x = t([1.5, 2.5, 3.5])
    out = ea.empty(0, dtype=ea.int64)
    r = ea.sum(x, out=out)
    assert r is out and out.item() == 6  # PyTorch: the input is cast to out's dtype first
    out = ea.empty(5)
    assert ea.sum(t([[1.0, 2.0], [3.0, 4.0]]), 0, out=out) is out and out.tolist() == [4.0, 6.0]
    out = ea.empty((2, 2)).t()  # non-contiguous out: written through a buffer
    x = t([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    ea.sum(x, 0, out=out)
    assert out.tolist() == [[6.0, 8.0], [10.0, 12.0]]
    out = ea.empty(0, dtype=ea.int64)
    assert ea.prod(t([1.5, 2.5]), out=out) is out and out.item() == 2
    o = ea.empty(0, dtype=ea.float64)
    assert ea.cumsum(t([1, 2, 3]), 0, out=o) is o and o.tolist() == [1.0, 3.0, 6.0]
    with pytest.raises(RuntimeError, match="provided dtype must match dtype of result in cumsum"):
        ea.cumsum(t([1, 2]), 0, dtype=ea.float32, out=ea.empty(0, dtype=ea.int64))


def test_out_dtype_errors() -> None:
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match"):
        ea.amax(x, out=ea.empty(0, dtype=ea.int64))
    with pytest.raises(RuntimeError, match="can't be cast"):
        ea.mean(x, out=ea.empty(0, dtype=ea.int64))
    with pytest.raises(RuntimeError, match="dtype"):
        ea.max(x, 0, out=(ea.empty(0), ea.empty(0)))  # indices must be int64


def test_reduction_into_its_own_input() -> None:
    x = t([[1.0, 2.0], [3.0, 4.0]])
    ea.sum(x, 1, keepdim=True, out=x[:, :1])
    assert x.tolist() == [[3.0, 2.0], [7.0, 4.0]]


def test_cumsum_inplace_keeps_self_dtype() -> None:
    x = t([1, 2, 3], dtype=ea.int32)
    ptr = x.data_ptr()
    assert x.cumsum_(0) is x and x.dtype == ea.int32 and x.data_ptr() == ptr
    assert x.tolist() == [1, 3, 6]
    b = t([False, True, False])
    assert b.cumsum_(0).tolist() == [False, True, True]
    f = t([[1.0, 2.0], [3.0, 4.0]])
    assert f.cumprod_(0).tolist() == [[1.0, 2.0], [3.0, 8.0]]


# ---- named tuples, composites ------------------------------------------------------------------


def test_named_tuple_results() -> None:
    x = t([[1.0, 4.0], [3.0, 2.0]])
    r = x.max(1)
    assert type(r).__name__ == "max" and type(r) is ea.return_types.max
    assert r.values.tolist() == [4.0, 3.0] and r.indices.tolist() == [1, 0]
    values, indices = x.min(0)
    assert values.tolist() == [1.0, 2.0] and indices.tolist() == [0, 1]
    mm = ea.aminmax(x)
    assert mm.min.item() == 1.0 and mm.max.item() == 4.0
    for name, res in [
        ("sort", x.sort()),
        ("topk", x.topk(1)),
        ("kthvalue", x.kthvalue(1)),
        ("median", x.median(0)),
        ("mode", x.mode()),
        ("cummax", x.cummax(0)),
        ("cummin", x.cummin(0)),
        ("nanmedian", x.nanmedian(1)),
    ]:
        assert type(res).__name__ == name and res._fields == ("values", "indices")
    vm = ea.var_mean(x, 0)
    assert isinstance(vm, tuple) and len(vm) == 2


def test_max_with_out_tuple() -> None:
    x = t([[1.0, 4.0], [3.0, 2.0]])
    v, i = ea.empty(0), ea.empty(0, dtype=ea.int64)
    r = ea.max(x, 1, out=(v, i))
    assert r.values is v and r.indices is i and v.tolist() == [4.0, 3.0] and i.tolist() == [1, 0]


def test_max_of_two_tensors_is_the_elementwise_maximum() -> None:
    a, b = t([1.0, 5.0]), t([3.0, 2.0])
    if hasattr(ea, "maximum"):
        assert ea.max(a, b).tolist() == [3.0, 5.0] and a.min(b).tolist() == [1.0, 2.0]
    else:
        with pytest.raises(NotImplementedError, match="maximum"):
            ea.max(a, b)


def test_unique() -> None:
    x = t([[3, 1, 3], [2, 1, 1]])
    assert ea.unique(x).tolist() == [1, 2, 3]
    u, inv, cnt = x.unique(return_inverse=True, return_counts=True)
    assert u.tolist() == [1, 2, 3] and inv.tolist() == [[2, 0, 2], [1, 0, 0]] and cnt.tolist() == [3, 1, 2]
    u, inv = ea.unique(t([1.0, nan, nan]), return_inverse=True)
    assert len(u) == 3 and inv.tolist() == [0, 1, 2]  # NaNs are never equal
    rows = t([[1, 2], [0, 5], [1, 2]])
    u, inv, cnt = ea.unique(rows, dim=0, return_inverse=True, return_counts=True)
    assert u.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]
    u, cnt = ea.unique_consecutive(t([1, 1, 2, 2, 1]), return_counts=True)
    assert u.tolist() == [1, 2, 1] and cnt.tolist() == [2, 2, 1]


def test_norm_variants() -> None:
    x = t([[3.0, -4.0], [0.0, 0.0]])
    assert x.norm().item() == 5.0 and ea.norm(x, "fro").item() == 5.0
    assert ea.linalg.vector_norm(x, 1).item() == 7.0
    assert ea.linalg.vector_norm(x, inf).item() == 4.0
    assert ea.linalg.vector_norm(x, -inf).item() == 0.0
    assert ea.linalg.vector_norm(x, 0).item() == 2.0
    assert ea.linalg.vector_norm(x, 3).item() == pytest.approx((27 + 64) ** (1 / 3))
    assert ea.linalg.vector_norm(x, 2, dim=1).tolist() == [5.0, 0.0]
    assert ea.linalg.vector_norm(ea.empty(0)).item() == 0.0
    with pytest.raises(NotImplementedError, match="nuc"):
        x.norm("nuc")
    with pytest.raises(RuntimeError, match="p must be a number"):
        x.norm("bad")


# ---- errors ---------------------------------------------------------------------------------------


def test_reduction_errors() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0. "
        r"Specify the reduction dim with the 'dim' argument.",
    ):
        ea.empty(0).max()
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"):
        t([1.0]).sum(1)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        t([[1.0]]).sum((0, 0))
    with pytest.raises(RuntimeError, match="argmax: not implemented for dtype bool"):
        t([True]).argmax()
    with pytest.raises(RuntimeError, match="aminmax\\(\\): cannot compute aminmax over an empty dimension"):
        ea.aminmax(ea.empty(0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        t([1.0, 2.0]).sort(1)
    with pytest.raises(TypeError):
        ea.sum(t([1.0]), "x")


def test_zero_dim_and_empty_inputs() -> None:
    s = t(5.0)
    assert s.sum().item() == 5.0 and s.sum(0).item() == 5.0 and s.sum(-1, keepdim=True).shape == ()
    v, i = s.max(0)
    assert v.item() == 5.0 and i.item() == 0
    assert ea.empty((2, 0)).sum(1).tolist() == [0.0, 0.0]
    assert ea.empty((2, 0)).prod(1).tolist() == [1.0, 1.0]
    assert math.isnan(ea.empty(0).mean().item())
    assert ea.empty((3, 0)).amax(0).shape == (0,)
    assert ea.empty((2, 0, 3)).sum((0, 2)).shape == (0,)
    assert ea.empty((2, 0, 3)).sum(1, keepdim=True).shape == (2, 1, 3)
