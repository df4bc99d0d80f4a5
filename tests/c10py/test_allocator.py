"""The caching CPU allocator: alignment, size classes, block reuse, statistics, cache cap.

The allocator is process-wide, so every check here is on differences of its counters
measured around the test's own allocations, with sizes no other test uses.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from ember.c10py import _C

MiB = 1 << 20


def stats() -> dict[str, int]:
    return _C.memory_stats(_C.device("cpu"))


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in before}


@pytest.fixture(autouse=True)
def cache_limit() -> Iterator[None]:
    """A known cache cap (EMBER_CPU_CACHE_MB may have set another), restored afterwards."""
    old = _C.cpu_cache_limit()
    _C.set_cpu_cache_limit(1 << 30)
    yield
    _C.set_cpu_cache_limit(old)


@pytest.fixture(autouse=True)
def _quiet_gc() -> Iterator[None]:
    # A collection in the middle of a test could free some other test's storage.
    gc.collect()
    gc.disable()
    yield
    gc.enable()


SIZES = [1, 7, 63, 64, 65, 100, 127, 128, 255, 256, 257, 1000, 4095, 4096, 4097, 65537, 1 << 20, (1 << 20) + 3]


@pytest.mark.parametrize("nbytes", SIZES)
def test_alignment(nbytes: int) -> None:
    storages = [_C.StorageImpl(nbytes) for _ in range(4)]
    for s in storages:
        assert s.data_ptr % 64 == 0
        assert s.nbytes == nbytes
    assert len({s.data_ptr for s in storages}) == 4


def test_zero_byte_allocation_has_no_memory() -> None:
    before = stats()
    s = _C.StorageImpl(0)
    assert s.data_ptr == 0 and s.nbytes == 0
    assert delta(before, stats())["allocated_bytes"] == 0


def round_size(n: int) -> int:
    return _C.cpu_allocator_round_size(n)


def test_round_size_classes() -> None:
    for n in [*range(1, 5000), *(int(1.1**k) for k in range(90, 420)), *(1 << k for k in range(12, 62))]:
        c = round_size(n)
        assert c >= n
        assert c % 64 == 0
        # four classes per power of two (at most 25% slack), never finer than 64 bytes
        assert c - n < max(64, n // 4 + 1), (n, c)
        assert round_size(c) == c  # a class is its own class


@pytest.mark.parametrize("k", range(8, 40))
def test_four_classes_per_power_of_two(k: int) -> None:
    p = 1 << k
    expected = [p + p // 4, p + p // 2, p + 3 * p // 4, 2 * p]
    assert round_size(p) == p
    assert round_size(p + 1) == expected[0]
    assert sorted({round_size(n) for n in range(p + 1, 2 * p + 1, max(1, p // 64))}) == expected


def test_small_sizes_share_64_byte_classes() -> None:
    assert [round_size(n) for n in (0, 1, 63, 64, 65, 128, 129, 192, 193, 256)] == [
        64, 64, 64, 64, 128, 128, 192, 192, 256, 256,
    ]  # fmt: skip


def test_round_size_overflow_is_out_of_memory() -> None:
    with pytest.raises(_C.OutOfMemoryError, match="tried to allocate"):
        round_size((1 << 64) - 1)


def test_huge_allocation_is_out_of_memory() -> None:
    with pytest.raises(_C.OutOfMemoryError, match="CPU out of memory: tried to allocate"):
        _C.StorageImpl(1 << 62)
    with pytest.raises(MemoryError):
        _C.StorageImpl((1 << 63) - 1)


def test_freed_block_is_reused() -> None:
    n = 3 * MiB + 12345
    s = _C.StorageImpl(n)
    ptr = s.data_ptr
    del s
    before = stats()
    s2 = _C.StorageImpl(round_size(n) - 10)  # another request of the same class
    d = delta(before, stats())
    assert s2.data_ptr == ptr
    assert d["num_cache_hits"] == 1
    assert d["num_device_allocs"] == 0
    assert d["num_allocs"] == 1
    assert d["cached_bytes"] == -round_size(n)
    assert d["allocated_bytes"] == round_size(n)
    assert d["reserved_bytes"] == 0


def test_different_class_is_not_reused() -> None:
    n = 5 * MiB + 1
    s = _C.StorageImpl(n)
    del s
    before = stats()
    other = _C.StorageImpl(7 * MiB + 1)
    d = delta(before, stats())
    assert d["num_cache_hits"] == 0
    assert d["num_device_allocs"] == 1
    del other


def test_stats_follow_allocations() -> None:
    n = 6 * MiB + 17
    c = round_size(n)
    _C.empty_cache()
    before = stats()
    assert before["cached_bytes"] == 0
    assert before["reserved_bytes"] == before["allocated_bytes"]

    a = _C.StorageImpl(n)
    d = delta(before, stats())
    assert d["allocated_bytes"] == c and d["reserved_bytes"] == c and d["cached_bytes"] == 0
    assert d["num_allocs"] == 1 and d["num_device_allocs"] == 1 and d["num_frees"] == 0

    del a
    d = delta(before, stats())
    assert d["allocated_bytes"] == 0 and d["reserved_bytes"] == c and d["cached_bytes"] == c
    assert d["num_frees"] == 1

    s = stats()
    assert s["reserved_bytes"] == s["allocated_bytes"] + s["cached_bytes"]

    _C.empty_cache()
    d = delta(before, stats())
    assert d["reserved_bytes"] == 0 and d["cached_bytes"] == 0
    assert stats()["cached_bytes"] == 0


def test_peak_and_reset_peak() -> None:
    n = 9 * MiB
    _C.reset_peak_memory_stats()
    base = stats()
    assert base["peak_allocated_bytes"] == base["allocated_bytes"]
    assert base["peak_reserved_bytes"] == base["reserved_bytes"]
    a = _C.StorageImpl(n)
    b = _C.StorageImpl(n)
    high = stats()
    assert high["peak_allocated_bytes"] == base["allocated_bytes"] + 2 * round_size(n)
    del a, b
    after = stats()
    assert after["allocated_bytes"] == base["allocated_bytes"]
    assert after["peak_allocated_bytes"] == high["peak_allocated_bytes"]  # the peak stays
    _C.reset_peak_memory_stats()
    reset = stats()
    assert reset["peak_allocated_bytes"] == reset["allocated_bytes"]
    assert reset["peak_reserved_bytes"] == reset["reserved_bytes"]


def test_empty_cache_drops_cached_bytes() -> None:
    blocks = [_C.StorageImpl(n) for n in (MiB + 1, 2 * MiB + 1, 100, 4097)]
    del blocks
    assert stats()["cached_bytes"] > 0
    _C.empty_cache()
    assert stats()["cached_bytes"] == 0
    _C.empty_cache("cpu")  # idempotent; the device may be given as a string


def test_cache_limit_caps_the_cache() -> None:
    _C.empty_cache()
    _C.set_cpu_cache_limit(3 * MiB)
    assert _C.cpu_cache_limit() == 3 * MiB
    before = stats()
    blocks = [_C.StorageImpl(MiB) for _ in range(6)]
    del blocks
    d = delta(before, stats())
    assert stats()["cached_bytes"] <= 3 * MiB
    assert d["cached_bytes"] == 3 * MiB  # three blocks kept, three returned to the OS
    assert d["reserved_bytes"] == 3 * MiB
    assert d["num_frees"] == 6


def test_lowering_the_limit_trims_the_cache() -> None:
    _C.empty_cache()
    blocks = [_C.StorageImpl(MiB) for _ in range(4)]
    del blocks
    assert stats()["cached_bytes"] == 4 * MiB
    _C.set_cpu_cache_limit(MiB)
    assert stats()["cached_bytes"] <= MiB


def test_zero_limit_disables_caching() -> None:
    _C.empty_cache()
    _C.set_cpu_cache_limit(0)
    before = stats()
    s = _C.StorageImpl(2 * MiB)
    del s
    s = _C.StorageImpl(2 * MiB)
    d = delta(before, stats())
    assert d["num_cache_hits"] == 0 and d["num_device_allocs"] == 2
    assert stats()["cached_bytes"] == 0
    del s


def test_memory_stats_keys() -> None:
    assert set(stats()) == {
        "allocated_bytes",
        "peak_allocated_bytes",
        "reserved_bytes",
        "peak_reserved_bytes",
        "cached_bytes",
        "num_allocs",
        "num_frees",
        "num_cache_hits",
        "num_device_allocs",
    }
    assert _C.memory_stats() == stats()
