"""default_collate, default_convert and collate with a custom map (PyTorch's _utils/collate)."""

from __future__ import annotations

import collections
from typing import NamedTuple

import ember.aten as ea
import numpy as np
import pytest
from ember.data import collate, default_collate, default_convert
from ember.data._collate import default_collate_fn_map


class Point(NamedTuple):
    x: object
    y: object


def test_tensors_are_stacked() -> None:
    batch = default_collate([ea.tensor([1.0, 2.0]), ea.tensor([3.0, 4.0]), ea.tensor([5.0, 6.0])])
    assert isinstance(batch, ea.Tensor)
    assert batch.shape == (3, 2) and batch.dtype == ea.float32
    assert batch.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    strided = ea.tensor([[1, 2], [3, 4]]).t()  # non-contiguous samples
    assert default_collate([strided, strided]).tolist() == [[[1, 3], [2, 4]]] * 2
    # outside a worker the batch is ordinary (not shared) memory
    assert not batch.untyped_storage().is_shared()


def test_tensors_of_different_sizes_are_an_error() -> None:
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got \[2\] at entry 0 "
        r"and \[3\] at entry 1",
    ):
        default_collate([ea.tensor([1, 2]), ea.tensor([1, 2, 3])])


def test_numbers() -> None:
    ints = default_collate([1, 2, 3])
    assert ints.dtype == ea.int64 and ints.tolist() == [1, 2, 3]
    floats = default_collate([1.5, 2.5])
    assert floats.dtype == ea.float64 and floats.tolist() == [1.5, 2.5]
    bools = default_collate([True, False])
    assert bools.dtype == ea.bool and bools.tolist() == [True, False]


def test_numpy_arrays_and_scalars() -> None:
    arrays = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert arrays.dtype == ea.int32 and arrays.tolist() == [[1, 2], [3, 4]]
    scalars = default_collate([np.float32(1.5), np.float32(2.0)])
    assert scalars.dtype == ea.float32 and scalars.tolist() == [1.5, 2.0]
    with pytest.raises(
        TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <U1"
    ):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(TypeError, match="found object"):
        default_collate([np.array([None], dtype=object)] * 2)


def test_strings_stay_lists() -> None:
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"x", b"y"]) == [b"x", b"y"]


def test_mappings_keep_their_type() -> None:
    out = default_collate([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    assert set(out) == {"a", "b"} and out["a"].tolist() == [1, 2] and out["b"] == ["x", "y"]
    od = default_collate([collections.OrderedDict(z=1.0, a=2.0)] * 2)
    assert type(od) is collections.OrderedDict and list(od) == ["z", "a"]
    dd = default_collate([collections.defaultdict(int, k=1)] * 2)
    assert type(dd) is collections.defaultdict and dd.default_factory is int


def test_named_tuples_and_sequences() -> None:
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(p) is Point and p.x.tolist() == [1, 3] and p.y.dtype == ea.float64
    pairs = default_collate([(ea.tensor([1]), 0), (ea.tensor([2]), 1)])
    assert type(pairs) is list and pairs[0].tolist() == [[1], [2]] and pairs[1].tolist() == [0, 1]
    lists = default_collate([[1, "a"], [2, "b"]])
    assert type(lists) is list and lists[0].tolist() == [1, 2] and lists[1] == ["a", "b"]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])


def test_nested_structures() -> None:
    batch = [
        {"img": ea.tensor([[float(i)]]), "meta": {"id": i, "tags": ("t", i * 1.0)}, "name": f"s{i}"} for i in range(3)
    ]
    out = default_collate(batch)
    assert out["img"].shape == (3, 1, 1)
    assert out["meta"]["id"].tolist() == [0, 1, 2]
    assert out["meta"]["tags"][0] == ["t", "t", "t"]
    assert out["meta"]["tags"][1].tolist() == [0.0, 1.0, 2.0]
    assert out["name"] == ["s0", "s1", "s2"]


def test_unsupported_type() -> None:
    with pytest.raises(
        TypeError,
        match="default_collate: batch must contain tensors, numpy arrays, numbers, "
        "dicts or lists; found <class 'object'>",
    ):
        default_collate([object(), object()])


def test_custom_collate_fn_map() -> None:
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    out = collate(
        [{"b": Box(1), "n": 1}, {"b": Box(2), "n": 2}], collate_fn_map={**default_collate_fn_map, Box: collate_box}
    )
    assert out["b"] == 3 and out["n"].tolist() == [1, 2]


def test_default_convert() -> None:
    t = default_convert(np.array([1.0, 2.0]))
    assert isinstance(t, ea.Tensor) and t.dtype == ea.float64 and t.tolist() == [1.0, 2.0]
    s = default_convert(np.int16(3))
    assert isinstance(s, ea.Tensor) and s.dtype == ea.int16 and s.item() == 3
    strings = np.array(["a"])
    assert default_convert(strings) is strings
    assert default_convert(5) == 5 and default_convert("x") == "x"
    nested = default_convert({"a": (np.array([1]), 2), "p": Point(np.array([1]), "y")})
    assert isinstance(nested["a"], list) and isinstance(nested["a"][0], ea.Tensor) and nested["a"][1] == 2
    assert type(nested["p"]) is Point and isinstance(nested["p"].x, ea.Tensor)
    existing = ea.tensor([1])
    assert default_convert(existing) is existing
