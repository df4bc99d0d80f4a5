"""Samplers and DistributedSampler (PyTorch's torch.utils.data.sampler / .distributed)."""

from __future__ import annotations

import collections

import ember.aten as ea
import pytest
from ember.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


def gen(seed: int) -> ea.Generator:
    return ea.Generator().manual_seed(seed)


def test_sequential_sampler() -> None:
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


def test_sampler_base() -> None:
    with pytest.raises(NotImplementedError):
        iter(Sampler())
    with pytest.warns(UserWarning, match="`data_source` argument is not used"):
        Sampler([1, 2])


def test_random_sampler_is_a_permutation_reproducible_under_generator() -> None:
    a = list(RandomSampler(range(50), generator=gen(1)))
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert a == list(RandomSampler(range(50), generator=gen(1)))
    assert a != list(RandomSampler(range(50), generator=gen(2)))


def test_random_sampler_epochs_differ_and_default_generator_seeds_it() -> None:
    s = RandomSampler(range(30), generator=gen(0))
    assert list(s) != list(s)  # the generator advances between epochs
    ea.manual_seed(0)
    first = list(RandomSampler(range(30)))
    ea.manual_seed(0)
    assert list(RandomSampler(range(30))) == first


def test_random_sampler_num_samples_without_replacement_repeats_whole_permutations() -> None:
    out = list(RandomSampler(range(4), num_samples=10, generator=gen(3)))
    assert len(out) == 10
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2
    assert len(RandomSampler(range(4), num_samples=10)) == 10


def test_random_sampler_with_replacement() -> None:
    out = list(RandomSampler(range(3), replacement=True, num_samples=100, generator=gen(0)))
    assert len(out) == 100 and set(out) == {0, 1, 2}
    assert out == list(RandomSampler(range(3), replacement=True, num_samples=100, generator=gen(0)))


def test_random_sampler_argument_errors() -> None:
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=0"):
        RandomSampler(range(3), replacement=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler([])  # num_samples defaults to len(data_source)


def test_random_sampler_reads_the_length_at_use() -> None:
    data = [1, 2]
    s = RandomSampler(data)
    data.append(3)
    assert len(s) == 3 and sorted(s) == [0, 1, 2]


def test_subset_random_sampler() -> None:
    idx = [10, 20, 30, 40]
    out = list(SubsetRandomSampler(idx, generator=gen(5)))
    assert sorted(out) == idx
    assert out == list(SubsetRandomSampler(idx, generator=gen(5)))
    assert len(SubsetRandomSampler(idx)) == 4


def test_weighted_random_sampler_follows_the_weights() -> None:
    out = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=gen(0)))
    counts = collections.Counter(out)
    assert 0 not in counts
    assert 2.6 < counts[2] / counts[1] < 3.4
    assert len(WeightedRandomSampler([1, 1], 7)) == 7


def test_weighted_random_sampler_without_replacement() -> None:
    out = list(WeightedRandomSampler([1.0, 5.0, 0.5, 2.0], 4, replacement=False, generator=gen(1)))
    assert sorted(out) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match=r"cannot sample n_sample > prob_dist\.size"):
        list(WeightedRandomSampler([1.0, 2.0], 3, replacement=False))


def test_weighted_random_sampler_errors() -> None:
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 1)
    with pytest.raises(RuntimeError, match="element < 0"):
        list(WeightedRandomSampler([1.0, -1.0], 1))


@pytest.mark.parametrize(
    "drop_last,expected",
    [
        (False, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]),
        (True, [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
    ],
)
def test_batch_sampler(drop_last, expected) -> None:
    s = BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=drop_last)
    assert list(s) == expected and len(s) == len(expected)
    assert list(BatchSampler(range(6), 3, drop_last)) == [[0, 1, 2], [3, 4, 5]]


def test_batch_sampler_errors() -> None:
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


def test_distributed_sampler_partitions_with_padding() -> None:
    parts = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert len(DistributedSampler(range(10), num_replicas=3, rank=0)) == 4


def test_distributed_sampler_drop_last() -> None:
    parts = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)]
    assert parts == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]


def test_distributed_sampler_pads_by_repeating_when_tiny() -> None:
    parts = [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)]
    assert parts == [[0], [1], [0], [1], [0]]


def test_distributed_sampler_shuffle_seed_and_epoch() -> None:
    def all_parts(epoch: int, seed: int = 0) -> list[list[int]]:
        out = []
        for r in range(2):
            s = DistributedSampler(range(20), 2, r, shuffle=True, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    e0 = all_parts(0)
    assert sorted(e0[0] + e0[1]) == list(range(20))  # the replicas agree on the permutation
    assert e0 == all_parts(0)
    assert e0 != all_parts(1)
    assert e0 != all_parts(0, seed=1)


def test_distributed_sampler_errors() -> None:
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(range(4))
