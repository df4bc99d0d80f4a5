"""ember.aten.cuda.mem_get_info and is_bf16_supported (PyTorch's torch.cuda ones).

Without a CUDA device: mem_get_info raises RuntimeError naming the call and the reason (as
the other calls that need a device); is_bf16_supported is False and never raises, as
PyTorch's. On a GPU (marked cuda): the driver's figures and the compute capability."""

from __future__ import annotations

import re

import ember.aten as ea
import pytest
from ember.c10py import cuda as c10_cuda

cuda = ea.cuda
no_gpu = pytest.mark.skipif(c10_cuda.is_available(), reason="checks the behaviour without a CUDA device")

_NO_DEVICE = (
    rf"ember\.aten\.cuda\.mem_get_info: no CUDA device is available; {re.escape(c10_cuda.availability_error())}"
)


def test_names_are_public() -> None:
    assert "mem_get_info" in cuda.__all__ and "is_bf16_supported" in cuda.__all__
    assert cuda.mem_get_info is cuda.memory.mem_get_info


@no_gpu
@pytest.mark.parametrize("dev", [None, 0, "cuda", "cuda:0", ea.device("cuda", 0)], ids=str)
def test_mem_get_info_without_a_gpu_raises(dev: object) -> None:
    with pytest.raises(RuntimeError, match=_NO_DEVICE):
        cuda.mem_get_info(dev)


@no_gpu
def test_is_bf16_supported_without_a_gpu_is_false() -> None:
    assert cuda.is_bf16_supported() is False
    assert cuda.is_bf16_supported(including_emulation=False) is False


@pytest.mark.cuda
def test_mem_get_info_on_a_gpu() -> None:
    free, total = cuda.mem_get_info()
    assert isinstance(free, int) and isinstance(total, int) and 0 < free <= total
    assert total == cuda.get_device_properties().total_memory
    for dev in (0, "cuda", "cuda:0", ea.device("cuda", 0)):
        assert cuda.mem_get_info(dev)[1] == total
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.mem_get_info("cpu")


@pytest.mark.cuda
def test_mem_get_info_sees_the_caching_allocator() -> None:
    cuda.empty_cache()
    before = cuda.mem_get_info()[0]
    x = ea.empty(64 << 20, dtype=ea.float32, device="cuda")  # 256 MiB
    assert before - cuda.mem_get_info()[0] >= 256 << 20
    del x
    cuda.empty_cache()
    assert cuda.mem_get_info()[0] > before - (256 << 20)


@pytest.mark.cuda
def test_is_bf16_supported_follows_the_compute_capability() -> None:
    major, _ = cuda.get_device_capability()
    assert cuda.is_bf16_supported(including_emulation=False) is (major >= 8)
    if major >= 8:
        assert cuda.is_bf16_supported() is True
        x = ea.ones(3, dtype=ea.bfloat16, device="cuda")
        assert (x + x).cpu().tolist() == [2.0, 2.0, 2.0]
