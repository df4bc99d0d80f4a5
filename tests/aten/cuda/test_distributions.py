"""The CUDA random kernels' stream layout (csrc/native/cuda/Distributions.cu) on any CUDA
build, and the CUDA multinomial against the CPU's.

"emulated": ember_aten_testing.cuda_distributions_emulation(True) puts the CUDA stub functions into the
CPU slots of the distribution stubs; given CPU tensors they run their Philox block bodies
(the same functors the kernel calls) in a host loop. Every draw is then compared bit for
bit with the CPU kernels' draw of the same generator state: which block, lane and words
give value i, the per-element mean / std / p, the integer ranges of 4, 2 and 1 values per
block, the generator's offset afterwards. The device arithmetic itself (no FMA, IEEE / and
sqrt) needs a GPU: tests/aten/cuda/test_random_optim_sdpa.py compares it there."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from emulation import ember_aten_testing, requires_emulation

FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]
INTS = [ea.int64, ea.int32, ea.int16, ea.int8, ea.uint8, ea.bool]


@contextlib.contextmanager
def cuda_kernels_on_host() -> Iterator[None]:
    previous = ember_aten_testing.cuda_distributions_emulation(True)
    try:
        yield
    finally:
        ember_aten_testing.cuda_distributions_emulation(previous)


def as_bits(t: Any) -> np.ndarray:
    """Exact values: float bit patterns (-0.0 != 0.0, NaNs compare), integers as they are."""
    t = t.contiguous()
    if t.dtype in (ea.float16, ea.bfloat16):
        return t.view(ea.int16).numpy().copy()
    if t.dtype == ea.float32:
        return t.view(ea.int32).numpy().copy()
    if t.dtype == ea.float64:
        return t.view(ea.int64).numpy().copy()
    return t.numpy().copy()


def cpu_and_emulated(draw: Callable[[Any], Any], seed: int) -> tuple[Any, Any, Any, Any]:
    """draw(generator) by the CPU kernels and by the emulated CUDA kernels from one seed,
    and each generator's (seed, offset) afterwards."""
    gc = ea.Generator().manual_seed(seed)
    expected = draw(gc)
    ge = ea.Generator().manual_seed(seed)
    with cuda_kernels_on_host():
        got = draw(ge)
    return expected, got, gc._get_state(), ge._get_state()


def check(draw: Callable[[Any], Any], seed: int, what: str) -> None:
    expected, got, sc, se = cpu_and_emulated(draw, seed)
    assert got.dtype == expected.dtype and tuple(got.shape) == tuple(expected.shape), what
    np.testing.assert_array_equal(as_bits(got), as_bits(expected), err_msg=what)
    assert sc == se, f"{what}: the generators advanced differently"


@requires_emulation
def test_emulation_switch_reports_the_previous_state() -> None:
    with cuda_kernels_on_host():
        assert ember_aten_testing.cuda_distributions_emulation(True) is True  # already on
    assert ember_aten_testing.cuda_distributions_emulation(False) is False


@requires_emulation
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 1000, 4099])
def test_rand_and_randn_float32_follow_the_cpu_layout(n: int) -> None:
    check(lambda g: ea.rand(n, generator=g), n, f"rand({n})")
    check(lambda g: ea.randn(n, generator=g), n, f"randn({n})")


@requires_emulation
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_real_distributions_follow_the_cpu_layout(dtype: Any) -> None:
    draws: dict[str, Callable[[Any], Any]] = {
        "uniform_": lambda g: ea.empty(1027, dtype=dtype).uniform_(-2.0, 3.0, generator=g),
        "uniform_ point": lambda g: ea.empty(9, dtype=dtype).uniform_(1.5, 1.5, generator=g),
        "normal_": lambda g: ea.empty(1027, dtype=dtype).normal_(1.5, 2.0, generator=g),
        "log_normal_": lambda g: ea.empty(1027, dtype=dtype).log_normal_(0.1, 0.5, generator=g),
        "exponential_": lambda g: ea.empty(1027, dtype=dtype).exponential_(2.5, generator=g),
        "cauchy_": lambda g: ea.empty(1027, dtype=dtype).cauchy_(0.5, 2.0, generator=g),
        "geometric_": lambda g: ea.empty(1027, dtype=dtype).geometric_(0.3, generator=g),
        "bernoulli_": lambda g: ea.empty(1027, dtype=dtype).bernoulli_(0.25, generator=g),
        "random_": lambda g: ea.empty(1027, dtype=dtype).random_(generator=g),
        "random_(-7, 50)": lambda g: ea.empty(1027, dtype=dtype).random_(-7, 50, generator=g),
        "transposed normal_": lambda g: ea.empty(17, 33, dtype=dtype).t().normal_(generator=g),
    }
    for name, draw in draws.items():
        check(draw, 7, f"{name} {dtype}")


@requires_emulation
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_draws_follow_the_cpu_layout(dtype: Any) -> None:
    ranges: list[tuple[int, int | None]] = [(0, 2)]
    if dtype not in (ea.bool, ea.uint8):
        ranges += [(-5, 100)]
    if dtype in (ea.int64, ea.int32):
        ranges += [(0, 1 << 20), (-(1 << 31), (1 << 31) - 1)]  # 4, 2 values per block
    if dtype == ea.int64:
        ranges += [(-(1 << 40), 1 << 40), (-(1 << 63), None)]  # 1 value per block, all 2^64
    for lo, hi in ranges:
        check(lambda g, lo=lo, hi=hi: ea.empty(1027, dtype=dtype).random_(lo, hi, generator=g), 3, f"[{lo}, {hi})")
    check(lambda g: ea.empty(1027, dtype=dtype).random_(generator=g), 4, "random_()")
    check(lambda g: ea.empty(1027, dtype=dtype).bernoulli_(0.4, generator=g), 5, "bernoulli_")
    if dtype != ea.bool:
        check(lambda g: ea.empty(1027, dtype=dtype).geometric_(0.01, generator=g), 6, "geometric_")


@requires_emulation
def test_tensor_parameters_follow_the_cpu_layout() -> None:
    rng = np.random.default_rng(0)
    mean = ea.from_numpy(rng.standard_normal((33, 17)).astype(np.float32))
    std = ea.from_numpy(rng.uniform(0.1, 2.0, (33, 17)).astype(np.float32))
    p = ea.from_numpy(rng.uniform(0.0, 1.0, (33, 17)))
    draws: dict[str, Callable[[Any], Any]] = {
        "normal(T, T)": lambda g: ea.normal(mean, std, generator=g),
        "normal(T, s)": lambda g: ea.normal(mean, 0.5, generator=g),
        "normal(s, T)": lambda g: ea.normal(2.0, std, generator=g),
        "normal(T, T) float64": lambda g: ea.normal(mean.double(), std.double(), generator=g),
        "normal(T, T) half": lambda g: ea.normal(mean.half(), std.half(), generator=g),
        "bernoulli(T)": lambda g: ea.bernoulli(p, generator=g),
        "bernoulli_(T) transposed": lambda g: ea.empty(17, 33).t().bernoulli_(p.float(), generator=g),
        "randint": lambda g: ea.randint(-3, 1000, (5, 77), generator=g),
        "randn_like": lambda g: ea.randn_like(ea.empty(7, 9, dtype=ea.bfloat16), generator=g),
    }
    for name, draw in draws.items():
        check(draw, 11, name)


@pytest.mark.cuda
def test_multinomial_without_replacement_with_few_non_zero_weights_matches_the_cpu() -> None:
    # Fewer non-zero weights than samples: as PyTorch (CPU and CUDA share its exponential
    # race), no error -- the zero-weight categories come last; CUDA draws the CPU's numbers.
    w = ea.tensor([[0.0, 10.0, 3.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 2.0]])
    for seed in range(5):
        ea.manual_seed(seed)
        c = ea.multinomial(w, 4)
        ea.manual_seed(seed)
        g = ea.multinomial(w.cuda(), 4)
        assert g.is_cuda and g.dtype == ea.int64
        np.testing.assert_array_equal(g.cpu().numpy(), c.numpy())
        for row, nonzero in zip(g.cpu().tolist(), [{1, 2}, {0, 4}], strict=True):
            assert set(row[:2]) == nonzero and len(set(row)) == 4
    with pytest.raises(RuntimeError, match=r"cannot sample n_sample > prob_dist\.size\(-1\) samples without"):
        ea.multinomial(w.cuda(), 6)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        ea.multinomial(ea.zeros(2, 3, device="cuda"), 2)
