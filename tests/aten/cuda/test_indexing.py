"""CUDA indexing kernels (csrc/native/cuda/Indexing.cu, AdvancedIndexing.cu).

Without a GPU only the registration test runs: on a CUDA build every indexing stub
has a CUDA kernel, on a CPU-only build none has. With a GPU: every sample of the
indexing OpInfo table on CUDA against the CPU result, the cases that stress the
kernels (negative and duplicate indices, accumulation in every dtype, masks,
broadcasting, CPU indices for a CUDA tensor), out-of-range indices surfacing as
IndexError from the device, and tensors on the wrong device."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.c10py
import numpy as np
import pytest
from opinfo.core import assert_close, to_numpy
from opinfo.indexing import OPS

requires_cuda = pytest.mark.skipif(not ember.c10py.cuda.is_available(), reason="needs a CUDA GPU")

# the stubs this file's kernels fill (DEFINE_DISPATCH order does not matter)
INDEXING_STUBS = [
    "index_stub",
    "index_put_stub",
    "masked_fill_stub",
    "masked_select_stub",
    "masked_scatter_stub",
    "nonzero_stub",
    "index_reduce_stub",
    "divide_by_count_stub",
]


def test_indexing_stubs_have_cuda_kernels_on_a_cuda_build() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    missing = [s for s in INDEXING_STUBS if s not in stubs]
    assert not missing, f"stubs not registered: {missing}"
    has_cuda = {s: stubs[s] for s in INDEXING_STUBS}
    if ea._C._built_with_cuda:
        assert all(has_cuda.values()), f"no CUDA kernel: {[s for s, v in has_cuda.items() if not v]}"
    else:
        assert not any(has_cuda.values()), "a CPU-only build cannot have CUDA kernels"


# ---- helpers (GPU tests) ---------------------------------------------------------------


def to_cuda(x: Any) -> Any:
    if isinstance(x, ea.Tensor):
        return x.to("cuda")
    if isinstance(x, list):
        return [to_cuda(v) for v in x]
    if isinstance(x, tuple):
        return tuple(to_cuda(v) for v in x)
    if isinstance(x, dict):
        return {k: to_cuda(v) for k, v in x.items()}
    return x


def assert_same(cuda_result: Any, cpu_result: Any, msg: str = "") -> None:
    """CUDA result equals the CPU one exactly (values, shape, dtype, device)."""
    if isinstance(cpu_result, (list, tuple)):
        assert isinstance(cuda_result, (list, tuple)) and len(cuda_result) == len(cpu_result), msg
        for a, b in zip(cuda_result, cpu_result, strict=True):
            assert_same(a, b, msg)
        return
    assert cuda_result.is_cuda, msg
    assert cuda_result.dtype == cpu_result.dtype, msg
    assert tuple(cuda_result.shape) == tuple(cpu_result.shape), msg
    np.testing.assert_array_equal(to_numpy(cuda_result), to_numpy(cpu_result), err_msg=msg)


def ints(shape: tuple[int, ...], dtype: Any = ea.float32, low: int = -9, high: int = 10) -> Any:
    a = np.random.default_rng(0).integers(low, high, size=shape)
    return ea.from_numpy(a).to(dtype)


def long(values: Any) -> Any:
    return ea.from_numpy(np.array(values, dtype=np.int64))


# ---- every OpInfo sample, CUDA vs CPU ----------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_opinfo_samples_match_cpu(op: Any) -> None:
    for dtype in op.dtypes:
        for sample in op.sample_inputs(op, dtype):
            expected = op.op(sample.input, *sample.args, **sample.kwargs)
            got = op.op(to_cuda(sample.input), *to_cuda(sample.args), **to_cuda(sample.kwargs))
            assert_same(got, expected, f"{op.name} {dtype} {sample.name}")


@requires_cuda
@pytest.mark.parametrize("op", [op for op in OPS if op.inplace is not None], ids=lambda op: op.name)
def test_opinfo_inplace_samples_match_cpu(op: Any) -> None:
    for dtype in op.dtypes:
        for sample in op.sample_inputs(op, dtype):
            if sample.broadcasts_input:
                continue
            expected = sample.input.clone()
            op.inplace(expected, *sample.args, **sample.kwargs)
            got = to_cuda(sample.input)
            op.inplace(got, *to_cuda(sample.args), **to_cuda(sample.kwargs))
            assert_same(got, expected, f"{op.name}_ {dtype} {sample.name}")


# ---- what stresses the kernels ------------------------------------------------------------


@requires_cuda
def test_getitem_setitem_cases() -> None:
    x = ints((5, 4, 3))
    xc = x.to("cuda")
    cases: list[Any] = [
        long([0, -1, 4, -5, 2]),  # negative indices
        (long([[0], [4]]), slice(None), long([2, -1])),  # broadcasting, separated: result dims go first
        (slice(None), long([1, 1, 3]), long([0, 2, 1])),  # adjacent pair
        x[:, :, 0] > 0,  # a 2-d mask
        (Ellipsis, long([2, 0])),
        (None, long([3, 3, 3])),  # duplicates (on write: the same value only, any may win)
        True,
        ea.tensor([], dtype=ea.int64),
    ]
    for idx in cases:
        cidx = to_cuda(idx)
        assert_same(xc[cidx], x[idx], f"x[{idx!r}]")
        # CPU index tensors are accepted for a CUDA tensor (PyTorch moves them)
        assert_same(xc[idx], x[idx], f"x[{idx!r}] (cpu index)")
    for idx in cases:
        y, yc = x.clone(), xc.clone()
        y[idx] = 7.5
        yc[to_cuda(idx)] = 7.5
        assert_same(yc, y, f"x[{idx!r}] = 7.5")
        if isinstance(idx, tuple) and idx[0] is None:
            continue
        v = ea.arange(x[idx].numel()).to(ea.float32).reshape(x[idx].shape)
        y[idx] = v
        yc[idx] = v.to("cuda")
        assert_same(yc, y, f"x[{idx!r}] = v")


@requires_cuda
@pytest.mark.parametrize(
    "dtype",
    [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int64, ea.int32, ea.int16, ea.int8, ea.uint8, ea.bool],
    ids=str,
)
def test_accumulate_with_duplicates_every_dtype(dtype: Any) -> None:
    # small integers: every dtype sums them exactly, whatever order the atomics take
    x = ints((6, 3), dtype, 0, 3)
    idx = long([0, 2, 2, 5, 0, 0, -1])
    v = ints((7, 3), dtype, 0, 3)
    xc, idxc, vc = x.to("cuda"), idx.to("cuda"), v.to("cuda")
    assert_same(ea.index_put(xc, [idxc], vc, True), ea.index_put(x, [idx], v, True), "index_put accumulate")
    nidx = long([0, 2, 2, 5, 0, 0, 1])
    assert_same(ea.index_add(xc, 0, nidx.to("cuda"), vc), ea.index_add(x, 0, nidx, v), "index_add")
    sidx = long([[0, 1, 2], [2, 2, 2], [5, 0, 0], [0, 0, 1], [1, 1, 1], [3, 4, 5], [0, 0, 0]])
    assert_same(ea.scatter_add(xc, 0, sidx.to("cuda"), vc), ea.scatter_add(x, 0, sidx, v), "scatter_add")
    flat = long([0, 17, 17, -1, 3, 3, 3])
    src = ints((7,), dtype, 0, 3)
    assert_same(
        xc.clone().put_(flat.to("cuda"), src.to("cuda"), accumulate=True),
        x.clone().put_(flat, src, accumulate=True),
        "put_ accumulate",
    )
    if dtype == ea.bool:
        return
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for include_self in [True, False]:
            assert_same(
                ea.scatter_reduce(xc, 0, sidx.to("cuda"), vc, reduce, include_self=include_self),
                ea.scatter_reduce(x, 0, sidx, v, reduce, include_self=include_self),
                f"scatter_reduce {reduce} include_self={include_self}",
            )
            if reduce != "sum":
                assert_same(
                    ea.index_reduce(xc, 0, nidx.to("cuda"), vc, reduce, include_self=include_self),
                    ea.index_reduce(x, 0, nidx, v, reduce, include_self=include_self),
                    f"index_reduce {reduce} include_self={include_self}",
                )


@requires_cuda
def test_float_sum_with_many_duplicates_is_close() -> None:
    # atomics combine in any order: close to the CPU's serial sum, not always equal
    x = ea.zeros(4)
    idx = long(np.arange(100000) % 4)
    v = ea.from_numpy(np.random.default_rng(1).standard_normal(100000).astype(np.float32))
    got = ea.index_put(x.to("cuda"), [idx.to("cuda")], v.to("cuda"), True)
    exp = ea.index_put(x, [idx], v, True)
    assert_close(got, to_numpy(exp), ea.float32, atol=5e-2, rtol=1e-3)


@requires_cuda
def test_nan_and_signed_zero() -> None:
    x = ea.tensor([0.0, -0.0, float("nan"), 1.0, 0.0, -2.0])
    assert_same(ea.nonzero(x.to("cuda")), ea.nonzero(x))
    assert_same(ea.argwhere(x.to("cuda")), ea.argwhere(x))
    src = ea.tensor([float("nan"), 1.0, 5.0, -1.0])
    idx = long([0, 0, 1, 1])
    for reduce in ["amax", "amin"]:
        assert_same(
            ea.scatter_reduce(ea.zeros(2).to("cuda"), 0, idx.to("cuda"), src.to("cuda"), reduce),
            ea.scatter_reduce(ea.zeros(2), 0, idx, src, reduce),
            reduce,
        )


@requires_cuda
def test_nonzero_shapes() -> None:
    for x in [ea.tensor(3.0), ea.tensor(0), ea.zeros(0, 3), ints((2, 3, 4), ea.int32, -1, 2), ea.zeros(3, 4)]:
        xc = x.to("cuda")
        assert_same(ea.nonzero(xc), ea.nonzero(x), f"nonzero {x.shape}")
        assert_same(ea.nonzero(xc, as_tuple=True), ea.nonzero(x, as_tuple=True), f"as_tuple {x.shape}")
        out = ea.empty(0, dtype=ea.int64).to("cuda")
        assert_same(ea.nonzero(xc, out=out), ea.nonzero(x), f"out= {x.shape}")
    # a transposed (non-contiguous) input keeps row-major order
    x = ints((4, 5), ea.int64, -1, 2).t()
    assert_same(ea.nonzero(x.to("cuda")), ea.nonzero(x))


@requires_cuda
def test_masked_ops_broadcast_and_strides() -> None:
    x = ints((3, 4, 5))
    mask = ints((4, 1), ea.int64, 0, 2) > 0
    xc, mc = x.to("cuda"), mask.to("cuda")
    assert_same(ea.masked_select(xc, mc), ea.masked_select(x, mask))
    xt = x.transpose(1, 2)  # (3, 5, 4), not contiguous
    mt = (ints((4, 5), ea.int64, 0, 2) > 0).t()  # (5, 4), not contiguous
    assert_same(ea.masked_select(xt.to("cuda"), mt.to("cuda")), ea.masked_select(xt, mt))
    assert_same(ea.masked_fill(xc, mc, -1.5), ea.masked_fill(x, mask, -1.5))
    assert_same(ea.masked_fill(xc, mc, ea.tensor(2.0)), ea.masked_fill(x, mask, ea.tensor(2.0)))
    src = ints((60,))
    assert_same(ea.masked_scatter(xc, mc, src.to("cuda")), ea.masked_scatter(x, mask, src))
    with pytest.raises(RuntimeError, match=r"Number of elements of source < number of ones in mask"):
        ea.masked_scatter(xc, ea.ones(3, 4, 5, dtype=ea.bool).to("cuda"), ea.zeros(3).to("cuda"))


# ---- out-of-range indices: IndexError from the device ---------------------------------


@requires_cuda
def test_out_of_range_indices_raise_index_error() -> None:
    x = ints((5, 3)).to("cuda")
    bad = long([1, 7]).to("cuda")
    ok = long([4, 0]).to("cuda")
    cases = [
        (
            lambda: ea.index_select(x, 0, bad),
            r"^index_select\(\): index 7 is out of bounds for dimension 0 with size 5$",
        ),
        (lambda: ea.gather(x, 1, long([[0, 7]]).to("cuda")), "index 7 is out of bounds for dimension 1 with size 3"),
        (lambda: x[bad], "index 7 is out of bounds for dimension 0 with size 5"),
        (lambda: x[:, long([-4]).to("cuda")], "index -4 is out of bounds for dimension 1 with size 3"),
        (lambda: ea.index_put(x, [bad], ea.tensor(1.0).to("cuda")), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.index_put(x, [bad], ea.ones(2, 3).to("cuda"), True), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.scatter(x, 0, long([[7]]).to("cuda"), 1.0), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.scatter_add(x, 1, long([[3]]).to("cuda"), x), "index 3 is out of bounds for dimension 1"),
        (lambda: ea.index_add(x, 0, bad, ea.ones(2, 3).to("cuda")), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.index_fill(x, 1, long([5]).to("cuda"), 0.0), "index 5 is out of bounds for dimension 1"),
        (lambda: ea.take(x, long([15]).to("cuda")), "index 15 is out of bounds"),
        (lambda: x.clone().put_(long([-16]).to("cuda"), ea.ones(1).to("cuda")), "index -16 is out of bounds"),
    ]
    for fn, message in cases:
        with pytest.raises(IndexError, match=message):
            fn().cpu()  # waits for the kernel; the copy may raise already
            ea.index_select(x, 0, ok)  # else the next indexing launch does
        # the error is cleared and the device still works
        assert_same(ea.index_select(x, 0, ok), ea.index_select(x.cpu(), 0, ok.cpu()))


@requires_cuda
def test_wrong_device_arguments() -> None:
    x = ints((5, 3))
    xc = x.to("cuda")
    same_device = r"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=same_device):
        ea.index_select(xc, 0, long([0]))
    with pytest.raises(RuntimeError, match=same_device):
        ea.index_select(x, 0, long([0]).to("cuda"))
    with pytest.raises(RuntimeError, match=same_device):
        ea.gather(xc, 0, long([[0]]))
    with pytest.raises(RuntimeError, match=same_device):
        ea.scatter_add(xc, 0, long([[0]]).to("cuda"), x)
    with pytest.raises(RuntimeError, match=same_device):
        ea.index_add(xc, 0, long([0]).to("cuda"), ea.ones(1, 3))
    with pytest.raises(RuntimeError, match=same_device):
        ea.take(xc, long([0]))
    with pytest.raises(RuntimeError, match=same_device):
        ea.masked_select(xc, ea.ones(5, 3, dtype=ea.bool))
    with pytest.raises(RuntimeError, match=same_device):
        ea.index_put(xc, [long([0]).to("cuda")], ea.ones(1, 3))
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same device"):
        x[long([0]).to("cuda")]
