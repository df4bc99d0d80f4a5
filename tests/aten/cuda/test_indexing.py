"""CUDA indexing kernels (csrc/native/cuda/Indexing.cu, AdvancedIndexing.cu).

On any build: every indexing stub has a CUDA kernel on a CUDA build, none on a
CPU-only one. The kernel tests run against two targets: "cuda" (a GPU; skipped
without one) and "emulated" (any CUDA build: ember_aten_testing.cuda_indexing_emulation puts a host
emulation of the CUDA kernels -- the same element code, run serially on CPU tensors
-- into the stubs' CPU slots). Each is compared with the CPU kernels: every sample
of the indexing OpInfo table, negative and duplicate indices, accumulation in every
dtype, masks, broadcasting, out-of-range indices raising IndexError; with a GPU also
CPU indices for a CUDA tensor, tensors on the wrong device and order-dependent float
sums."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import ember.c10py
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation
from opinfo.core import assert_close, to_numpy
from opinfo.indexing import OPS

# tests/conftest.py deselects `cuda` tests without a device; `-m cuda` selects them (benchmarks/gpu_check.sh)
requires_cuda = pytest.mark.cuda

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


# ---- targets: a GPU, or the CUDA kernels' host emulation ----------------------------------


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


def assert_same(got: Any, expected: Any, msg: str = "", cuda: bool = True) -> None:
    """The result under test equals the CPU kernels' exactly (values, shape, dtype; on CUDA if `cuda`)."""
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), msg
        for a, b in zip(got, expected, strict=True):
            assert_same(a, b, msg, cuda)
        return
    assert got.is_cuda == cuda, msg
    assert got.dtype == expected.dtype, msg
    assert tuple(got.shape) == tuple(expected.shape), msg
    np.testing.assert_array_equal(to_numpy(got), to_numpy(expected), err_msg=msg)


@contextlib.contextmanager
def cuda_kernels_on_host() -> Iterator[None]:
    previous = ember_aten_testing.cuda_indexing_emulation(True)
    try:
        yield
    finally:
        ember_aten_testing.cuda_indexing_emulation(previous)


class Target:
    """Where the kernels under test run: "cuda", or "emulated" (on CPU tensors)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def to(self, x: Any) -> Any:
        return to_cuda(x) if self.kind == "cuda" else x

    def __call__(self, fn: Callable[[], Any]) -> Any:
        """fn() with the kernels under test."""
        if self.kind == "cuda":
            return fn()
        with cuda_kernels_on_host():
            return fn()

    def check(self, got: Any, expected: Any, msg: str = "") -> None:
        assert_same(got, expected, msg, cuda=self.kind == "cuda")


@pytest.fixture(params=[pytest.param("cuda", marks=pytest.mark.cuda), "emulated"])
def target(request: pytest.FixtureRequest) -> Target:
    if request.param == "cuda" and not ember.c10py.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    if request.param == "emulated" and ember_aten_testing is None:
        pytest.skip("no ember_aten_testing: the host emulation of the CUDA kernels (CUDA builds)")
    return Target(request.param)


def ints(shape: tuple[int, ...], dtype: Any = ea.float32, low: int = -9, high: int = 10) -> Any:
    a = np.random.default_rng(0).integers(low, high, size=shape)
    return ea.from_numpy(a).to(dtype)


def long(values: Any) -> Any:
    return ea.from_numpy(np.array(values, dtype=np.int64))


@requires_emulation
def test_emulation_switches_the_cpu_slots_and_back() -> None:
    x = ints((5, 3))
    # the CPU kernel words a bad index without the operator's name, the emulated CUDA one with it
    with pytest.raises(IndexError, match=r"^index 7 is out of bounds for dimension 0 with size 5$"):
        ea.index_select(x, 0, long([7]))
    with cuda_kernels_on_host():
        assert ember_aten_testing.cuda_indexing_emulation(True) is True  # already on
        with pytest.raises(IndexError, match=r"^index_select\(\): index 7 is out of bounds for dimension 0"):
            ea.index_select(x, 0, long([7]))
    assert ember_aten_testing.cuda_indexing_emulation(False) is False
    with pytest.raises(IndexError, match=r"^index 7 is out of bounds"):
        ea.index_select(x, 0, long([7]))


# ---- every OpInfo sample ------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_opinfo_samples_match_cpu(op: Any, target: Target) -> None:
    for dtype in op.dtypes:
        for sample in op.sample_inputs(op, dtype):
            expected = op.op(sample.input, *sample.args, **sample.kwargs)
            args, kwargs = target.to(sample.args), target.to(sample.kwargs)
            got = target(lambda: op.op(target.to(sample.input), *args, **kwargs))  # noqa: B023
            target.check(got, expected, f"{op.name} {dtype} {sample.name}")


@pytest.mark.parametrize("op", [op for op in OPS if op.inplace is not None], ids=lambda op: op.name)
def test_opinfo_inplace_samples_match_cpu(op: Any, target: Target) -> None:
    for dtype in op.dtypes:
        for sample in op.sample_inputs(op, dtype):
            if sample.broadcasts_input:
                continue
            expected = sample.input.clone()
            op.inplace(expected, *sample.args, **sample.kwargs)
            got = target.to(sample.input.clone())
            args, kwargs = target.to(sample.args), target.to(sample.kwargs)
            target(lambda: op.inplace(got, *args, **kwargs))  # noqa: B023
            target.check(got, expected, f"{op.name}_ {dtype} {sample.name}")


# ---- what stresses the kernels ------------------------------------------------------------


def test_getitem_setitem_cases(target: Target) -> None:
    x = ints((5, 4, 3))
    xt = target.to(x)
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
        tidx = target.to(idx)
        target.check(target(lambda: xt[tidx]), x[idx], f"x[{idx!r}]")  # noqa: B023
        # CPU index tensors are accepted for a CUDA tensor (PyTorch moves them)
        target.check(target(lambda: xt[idx]), x[idx], f"x[{idx!r}] (cpu index)")  # noqa: B023
    for idx in cases:
        y, yt = x.clone(), xt.clone()
        y[idx] = 7.5
        target(lambda: yt.__setitem__(target.to(idx), 7.5))  # noqa: B023
        target.check(yt, y, f"x[{idx!r}] = 7.5")
        if isinstance(idx, tuple) and idx[0] is None:
            continue
        v = ea.arange(x[idx].numel()).to(ea.float32).reshape(x[idx].shape)
        y[idx] = v
        target(lambda: yt.__setitem__(idx, target.to(v)))  # noqa: B023
        target.check(yt, y, f"x[{idx!r}] = v")


@pytest.mark.parametrize(
    "dtype",
    [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int64, ea.int32, ea.int16, ea.int8, ea.uint8, ea.bool],
    ids=str,
)
def test_accumulate_with_duplicates_every_dtype(dtype: Any, target: Target) -> None:
    # small integers: every dtype sums them exactly, whatever order the atomics take
    x = ints((6, 3), dtype, 0, 3)
    idx = long([0, 2, 2, 5, 0, 0, -1])
    v = ints((7, 3), dtype, 0, 3)
    xt, idxt, vt = target.to(x), target.to(idx), target.to(v)
    got = target(lambda: ea.index_put(xt, [idxt], vt, True))
    target.check(got, ea.index_put(x, [idx], v, True), "index_put accumulate")
    nidx = long([0, 2, 2, 5, 0, 0, 1])
    nidxt = target.to(nidx)
    target.check(target(lambda: ea.index_add(xt, 0, nidxt, vt)), ea.index_add(x, 0, nidx, v), "index_add")
    sidx = long([[0, 1, 2], [2, 2, 2], [5, 0, 0], [0, 0, 1], [1, 1, 1], [3, 4, 5], [0, 0, 0]])
    sidxt = target.to(sidx)
    target.check(target(lambda: ea.scatter_add(xt, 0, sidxt, vt)), ea.scatter_add(x, 0, sidx, v), "scatter_add")
    flat = long([0, 17, 17, -1, 3, 3, 3])
    src = ints((7,), dtype, 0, 3)
    target.check(
        target(lambda: xt.clone().put_(target.to(flat), target.to(src), accumulate=True)),
        x.clone().put_(flat, src, accumulate=True),
        "put_ accumulate",
    )
    if dtype == ea.bool:
        return
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for include_self in [True, False]:
            target.check(
                target(lambda: ea.scatter_reduce(xt, 0, sidxt, vt, reduce, include_self=include_self)),  # noqa: B023
                ea.scatter_reduce(x, 0, sidx, v, reduce, include_self=include_self),
                f"scatter_reduce {reduce} include_self={include_self}",
            )
            if reduce != "sum":
                target.check(
                    target(lambda: ea.index_reduce(xt, 0, nidxt, vt, reduce, include_self=include_self)),  # noqa: B023
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


def test_nan_and_signed_zero(target: Target) -> None:
    x = ea.tensor([0.0, -0.0, float("nan"), 1.0, 0.0, -2.0])
    target.check(target(lambda: ea.nonzero(target.to(x))), ea.nonzero(x))
    target.check(target(lambda: ea.argwhere(target.to(x))), ea.argwhere(x))
    src = ea.tensor([float("nan"), 1.0, 5.0, -1.0])
    idx = long([0, 0, 1, 1])
    for reduce in ["amax", "amin"]:
        target.check(
            target(lambda: ea.scatter_reduce(target.to(ea.zeros(2)), 0, target.to(idx), target.to(src), reduce)),  # noqa: B023
            ea.scatter_reduce(ea.zeros(2), 0, idx, src, reduce),
            reduce,
        )


def test_nonzero_shapes(target: Target) -> None:
    for x in [ea.tensor(3.0), ea.tensor(0), ea.zeros(0, 3), ints((2, 3, 4), ea.int32, -1, 2), ea.zeros(3, 4)]:
        xt = target.to(x)
        target.check(target(lambda: ea.nonzero(xt)), ea.nonzero(x), f"nonzero {x.shape}")  # noqa: B023
        target.check(
            target(lambda: ea.nonzero(xt, as_tuple=True)),  # noqa: B023
            ea.nonzero(x, as_tuple=True),
            f"as_tuple {x.shape}",
        )
        out = target.to(ea.empty(0, dtype=ea.int64))
        target.check(target(lambda: ea.nonzero(xt, out=out)), ea.nonzero(x), f"out= {x.shape}")  # noqa: B023
    # a transposed (non-contiguous) input keeps row-major order
    x = ints((4, 5), ea.int64, -1, 2).t()
    target.check(target(lambda: ea.nonzero(target.to(x))), ea.nonzero(x))


def test_masked_ops_broadcast_and_strides(target: Target) -> None:
    x = ints((3, 4, 5))
    mask = ints((4, 1), ea.int64, 0, 2) > 0
    xt, mt = target.to(x), target.to(mask)
    target.check(target(lambda: ea.masked_select(xt, mt)), ea.masked_select(x, mask))
    xs = x.transpose(1, 2)  # (3, 5, 4), not contiguous
    ms = (ints((4, 5), ea.int64, 0, 2) > 0).t()  # (5, 4), not contiguous
    target.check(target(lambda: ea.masked_select(target.to(xs), target.to(ms))), ea.masked_select(xs, ms))
    target.check(target(lambda: ea.masked_fill(xt, mt, -1.5)), ea.masked_fill(x, mask, -1.5))
    target.check(target(lambda: ea.masked_fill(xt, mt, ea.tensor(2.0))), ea.masked_fill(x, mask, ea.tensor(2.0)))
    src = ints((60,))
    target.check(target(lambda: ea.masked_scatter(xt, mt, target.to(src))), ea.masked_scatter(x, mask, src))
    with pytest.raises(RuntimeError, match=r"Number of elements of source < number of ones in mask"):
        target(lambda: ea.masked_scatter(xt, target.to(ea.ones(3, 4, 5, dtype=ea.bool)), target.to(ea.zeros(3))))


# ---- out-of-range indices: IndexError ---------------------------------------------------


def test_out_of_range_indices_raise_index_error(target: Target) -> None:
    # On CUDA the kernels report a bad index and the next device-to-host copy or
    # indexing launch raises it; emulated, the kernel raises at once. Writes that the
    # CPU host code checks before the kernel (CPU tensors, so "emulated") word take /
    # put_ errors as the CPU does.
    x = target.to(ints((5, 3)))
    bad = target.to(long([1, 7]))
    ok = target.to(long([4, 0]))
    cases = [
        (
            lambda: ea.index_select(x, 0, bad),
            r"^index_select\(\): index 7 is out of bounds for dimension 0 with size 5$",
        ),
        (lambda: x[bad], "index 7 is out of bounds for dimension 0 with size 5"),
        (lambda: x[:, target.to(long([-4]))], "index -4 is out of bounds for dimension 1 with size 3"),
        (lambda: ea.index_put(x, [bad], target.to(ea.tensor(1.0))), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.index_put(x, [bad], target.to(ea.ones(2, 3)), True), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.index_add(x, 0, bad, target.to(ea.ones(2, 3))), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.index_fill(x, 1, target.to(long([5])), 0.0), "index 5 is out of bounds for dimension 1"),
        # take / put_ word a bad index as the CPU kernels (and PyTorch) do, on every target
        (
            lambda: ea.take(x, target.to(long([15]))),
            r"^out of range: tried to access index 15 on a tensor of 15 elements\.$",
        ),
        (
            lambda: x.clone().put_(target.to(long([-16])), target.to(ea.ones(1))),
            r"^out of range: tried to access index -16 on a tensor of 15 elements\.$",
        ),
        (
            lambda: x.clone().put_(target.to(long([15])), target.to(ea.ones(1)), accumulate=True),
            r"^out of range: tried to access index 15 on a tensor of 15 elements\.$",
        ),
    ]
    # gather / scatter / scatter_add raise RuntimeError, as PyTorch's CPU kernels do
    runtime_cases = [
        (lambda: ea.gather(x, 1, target.to(long([[0, 7]]))), "index 7 is out of bounds for dimension 1 with size 3"),
        (lambda: ea.scatter(x, 0, target.to(long([[7]])), 1.0), "index 7 is out of bounds for dimension 0"),
        (lambda: ea.scatter_add(x, 1, target.to(long([[3]])), x), "index 3 is out of bounds for dimension 1"),
    ]
    for error, group in ((IndexError, cases), (RuntimeError, runtime_cases)):
        for fn, message in group:
            with pytest.raises(error, match=message):
                target(lambda: fn().cpu())  # noqa: B023  (on CUDA: waits for the kernel; the copy may raise)
                target(lambda: ea.index_select(x, 0, ok))  # else the next indexing launch does
            # the error is cleared and the kernels still work
            target.check(target(lambda: ea.index_select(x, 0, ok)), ea.index_select(x.cpu(), 0, ok.cpu()))


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
