"""Random numbers: the Philox generator, the documented stream layout, reproducibility,
statistics, dtypes and errors of ember.aten's random operators.

The layout (csrc/native/cpu/DistributionsKernel.cpp) is checked value by value against a
reference computed here from ember.aten._C._philox_block (itself checked against the
Random123 known answers), so a future CUDA kernel can be held to the same numbers.
"""

from __future__ import annotations

import copy
import math
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

SEED = 20240611


# ---------------------------------------------------------------------------- helpers


def as_np(t: Any) -> np.ndarray:
    if t.dtype == ea.bfloat16:
        t = t.float()
    return t.numpy().copy()


def philox_words(seed: int, offset: int, nblocks: int) -> np.ndarray:
    """Blocks offset .. offset+nblocks-1 under key `seed`: uint32 array [nblocks, 4]."""
    rows = [ea._C._philox_block(seed, offset + b, 0) for b in range(nblocks)]
    return np.array(rows, dtype=np.uint32).reshape(nblocks, 4)


def words_for(n: int, per_block: int, seed: int = SEED, offset: int = 0) -> np.ndarray:
    return philox_words(seed, offset, -(-n // per_block))


def u24(w: np.ndarray) -> np.ndarray:
    return (w >> np.uint32(8)).astype(np.float64) * 2.0**-24


def u53(w: np.ndarray) -> np.ndarray:
    """The two 53-bit uniforms of each block: [nblocks, 2] float64."""
    w = w.astype(np.uint64)
    hi = w[:, 0::2]
    lo = w[:, 1::2]
    return ((hi << np.uint64(32) | lo) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def box_muller(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rho = np.sqrt(-2.0 * np.log1p(-a))
    return rho * np.cos(2 * np.pi * b), rho * np.sin(2 * np.pi * b)


def ref_normal(n: int, dtype: Any, seed: int = SEED, offset: int = 0) -> np.ndarray:
    if dtype == ea.float64:
        u = u53(words_for(n, 2, seed, offset))
        z0, z1 = box_muller(u[:, 0], u[:, 1])
        return np.stack([z0, z1], axis=1).reshape(-1)[:n]
    u = u24(words_for(n, 4, seed, offset))
    z0, z1 = box_muller(u[:, 0], u[:, 1])
    z2, z3 = box_muller(u[:, 2], u[:, 3])
    return np.stack([z0, z1, z2, z3], axis=1).reshape(-1)[:n]


def ref_uniform(n: int, dtype: Any, seed: int = SEED, offset: int = 0) -> np.ndarray:
    if dtype == ea.float64:
        return u53(words_for(n, 2, seed, offset)).reshape(-1)[:n]
    digits = {ea.float32: 24, ea.float16: 11, ea.bfloat16: 8}[dtype]
    w = words_for(n, 4, seed, offset).reshape(-1)[:n]
    return (w >> np.uint32(32 - digits)).astype(np.float64) * 2.0**-digits


def ref_int(n: int, rng: int, seed: int = SEED, offset: int = 0) -> list[int]:
    """Values in [0, rng) as the layout computes them (range <= 2^16: 32 bits each,
    <= 2^32: 64 bits, else the whole 128-bit block)."""
    if rng <= 1 << 16:
        w = words_for(n, 4, seed, offset).reshape(-1)[:n]
        return [(int(x) * rng) >> 32 for x in w]
    if rng <= 1 << 32:
        w = words_for(n, 2, seed, offset)
        out = []
        for row in w:
            for lane in range(2):
                v = int(row[2 * lane]) << 32 | int(row[2 * lane + 1])
                out.append((v * rng) >> 64)
        return out[:n]
    w = words_for(n, 1, seed, offset)
    out = []
    for row in w:
        v = int(row[0]) << 96 | int(row[1]) << 64 | int(row[2]) << 32 | int(row[3])
        out.append((v * rng) >> 128)
    return out


def state_of(g: Any) -> tuple[int, int]:
    return g._get_state()


def ks_statistic(samples: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = len(x)
    f = cdf(x)
    i = np.arange(1, n + 1)
    return float(max((i / n - f).max(), (f - (i - 1) / n).max()))


def ks_bound(n: int) -> float:
    # The Kolmogorov distribution's 0.1% critical value is 1.95 / sqrt(n).
    return 1.95 / math.sqrt(n)


def chi_square(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def chi_square_bound(dof: int) -> float:
    # mean + 6 standard deviations of a chi-square with `dof` degrees of freedom
    return dof + 6 * math.sqrt(2 * dof)


_erf = np.vectorize(math.erf)


def normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


@pytest.fixture
def threads() -> Iterator[None]:
    n = ea.get_num_threads()
    yield
    ea.set_num_threads(n)


# ---------------------------------------------------------------------------- Philox

# Random123's published known-answer vectors for Philox4x32-10 (its kat_vectors file):
# (counter words, key words, output words).
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


@pytest.mark.parametrize(("ctr", "key", "expected"), PHILOX_KAT)
def test_philox_known_answers(ctr: tuple[int, ...], key: tuple[int, int], expected: tuple[int, ...]) -> None:
    seed = key[0] | key[1] << 32
    counter = ctr[0] | ctr[1] << 32
    subsequence = ctr[2] | ctr[3] << 32
    assert tuple(ea._C._philox_block(seed, counter, subsequence)) == expected


# ---------------------------------------------------------------------------- the stream layout


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.float16, ea.bfloat16])
def test_rand_follows_the_layout(dtype: Any) -> None:
    ea.manual_seed(SEED)
    x = ea.rand(1001, dtype=dtype)
    np.testing.assert_array_equal(as_np(x).astype(np.float64), ref_uniform(1001, dtype))
    assert state_of(ea.default_generator) == (SEED, -(-1001 // (2 if dtype == ea.float64 else 4)))


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_randn_follows_the_layout(dtype: Any) -> None:
    g = ea.Generator().manual_seed(SEED)
    x = as_np(ea.randn(4003, generator=g, dtype=dtype))
    tol = 1e-13 if dtype == ea.float64 else 2e-6
    np.testing.assert_allclose(x, ref_normal(4003, dtype), rtol=tol, atol=tol)


def test_randn_half_is_float_rounded() -> None:
    g = ea.Generator().manual_seed(SEED)
    h = ea.randn(1000, generator=g, dtype=ea.float16)
    g.manual_seed(SEED)
    f = ea.randn(1000, generator=g, dtype=ea.float32)
    np.testing.assert_array_equal(as_np(h), as_np(f.half()))


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_exponential_cauchy_log_normal_follow_the_layout(dtype: Any) -> None:
    n = 999
    g = ea.Generator().manual_seed(SEED)
    tol = 1e-12 if dtype == ea.float64 else 2e-6
    if dtype == ea.float64:
        w = words_for(n, 2)
        u = u53(w).reshape(-1)[:n]
        hi, lo = w.astype(np.uint64)[:, 0::2], w.astype(np.uint64)[:, 1::2]
        uo = ((((hi << np.uint64(32) | lo) >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52).reshape(-1)[:n]
    else:
        w = words_for(n, 4).reshape(-1)[:n]
        u = u24(w)
        uo = ((w >> np.uint32(9)).astype(np.float64) + 0.5) * 2.0**-23

    e = as_np(ea.empty(n, dtype=dtype).exponential_(2.5, generator=g))
    np.testing.assert_allclose(e, -np.log1p(-u) / 2.5, rtol=tol, atol=tol)

    g.manual_seed(SEED)
    c = as_np(ea.empty(n, dtype=dtype).cauchy_(1.0, 3.0, generator=g))
    np.testing.assert_allclose(c, 1.0 + 3.0 * np.tan(np.pi * (uo - 0.5)), rtol=100 * tol, atol=tol)

    g.manual_seed(SEED)
    ln = as_np(ea.empty(n, dtype=dtype).log_normal_(0.5, 0.75, generator=g))
    np.testing.assert_allclose(ln, np.exp(0.5 + 0.75 * ref_normal(n, dtype)), rtol=4 * tol, atol=0)


@pytest.mark.parametrize(
    ("low", "high"),
    [(0, 10), (-7, 65529), (0, 1 << 16), (5, 100000), (0, 1 << 32), (-(1 << 40), 1 << 41), (-(1 << 63), (1 << 63) - 1)],
)
def test_randint_follows_the_layout(low: int, high: int) -> None:
    g = ea.Generator().manual_seed(SEED)
    x = ea.randint(low, high, (37,), generator=g)
    assert x.dtype == ea.int64
    assert x.tolist() == [low + v for v in ref_int(37, high - low)]


def test_random_full_int64_range_follows_the_layout() -> None:
    g = ea.Generator().manual_seed(SEED)
    x = ea.empty(9, dtype=ea.int64).random_(-(1 << 63), None, generator=g)
    expect = []
    for row in words_for(9, 1):
        v = int(row[0]) << 32 | int(row[1])  # range 2^64: the block's high 64 bits
        u = (v - (1 << 63)) % (1 << 64)  # base + v, wrapping
        expect.append(u - (1 << 64) if u >= 1 << 63 else u)
    assert x.tolist() == expect


def test_bernoulli_follows_the_layout() -> None:
    g = ea.Generator().manual_seed(SEED)
    p = np.linspace(0, 1, 501)
    x = ea.bernoulli(ea.from_numpy(p), generator=g)
    u = u53(words_for(501, 2)).reshape(-1)[:501]
    np.testing.assert_array_equal(as_np(x), (u < p).astype(np.float64))


def test_randperm_follows_the_layout() -> None:
    g = ea.Generator().manual_seed(SEED)
    n = 50
    perm = list(range(n))
    vals = words_for(n - 1, 4).reshape(-1)
    for k in range(n - 1):
        j = (int(vals[k]) * (n - k)) >> 32
        perm[n - 1 - k], perm[j] = perm[j], perm[n - 1 - k]
    assert ea.randperm(n, generator=g).tolist() == perm
    assert state_of(g) == (SEED, -(-(n - 1) // 4))


def test_multinomial_with_replacement_follows_the_layout() -> None:
    g = ea.Generator().manual_seed(SEED)
    p = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 1.0, 2.0]])
    x = ea.multinomial(ea.from_numpy(p), 5, replacement=True, generator=g)
    u = u53(words_for(10, 2)).reshape(-1)[:10].reshape(2, 5)
    cdf = np.cumsum(p, axis=1) / p.sum(axis=1, keepdims=True)
    expect = [[int(np.searchsorted(cdf[r], u[r, s], side="right")) for s in range(5)] for r in range(2)]
    assert x.tolist() == expect


def test_multinomial_without_replacement_follows_the_layout() -> None:
    g = ea.Generator().manual_seed(SEED)
    p = np.array([0.1, 0.0, 0.6, 0.3, 0.25])
    x = ea.multinomial(ea.from_numpy(p), 3, generator=g)
    u = u53(words_for(5, 2)).reshape(-1)[:5]
    keys = np.where(p > 0, p / -np.log1p(-u), -1.0)
    assert x.tolist() == list(np.argsort(-keys, kind="stable")[:3])


def test_draws_reserve_whole_blocks() -> None:
    """10 + 10 values is not 20 values: each draw starts at the next unused counter."""
    ea.manual_seed(SEED)
    whole = as_np(ea.rand(20))  # blocks 0..4
    ea.manual_seed(SEED)
    a = as_np(ea.rand(10))  # blocks 0..2 (block 2 half used)
    assert state_of(ea.default_generator) == (SEED, 3)
    b = as_np(ea.rand(10))  # blocks 3..5
    assert state_of(ea.default_generator) == (SEED, 6)
    np.testing.assert_array_equal(a, whole[:10])
    np.testing.assert_array_equal(b[:8], whole[12:20])
    assert not np.array_equal(b[:2], whole[10:12])
    np.testing.assert_array_equal(b, ref_uniform(10, ea.float32, offset=3))


def test_empty_draws_reserve_nothing() -> None:
    g = ea.Generator().manual_seed(SEED)
    assert ea.rand(0, generator=g).shape == (0,)
    assert ea.randn(3, 0, generator=g).shape == (3, 0)
    assert ea.randperm(1, generator=g).tolist() == [0]
    assert ea.randint(5, (0,), generator=g).numel() == 0
    assert state_of(g) == (SEED, 0)


def test_non_contiguous_outputs_are_filled_in_row_major_order() -> None:
    ea.manual_seed(SEED)
    ref = ea.rand(6, 4)
    ea.manual_seed(SEED)
    x = ea.empty(4, 6).t()
    assert not x.is_contiguous()
    x.uniform_()
    np.testing.assert_array_equal(as_np(x), as_np(ref))
    ea.manual_seed(SEED)
    y = ea.empty(6, 8)[:, ::2]
    y.normal_()
    ea.manual_seed(SEED)
    np.testing.assert_array_equal(as_np(y), as_np(ea.randn(6, 4)))


# ---------------------------------------------------------------------------- reproducibility


def test_manual_seed_reproduces_every_op() -> None:
    def draw() -> list[np.ndarray]:
        p = ea.full((4, 5), 0.5)
        return [
            as_np(ea.rand(100)),
            as_np(ea.randn(3, 7, dtype=ea.float64)),
            as_np(ea.randint(3, 9, (50,))),
            as_np(ea.randperm(33)),
            as_np(ea.bernoulli(p)),
            as_np(ea.multinomial(ea.rand(3, 8), 4)),
            as_np(ea.normal(ea.zeros(5), ea.ones(5))),
            as_np(ea.empty(20).exponential_()),
            as_np(ea.empty(20).cauchy_()),
            as_np(ea.empty(20).log_normal_()),
            as_np(ea.empty(20).geometric_(0.3)),
            as_np(ea.empty(20, dtype=ea.int32).random_()),
        ]

    ea.manual_seed(7)
    first = draw()
    ea.manual_seed(7)
    second = draw()
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    ea.manual_seed(8)
    third = draw()
    assert not np.array_equal(first[0], third[0])


def test_manual_seed_returns_the_default_generator() -> None:
    g = ea.manual_seed(123)
    assert g == ea.default_generator
    assert isinstance(g, ea.Generator)
    assert ea.initial_seed() == 123
    assert ea.manual_seed(-1).initial_seed() == 2**64 - 1


def test_generator_methods_return_the_generator() -> None:
    g = ea.Generator()
    assert g.manual_seed(5) is g
    assert g.set_state(g.get_state()) is g
    assert g.device == ea.device("cpu")
    assert repr(g) == "<ember.aten.Generator object on cpu>"
    assert hash(g) == hash(g.manual_seed(6))
    assert g != ea.Generator()


def test_default_seed_is_pytorchs() -> None:
    code = "import ember.aten as ea; print(ea.initial_seed(), ea.Generator().initial_seed())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split() == ["67280421310721", "67280421310721"]


def test_seed_picks_a_fresh_seed() -> None:
    s1 = ea.seed()
    assert ea.initial_seed() == s1
    s2 = ea.seed()
    assert s1 != s2
    assert 0 <= s1 < 2**64


def test_generators_are_independent() -> None:
    g1 = ea.Generator().manual_seed(SEED)
    g2 = ea.Generator().manual_seed(SEED)
    ea.manual_seed(0)
    before = ea.get_rng_state()
    a = as_np(ea.rand(50, generator=g1))
    assert ea.get_rng_state().tolist() == before.tolist()  # the default generator did not move
    b = as_np(ea.rand(50, generator=g2))
    np.testing.assert_array_equal(a, b)
    c = as_np(ea.rand(50, generator=g1))
    assert not np.array_equal(a, c)


def test_state_round_trip_continues_identically() -> None:
    g = ea.Generator().manual_seed(SEED)
    ea.rand(13, generator=g)
    state = g.get_state()
    assert state.dtype == ea.uint8 and state.shape == (16,)
    seed, offset = state_of(g)
    assert state.tolist() == list(seed.to_bytes(8, "little") + offset.to_bytes(8, "little"))
    a = [as_np(ea.randn(17, generator=g)), as_np(ea.randint(100, (9,), generator=g))]
    g.set_state(state)
    b = [as_np(ea.randn(17, generator=g)), as_np(ea.randint(100, (9,), generator=g))]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    # the state also moves between generators
    h = ea.Generator().set_state(state)
    np.testing.assert_array_equal(as_np(ea.randn(17, generator=h)), a[0])


def test_default_rng_state_round_trip() -> None:
    ea.manual_seed(SEED)
    ea.rand(3)
    state = ea.get_rng_state()
    a = as_np(ea.randn(11))
    ea.set_rng_state(state)
    np.testing.assert_array_equal(as_np(ea.randn(11)), a)


def test_fork_rng_restores_the_default_stream() -> None:
    ea.manual_seed(SEED)
    expect = as_np(ea.rand(5))
    ea.manual_seed(SEED)
    with ea.random.fork_rng():
        ea.manual_seed(99)
        ea.randn(100)
    np.testing.assert_array_equal(as_np(ea.rand(5)), expect)
    with ea.random.fork_rng(enabled=False):
        ea.rand(1)
    assert state_of(ea.default_generator) != (SEED, 2)


def test_generator_pickles_and_copies_with_its_state() -> None:
    g = ea.Generator().manual_seed(SEED)
    ea.rand(5, generator=g)
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h is not g and h != g
        assert state_of(h) == state_of(g)
    h = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(as_np(ea.rand(9, generator=h)), as_np(ea.rand(9, generator=g)))


def test_results_do_not_depend_on_the_number_of_threads(threads: None) -> None:
    def draw() -> list[np.ndarray]:
        g = ea.Generator().manual_seed(SEED)
        probs = ea.rand(300, 50, generator=g)
        return [
            as_np(ea.rand(1 << 20, generator=g)),
            as_np(ea.randn(1 << 20, generator=g)),
            as_np(ea.randn(1 << 19, generator=g, dtype=ea.float64)),
            as_np(ea.randint(1000, (1 << 20,), generator=g)),
            as_np(ea.bernoulli(ea.full((1 << 18,), 0.3), generator=g)),
            as_np(ea.empty(1 << 18).exponential_(generator=g)),
            as_np(ea.multinomial(probs, 20, generator=g)),
            as_np(ea.multinomial(probs, 20, True, generator=g)),
        ]

    ea.set_num_threads(1)
    one = draw()
    ea.set_num_threads(2)
    two = draw()
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)


def test_results_do_not_depend_on_the_cpu_capability() -> None:
    order = ["default", "avx2", "avx512"]
    capabilities = order[: order.index(ea._C._detected_cpu_capability()) + 1]

    def draw() -> list[np.ndarray]:
        g = ea.Generator().manual_seed(SEED)
        out = []
        for dt in (ea.float32, ea.float64, ea.float16, ea.bfloat16):
            out.append(as_np(ea.rand(4099, generator=g, dtype=dt)))
            out.append(as_np(ea.randn(4099, generator=g, dtype=dt)))
            out.append(as_np(ea.empty(4099, dtype=dt).uniform_(-3, 5, generator=g)))
            out.append(as_np(ea.empty(4099, dtype=dt).exponential_(0.5, generator=g)))
            out.append(as_np(ea.empty(4099, dtype=dt).cauchy_(1, 2, generator=g)))
            out.append(as_np(ea.empty(4099, dtype=dt).log_normal_(0.1, 0.5, generator=g)))
            out.append(as_np(ea.normal(ea.rand(4099, dtype=dt, generator=g), 2.0, generator=g)))
        return out

    previous = ea._C._get_cpu_capability()
    results = {}
    try:
        for cap in capabilities:
            ea._C._set_cpu_capability(cap)
            results[cap] = draw()
    finally:
        ea._C._set_cpu_capability(previous)
    base = results["default"]
    for cap, res in results.items():
        for a, b in zip(base, res, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"capability {cap}")


def test_every_op_takes_a_generator() -> None:
    """generator=g gives exactly what the default generator gives with the same seed."""
    calls: list[Callable[[Any], Any]] = [
        lambda g: ea.rand(7, generator=g),
        lambda g: ea.randn(7, generator=g),
        lambda g: ea.randint(2, 9, (7,), generator=g),
        lambda g: ea.randint(9, (7,), generator=g),
        lambda g: ea.randperm(7, generator=g),
        lambda g: ea.rand_like(ea.zeros(7), generator=g),
        lambda g: ea.randn_like(ea.zeros(7), generator=g),
        lambda g: ea.randint_like(ea.zeros(7), 5, generator=g),
        lambda g: ea.randint_like(ea.zeros(7), -5, 5, generator=g),
        lambda g: ea.normal(ea.zeros(7), 1.0, generator=g),
        lambda g: ea.normal(0.0, ea.ones(7), generator=g),
        lambda g: ea.normal(ea.zeros(7), ea.ones(7), generator=g),
        lambda g: ea.normal(0.0, 1.0, (7,), generator=g),
        lambda g: ea.bernoulli(ea.full((7,), 0.5), generator=g),
        lambda g: ea.bernoulli(ea.zeros(7), 0.5, generator=g),
        lambda g: ea.multinomial(ea.ones(7), 3, generator=g),
        lambda g: ea.zeros(7).uniform_(generator=g),
        lambda g: ea.zeros(7).normal_(generator=g),
        lambda g: ea.zeros(7).random_(generator=g),
        lambda g: ea.zeros(7).random_(10, generator=g),
        lambda g: ea.zeros(7).random_(3, 10, generator=g),
        lambda g: ea.zeros(7).exponential_(generator=g),
        lambda g: ea.zeros(7).cauchy_(generator=g),
        lambda g: ea.zeros(7).log_normal_(generator=g),
        lambda g: ea.zeros(7).geometric_(0.5, generator=g),
        lambda g: ea.zeros(7).bernoulli_(0.5, generator=g),
        lambda g: ea.zeros(7).bernoulli_(ea.full((7,), 0.5), generator=g),
    ]
    for i, call in enumerate(calls):
        g = ea.Generator().manual_seed(SEED + i)
        a = as_np(call(g))
        assert state_of(g)[1] > 0, f"call {i} drew nothing from its generator"
        ea.manual_seed(SEED + i)
        b = as_np(call(None))
        np.testing.assert_array_equal(a, b, err_msg=f"call {i}")


# ---------------------------------------------------------------------------- statistics

N = 1_000_000
N_KS = 200_000


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_uniform_statistics(dtype: Any) -> None:
    g = ea.Generator().manual_seed(1)
    x = as_np(ea.rand(N, generator=g, dtype=dtype))
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.002  # the mean's standard deviation is 0.00029
    assert abs(x.var() - 1 / 12) < 0.0005
    assert ks_statistic(x[:N_KS], lambda t: t) < ks_bound(N_KS)
    y = as_np(ea.empty(N_KS, dtype=dtype).uniform_(-2.0, 3.0, generator=g))
    assert y.min() >= -2.0 and y.max() < 3.0
    assert ks_statistic(y, lambda t: (t + 2.0) / 5.0) < ks_bound(N_KS)


@pytest.mark.parametrize("dtype", [ea.float16, ea.bfloat16])
def test_reduced_precision_uniform_stays_below_one(dtype: Any) -> None:
    g = ea.Generator().manual_seed(2)
    x = as_np(ea.rand(100_000, generator=g, dtype=dtype))
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    levels = 2048 if dtype == ea.float16 else 256
    assert len(np.unique(x)) == levels  # every representable multiple of 2^-digits appears
    y = as_np(ea.empty(100_000, dtype=dtype).uniform_(1.0, 2.0, generator=g))
    assert y.min() >= 1.0 and y.max() < 2.0


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_normal_statistics(dtype: Any) -> None:
    g = ea.Generator().manual_seed(3)
    x = as_np(ea.randn(N, generator=g, dtype=dtype))
    assert abs(x.mean()) < 0.005  # 5 standard deviations of the mean
    assert abs(x.var() - 1.0) < 0.007
    assert abs((x**3).mean()) < 0.02  # no skew
    assert abs((x**4).mean() - 3.0) < 0.06  # normal kurtosis
    assert ks_statistic(x[:N_KS], normal_cdf) < ks_bound(N_KS)
    y = as_np(ea.empty(N_KS, dtype=dtype).normal_(3.0, 0.5, generator=g))
    assert ks_statistic(y, lambda t: normal_cdf((t - 3.0) / 0.5)) < ks_bound(N_KS)


def test_normal_tensor_arguments_statistics() -> None:
    g = ea.Generator().manual_seed(4)
    mean = ea.tensor([-5.0, 0.0, 10.0]).reshape(3, 1).expand(3, 100_000)
    std = ea.tensor([0.5, 1.0, 4.0]).reshape(3, 1)
    x = as_np(ea.normal(mean, std, generator=g))
    assert x.shape == (3, 100_000)
    np.testing.assert_allclose(x.mean(axis=1), [-5.0, 0.0, 10.0], atol=0.05)
    np.testing.assert_allclose(x.std(axis=1), [0.5, 1.0, 4.0], rtol=0.02)
    y = as_np(ea.normal(2.0, ea.full((100_000,), 3.0), generator=g))
    assert abs(y.mean() - 2.0) < 0.05 and abs(y.std() - 3.0) < 0.05


def test_exponential_statistics() -> None:
    g = ea.Generator().manual_seed(5)
    x = as_np(ea.empty(N, dtype=ea.float64).exponential_(2.0, generator=g))
    assert x.min() >= 0.0
    assert abs(x.mean() - 0.5) < 0.003
    assert abs(x.var() - 0.25) < 0.005
    assert ks_statistic(x[:N_KS], lambda t: 1 - np.exp(-2.0 * t)) < ks_bound(N_KS)
    y = as_np(ea.empty(N_KS).exponential_(0.5, generator=g))
    assert ks_statistic(y, lambda t: 1 - np.exp(-0.5 * t)) < ks_bound(N_KS)


def test_cauchy_and_log_normal_statistics() -> None:
    g = ea.Generator().manual_seed(6)
    c = as_np(ea.empty(N_KS).cauchy_(1.0, 2.0, generator=g))
    assert np.isfinite(c).all()
    assert ks_statistic(c, lambda t: 0.5 + np.arctan((t - 1.0) / 2.0) / np.pi) < ks_bound(N_KS)
    ln = as_np(ea.empty(N_KS, dtype=ea.float64).log_normal_(0.3, 0.8, generator=g))
    assert ln.min() > 0
    assert ks_statistic(np.log(ln), lambda t: normal_cdf((t - 0.3) / 0.8)) < ks_bound(N_KS)


def test_geometric_statistics() -> None:
    g = ea.Generator().manual_seed(7)
    p = 0.3
    x = as_np(ea.empty(N, dtype=ea.int64).geometric_(p, generator=g))
    assert x.min() >= 1
    assert abs(x.mean() - 1 / p) < 0.02
    counts = np.array([(x == k).sum() for k in range(1, 11)] + [(x > 10).sum()], dtype=np.float64)
    probs = np.array([(1 - p) ** (k - 1) * p for k in range(1, 11)] + [(1 - p) ** 10])
    assert chi_square(counts, N * probs) < chi_square_bound(10)


@pytest.mark.parametrize(("low", "high"), [(0, 10), (-3, 4), (0, 100_003), (0, 3 << 30), (-(1 << 62), 1 << 62)])
def test_randint_statistics(low: int, high: int) -> None:
    g = ea.Generator().manual_seed(8)
    x = as_np(ea.randint(low, high, (N,), generator=g))
    assert x.min() >= low and x.max() < high
    # (up to) 10 classes of [low, high) of (nearly) equal size
    bins = min(10, high - low)
    width = (high - low) / bins
    cls = np.minimum(((x.astype(np.float64) - low) / width).astype(np.int64), bins - 1)
    counts = np.bincount(cls, minlength=bins).astype(np.float64)
    sizes = np.array([math.ceil(low + (k + 1) * width) - math.ceil(low + k * width) for k in range(bins)], np.float64)
    assert chi_square(counts, N * sizes / sizes.sum()) < chi_square_bound(bins - 1)
    if high - low <= 10:
        assert set(np.unique(x).tolist()) == set(range(low, high))


def test_randperm_is_a_uniform_permutation() -> None:
    g = ea.Generator().manual_seed(9)
    for n in (2, 3, 10, 1000, 70_000):
        p = ea.randperm(n, generator=g)
        assert p.dtype == ea.int64
        assert sorted(p.tolist()) == list(range(n))
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(6000):
        key = tuple(ea.randperm(3, generator=g).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    assert chi_square(np.array(list(counts.values()), np.float64), np.full(6, 1000.0)) < chi_square_bound(5)
    # where element 0 lands, over many permutations of 50
    pos = np.array([ea.randperm(50, generator=g).tolist().index(0) for _ in range(5000)])
    assert chi_square(np.bincount(pos, minlength=50).astype(np.float64), np.full(50, 100.0)) < chi_square_bound(49)


@pytest.mark.parametrize("dtype", [ea.int32, ea.int16, ea.float32, ea.float64, ea.float16])
def test_randperm_dtypes(dtype: Any) -> None:
    p = ea.randperm(100, dtype=dtype)
    assert p.dtype == dtype
    assert sorted(as_np(p).astype(np.int64).tolist()) == list(range(100))
    out = ea.empty(3, dtype=dtype)
    r = ea.randperm(100, out=out)
    assert r is out and out.shape == (100,)


def test_bernoulli_statistics_and_dtypes() -> None:
    g = ea.Generator().manual_seed(10)
    for dtype in (ea.float32, ea.float64, ea.float16):
        x = ea.bernoulli(ea.full((N,), 0.3, dtype=dtype), generator=g)
        assert x.dtype == dtype
        v = as_np(x)
        assert set(np.unique(v).tolist()) <= {0.0, 1.0}
        assert abs(v.mean() - 0.3) < 0.003
    for dtype in (ea.bool, ea.uint8, ea.int64, ea.float32):
        y = ea.empty(100_000, dtype=dtype).bernoulli_(0.75, generator=g)
        assert y.dtype == dtype
        assert abs(as_np(y).astype(np.float64).mean() - 0.75) < 0.01
    probs = ea.tensor([0.0, 0.1, 0.5, 0.9, 1.0]).reshape(5, 1).expand(5, 50_000)
    z = as_np(ea.bernoulli(probs, generator=g))
    np.testing.assert_allclose(z.mean(axis=1), [0.0, 0.1, 0.5, 0.9, 1.0], atol=0.01)
    p = ea.bernoulli(ea.zeros(4, 3), 0.25, generator=g)
    assert p.shape == (4, 3) and p.dtype == ea.float32


def test_bernoulli_p_zero_and_one() -> None:
    g = ea.Generator().manual_seed(11)
    assert not as_np(ea.bernoulli(ea.zeros(10_000), generator=g)).any()
    assert as_np(ea.bernoulli(ea.ones(10_000), generator=g)).all()
    assert not as_np(ea.empty(10_000).bernoulli_(0.0, generator=g)).any()
    assert as_np(ea.empty(10_000).bernoulli_(1.0, generator=g)).all()
    assert as_np(ea.empty(10_000, dtype=ea.bool).bernoulli_(ea.ones(1), generator=g)).all()


def test_multinomial_statistics() -> None:
    g = ea.Generator().manual_seed(12)
    p = np.array([0.05, 0.0, 0.25, 0.4, 0.3])
    x = as_np(ea.multinomial(ea.from_numpy(p * 7), 200_000, replacement=True, generator=g))
    counts = np.bincount(x, minlength=5).astype(np.float64)
    assert counts[1] == 0
    keep = p > 0
    assert chi_square(counts[keep], 200_000 * p[keep]) < chi_square_bound(3)
    # without replacement: the first pick follows p, the second p_j / (1 - p_i)
    rows = ea.from_numpy(np.tile(p, (40_000, 1)))
    y = as_np(ea.multinomial(rows, 2, generator=g))
    assert (y[:, 0] != y[:, 1]).all()
    first = np.bincount(y[:, 0], minlength=5).astype(np.float64)
    assert first[1] == 0
    assert chi_square(first[keep], 40_000 * p[keep]) < chi_square_bound(3)
    pair = (y[:, 0] == 3) & (y[:, 1] == 4)
    expect = p[3] * p[4] / (1 - p[3])
    assert abs(pair.mean() - expect) < 5 * math.sqrt(expect * (1 - expect) / 40_000)


def test_multinomial_shapes_and_edge_cases() -> None:
    g = ea.Generator().manual_seed(13)
    w = ea.tensor([0.0, 10.0, 3.0, 0.0])
    assert sorted(ea.multinomial(w, 2, generator=g).tolist()) == [1, 2]
    full = ea.multinomial(ea.rand(6, generator=g), 6, generator=g)
    assert sorted(full.tolist()) == list(range(6))
    two_d = ea.multinomial(ea.rand(3, 9, generator=g), 4, generator=g)
    assert two_d.shape == (3, 4) and two_d.dtype == ea.int64
    assert all(len(set(r)) == 4 for r in two_d.tolist())
    # zero-probability categories come last when more samples than non-zeros are drawn
    assert ea.multinomial(w, 4, generator=g).tolist()[:2] in ([1, 2], [2, 1])
    out = ea.empty(7, dtype=ea.int64)
    r = ea.multinomial(w, 5, True, generator=g, out=out)
    assert r is out and out.shape == (5,)
    assert set(out.tolist()) <= {1, 2}
    assert ea.multinomial(ea.rand(0, 5), 3, generator=g).shape == (0, 3)
    assert ea.rand(4, generator=g).multinomial(2).shape == (2,)


def test_random_ranges_per_dtype() -> None:
    g = ea.Generator().manual_seed(14)
    for dtype, lo, hi in [(ea.uint8, 0, 255), (ea.int8, 0, 127), (ea.int16, 0, 32767), (ea.bool, 0, 1)]:
        x = as_np(ea.empty(200_000, dtype=dtype).random_(generator=g)).astype(np.int64)
        assert x.min() == lo and x.max() == hi
    x = as_np(ea.empty(100_000, dtype=ea.int32).random_(generator=g))
    assert x.min() >= 0 and x.max() > 2**30
    f = as_np(ea.empty(100_000).random_(generator=g))
    assert f.min() >= 0 and f.max() <= 2**24 and (f == np.round(f)).all() and f.max() > 2**23
    h = as_np(ea.empty(100_000, dtype=ea.float16).random_(generator=g))
    assert h.min() == 0 and h.max() == 2048
    y = as_np(ea.empty(100_000, dtype=ea.int8).random_(-5, None, generator=g))
    assert y.min() == -5 and y.max() == 127
    z = as_np(ea.empty(10_000, dtype=ea.int64).random_(-3, 3, generator=g))
    assert set(np.unique(z).tolist()) == {-3, -2, -1, 0, 1, 2}
    t = as_np(ea.empty(10_000, dtype=ea.int64).random_(4, generator=g))
    assert set(np.unique(t).tolist()) == {0, 1, 2, 3}
    big = as_np(ea.empty(10_000, dtype=ea.int64).random_(generator=g))
    assert big.min() >= 0 and big.max() > 2**62
    full = as_np(ea.empty(10_000, dtype=ea.int64).random_(-(2**63), None, generator=g))
    assert full.min() < -(2**62) and full.max() > 2**62


# ---------------------------------------------------------------------------- dtypes and devices


def test_factory_dtypes_and_defaults() -> None:
    assert ea.rand(2, 3).dtype == ea.float32
    assert ea.rand((2, 3)).shape == (2, 3)
    assert ea.randn(()).shape == ()
    assert ea.rand(2, dtype=ea.float64).dtype == ea.float64
    assert ea.randn(2, dtype=ea.bfloat16).dtype == ea.bfloat16
    assert ea.randint(5, (2,)).dtype == ea.int64
    r = ea.randint(5, (1000,), dtype=ea.float32)
    assert r.dtype == ea.float32 and set(np.unique(as_np(r)).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    b = ea.randint(0, 2, (100,), dtype=ea.bool)
    assert b.dtype == ea.bool and set(b.tolist()) == {False, True}
    assert ea.randperm(4).dtype == ea.int64
    assert ea.normal(0.0, 1.0, (3,)).dtype == ea.float32
    assert ea.normal(0.0, 1.0, (3,), dtype=ea.float64).dtype == ea.float64
    assert ea.rand(2, device="cpu").device == ea.device("cpu")
    assert ea.rand(2, requires_grad=True).requires_grad
    assert ea.randn(size=(2, 3)).shape == (2, 3)
    previous = ea.get_default_dtype()
    try:
        ea.set_default_dtype(ea.float64)
        assert ea.rand(2).dtype == ea.float64
        assert ea.randn(2).dtype == ea.float64
    finally:
        ea.set_default_dtype(previous)


def test_like_factories() -> None:
    x = ea.zeros(3, 4, dtype=ea.float64)
    for f in (ea.rand_like, ea.randn_like):
        y = f(x)
        assert y.shape == (3, 4) and y.dtype == ea.float64
        assert f(x, dtype=ea.float16).dtype == ea.float16
    i = ea.randint_like(x, 10)
    assert i.dtype == ea.float64 and as_np(i).max() < 10 and (as_np(i) == np.round(as_np(i))).all()
    j = ea.randint_like(ea.zeros(1000, dtype=ea.int32), -2, 2)
    assert j.dtype == ea.int32 and set(j.tolist()) == {-2, -1, 0, 1}
    # a permuted input keeps its layout, and the values are those of the logical order
    t = ea.zeros(4, 6).t()
    ea.manual_seed(SEED)
    a = ea.rand_like(t)
    assert a.stride() == t.stride()
    ea.manual_seed(SEED)
    np.testing.assert_array_equal(as_np(a), as_np(ea.rand(6, 4)))


def test_out_variants() -> None:
    out = ea.empty(2, 2)
    ea.manual_seed(SEED)
    r = ea.rand(5, out=out)
    assert r is out and out.shape == (5,)
    ea.manual_seed(SEED)
    np.testing.assert_array_equal(as_np(out), as_np(ea.rand(5)))
    ea.manual_seed(SEED)
    o2 = ea.empty(0, dtype=ea.float64)
    ea.randn(3, 3, out=o2)
    ea.manual_seed(SEED)
    np.testing.assert_array_equal(as_np(o2), as_np(ea.randn(3, 3, dtype=ea.float64)))
    o3 = ea.empty(4, dtype=ea.int32)
    assert ea.randint(3, 7, (6,), out=o3) is o3 and o3.dtype == ea.int32 and o3.shape == (6,)
    assert ea.randint(7, (2,), out=o3) is o3 and o3.shape == (2,)
    o4 = ea.empty(3)
    assert ea.normal(ea.zeros(3), 1.0, out=o4) is o4
    assert ea.normal(0.0, ea.ones(2, 2), out=o4) is o4 and o4.shape == (2, 2)
    assert ea.normal(ea.zeros(3, 1), ea.ones(4), out=o4) is o4 and o4.shape == (3, 4)
    assert ea.normal(1.0, 2.0, (5,), out=o4) is o4 and o4.shape == (5,)
    o5 = ea.empty(1)
    assert ea.bernoulli(ea.full((2, 3), 0.5), out=o5) is o5 and o5.shape == (2, 3)


def test_in_place_ops_return_self() -> None:
    x = ea.zeros(5)
    for call in (
        lambda t: t.uniform_(),
        lambda t: t.normal_(),
        lambda t: t.random_(),
        lambda t: t.random_(4),
        lambda t: t.random_(1, 4),
        lambda t: t.exponential_(),
        lambda t: t.cauchy_(),
        lambda t: t.log_normal_(),
        lambda t: t.geometric_(0.2),
        lambda t: t.bernoulli_(),
        lambda t: t.bernoulli_(ea.rand(5)),
    ):
        v = x._version
        assert call(x) is x
        assert x._version > v


def test_normal_broadcasts_mean_and_std() -> None:
    y = ea.normal(ea.zeros(3, 1), ea.ones(1, 4))
    assert y.shape == (3, 4) and y.dtype == ea.float32
    z = ea.normal(ea.zeros(3, dtype=ea.float64))
    assert z.dtype == ea.float64
    assert as_np(ea.normal(ea.full((4,), 7.0), 0.0)).tolist() == [7.0] * 4
    assert as_np(ea.normal(ea.full((4,), 7.0), ea.zeros(4))).tolist() == [7.0] * 4
    assert ea.normal(ea.zeros(()), 1.0).shape == ()


# ---------------------------------------------------------------------------- errors


def test_rand_and_randn_reject_integer_dtypes() -> None:
    with pytest.raises(RuntimeError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        ea.rand(3, dtype=ea.int64)
    with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Int'"):
        ea.randn(3, dtype=ea.int32)
    with pytest.raises(RuntimeError, match="\"check_uniform_bounds\" not implemented for 'Bool'"):
        ea.rand_like(ea.zeros(2, dtype=ea.bool))
    with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        ea.normal(ea.zeros(2, dtype=ea.int64), 1.0)
    with pytest.raises(RuntimeError, match="\"exponential_cpu\" not implemented for 'Long'"):
        ea.zeros(2, dtype=ea.int64).exponential_()
    with pytest.raises(RuntimeError, match="\"log_normal_cpu\" not implemented for 'Long'"):
        ea.zeros(2, dtype=ea.int64).log_normal_()
    with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous probability distribution"):
        ea.zeros(2, dtype=ea.int64).cauchy_()
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1"):
        ea.rand(2, -1)


def test_parameter_errors() -> None:
    x = ea.zeros(3)
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: x.normal_(0, -1.0), "normal expects std >= 0.0, but found std -1"),
        (lambda: ea.normal(ea.zeros(2), -1.0), "normal expects std >= 0.0"),
        (lambda: ea.normal(0.0, ea.tensor([1.0, -1.0])), "normal expects all elements of std >= 0.0"),
        (lambda: ea.normal(ea.zeros(2), ea.tensor([1.0, float("nan")])), "normal expects all elements of std >= 0.0"),
        (lambda: ea.normal(0.0, -2.0, (3,)), "normal expects std >= 0.0"),
        (lambda: ea.normal(ea.zeros(2), ea.ones(3)), "must match"),
        (lambda: x.uniform_(1.0, 0.0), r"uniform_ expects to return a \[from, to\) range, but found from=1 > to=0"),
        (lambda: ea.zeros(2, dtype=ea.float16).uniform_(-1e6, 1), "from is out of bounds for float16"),
        (lambda: ea.zeros(2, dtype=ea.float16).uniform_(-60000, 60000), "uniform_ expects to-from <= std::numeric"),
        (lambda: x.exponential_(0.0), "exponential_ expects lambda > 0.0, but found lambda=0"),
        (lambda: x.cauchy_(0.0, 0.0), "cauchy_ expects sigma > 0.0"),
        (lambda: x.log_normal_(1.0, 0.0), "log_normal_ expects std > 0.0, but found std=0"),
        (lambda: x.geometric_(0.0), r"geometric_ expects p to be in \(0, 1\), but got p=0"),
        (lambda: x.geometric_(1.0), r"geometric_ expects p to be in \(0, 1\)"),
        (lambda: x.bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"),
        (lambda: x.bernoulli_(-0.1), r"bernoulli_ expects p to be in \[0, 1\]"),
        (lambda: x.bernoulli_(ea.tensor([0.5, 1.5, 0.0])), "Expected p_in >= 0 && p_in <= 1 to be true"),
        (lambda: ea.bernoulli(ea.tensor([0.5, float("nan")])), "Expected p_in >= 0 && p_in <= 1 to be true"),
        (lambda: ea.bernoulli(ea.tensor([1, 0])), "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"),
        (lambda: ea.bernoulli(x, 2.0), r"bernoulli_ expects p to be in \[0, 1\]"),
        (lambda: ea.randint(0, (3,)), "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
        (lambda: ea.randint(5, 2, (3,)), "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
        (lambda: ea.randint(0, 300, (3,), dtype=ea.uint8), "to - 1 is out of bounds for uint8"),
        (lambda: ea.randint(-1, 3, (3,), dtype=ea.uint8), "from is out of bounds for uint8"),
        (lambda: ea.zeros(2, dtype=ea.int8).random_(0, 200), "to - 1 is out of bounds for int8"),
        (lambda: ea.zeros(2, dtype=ea.bool).random_(0, 3), "to - 1 is out of bounds for bool"),
        (lambda: ea.zeros(2, dtype=ea.float16).random_(70000, None), "random_ expects 'from' casted to dtype"),
        (
            lambda: ea.zeros(2, dtype=ea.int8).random_(-(2**63), None),
            "random_full_64_bits_range_kernel_cpu handles only",
        ),
        (lambda: ea.randperm(-1), "n must be non-negative, got"),
        (lambda: ea.randperm(300, dtype=ea.uint8), "n is too large for result tensor type: 'uint8'"),
        (lambda: ea.randperm(3000, dtype=ea.float16), "n cannot be greater than 2049 for Half type."),
        (lambda: ea.randperm(300, dtype=ea.bfloat16), "n cannot be greater than 257 for BFloat16 type."),
        (lambda: ea.zeros(1, 3).expand(4, 3).uniform_(), "unsupported operation: more than one element"),
        (lambda: ea.zeros(1, 3).expand(4, 3).normal_(), "unsupported operation: more than one element"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_multinomial_errors() -> None:
    p = ea.tensor([0.2, 0.8])
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: ea.multinomial(ea.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
        (lambda: ea.multinomial(ea.tensor(0.5), 1), "prob_dist must be 1 or 2 dim"),
        (
            lambda: ea.multinomial(ea.tensor([1, 2]), 1),
            "multinomial only supports floating-point dtypes for input, got: Long",
        ),
        (lambda: ea.multinomial(p, 0), "cannot sample n_sample <= 0 samples"),
        (lambda: ea.multinomial(p, 3), r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement"),
        (
            lambda: ea.multinomial(ea.tensor([0.5, -0.1]), 1),
            "probability tensor contains either `inf`, `nan` or element < 0",
        ),
        (lambda: ea.multinomial(ea.tensor([0.5, float("inf")]), 1), "probability tensor contains either `inf`, `nan`"),
        (lambda: ea.multinomial(ea.tensor([0.5, float("nan")]), 2), "probability tensor contains either `inf`, `nan`"),
        (lambda: ea.multinomial(ea.zeros(2, 3), 2), r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
        (lambda: ea.multinomial(ea.tensor([0.5, -0.1]), 3, True), r"\(encountering probability entry < 0\)"),
        (
            lambda: ea.multinomial(ea.tensor([0.5, float("inf")]), 3, True),
            r"\(encountering probability entry = infinity or NaN\)",
        ),
        (
            lambda: ea.multinomial(ea.zeros(3), 3, True),
            r"invalid multinomial distribution \(sum of probabilities <= 0\)",
        ),
        (lambda: ea.multinomial(p, 2, out=ea.empty(2)), "multinomial expects Long tensor out, got: Float"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_generator_errors() -> None:
    cuda_gen = ea.Generator("cuda:0")
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        ea.rand(3, generator=cuda_gen)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        ea.randperm(3, generator=cuda_gen)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        ea.zeros(3).bernoulli_(0.5, generator=cuda_gen)
    g = ea.Generator()
    with pytest.raises(TypeError, match=r"RNG state must be an ember\.aten\.ByteTensor"):
        g.set_state(ea.zeros(16))
    with pytest.raises(TypeError, match=r"RNG state must be an ember\.aten\.ByteTensor"):
        g.set_state(b"0123456789abcdef")
    with pytest.raises(TypeError, match=r"RNG state must be an ember\.aten\.ByteTensor"):
        ea.set_rng_state([0] * 16)
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        g.set_state(ea.zeros(15, dtype=ea.uint8))
    with pytest.raises(ValueError, match="Overflow when unpacking long"):
        ea.manual_seed(2**64)
    with pytest.raises(ValueError, match="Overflow when unpacking long"):
        g.manual_seed(-(2**63) - 1)
    with pytest.raises(TypeError):
        ea.rand(3, generator="not a generator")
    # a failed call leaves the state alone
    g.manual_seed(1)
    with pytest.raises(RuntimeError):
        ea.randint(3, 3, (5,), generator=g)
    assert state_of(g) == (1, 0)
