"""ember.c10py's CUDA layer.

Two tiers: tests that run everywhere (how the build was configured, and what a
machine without a usable GPU must do: report it, and fail clearly) and tests marked
``cuda`` that need a device (the caching allocator, streams, events, pinned memory).
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
import threading

import ember.c10py as c10
import pytest
from ember.c10py import _C

cuda = _C.cuda

KiB = 1 << 10
MiB = 1 << 20

needs_gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no CUDA device ({cuda.availability_error()})")
no_gpu = pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is present")


def gpu(test):
    return pytest.mark.cuda(needs_gpu(test))


# ---- everywhere ------------------------------------------------------------------


def test_build_info_matches_runtime():
    info = _C._build_info
    assert info["cuda_compiled"] == cuda.is_compiled()
    if cuda.is_compiled():
        assert info["nvcc_found"]
        # the configured list: one architecture on a machine without a GPU (the build session's
        # default), all of them for release wheels
        assert re.fullmatch(r"\d+(-real|-virtual)?(,\d+(-real|-virtual)?)*", info["cuda_archs"]), info["cuda_archs"]


def test_cuda_compiled_whenever_nvcc_is_found():
    # A build that found nvcc but left CUDA out would silently ship a CPU-only wheel.
    info = _C._build_info
    if info["nvcc_found"]:
        assert cuda.is_compiled()
    wanted = os.environ.get("EMBER_CUDA", "AUTO").upper() != "OFF"
    if shutil.which("nvcc") and wanted:
        assert info["nvcc_found"], "nvcc is on PATH but the build did not find it"
        assert cuda.is_compiled(), "nvcc was found at build time but ember.c10py was built without CUDA"


def test_device_count_agrees_with_is_available():
    n = cuda.device_count()
    assert n >= 0
    assert cuda.is_available() == (n > 0)
    assert (cuda.availability_error() == "") == cuda.is_available()


def test_event_needs_no_device_until_recorded():
    if not cuda.is_compiled():
        pytest.skip("built without CUDA")
    e = cuda.Event(enable_timing=True)
    assert e.query()  # never recorded: nothing pending, as in PyTorch
    e.synchronize()
    assert e.device is None


def test_interprocess_event_cannot_time():
    if not cuda.is_compiled():
        pytest.skip("built without CUDA")
    with pytest.raises(ValueError, match="interprocess"):
        cuda.Event(enable_timing=True, interprocess=True)


def test_hidden_devices_read_as_unavailable():
    # CUDA_VISIBLE_DEVICES="" hides every GPU: the runtime's "no device" error must
    # become is_available() == False, in a fresh process (the count is cached).
    code = (
        "import ember.c10py as c10\n"
        "cu = c10.cuda\n"
        "assert cu.device_count() == 0 and not cu.is_available()\n"
        "assert cu.availability_error()\n"
        "try:\n"
        "    c10.StorageImpl(16, c10.device('cuda'))\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('allocated without a device')\n"
    )
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    expected = "no CUDA device is available" if cuda.is_compiled() else "without CUDA"
    assert expected in r.stdout


# ---- without a usable GPU --------------------------------------------------------


@no_gpu
def test_no_gpu_reports_unavailable():
    assert not cuda.is_available()
    assert cuda.device_count() == 0
    assert cuda.availability_error() != ""


@no_gpu
def test_no_gpu_allocation_raises():
    expected = "no CUDA device is available" if cuda.is_compiled() else "without CUDA"
    with pytest.raises(RuntimeError, match=expected) as info:
        c10.StorageImpl(16, c10.device("cuda"))
    if cuda.is_compiled():
        assert cuda.availability_error() in str(info.value)
    with pytest.raises(RuntimeError, match=expected):
        c10.StorageImpl(16, c10.device("cuda:0"))


@no_gpu
def test_no_gpu_device_guard_raises():
    with pytest.raises(RuntimeError, match="cuda"):
        with c10.DeviceGuard(c10.device("cuda:0")):
            pass


@no_gpu
@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.current_device(),
        lambda: cuda.set_device(0),
        lambda: cuda.synchronize(),
        lambda: cuda.get_device_properties(0),
        lambda: cuda.Stream(),
        lambda: cuda.current_stream(),
        lambda: cuda.default_stream(),
        lambda: cuda.pinned_storage(16),
        lambda: cuda.Event().record(),
    ],
    ids=[
        "current_device",
        "set_device",
        "synchronize",
        "get_device_properties",
        "Stream",
        "current_stream",
        "default_stream",
        "pinned_storage",
        "Event.record",
    ],
)
def test_no_gpu_device_calls_raise(call):
    with pytest.raises(RuntimeError, match=r"no CUDA device is available|without CUDA"):
        call()


@no_gpu
def test_no_gpu_memory_queries_are_empty():
    cuda_dev = c10.device("cuda")
    stats = c10.memory_stats(cuda_dev)
    assert set(stats) >= {"allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "cached_bytes"}
    assert all(v == 0 for v in stats.values())
    c10.empty_cache(cuda_dev)
    c10.reset_peak_memory_stats(cuda_dev)
    if cuda.is_compiled():
        assert "no CUDA device" in cuda.memory_summary()
        assert cuda.host_memory_stats()["allocated_bytes"] == 0
    assert not cuda.is_pinned(0)
    assert not cuda.is_pinned(c10.StorageImpl(64).data_ptr)


@pytest.mark.skipif(not cuda.is_compiled(), reason="the size rules live in the CUDA caching allocator")
@pytest.mark.parametrize(
    ("nbytes", "expected"),
    [
        # PyTorch's CUDACachingAllocator: sizes round up to 512; requests up to 1 MiB come
        # from 2 MiB small-pool segments and split off any rest of >= 512 bytes ...
        (1, (512, 2 * MiB, True, 2 * MiB - 512)),
        (512, (512, 2 * MiB, True, 2 * MiB - 512)),
        (513, (1024, 2 * MiB, True, 2 * MiB - 1024)),
        (1000, (1024, 2 * MiB, True, 2 * MiB - 1024)),
        (1 * MiB, (1 * MiB, 2 * MiB, True, 1 * MiB)),
        # ... larger ones from 20 MiB large-pool segments below 10 MiB, splitting off only a
        # rest of more than 1 MiB ...
        (1 * MiB + 1, (1 * MiB + 512, 20 * MiB, False, 19 * MiB - 512)),
        (3 * MiB, (3 * MiB, 20 * MiB, False, 17 * MiB)),
        (10 * MiB - 1024, (10 * MiB - 1024, 20 * MiB, False, 10 * MiB + 1024)),
        # ... and from 10 MiB on a segment of the request rounded up to 2 MiB.
        (10 * MiB - 1, (10 * MiB, 10 * MiB, False, 0)),  # rounded first: 10 MiB
        (10 * MiB, (10 * MiB, 10 * MiB, False, 0)),
        (19 * MiB, (19 * MiB, 20 * MiB, False, 0)),
        (12 * MiB, (12 * MiB, 12 * MiB, False, 0)),
        (23 * MiB + 5, (23 * MiB + 512, 24 * MiB, False, 0)),  # the 1 MiB - 512 rest stays in the block
        (21 * MiB, (21 * MiB, 22 * MiB, False, 0)),  # a rest of exactly 1 MiB is not split off
        (1 << 30, (1 << 30, 1 << 30, False, 0)),
    ],
)
def test_caching_allocator_size_rules_are_pytorchs(nbytes, expected):
    assert cuda._allocation_sizes(nbytes) == expected


# ---- on a GPU ----------------------------------------------------------------------


def stats(device=None):
    return c10.memory_stats(c10.device("cuda") if device is None else device)


@pytest.fixture
def fresh():
    """A caching allocator with nothing allocated or cached, on the default stream."""
    gc.collect()
    cuda.synchronize()
    cuda.set_current_stream(cuda.default_stream())
    c10.empty_cache(c10.device("cuda"))
    s = stats()
    assert s["allocated_bytes"] == 0, "a previous test leaked CUDA memory"
    assert s["reserved_bytes"] == 0
    yield
    cuda.set_current_stream(cuda.default_stream())
    gc.collect()
    cuda.synchronize()
    c10.empty_cache(c10.device("cuda"))


def cuda_storage(nbytes):
    return c10.StorageImpl(nbytes, c10.device("cuda"))


def upload(data: bytes):
    """A CUDA storage holding `data` (through pinned memory)."""
    host = cuda.pinned_storage(len(data))
    memoryview(host)[:] = data
    dev = cuda_storage(len(data))
    cuda.memcpy(dev.data_ptr, host.data_ptr, len(data), cuda.CopyKind.HostToDevice)
    return dev


def download(dev, nbytes=None) -> bytes:
    n = dev.nbytes if nbytes is None else nbytes
    host = c10.StorageImpl(n)
    cuda.memcpy(host.data_ptr, dev.data_ptr, n, cuda.CopyKind.DeviceToHost)
    return host.tobytes()


@gpu
def test_device_properties():
    assert cuda.is_compiled()
    assert cuda.device_count() >= 1
    p = cuda.get_device_properties(0)
    assert p.name
    assert p.major >= 7
    assert p.total_memory > 1 << 30
    assert p.multi_processor_count > 0
    assert p.warp_size == 32
    assert cuda.get_device_properties(c10.device("cuda:0")).name == p.name
    assert "DeviceProperties" in repr(p)


@gpu
def test_current_device_and_guard():
    assert cuda.current_device() == 0
    cuda.set_device(0)
    with c10.DeviceGuard(c10.device("cuda:0")) as g:
        assert cuda.current_device() == 0
        assert g.original_device == c10.device("cuda:0")
    with pytest.raises(ValueError, match="invalid CUDA device index"):
        cuda.set_device(cuda.device_count())
    cuda.synchronize()
    cuda.synchronize(0)


@gpu
def test_small_pool_rounds_and_splits(fresh):
    base = stats()
    a = cuda_storage(1000)  # rounded to 1024, from a new 2 MiB small segment
    s = stats()
    assert s["allocated_bytes"] == 1024
    assert s["reserved_bytes"] == 2 * MiB
    assert s["cached_bytes"] == 2 * MiB - 1024
    assert s["num_device_allocs"] == base["num_device_allocs"] + 1
    assert a.data_ptr % 512 == 0

    b = cuda_storage(1)  # rounded to 512, split from the rest of the segment
    s = stats()
    assert b.data_ptr == a.data_ptr + 1024
    assert s["allocated_bytes"] == 1024 + 512
    assert s["reserved_bytes"] == 2 * MiB
    assert s["num_device_allocs"] == base["num_device_allocs"] + 1
    assert s["num_cache_hits"] == base["num_cache_hits"] + 1

    ptr = a.data_ptr
    del a
    s = stats()
    assert s["allocated_bytes"] == 512
    assert s["num_frees"] == base["num_frees"] + 1
    c = cuda_storage(1024)  # best fit: a's freed block
    assert c.data_ptr == ptr
    del b, c
    s = stats()
    assert s["allocated_bytes"] == 0
    assert s["reserved_bytes"] == 2 * MiB  # cached, not returned
    c10.empty_cache(c10.device("cuda"))
    assert stats()["reserved_bytes"] == 0  # the segment merged back whole, so it was freed


@gpu
def test_large_pool_segments_and_splitting(fresh):
    x = cuda_storage(3 * MiB)  # < 10 MiB: a 20 MiB segment
    s = stats()
    assert s["reserved_bytes"] == 20 * MiB
    assert s["allocated_bytes"] == 3 * MiB
    y = cuda_storage(3 * MiB)  # split from the 17 MiB left over
    assert y.data_ptr == x.data_ptr + 3 * MiB
    assert stats()["reserved_bytes"] == 20 * MiB
    z = cuda_storage(1 * MiB + 1)  # just over the small limit: large pool
    assert stats()["reserved_bytes"] == 20 * MiB
    assert z.data_ptr == y.data_ptr + 3 * MiB
    del x, y, z

    w = cuda_storage(12 * MiB)  # >= 10 MiB: a segment of exactly the rounded size ...
    s = stats()
    assert s["allocated_bytes"] == 12 * MiB
    # ... unless a cached block fits: the 20 MiB segment is free and is split.
    assert s["reserved_bytes"] == 20 * MiB
    del w
    c10.empty_cache(c10.device("cuda"))
    assert stats()["reserved_bytes"] == 0

    big = cuda_storage(23 * MiB + 5)  # rounded up to a 24 MiB segment
    s = stats()
    assert s["reserved_bytes"] == 24 * MiB
    # The unused tail (1 MiB - 512) is not worth a block of its own: not split.
    assert s["allocated_bytes"] == 24 * MiB
    del big


@gpu
def test_large_requests_do_not_take_small_blocks(fresh):
    small = cuda_storage(512 * KiB)
    del small  # 2 MiB small segment cached
    large = cuda_storage(2 * MiB)
    s = stats()
    assert s["reserved_bytes"] == 2 * MiB + 20 * MiB
    del large


@gpu
def test_peak_and_reset(fresh):
    a = cuda_storage(4 * MiB)
    b = cuda_storage(4 * MiB)
    del a, b
    s = stats()
    assert s["peak_allocated_bytes"] >= 8 * MiB
    assert s["allocated_bytes"] == 0
    c10.reset_peak_memory_stats(c10.device("cuda"))
    s = stats()
    assert s["peak_allocated_bytes"] == 0
    assert s["peak_reserved_bytes"] == s["reserved_bytes"]
    assert stats(c10.device("cuda:0")) == stats(c10.device("cuda"))


@gpu
def test_out_of_memory_names_size_and_device(fresh):
    keep = cuda_storage(1 * MiB)
    with pytest.raises(c10.OutOfMemoryError) as info:
        cuda_storage(1 << 46)  # 64 TiB
    msg = str(info.value)
    assert "Tried to allocate" in msg and "70368744177664 bytes" in msg
    assert "cuda:0" in msg
    assert "allocated" in msg and "reserved" in msg
    assert isinstance(info.value, MemoryError)
    # The allocator still works (and the error did not stick).
    again = cuda_storage(1 * MiB)
    assert again.data_ptr != keep.data_ptr
    del keep, again


@gpu
def test_data_survives_round_trip_and_resize(fresh):
    data = bytes(range(256)) * 40
    dev = upload(data)
    assert download(dev) == data
    dev.resize_(len(data) * 2)  # copy_data on the current stream
    assert download(dev, len(data)) == data
    dev.resize_(100)
    assert download(dev) == data[:100]
    del dev


@gpu
def test_memory_summary(fresh):
    a = cuda_storage(5 * MiB)
    text = cuda.memory_summary()
    assert "cuda:0" in text
    assert "allocated" in text and "reserved" in text
    assert "5.00 MiB" in text
    assert cuda.memory_summary(0) == text
    del a


@gpu
def test_streams():
    d = cuda.default_stream()
    assert d.handle == 0
    assert d.device == c10.device("cuda:0")
    assert cuda.current_stream() == d
    s = cuda.Stream()
    assert s.handle != 0 and s != d
    assert s.device_index == 0
    assert s.query()
    s.synchronize()
    least, greatest = cuda.stream_priority_range()
    assert greatest <= least
    hi = cuda.Stream(priority=-100)  # clamped
    assert hi.priority == greatest
    assert cuda.Stream(priority=100).priority == least
    cuda.set_current_stream(s)
    try:
        assert cuda.current_stream() == s
        assert cuda.current_stream(0) == s
        assert hash(cuda.current_stream()) == hash(s)
        assert len({s, cuda.current_stream(), d}) == 2
        seen = []
        t = threading.Thread(target=lambda: seen.append(cuda.current_stream()))
        t.start()
        t.join()
        assert seen == [d]  # current stream is per thread
    finally:
        cuda.set_current_stream(d)
    assert "Stream" in repr(s) and "default" in repr(d)


@gpu
def test_stream_query_and_wait():
    s1, s2 = cuda.Stream(), cuda.Stream()
    cuda._sleep(200_000, s1)  # 200 ms of work on s1
    assert not s1.query()
    e = cuda.Event()
    e.record(s1)
    assert e.device == c10.device("cuda:0")
    s2.wait_event(e)
    after = cuda.Event()
    after.record(s2)
    assert not after.query()  # s2 is held behind s1
    after.synchronize()
    assert e.query() and s1.query() and s2.query()
    s2.wait_stream(s1)
    s2.synchronize()


@gpu
def test_event_timing():
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record(s)
    cuda._sleep(50_000, s)
    end.record(s)
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert 40.0 <= ms < 5000.0
    plain = cuda.Event()
    plain.record(s)
    plain.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(plain)
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(cuda.Event(enable_timing=True))


@gpu
def test_event_record_on_current_stream():
    s = cuda.Stream()
    cuda.set_current_stream(s)
    try:
        e = cuda.Event()
        cuda._sleep(100_000)  # on the current stream, s
        e.record()
        assert not e.query()
        e.wait()
        e.synchronize()
        assert e.query()
    finally:
        cuda.set_current_stream(cuda.default_stream())


@gpu
def test_blocks_are_cached_per_stream(fresh):
    s = cuda.Stream()
    cuda.set_current_stream(s)
    try:
        a = cuda_storage(1000)
        ptr = a.data_ptr
        del a
    finally:
        cuda.set_current_stream(cuda.default_stream())
    base = stats()
    b = cuda_storage(1000)  # default stream: s's cached block is not eligible
    assert b.data_ptr != ptr
    assert stats()["num_device_allocs"] == base["num_device_allocs"] + 1
    del b


@gpu
def test_record_stream_delays_reuse(fresh):
    side = cuda.Stream()
    a = cuda_storage(1000)
    ptr = a.data_ptr
    cuda._sleep(300_000, side)  # side is busy "using" a
    cuda.record_stream(a, side)
    del a
    b = cuda_storage(1000)
    assert b.data_ptr != ptr  # side may still be using a's block
    side.synchronize()
    c = cuda_storage(1000)  # the event has completed: a's block is back
    assert c.data_ptr == ptr
    del b, c

    # Control: without record_stream the block is reused at once.
    d = cuda_storage(1000)
    ptr = d.data_ptr
    del d
    assert cuda_storage(1000).data_ptr == ptr


@gpu
def test_record_stream_on_allocation_stream_is_a_no_op(fresh):
    a = cuda_storage(1000)
    ptr = a.data_ptr
    cuda.record_stream(a, cuda.current_stream())
    del a
    assert cuda_storage(1000).data_ptr == ptr


@gpu
def test_record_stream_rejects_foreign_memory():
    with pytest.raises(RuntimeError, match="caching allocator"):
        cuda.record_stream(c10.StorageImpl(64), cuda.Stream())


@gpu
def test_empty_cache_waits_for_pending_events(fresh):
    side = cuda.Stream()
    a = cuda_storage(3 * MiB)
    cuda._sleep(100_000, side)
    cuda.record_stream(a, side)
    del a
    c10.empty_cache(c10.device("cuda"))
    assert stats()["reserved_bytes"] == 0


@gpu
def test_pinned_memory():
    cuda.host_empty_cache()
    p = cuda.pinned_storage(1 * MiB)
    assert p.device == c10.device("cpu")
    assert cuda.is_pinned(p.data_ptr)
    assert cuda.is_pinned(p.data_ptr + 12345)
    assert not cuda.is_pinned(c10.StorageImpl(1 * MiB).data_ptr)
    memoryview(p)[:4] = b"abcd"
    assert p.tobytes()[:4] == b"abcd"
    s = cuda.host_memory_stats()
    assert s["allocated_bytes"] >= 1 * MiB
    ptr = p.data_ptr
    del p
    q = cuda.pinned_storage(1 * MiB)  # cached by size class
    assert q.data_ptr == ptr
    assert cuda.host_memory_stats()["num_cache_hits"] >= 1
    q.resize_(2 * MiB)  # still pinned after growing
    assert cuda.is_pinned(q.data_ptr)
    del q
    cuda.host_empty_cache()
    assert cuda.host_memory_stats()["allocated_bytes"] == 0
    assert cuda.host_memory_stats()["reserved_bytes"] == 0


@gpu
def test_pinned_async_copies(fresh):
    data = os.urandom(256 * KiB)
    src = cuda.pinned_storage(len(data))
    memoryview(src)[:] = data
    dev = cuda_storage(len(data))
    back = cuda.pinned_storage(len(data))
    s = cuda.Stream()
    cuda.memcpy(dev.data_ptr, src.data_ptr, len(data), cuda.CopyKind.HostToDevice, s, non_blocking=True)
    cuda.memcpy(back.data_ptr, dev.data_ptr, len(data), cuda.CopyKind.DeviceToHost, s, non_blocking=True)
    s.synchronize()
    assert back.tobytes() == data
    dev.resize_(len(data))  # no-op size
    copy = cuda_storage(len(data))
    cuda.memcpy(copy.data_ptr, dev.data_ptr, len(data), cuda.CopyKind.DeviceToDevice)
    assert download(copy) == data
    del src, dev, back, copy


@gpu
def test_pinned_block_not_reused_before_async_copy_finishes():
    cuda.host_empty_cache()  # no other block of this size class is cached
    n = 64 * KiB
    dev = cuda_storage(n)
    s = cuda.Stream()
    src = cuda.pinned_storage(n)
    ptr = src.data_ptr
    cuda._sleep(300_000, s)  # the copy below waits behind this
    cuda.memcpy(dev.data_ptr, src.data_ptr, n, cuda.CopyKind.HostToDevice, s, non_blocking=True)
    del src
    other = cuda.pinned_storage(n)
    assert other.data_ptr != ptr  # the copy may still read the old block
    s.synchronize()
    again = cuda.pinned_storage(n)
    assert again.data_ptr == ptr
    del other, again, dev
