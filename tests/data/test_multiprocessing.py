"""Tensors through multiprocessing queues: shared memory, not pickled bytes (_multiprocessing.py)."""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import data_helpers as h
import ember.aten as ea
import ember.data as ed
import numpy as np
import pytest
from ember.c10py import StorageImpl
from ember.data import _multiprocessing


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    ed.set_sharing_strategy(request.param)
    yield request.param
    ed.set_sharing_strategy("file_descriptor")


@pytest.mark.parametrize(
    "strategy_name,context",
    [
        ("file_descriptor", "fork"),
        ("file_system", "fork"),
        ("file_descriptor", "spawn"),
    ],
)
def test_tensor_round_trip_shares_memory(strategy_name, context) -> None:
    ed.set_sharing_strategy(strategy_name)
    try:
        _round_trip(strategy_name, context)
    finally:
        ed.set_sharing_strategy("file_descriptor")


def _round_trip(strategy, context) -> None:
    ctx = mp.get_context(context)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=h.echo_and_modify, args=(q_in, q_out), daemon=True)
    p.start()
    try:
        base = ea.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
        view = base.t()[1:]  # strided, with an offset: metadata must survive
        q_in.put(view)
        shape, stride, offset, shared, values = q_out.get(timeout=30)
        assert tuple(shape) == (3, 3) and tuple(stride) == (1, 4) and offset == 1
        assert shared and values == [[1.0, 5.0, 9.0], [2.0, 6.0, 10.0], [3.0, 7.0, 11.0]]
        q_in.put("fill")
        back = q_out.get(timeout=30)
        assert back.tolist() == [1.5, 2.5] and back.untyped_storage().is_shared()
        assert base.untyped_storage().is_shared()  # moved to shared memory in place
        assert view.tolist() == [[7.0] * 3] * 3 and base[0, 0].item() == 0.0  # only the view was filled
        if strategy == "file_system":
            assert base.untyped_storage()._share_filename().startswith(f"/ember_{os.getpid()}_")
        else:
            assert base.untyped_storage()._share_filename() == ""
        q_in.put(None)
    finally:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0


def test_reduction_of_a_storage_and_rebuild_in_process(strategy) -> None:
    s = StorageImpl.from_bytes(b"abcdef")
    fn, args = _multiprocessing.reduce_storage(s)
    assert s.is_shared()
    # rebuilding in the same process maps the same memory a second time
    t = fn(*args)
    assert t.tobytes() == b"abcdef" and t.data_ptr != s.data_ptr
    memoryview(t)[0] = ord("z")
    assert s.tobytes() == b"zbcdef"


def test_storage_bytes_rebuild_on_the_cpu() -> None:
    s = _multiprocessing._rebuild_storage_bytes(b"abc", "cpu")
    assert s.device.type == "cpu" and s.tobytes() == b"abc"


@pytest.mark.cuda
def test_reduction_of_a_cuda_storage_copies_its_bytes_through_the_host() -> None:
    # a CUDA storage (not shareable here) travels as its bytes and comes back on its device
    from multiprocessing.reduction import ForkingPickler

    from ember.aten._tensor import _wrap
    from ember.c10py import TensorImpl

    t = ea.arange(6.0, device="cuda")
    s = t.untyped_storage()
    for back in (
        _multiprocessing.reduce_storage(s)[0](*_multiprocessing.reduce_storage(s)[1]),
        ForkingPickler.loads(ForkingPickler.dumps(s)),
    ):
        assert back.device == s.device and back.nbytes == s.nbytes and back.data_ptr != s.data_ptr
        assert _wrap(TensorImpl(back, ea.float32, (6,), (1,), 0)).cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_file_system_tensor_dropped_by_its_sender_still_arrives() -> None:
    # The sender holds the segment for the receiver until the receiver has mapped it (or
    # until the sender exits), so a tensor dropped right after put() still arrives.
    ed.set_sharing_strategy("file_system")
    try:
        ctx = mp.get_context("fork")
        q, done = ctx.Queue(), ctx.Event()
        p = ctx.Process(target=h.send_temporary, args=(q, done), daemon=True)
        p.start()
        time.sleep(0.3)  # the sender has long dropped its tensors
        assert q.get(timeout=30).tolist() == [1.0, 2.0, 3.0]
        done.set()
        p.join(timeout=30)  # the sender exits, letting go of the one never received
        assert p.exitcode == 0
        assert not [e for e in h.shm_entries() if f"ember_{p.pid}_" in e]
        q.close()
    finally:
        ed.set_sharing_strategy("file_descriptor")


def test_new_shared_tensor_and_release() -> None:
    ed.set_sharing_strategy("file_system")
    try:
        t = _multiprocessing.new_shared_tensor((2, 3), ea.float32)
        name = t.untyped_storage()._share_filename()
        assert t.shape == (2, 3) and t.dtype == ea.float32 and t.is_contiguous()
        assert os.path.exists("/dev/shm" + name)
        del t
        assert not os.path.exists("/dev/shm" + name)  # the last reference unlinks it
    finally:
        ed.set_sharing_strategy("file_descriptor")
    assert ed.get_sharing_strategy() == "file_descriptor"
    assert ed.get_all_sharing_strategies() == {"file_descriptor", "file_system"}


def test_non_leaf_tensors_requiring_grad_are_refused() -> None:
    t = ea.tensor([1.0])
    t._meta = ea._tensor.AutogradMeta()
    t._meta.requires_grad = True
    t._meta.grad_fn = object()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        _multiprocessing.reduce_tensor(t)
