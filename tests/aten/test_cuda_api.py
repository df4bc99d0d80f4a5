"""ember.aten.cuda (PyTorch's torch.cuda) and the tensor's CUDA methods.

The first half runs everywhere and checks the behaviour without a GPU (this is what CI
sees): availability False, memory counters 0, no-op context managers, and RuntimeErrors
naming the call and the reason for everything that needs a device. The second half is
marked ``cuda`` and runs on a GPU machine (benchmarks/gpu_check.sh).
"""

from __future__ import annotations

import re

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import cuda as c10_cuda

cuda = ea.cuda
HAVE_GPU = c10_cuda.is_available()
no_gpu = pytest.mark.skipif(HAVE_GPU, reason="checks the behaviour without a CUDA device")

_REASON = re.escape(c10_cuda.availability_error())


def _no_device(what: str) -> str:
    return rf"{re.escape(what)}: no CUDA device is available; {_REASON}"


# ---- everywhere --------------------------------------------------------------------------


def test_availability_agrees_with_c10py() -> None:
    assert cuda.is_available() is bool(c10_cuda.is_available())
    assert cuda.device_count() == c10_cuda.device_count()
    assert isinstance(cuda.device_count(), int)


def test_public_names_exist() -> None:
    for name in cuda.__all__:
        assert hasattr(cuda, name), name
    assert ea.cuda is cuda


def test_out_of_memory_error_is_pytorchs() -> None:
    # torch.cuda.OutOfMemoryError: a RuntimeError (so `except RuntimeError` catches a CUDA OOM)
    import ember.c10py

    assert cuda.OutOfMemoryError is ember.c10py.OutOfMemoryError
    assert issubclass(cuda.OutOfMemoryError, RuntimeError)
    assert issubclass(cuda.OutOfMemoryError, MemoryError)


def test_cudnn_flags_read_and_write_as_pytorchs() -> None:
    import ember.aten.backends as backends

    cudnn = backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)  # PyTorch's defaults
    cudnn.benchmark = True
    try:
        assert cudnn.benchmark is True
    finally:
        cudnn.benchmark = False
    assert cudnn.is_available() is False


def test_check_device_errors_is_bound_only_in_cuda_builds() -> None:
    assert hasattr(ea._C, "_cuda_check_device_errors") == bool(ea._C._built_with_cuda)
    if ea._C._built_with_cuda:
        ea._C._cuda_check_device_errors(-1)  # nothing reported: returns, with or without a GPU


def test_device_arguments_are_checked_before_anything_else() -> None:
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.memory_allocated("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.device(ea.device("cpu"))
    with pytest.raises(TypeError, match="expected a CUDA device"):
        cuda.memory_stats(1.5)


def test_event_elapsed_time_needs_timing_events() -> None:
    a, b = cuda.Event(), cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="Both events must be created with argument 'enable_timing=True'"):
        a.elapsed_time(b)
    with pytest.raises(NotImplementedError, match="interprocess"):
        cuda.Event(interprocess=True)


def test_unrecorded_event_is_complete() -> None:
    e = cuda.Event(enable_timing=True)
    assert e.query() is True
    assert e.device is None
    assert e.cuda_event == 0
    assert "uninitialized" in repr(e)


def test_tensor_attributes_on_cpu() -> None:
    t = ea.ones(3)
    assert t.is_cuda is False
    assert t.device == ea.device("cpu")
    assert t.get_device() == -1
    assert t.is_pinned() is False
    with pytest.raises(RuntimeError, match="record_stream: expected a CUDA tensor"):
        t.record_stream(None)


@no_gpu
def test_without_gpu_availability_is_false() -> None:
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.is_initialized() is False
    assert c10_cuda.availability_error() != ""


@no_gpu
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("init", lambda: cuda.init()),
        ("current_device", lambda: cuda.current_device()),
        ("set_device", lambda: cuda.set_device(0)),
        ("synchronize", lambda: cuda.synchronize()),
        ("synchronize", lambda: cuda.synchronize("cuda:0")),
        ("get_device_properties", lambda: cuda.get_device_properties(0)),
        ("get_device_properties", lambda: cuda.get_device_name()),
        ("get_device_properties", lambda: cuda.get_device_capability()),
        ("current_stream", lambda: cuda.current_stream()),
        ("default_stream", lambda: cuda.default_stream()),
        ("Stream", lambda: cuda.Stream()),
        ("current_stream", lambda: cuda.Event().record()),
        ("current_stream", lambda: cuda.Event().wait()),
        ("reset_peak_memory_stats", lambda: cuda.reset_peak_memory_stats()),
        ("reset_peak_memory_stats", lambda: cuda.reset_max_memory_allocated()),
        ("initial_seed", lambda: cuda.initial_seed()),
        ("get_rng_state", lambda: cuda.get_rng_state()),
        ("get_rng_state", lambda: cuda.get_rng_state(0)),
        ("set_rng_state", lambda: cuda.set_rng_state(ea.zeros(16, dtype=ea.uint8))),
        ("device", lambda: cuda.device(0).__enter__()),
        ("device", lambda: cuda.device("cuda:0").__enter__()),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_without_gpu_device_calls_raise_naming_the_call(name: str, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuntimeError, match=_no_device(f"ember.aten.cuda.{name}")):
        call()
    assert cuda.is_initialized() is False


@no_gpu
def test_without_gpu_context_managers_without_a_device_do_nothing() -> None:
    with cuda.device(None):
        pass
    with cuda.device(-1):
        pass
    with cuda.device_of(ea.ones(2)):
        pass
    with cuda.stream(None):
        pass
    cuda.set_device(-1)
    cuda.set_stream(None)


@no_gpu
def test_without_gpu_memory_counters_read_zero() -> None:
    assert cuda.memory_stats() == {}
    assert cuda.memory_stats(0) == {}
    for f in (cuda.memory_allocated, cuda.max_memory_allocated, cuda.memory_reserved, cuda.max_memory_reserved):
        assert f() == 0
        assert f("cuda:0") == 0
    cuda.empty_cache()
    summary = cuda.memory_summary()
    assert isinstance(summary, str) and "no CUDA device is available" in summary


@no_gpu
def test_without_gpu_seeding_is_a_no_op_as_in_pytorch() -> None:
    cpu_state = ea.get_rng_state()
    cuda.manual_seed(0)
    cuda.manual_seed_all(1)
    cuda.seed()
    cuda.seed_all()
    assert cuda.get_rng_state_all() == []
    cuda.set_rng_state_all([])
    assert bool((ea.get_rng_state() == cpu_state).all())  # the CPU generator is untouched


@no_gpu
def test_without_gpu_tensors_cannot_move_to_cuda() -> None:
    t = ea.arange(4.0)
    for move in (
        lambda: t.cuda(),
        lambda: t.cuda(0),
        lambda: t.to("cuda"),
        lambda: t.to("cuda", non_blocking=True),
        lambda: t.to(ea.device("cuda", 0), ea.float16),
        lambda: ea.zeros(2, device="cuda"),
    ):
        with pytest.raises(RuntimeError, match="no CUDA device is available"):
            move()
    assert t.device == ea.device("cpu")


@no_gpu
def test_without_gpu_pin_memory_raises_and_nothing_is_pinned() -> None:
    t = ea.ones(4)
    with pytest.raises(RuntimeError, match=_no_device("pin_memory")):
        t.pin_memory()
    assert t.is_pinned() is False


# ---- on a GPU (marked cuda: skipped without one) -------------------------------------------


@pytest.mark.cuda
def test_device_facts() -> None:
    assert cuda.is_available() and cuda.device_count() >= 1
    cuda.init()
    assert cuda.is_initialized()
    i = cuda.current_device()
    assert 0 <= i < cuda.device_count()
    props = cuda.get_device_properties(i)
    assert cuda.get_device_name() == props.name and props.name
    major, minor = cuda.get_device_capability("cuda:0")
    assert (major, minor) == (props.major, props.minor) and major >= 5
    assert props.total_memory > 0 and props.multi_processor_count > 0
    with pytest.raises(RuntimeError, match="Invalid device id"):
        cuda.get_device_properties(cuda.device_count())


@pytest.mark.cuda
def test_device_context_restores_the_previous_device() -> None:
    before = cuda.current_device()
    last = cuda.device_count() - 1
    with cuda.device(last):
        assert cuda.current_device() == last
    assert cuda.current_device() == before
    x = ea.ones(2, device=f"cuda:{last}")
    with cuda.device_of(x):
        assert cuda.current_device() == last
    assert cuda.current_device() == before


@pytest.mark.cuda
def test_streams_and_context() -> None:
    default = cuda.default_stream()
    assert cuda.current_stream() == default and default.cuda_stream == 0
    s = cuda.Stream()
    assert s != default and s.device == ea.device("cuda", cuda.current_device())
    with cuda.stream(s):
        assert cuda.current_stream() == s
        y = ea.ones(1000, device="cuda") * 2
    assert cuda.current_stream() == default
    with s as entered:
        assert entered is s and cuda.current_stream() == s
    assert cuda.current_stream() == default
    default.wait_stream(s)
    assert float(y.sum().item()) == 2000.0
    s.synchronize()
    assert s.query() is True
    assert "ember.aten.cuda.Stream" in repr(s)


@pytest.mark.cuda
def test_events_time_work_and_order_streams() -> None:
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record(s)
    c10_cuda._sleep(20_000, s._stream)  # 20 ms of queued work
    end = s.record_event(end)
    cuda.current_stream().wait_event(end)
    end.synchronize()
    assert end.query() is True
    assert start.elapsed_time(end) >= 15.0
    assert end.device == ea.device("cuda", s.device_index)


@pytest.mark.cuda
def test_memory_counters_follow_allocations() -> None:
    cuda.synchronize()
    base = cuda.memory_allocated()
    x = ea.empty(1 << 20, dtype=ea.uint8, device="cuda")
    assert cuda.memory_allocated() >= base + (1 << 20)
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == cuda.memory_allocated()
    del x
    assert cuda.memory_allocated() == base
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    cuda.empty_cache()
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    assert isinstance(cuda.memory_summary(), str)


@pytest.mark.cuda
def test_tensor_moves_and_pinned_memory() -> None:
    a = ea.arange(12.0).reshape(3, 4)
    g = a.cuda()
    assert g.is_cuda and g.device == ea.device("cuda", 0) and g.get_device() == 0
    assert a.to("cuda:0").device == g.device
    p = a.pin_memory()
    assert p.is_pinned() and not a.is_pinned()
    assert p.pin_memory() is p
    h = p.to("cuda", non_blocking=True)
    cuda.synchronize()
    np.testing.assert_array_equal(h.cpu().numpy(), a.numpy())
    np.testing.assert_array_equal(g.cpu().numpy(), a.numpy())
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        g.pin_memory()
    assert g.is_pinned() is False


@pytest.mark.cuda
def test_cross_device_error_message() -> None:
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
        ),
    ):
        ea.ones(3, device="cuda") + ea.ones(3)


@pytest.mark.cuda
def test_synchronize_raises_device_side_index_errors() -> None:
    x = ea.arange(5.0, device="cuda")
    bad = ea.tensor([0, 7], device="cuda")
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 5"):
        ea.index_select(x, 0, bad)
        cuda.synchronize()
    cuda.synchronize()  # the report was cleared


@pytest.mark.cuda
def test_rng_state_round_trip() -> None:
    cuda.manual_seed(123)
    assert cuda.initial_seed() == 123
    state = cuda.get_rng_state()
    a = ea.rand(100, device="cuda")
    cuda.set_rng_state(state)
    b = ea.rand(100, device="cuda")
    assert bool((a == b).all())
    assert len(cuda.get_rng_state_all()) == cuda.device_count()
