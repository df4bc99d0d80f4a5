"""The CUDA runtime under every GPU run (review of c10py's csrc/cuda and ember.aten.cuda).

Marked ``cuda``: checked against PyTorch's documented behaviour of torch.cuda -- the
caching allocator's counters, the out-of-memory error, stream contexts switching the
device, pinned blocks kept until the asynchronous copy that used them is done, and
device-side index errors surfacing at the next device-to-host copy. What can be checked
without a GPU is in tests/aten/test_cuda_api.py and tests/c10py/test_cuda.py.
"""

from __future__ import annotations

import gc

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import cuda as c10_cuda

pytestmark = pytest.mark.cuda

cuda = ea.cuda
MiB = 1 << 20


@pytest.fixture
def fresh() -> None:
    """Nothing of ours allocated or cached on the current device, default stream current."""
    gc.collect()
    cuda.synchronize()
    cuda.set_stream(cuda.default_stream())
    cuda.empty_cache()


def test_memory_counters_count_rounded_blocks_as_pytorch(fresh: None) -> None:
    base_alloc, base_reserved = cuda.memory_allocated(), cuda.memory_reserved()
    x = ea.empty(1, dtype=ea.float32, device="cuda")  # 4 bytes -> one 512-byte block
    assert cuda.memory_allocated() == base_alloc + 512
    if base_reserved == 0:
        assert cuda.memory_reserved() == 2 * MiB  # a new small-pool segment
    y = ea.empty(3 * MiB // 4, dtype=ea.float32, device="cuda")  # 3 MiB: the large pool
    assert cuda.memory_allocated() == base_alloc + 512 + 3 * MiB
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    del y
    assert cuda.memory_allocated() == base_alloc + 512
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    assert cuda.max_memory_reserved() == cuda.memory_reserved()
    del x
    assert cuda.memory_allocated() == base_alloc
    cuda.empty_cache()
    if base_reserved == 0:
        assert cuda.memory_reserved() == 0  # both segments were whole again: freed


def test_out_of_memory_is_pytorchs_error_and_the_allocator_recovers(fresh: None) -> None:
    keep = ea.ones(1000, device="cuda")
    before = cuda.memory_allocated()
    total = cuda.get_device_properties().total_memory
    with pytest.raises(cuda.OutOfMemoryError) as info:
        ea.empty(2 * total, dtype=ea.uint8, device="cuda")
    # torch.OutOfMemoryError is a RuntimeError: `except RuntimeError` catches it.
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith("CUDA out of memory. Tried to allocate")
    assert cuda.memory_allocated() == before
    again = ea.ones(1000, device="cuda") * 2  # nothing sticky: the device still works
    np.testing.assert_array_equal((again - keep).cpu().numpy(), np.ones(1000, np.float32))


def test_stream_context_makes_its_device_current_and_restores_it() -> None:
    last = cuda.device_count() - 1
    s = cuda.Stream(device=last)
    before_dev = cuda.current_device()
    before_streams = [cuda.current_stream(i) for i in range(cuda.device_count())]
    with s:  # PyTorch's Stream.__enter__: the stream's device becomes current too
        assert cuda.current_device() == last
        assert cuda.current_stream() == s
    assert cuda.current_device() == before_dev
    assert [cuda.current_stream(i) for i in range(cuda.device_count())] == before_streams
    with cuda.stream(s):
        assert cuda.current_device() == last and cuda.current_stream() == s
        with cuda.stream(cuda.Stream(device=0)):
            assert cuda.current_device() == 0
        assert cuda.current_device() == last and cuda.current_stream() == s
    assert cuda.current_device() == before_dev
    assert [cuda.current_stream(i) for i in range(cuda.device_count())] == before_streams


def test_set_stream_makes_the_streams_device_current() -> None:
    last = cuda.device_count() - 1
    before = cuda.current_device()
    s = cuda.Stream(device=last)
    try:
        cuda.set_stream(s)  # as torch.cuda.set_stream: switches the device as well
        assert cuda.current_device() == last and cuda.current_stream() == s
    finally:
        cuda.set_stream(cuda.default_stream(last))
        cuda.set_device(before)
    assert cuda.current_stream(last) == cuda.default_stream(last)


def test_work_inside_a_stream_context_runs_on_that_stream(fresh: None) -> None:
    s = cuda.Stream()
    c10_cuda._sleep(500_000, s._stream)  # s is busy for 500 ms
    with cuda.stream(s):
        y = ea.ones(1 << 16, device="cuda") * 3  # queued behind the sleep
    assert not s.query()
    cuda.current_stream().wait_stream(s)
    assert float(y.sum().item()) == 3.0 * (1 << 16)
    assert s.query()


def test_non_blocking_copy_keeps_its_pinned_source_until_done() -> None:
    c10_cuda.host_empty_cache()
    n = 1 << 16
    src = ea.arange(n, dtype=ea.float32).pin_memory()
    assert src.is_pinned()
    ptr = src.data_ptr()
    s = cuda.Stream()
    with cuda.stream(s):
        c10_cuda._sleep(500_000, s._stream)  # the copy below waits behind this
        dst = src.to("cuda", non_blocking=True)
    del src  # the copy may still read the block: it must not be handed out again yet
    other = ea.empty(n, dtype=ea.float32).pin_memory()
    assert other.data_ptr() != ptr
    s.synchronize()
    again = ea.empty(n, dtype=ea.float32).pin_memory()
    assert again.data_ptr() == ptr  # reused once the copy completed
    np.testing.assert_array_equal(dst.cpu().numpy(), np.arange(n, dtype=np.float32))


def test_non_blocking_copy_to_pinned_memory_lands_after_synchronize() -> None:
    x = ea.arange(1000.0, device="cuda")
    host = ea.empty(1000).pin_memory()
    host.copy_(x, non_blocking=True)
    cuda.synchronize()
    np.testing.assert_array_equal(host.numpy(), np.arange(1000.0, dtype=np.float32))


def test_device_index_error_surfaces_at_the_next_copy_to_host_and_is_cleared() -> None:
    x = ea.arange(5.0, device="cuda")
    bad = ea.tensor([0, 7], device="cuda")
    out = ea.index_select(x, 0, bad)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 5"):
        out.cpu()  # a blocking device-to-host copy reads the slot after synchronising
    cuda.synchronize()  # the report was cleared by the raise
    ok = ea.index_select(x, 0, ea.tensor([4, 0], device="cuda"))
    np.testing.assert_array_equal(ok.cpu().numpy(), np.array([4.0, 0.0], np.float32))


def test_bad_device_index_messages() -> None:
    n = cuda.device_count()
    with pytest.raises(RuntimeError, match="Invalid device id"):
        cuda.get_device_properties(n)
    with pytest.raises(RuntimeError, match="Invalid device id"):
        cuda.set_device(n)
    with pytest.raises(RuntimeError, match="Invalid device id"):
        with cuda.device(n):
            pass


def test_to_cuda_without_index_means_the_current_device() -> None:
    last = cuda.device_count() - 1
    x = ea.arange(4.0, device=f"cuda:{last}")
    with cuda.device(last):
        assert x.to("cuda") is x and x.cuda() is x  # already there: no copy
    with cuda.device(0):
        y, z = x.to("cuda"), x.cuda()
        assert y.device == ea.device("cuda", 0) and z.device == ea.device("cuda", 0)
        assert (y is x) == (last == 0)
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(4.0, dtype=np.float32))


def test_record_stream_keeps_memory_from_reuse_until_the_stream_is_done(fresh: None) -> None:
    side = cuda.Stream()
    x = ea.empty(1000, device="cuda")
    ptr = x.data_ptr()
    c10_cuda._sleep(500_000, side._stream)  # side "uses" x for 500 ms
    x.record_stream(side)
    del x
    y = ea.empty(1000, device="cuda")
    assert y.data_ptr() != ptr  # side may still be using x's block
    side.synchronize()
    z = ea.empty(1000, device="cuda")
    assert z.data_ptr() == ptr  # its event completed: the block is back
    del y, z


def test_is_initialized_after_making_a_cuda_tensor() -> None:
    ea.ones(1, device="cuda")
    assert cuda.is_initialized()  # as torch.cuda.is_initialized() after torch.ones(1, device="cuda")
