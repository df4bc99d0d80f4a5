"""DataLoader in one process and with worker processes: arguments, len(), order and
content of batches, shuffling, seeding, workers, persistent workers, pinning."""

from __future__ import annotations

import os
import pickle
import random
import warnings

import data_helpers as h
import ember.aten as ea
import ember.data as ed
import numpy as np
import pytest
from ember.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    Sampler,
    SequentialSampler,
    TensorDataset,
    default_collate,
    get_worker_info,
)


def as_lists(batches):
    """Batches of (tensor, tensor) -> nested lists, for comparing."""
    return [[t.tolist() for t in b] for b in batches]


def expected_range_batches(order, batch_size, drop_last=False, width=3):
    out = []
    for k in range(0, len(order), batch_size):
        chunk = order[k : k + batch_size]
        if drop_last and len(chunk) < batch_size:
            break
        out.append([[[float(i)] * width for i in chunk], list(chunk)])
    return out


# ---- arguments and len() ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
        (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
        (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing"),
        (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be non-negative"),
        (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
        (dict(sampler=[0, 1], shuffle=True), ValueError, "sampler option is mutually exclusive with shuffle"),
        (
            dict(batch_sampler=[[0]], batch_size=2),
            ValueError,
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
        ),
        (dict(batch_sampler=[[0]], drop_last=True), ValueError, "batch_sampler option is mutually exclusive"),
        (
            dict(batch_size=None, drop_last=True),
            ValueError,
            "batch_size=None option disables auto-batching and is mutually exclusive with drop_last",
        ),
        (
            dict(multiprocessing_context="fork"),
            ValueError,
            "multiprocessing_context can only be used with multi-process loading",
        ),
        (
            dict(num_workers=1, multiprocessing_context="nope"),
            ValueError,
            "multiprocessing_context option should specify a valid start method",
        ),
        (
            dict(num_workers=1, multiprocessing_context=3),
            TypeError,
            "multiprocessing_context option should be a valid context object or a string",
        ),
        (dict(batch_size=0), ValueError, "batch_size should be a positive integer value, but got batch_size=0"),
    ],
)
def test_argument_errors(kwargs, exc, msg) -> None:
    with pytest.raises(exc, match=msg):
        DataLoader(h.RangeDataset(4), **kwargs)


def test_iterable_dataset_argument_errors() -> None:
    for kwargs, what in (
        (dict(shuffle=True), "shuffle"),
        (dict(sampler=[0]), "sampler"),
        (dict(batch_sampler=[[0]]), "batch_sampler"),
    ):
        with pytest.raises(ValueError, match=f"DataLoader with IterableDataset: expected unspecified {what} option"):
            DataLoader(h.UnshardedStream(), **kwargs)


def test_attributes_are_frozen_after_init() -> None:
    loader = DataLoader(h.RangeDataset(4))
    for attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
            setattr(loader, attr, None)
    loader.num_workers = 0  # others can change


def test_defaults_match_pytorch() -> None:
    loader = DataLoader(h.RangeDataset(4))
    assert loader.batch_size == 1 and loader.num_workers == 0 and loader.drop_last is False
    assert loader.timeout == 0 and loader.prefetch_factor is None and loader.pin_memory is False
    assert loader.collate_fn is default_collate
    assert isinstance(loader.sampler, SequentialSampler) and isinstance(loader.batch_sampler, BatchSampler)
    assert DataLoader(h.RangeDataset(4), num_workers=2).prefetch_factor == 2
    assert isinstance(DataLoader(h.RangeDataset(4), shuffle=True).sampler, ed.RandomSampler)
    assert DataLoader(h.RangeDataset(4), batch_size=None).collate_fn is ed.default_convert


@pytest.mark.parametrize(
    "n,batch_size,drop_last,expected",
    [
        (10, 3, False, 4),
        (10, 3, True, 3),
        (9, 3, True, 3),
        (10, None, False, 10),
        (0, 4, False, 0),
    ],
)
def test_len_map_style(n, batch_size, drop_last, expected) -> None:
    loader = DataLoader(h.RangeDataset(n), batch_size=batch_size, drop_last=drop_last)
    assert len(loader) == expected == len(list(loader))


def test_len_with_samplers() -> None:
    assert len(DataLoader(h.RangeDataset(10), batch_size=4, sampler=[1, 2, 3])) == 1
    assert len(DataLoader(h.RangeDataset(10), batch_sampler=[[0, 1], [2]])) == 2


def test_len_iterable_dataset_uses_the_dataset_length() -> None:
    assert len(DataLoader(h.UnshardedStream(10), batch_size=3)) == 4
    assert len(DataLoader(h.UnshardedStream(10), batch_size=3, drop_last=True)) == 3
    assert len(DataLoader(h.UnshardedStream(10), batch_size=None)) == 10

    class NoLen(IterableDataset):
        def __iter__(self):
            return iter([1])

    with pytest.raises(TypeError):
        len(DataLoader(NoLen()))


# ---- batches: order and content ---------------------------------------------------------


@pytest.mark.parametrize("num_workers", [0, 1, 2])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_batches_are_the_same_for_any_number_of_workers(num_workers, drop_last) -> None:
    loader = DataLoader(h.RangeDataset(20), batch_size=3, num_workers=num_workers, drop_last=drop_last)
    assert as_lists(loader) == expected_range_batches(list(range(20)), 3, drop_last)
    assert as_lists(loader) == expected_range_batches(list(range(20)), 3, drop_last)  # a second epoch


def test_shuffled_batches_are_reproducible_and_the_same_for_0_1_2_workers() -> None:
    runs = {}
    for num_workers in (0, 1, 2):
        loader = DataLoader(
            h.RangeDataset(20),
            batch_size=4,
            shuffle=True,
            num_workers=num_workers,
            generator=ea.Generator().manual_seed(7),
        )
        runs[num_workers] = [as_lists(loader), as_lists(loader)]  # two epochs
    assert runs[0] == runs[1] == runs[2]
    epoch0, epoch1 = runs[0]
    order = [i for batch in epoch0 for i in batch[1]]
    assert sorted(order) == list(range(20)) and order != list(range(20))
    assert epoch0 != epoch1  # each epoch reshuffles
    other = DataLoader(h.RangeDataset(20), batch_size=4, shuffle=True, generator=ea.Generator().manual_seed(8))
    assert as_lists(other) != epoch0


def test_batches_of_a_worker_are_in_shared_memory() -> None:
    for x, y in DataLoader(h.RangeDataset(6), batch_size=3, num_workers=2):
        for t in (x, y):
            assert t.untyped_storage().is_shared()
            assert t.untyped_storage()._share_fd() >= 0
    for x, _ in DataLoader(h.RangeDataset(6), batch_size=3):
        assert not x.untyped_storage().is_shared()


def test_image_batches_through_workers_match_the_data() -> None:
    ds = h.ImageDataset(130)
    expected = ds.images.numpy()
    for num_workers in (0, 2):
        seen = 0
        for x, y in DataLoader(ds, batch_size=64, num_workers=num_workers):
            assert x.shape[1:] == (3, 32, 32) and x.dtype == ea.float32
            np.testing.assert_array_equal(x.numpy(), expected[seen : seen + len(y)])
            assert y.tolist() == [i % 10 for i in range(seen, seen + len(y))]
            seen += len(y)
        assert seen == 130


@pytest.mark.parametrize("num_workers", [0, 2])
def test_batch_size_none_yields_converted_samples(num_workers) -> None:
    class NumpySamples(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.int16), "name": f"n{i}"}

    out = list(DataLoader(NumpySamples(), batch_size=None, num_workers=num_workers))
    assert [s["x"].tolist() for s in out] == [[0, 0], [1, 1], [2, 2], [3, 3]]
    assert all(isinstance(s["x"], ea.Tensor) and s["x"].dtype == ea.int16 for s in out)
    assert [s["name"] for s in out] == ["n0", "n1", "n2", "n3"]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_custom_sampler_batch_sampler_and_collate_fn(num_workers) -> None:
    ds = h.RangeDataset(10)
    got = [b[1].tolist() for b in DataLoader(ds, batch_size=2, sampler=[9, 1, 5], num_workers=num_workers)]
    assert got == [[9, 1], [5]]
    got = [b[1].tolist() for b in DataLoader(ds, batch_sampler=[[3], [0, 2, 4]], num_workers=num_workers)]
    assert got == [[3], [0, 2, 4]]
    lengths = list(DataLoader(ds, batch_size=4, collate_fn=len, num_workers=num_workers))
    assert lengths == [4, 4, 2]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_getitems_fetches_a_whole_batch(num_workers) -> None:
    class Batched(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, indices):
            return [i * 10 for i in indices]

    assert [b.tolist() for b in DataLoader(Batched(), batch_size=4, num_workers=num_workers)] == [
        [0, 10, 20, 30],
        [40, 50],
    ]


def test_tensor_dataset_through_workers() -> None:
    x = ea.from_numpy(np.arange(24, dtype=np.float32).reshape(12, 2))
    y = ea.from_numpy(np.arange(12, dtype=np.int64))
    batches = list(DataLoader(TensorDataset(x, y), batch_size=5, num_workers=2))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
    assert batches[2][0].tolist() == [[20.0, 21.0], [22.0, 23.0]]


def test_spawn_context_gives_the_same_batches() -> None:
    loader = DataLoader(h.RangeDataset(9), batch_size=4, num_workers=2, multiprocessing_context="spawn")
    assert as_lists(loader) == expected_range_batches(list(range(9)), 4)


def test_unpicklable_arguments_with_spawn_fail_cleanly() -> None:
    # A spawned worker receives its arguments pickled: a local lambda cannot be. The error
    # surfaces from iter(), and no worker is left behind (the fixture checks).
    loader = DataLoader(h.RangeDataset(4), num_workers=2, multiprocessing_context="spawn", collate_fn=lambda b: b)
    with pytest.raises((AttributeError, pickle.PicklingError), match="lambda"):
        iter(loader)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_file_system_sharing_strategy(context) -> None:
    ed.set_sharing_strategy("file_system")  # a spawned worker takes it from the main process
    try:
        loader = DataLoader(
            h.RangeDataset(12), batch_size=3, num_workers=2, persistent_workers=True, multiprocessing_context=context
        )
        for _ in range(2):  # a second epoch with the same (persistent) workers
            batches = list(loader)
            assert as_lists(batches) == expected_range_batches(list(range(12)), 3)
            assert all(b[0].untyped_storage()._share_filename().startswith("/ember_") for b in batches)
            del batches
        del loader
    finally:
        ed.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="unknown sharing strategy"):
        ed.set_sharing_strategy("tcp")


# ---- workers ----------------------------------------------------------------------------


class WhoAmI(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return {
            "i": i,
            "worker": info.id,
            "num_workers": info.num_workers,
            "pid": os.getpid(),
            "same_dataset": info.dataset is self,
            "tag": getattr(self, "tag", None),
        }


def test_get_worker_info_and_worker_init_fn() -> None:
    assert get_worker_info() is None  # in the main process

    def init(worker_id):
        get_worker_info().dataset.tag = f"w{worker_id}"

    out = list(DataLoader(WhoAmI(), batch_size=None, num_workers=2, worker_init_fn=init))
    assert [s["i"] for s in out] == list(range(6))
    assert [s["worker"] for s in out] == [0, 1, 0, 1, 0, 1]  # round robin
    assert all(s["num_workers"] == 2 and s["same_dataset"] for s in out)
    assert [s["tag"] for s in out] == ["w0", "w1"] * 3
    assert len({s["pid"] for s in out}) == 2 and os.getpid() not in {s["pid"] for s in out}


def test_too_many_workers_warns(monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    with pytest.warns(
        UserWarning,
        match="This DataLoader will create 2 worker processes in total. Our suggested "
        "max number of worker in current system is 1",
    ):
        DataLoader(h.RangeDataset(2), num_workers=2)


def test_worker_info_is_read_only() -> None:
    info = ed.WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    assert repr(info) == "WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)"
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 3


def test_worker_init_fn_error_is_raised_in_the_main_process() -> None:
    def init(worker_id):
        raise KeyError("no config")

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0") as e:
        list(DataLoader(h.RangeDataset(4), num_workers=1, worker_init_fn=init))
    assert "\n" in str(e.value) and "no config" in str(e.value)  # KeyError keeps the traceback readable


def test_worker_exception_is_reraised_and_iteration_can_go_on() -> None:
    it = iter(DataLoader(h.FailingDataset(bad=5), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    assert next(it).tolist() == [2, 3]
    with pytest.raises(ValueError) as e:
        next(it)
    text = str(e.value)
    assert text.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent")
    assert "in __getitem__" in text and "index 5 is bad" in text and "data_helpers.py" in text
    assert next(it).tolist() == [6, 7]  # as PyTorch: the failed batch is skipped, not the rest
    assert [b.tolist() for b in it] == [[8, 9], [10, 11]]


def test_sharded_iterable_dataset_with_workers() -> None:
    ds = h.ShardedStream(10)
    single = [b.tolist() for b in DataLoader(ds, batch_size=3)]
    assert single == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    multi = [b.tolist() for b in DataLoader(ds, batch_size=3, num_workers=2)]
    # worker 0 holds 0..4, worker 1 holds 5..9; batches alternate between them
    assert multi == [[0, 1, 2], [5, 6, 7], [3, 4], [8, 9]]
    drop = [b.tolist() for b in DataLoader(ds, batch_size=3, num_workers=2, drop_last=True)]
    assert drop == [[0, 1, 2], [5, 6, 7]]
    unbatched = sorted(int(x) for x in DataLoader(ds, batch_size=None, num_workers=2))
    assert unbatched == list(range(10))


def test_unsharded_iterable_dataset_duplicates_and_warns_past_its_length() -> None:
    loader = DataLoader(h.UnshardedStream(4), batch_size=None, num_workers=2)
    assert len(loader) == 4
    with pytest.warns(UserWarning, match="Length of IterableDataset .* was reported to be 4"):
        out = [int(x) for x in loader]
    assert sorted(out) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_persistent_workers_keep_their_processes_across_epochs() -> None:
    loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True)
    epochs = [list(loader) for _ in range(3)]
    assert all([s["i"] for s in e] == list(range(6)) for e in epochs)
    pids = [{s["pid"] for s in e} for e in epochs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2
    assert all(p in h.worker_pids() for p in pids[0])  # alive between epochs
    # an epoch abandoned halfway: the next one still starts from the beginning
    it = iter(loader)
    next(it)
    assert [s["i"] for s in loader] == list(range(6))
    del it, loader


def test_persistent_workers_with_iterable_dataset_restart_their_stream() -> None:
    loader = DataLoader(h.ShardedStream(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    assert first == [[0, 1], [3, 4], [2], [5]]
    assert [b.tolist() for b in loader] == first
    del loader


def test_workers_without_persistence_exit_at_the_end_of_each_epoch() -> None:
    loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2)
    first = {s["pid"] for s in loader}
    assert not any(p in h.worker_pids() for p in first)
    second = {s["pid"] for s in loader}
    assert first.isdisjoint(second)


def test_in_order_false_yields_ready_batches_first(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # batch 0 comes last from the workers: the reorder buffer still yields it first ...
    ordered = [int(b) for b in DataLoader(h.SlowFirstDataset(str(tmp_path / "a")), batch_size=None, num_workers=2)]
    assert ordered == list(range(8))
    # ... unless in_order=False
    loose = DataLoader(h.SlowFirstDataset(str(tmp_path / "b")), batch_size=None, num_workers=2, in_order=False)
    loose_order = [int(b) for b in loose]
    assert sorted(loose_order) == list(range(8)) and loose_order[0] != 0


class CountingSampler(Sampler):
    """Counts the indices the loader has drawn. The main process draws an index exactly when
    it sends a task to a worker, so `drawn` is the number of fetches ever asked for: the
    prefetch bound is checked on it, with no waiting for workers to show what they did."""

    def __init__(self, n: int) -> None:
        self.n, self.drawn = n, 0

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        for i in range(self.n):
            self.drawn += 1
            yield i


@pytest.mark.parametrize("num_workers,prefetch_factor", [(2, 3), (1, 1)])
def test_prefetch_factor_bounds_the_batches_in_flight(num_workers, prefetch_factor) -> None:
    sampler = CountingSampler(40)
    loader = DataLoader(
        list(range(40)), batch_size=None, sampler=sampler, num_workers=num_workers, prefetch_factor=prefetch_factor
    )
    it = iter(loader)
    in_flight = prefetch_factor * num_workers
    assert sampler.drawn == in_flight  # primed with exactly prefetch_factor * num_workers tasks
    for taken in range(1, 6):
        assert next(it) == taken - 1
        assert sampler.drawn == in_flight + taken  # one new task per batch taken, never more
    assert list(it) == list(range(5, 40))
    assert sampler.drawn == 40


def test_seeding_of_workers_is_base_seed_plus_worker_id() -> None:
    def run(seed):
        loader = DataLoader(
            h.RandomDrawDataset(), batch_size=None, num_workers=2, generator=ea.Generator().manual_seed(seed)
        )
        return list(loader)

    a, b, c = run(3), run(3), run(4)
    assert a == b and a != c
    base = int(ea.empty((), dtype=ea.int64).random_(generator=ea.Generator().manual_seed(3)).item())
    first = {0: a[0], 1: a[1]}  # each worker's first sample
    for wid, s in first.items():
        seed = base + wid
        assert s["worker"] == wid and s["seed"] == seed
        assert s["py"] == random.Random(seed).random()
        np_seed = np.random.SeedSequence(seed).generate_state(1, np.uint32)[0]
        assert s["np"] == np.random.RandomState(np_seed).rand()
        assert s["ember"] == [seed, 0]  # the worker's default generator, freshly seeded
    assert a[0]["py"] != a[1]["py"] and a[0]["np"] != a[1]["np"]


def test_base_seed_without_generator_follows_the_default_generator() -> None:
    ea.manual_seed(11)
    a = list(DataLoader(h.RandomDrawDataset(), batch_size=None, num_workers=1))
    ea.manual_seed(11)
    b = list(DataLoader(h.RandomDrawDataset(), batch_size=None, num_workers=1))
    c = list(DataLoader(h.RandomDrawDataset(), batch_size=None, num_workers=1))
    assert a == b and a != c


# ---- pin_memory ---------------------------------------------------------------------------


@pytest.mark.skipif(ed._pin_memory.is_pin_memory_available(), reason="checks the no-accelerator fallback")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_pin_memory_without_cuda_warns_and_loads_normally(num_workers) -> None:
    loader = DataLoader(h.RangeDataset(6), batch_size=3, pin_memory=True, num_workers=num_workers)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        out = list(loader)
    assert as_lists(out) == expected_range_batches(list(range(6)), 3)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_pin_memory_path_pins_every_tensor(monkeypatch, num_workers) -> None:
    # Stands in for c10py's CUDA host allocator, so the pinning path (the thread with
    # workers) runs on any machine: every tensor of every batch must go through it.
    made = []

    def fake_pinned_storage(nbytes):
        s = ea._C  # noqa: F841
        from ember.c10py import StorageImpl

        storage = StorageImpl(nbytes)
        made.append(nbytes)
        return storage

    monkeypatch.setattr(ed._pin_memory, "is_pin_memory_available", lambda: True)
    monkeypatch.setattr(ed._pin_memory, "_pinned_storage", fake_pinned_storage)
    monkeypatch.setattr(ed._pin_memory.cuda, "is_available", lambda: False)
    if num_workers:
        monkeypatch.setattr(ed._pin_memory.cuda, "current_device", lambda: 0, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = list(DataLoader(h.RangeDataset(6), batch_size=3, pin_memory=True, num_workers=num_workers))
    assert as_lists(out) == expected_range_batches(list(range(6)), 3)
    assert sorted(made) == sorted([36, 24, 36, 24])  # 2 batches x (3x3 float32, 3 int64)
    assert not any(t.untyped_storage().is_shared() for b in out for t in b)  # copies, out of shm


def test_pin_memory_function_keeps_structure(monkeypatch) -> None:
    from ember.c10py import StorageImpl

    monkeypatch.setattr(ed._pin_memory, "_pinned_storage", lambda n: StorageImpl(n))
    from typing import NamedTuple

    class P(NamedTuple):
        a: object
        b: object

    data = {"t": ea.tensor([1, 2]), "s": "x", "p": P(ea.tensor([3]), 4), "l": (ea.tensor([5.0]),)}
    out = ed._pin_memory.pin_memory(data)
    assert out["t"].tolist() == [1, 2] and out["t"].data_ptr() != data["t"].data_ptr()
    assert out["s"] == "x" and type(out["p"]) is P and out["p"].b == 4
    assert isinstance(out["l"], list) and out["l"][0].tolist() == [5.0]
