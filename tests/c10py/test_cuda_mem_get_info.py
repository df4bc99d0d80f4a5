"""ember.c10py._C.cuda.mem_get_info: (free, total) bytes of a device's memory (cudaMemGetInfo).

Without a usable GPU it raises naming the call and the reason (or that the build has no
CUDA); on a GPU it agrees with the device's properties and sees allocations."""

from __future__ import annotations

import ember.c10py as c10
import pytest
from ember.c10py import _C

cuda = _C.cuda
no_gpu = pytest.mark.skipif(cuda.is_available(), reason="a CUDA device is present")


@no_gpu
@pytest.mark.parametrize("dev", [None, 0, "cuda", "cuda:0", c10.device("cuda:0")], ids=str)
def test_mem_get_info_without_a_gpu_raises(dev: object) -> None:
    with pytest.raises(RuntimeError, match=r"mem_get_info: no CUDA device is available|built without CUDA"):
        cuda.mem_get_info(dev)


def test_mem_get_info_rejects_a_cpu_device() -> None:
    with pytest.raises(ValueError, match="mem_get_info: expected a CUDA device, got cpu"):
        cuda.mem_get_info(c10.device("cpu"))


@pytest.mark.cuda
def test_mem_get_info_on_a_gpu() -> None:
    free, total = cuda.mem_get_info()
    assert isinstance(free, int) and isinstance(total, int)
    assert 0 < free <= total
    props = cuda.get_device_properties(0)
    assert total == props.total_memory
    assert cuda.mem_get_info(0)[1] == total and cuda.mem_get_info("cuda:0")[1] == total


@pytest.mark.cuda
def test_mem_get_info_sees_a_device_allocation() -> None:
    c10.empty_cache(c10.device("cuda:0"))
    before = cuda.mem_get_info(0)[0]
    s = c10.StorageImpl(256 << 20, c10.device("cuda:0"))
    after = cuda.mem_get_info(0)[0]
    assert before - after >= 256 << 20
    del s
