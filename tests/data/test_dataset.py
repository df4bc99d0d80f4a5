"""Dataset classes and random_split (PyTorch's torch.utils.data.dataset)."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)


class ListDataset(Dataset):
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class BatchedListDataset(ListDataset):
    def __init__(self, items):
        super().__init__(items)
        self.getitems_calls = 0

    def __getitems__(self, indices):
        self.getitems_calls += 1
        return [self.items[i] for i in indices]


class Stream(IterableDataset):
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


def test_dataset_base_is_abstract() -> None:
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]
    with pytest.raises(TypeError):
        len(Dataset())  # no default __len__
    with pytest.raises(NotImplementedError):
        iter(IterableDataset())


def test_tensor_dataset() -> None:
    x = ea.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    y = ea.tensor([7, 8, 9])
    ds = TensorDataset(x, y)
    assert len(ds) == 3
    a, b = ds[1]
    assert a.tolist() == [2.0, 3.0] and b.item() == 8
    assert [t.tolist() for t in ds[-1]] == [[4.0, 5.0], 9]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ea.tensor([1, 2]))


def test_stack_dataset_tuple_and_dict() -> None:
    a, b = ListDataset("abc"), ListDataset([1, 2, 3])
    assert StackDataset(a, b)[2] == ("c", 3)
    assert StackDataset(x=a, y=b)[0] == {"x": "a", "y": 1}
    assert len(StackDataset(a, b)) == 3
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(a, ListDataset([1]))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(a, y=b)


def test_stack_dataset_getitems_uses_nested_getitems() -> None:
    batched = BatchedListDataset([10, 11, 12])
    ds = StackDataset(batched, ListDataset("xyz"))
    assert ds.__getitems__([2, 0]) == [(12, "z"), (10, "x")]
    assert batched.getitems_calls == 1
    assert StackDataset(p=batched, q=ListDataset("xyz")).__getitems__([1]) == [{"p": 11, "q": "y"}]


def test_concat_dataset_indexing() -> None:
    ds = ConcatDataset([ListDataset([0, 1]), ListDataset([2, 3, 4]), ListDataset([5])])
    assert len(ds) == 6
    assert ds.cumulative_sizes == [2, 5, 6]
    assert [ds[i] for i in range(6)] == [0, 1, 2, 3, 4, 5]
    assert ds[-1] == 5 and ds[-6] == 0
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-7]
    added = ListDataset([0]) + ListDataset([1])
    assert isinstance(added, ConcatDataset) and [added[0], added[1]] == [0, 1]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream([1])])


def test_chain_dataset() -> None:
    ds = ChainDataset([Stream([1, 2]), Stream([3])])
    assert list(ds) == [1, 2, 3]
    assert len(ds) == 3
    assert list(Stream([1]) + Stream([2])) == [1, 2]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([ListDataset([1])]))


def test_subset() -> None:
    base = BatchedListDataset(list("abcdef"))
    sub = Subset(base, [4, 0, 2])
    assert len(sub) == 3
    assert [sub[i] for i in range(3)] == ["e", "a", "c"]
    assert sub.__getitems__([0, 2]) == ["e", "c"] and base.getitems_calls == 1
    assert Subset(ListDataset("xyz"), [2, 1]).__getitems__([0, 1]) == ["z", "y"]


def test_random_split_lengths_are_a_partition_and_reproducible() -> None:
    ds = ListDataset(range(10))
    parts = random_split(ds, [3, 7], generator=ea.Generator().manual_seed(42))
    assert [len(p) for p in parts] == [3, 7]
    got = sorted(p[i] for p in parts for i in range(len(p)))
    assert got == list(range(10))
    again = random_split(ds, [3, 7], generator=ea.Generator().manual_seed(42))
    assert [list(p.indices) for p in parts] == [list(p.indices) for p in again]
    other = random_split(ds, [3, 7], generator=ea.Generator().manual_seed(43))
    assert [list(p.indices) for p in parts] != [list(p.indices) for p in other]


def test_random_split_fractions() -> None:
    parts = random_split(ListDataset(range(10)), [0.5, 0.3, 0.2], generator=ea.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    # floors first, then the remainder one by one from the first split on
    parts = random_split(ListDataset(range(11)), [0.34, 0.33, 0.33], generator=ea.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [4, 4, 3]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(ListDataset(range(2)), [1.0, 0.0])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset"):
        random_split(ListDataset(range(10)), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(ListDataset(range(10)), [0.5, -0.5, 1.0])


def test_random_split_follows_the_default_generator() -> None:
    ea.manual_seed(5)
    a = random_split(ListDataset(range(20)), [10, 10])
    ea.manual_seed(5)
    b = random_split(ListDataset(range(20)), [10, 10])
    c = random_split(ListDataset(range(20)), [10, 10])
    assert list(a[0].indices) == list(b[0].indices) != list(c[0].indices)
