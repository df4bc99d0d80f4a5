"""Generator("cuda") without an index is a generator of the current CUDA device, as
PyTorch's (which needs a device for it: it raises without one); an explicit index never
touches the driver, so "cuda:0" works on any CUDA-enabled machine."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember.c10py import cuda as c10_cuda

no_gpu = pytest.mark.skipif(c10_cuda.is_available(), reason="checks the behaviour without a CUDA device")


@pytest.mark.parametrize("spec", ["cuda:0", "cuda:1"])
def test_an_explicit_index_is_kept_without_a_device(spec: str) -> None:
    assert ea.Generator(spec).device == ea.device(spec)
    assert ea.Generator(ea.device(spec)).device == ea.device(spec)


@no_gpu
@pytest.mark.parametrize("spec", ["cuda", ea.device("cuda")], ids=str)
def test_no_index_without_a_gpu_raises(spec: object) -> None:
    with pytest.raises(RuntimeError, match=r"no CUDA device is available|built without CUDA"):
        ea.Generator(spec)


@pytest.mark.cuda
def test_no_index_means_the_current_device() -> None:
    current = ea.cuda.current_device()
    assert ea.Generator("cuda").device == ea.device("cuda", current)
    assert ea.Generator(ea.device("cuda")).device == ea.device("cuda", current)
    last = ea.cuda.device_count() - 1
    with ea.cuda.device(last):
        assert ea.Generator("cuda").device == ea.device("cuda", last)
    assert ea.cuda.current_device() == current


@pytest.mark.cuda
def test_no_index_generator_draws_on_the_current_device() -> None:
    g = ea.Generator("cuda").manual_seed(5)
    x = ea.rand(4, device="cuda", generator=g)
    h = ea.Generator("cuda:0").manual_seed(5)
    assert ea.equal(x, ea.rand(4, device="cuda:0", generator=h))
