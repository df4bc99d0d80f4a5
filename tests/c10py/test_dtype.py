"""dtypes: the ScalarType table, name parsing, pickling and PyTorch's promotion table."""

from __future__ import annotations

import copy
import itertools
import pickle

import pytest
from ember.c10py import _C

# name, itemsize, is_floating_point, is_signed -- in ScalarType order.
DTYPES = [
    ("bool", 1, False, False),
    ("uint8", 1, False, False),
    ("int8", 1, False, True),
    ("int16", 2, False, True),
    ("int32", 4, False, True),
    ("int64", 8, False, True),
    ("float16", 2, True, True),
    ("bfloat16", 2, True, True),
    ("float32", 4, True, True),
    ("float64", 8, True, True),
]
NAMES = [row[0] for row in DTYPES]


def dt(name: str) -> _C.dtype:
    return getattr(_C, name)


@pytest.mark.parametrize(("name", "itemsize", "is_floating_point", "is_signed"), DTYPES)
def test_dtype_table(name: str, itemsize: int, is_floating_point: bool, is_signed: bool) -> None:
    d = dt(name)
    assert isinstance(d, _C.dtype)
    assert d._name == name
    assert repr(d) == f"ember.aten.{name}"
    assert d.itemsize == itemsize
    assert d.is_floating_point is is_floating_point
    assert d.is_signed is is_signed
    assert d.is_complex is False
    assert d._category == (0 if name == "bool" else 2 if is_floating_point else 1)


def test_all_dtypes_in_table_order() -> None:
    all_dtypes = _C._all_dtypes()
    assert [d._name for d in all_dtypes] == NAMES
    assert [d._scalar_type for d in all_dtypes] == list(range(len(NAMES)))
    # one singleton per dtype
    for d in all_dtypes:
        assert d is dt(d._name)
        assert _C._dtype_table[d._scalar_type] is d


@pytest.mark.parametrize("name", NAMES)
def test_dtype_from_canonical_and_prefixed_names(name: str) -> None:
    for spelling in (name, f"torch.{name}", f"ember.aten.{name}", f"ember.{name}"):
        assert _C._dtype_from_name(spelling) is dt(name)


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("float", "float32"),
        ("double", "float64"),
        ("half", "float16"),
        ("long", "int64"),
        ("int", "int32"),
        ("short", "int16"),
        ("torch.float", "float32"),
        ("torch.half", "float16"),
        ("torch.long", "int64"),
    ],
)
def test_dtype_aliases(alias: str, name: str) -> None:
    assert _C._dtype_from_name(alias) is dt(name)


@pytest.mark.parametrize("bad", ["float128", "complex64", "Float", "FLOAT32", "", "torch.", "numpy.float32", "fp32"])
def test_unknown_dtype_name(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown dtype name") as info:
        _C._dtype_from_name(bad)
    assert f"'{bad}'" in str(info.value)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_pickle_and_copy_return_the_singleton(name: str) -> None:
    d = dt(name)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
    assert copy.copy(d) is d
    assert copy.deepcopy(d) is d
    assert copy.deepcopy({"k": [d]})["k"][0] is d


# ---- promotion ------------------------------------------------------------------
# torch.promote_types for every pair, written out (rows and columns in DTYPES order).
_ABBREV = {
    "b1": "bool",
    "u1": "uint8",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "f2": "float16",
    "bf": "bfloat16",
    "f4": "float32",
    "f8": "float64",
}
_COLUMNS = ["b1", "u1", "i1", "i2", "i4", "i8", "f2", "bf", "f4", "f8"]
_PROMOTION = """
      b1  u1  i1  i2  i4  i8  f2  bf  f4  f8
b1    b1  u1  i1  i2  i4  i8  f2  bf  f4  f8
u1    u1  u1  i2  i2  i4  i8  f2  bf  f4  f8
i1    i1  i2  i1  i2  i4  i8  f2  bf  f4  f8
i2    i2  i2  i2  i2  i4  i8  f2  bf  f4  f8
i4    i4  i4  i4  i4  i4  i8  f2  bf  f4  f8
i8    i8  i8  i8  i8  i8  i8  f2  bf  f4  f8
f2    f2  f2  f2  f2  f2  f2  f2  f4  f4  f8
bf    bf  bf  bf  bf  bf  bf  f4  bf  f4  f8
f4    f4  f4  f4  f4  f4  f4  f4  f4  f4  f8
f8    f8  f8  f8  f8  f8  f8  f8  f8  f8  f8
"""


def _promotion_table() -> dict[tuple[str, str], str]:
    lines = [line.split() for line in _PROMOTION.strip().splitlines()]
    assert lines[0] == _COLUMNS
    table = {}
    for row in lines[1:]:
        a, results = row[0], row[1:]
        assert len(results) == len(_COLUMNS)
        for b, r in zip(_COLUMNS, results, strict=True):
            table[(_ABBREV[a], _ABBREV[b])] = _ABBREV[r]
    return table


PROMOTION = _promotion_table()


def test_promotion_table_is_complete() -> None:
    assert len(PROMOTION) == 100
    assert set(PROMOTION) == set(itertools.product(NAMES, NAMES))


@pytest.mark.parametrize(("a", "b"), sorted(PROMOTION))
def test_promote_types(a: str, b: str) -> None:
    assert _C.promote_types(dt(a), dt(b)) is dt(PROMOTION[(a, b)])


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations(NAMES, 2)))
def test_promote_types_is_symmetric(a: str, b: str) -> None:
    assert _C.promote_types(dt(a), dt(b)) is _C.promote_types(dt(b), dt(a))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("uint8", "int8", "int16"),
        ("uint8", "int16", "int16"),
        ("float16", "bfloat16", "float32"),
        ("int64", "float16", "float16"),
        ("bool", "bool", "bool"),
        ("bool", "uint8", "uint8"),
        ("int64", "bfloat16", "bfloat16"),
    ],
)
def test_promote_types_notable_pairs(a: str, b: str, expected: str) -> None:
    assert _C.promote_types(dt(a), dt(b)) is dt(expected)


def test_promote_types_keywords_and_bad_arguments() -> None:
    assert _C.promote_types(type1=_C.int8, type2=_C.uint8) is _C.int16
    with pytest.raises(TypeError):
        _C.promote_types("float32", _C.float32)  # type: ignore[arg-type]
