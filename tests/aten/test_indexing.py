"""Tensor.__getitem__ / __setitem__ against NumPy on the same arrays, plus what the
OpInfo table cannot say: views vs copies, version counters, exact errors, duplicate
indices that accumulate, bounds checks inside parallel loops, nonzero(as_tuple)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest

# ---- helpers -----------------------------------------------------------------------------


def arange(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.arange(n, dtype=dtype).reshape(shape)


def as_ember(a: np.ndarray) -> Any:
    return ea.from_numpy(np.array(a, order="C")).clone()  # (ascontiguousarray makes 0-d arrays 1-d)


class Lib:
    """Builds the same index for NumPy ("np") and ember ("ea")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def t(self, values: Any, dtype: Any = None) -> Any:
        """An index array: np.ndarray for NumPy, ember tensor for ember."""
        a = np.asarray(values, dtype=dtype)
        if self.kind == "np":
            return a
        return as_ember(a)

    def mask(self, values: Any) -> Any:
        return self.t(values, dtype=bool)


_rng = np.random.default_rng(7)
MASK_5x4 = _rng.integers(0, 2, size=(5, 4)).astype(bool)
MASK_4x3 = _rng.integers(0, 2, size=(4, 3)).astype(bool)
MASK_5 = np.array([True, False, True, True, False])
MASK_6x5 = _rng.integers(0, 2, size=(6, 5)).astype(bool)

# (name, shape of the indexed array, index builder). Each case means the same thing
# in NumPy and in PyTorch (cases where they differ are tested separately below).
CASES: list[tuple[str, tuple[int, ...], Callable[[Lib], Any]]] = [
    ("int", (5, 4, 3), lambda L: 2),
    ("negative int", (5, 4, 3), lambda L: -1),
    ("two ints", (5, 4, 3), lambda L: (1, -2)),
    ("all ints", (5, 4, 3), lambda L: (4, 3, 2)),
    ("slice", (5, 4, 3), lambda L: slice(1, 4)),
    ("slice step", (5, 4, 3), lambda L: slice(None, None, 2)),
    ("slice clamps", (5, 4, 3), lambda L: slice(-10, 10)),
    ("empty slice", (5, 4, 3), lambda L: slice(3, 1)),
    ("slices", (5, 4, 3), lambda L: (slice(1, None), slice(None, 3, 2))),
    ("int and slice", (5, 4, 3), lambda L: (slice(None), 1, slice(0, 2))),
    ("None", (5, 4, 3), lambda L: None),
    ("None in the middle", (5, 4, 3), lambda L: (slice(None), None, 1)),
    ("ellipsis", (5, 4, 3), lambda L: Ellipsis),
    ("ellipsis then int", (5, 4, 3), lambda L: (Ellipsis, 1)),
    ("int ellipsis int", (5, 4, 3), lambda L: (0, Ellipsis, 2)),
    ("ellipsis None", (5, 4, 3), lambda L: (Ellipsis, None)),
    ("empty tuple", (5, 4, 3), lambda L: ()),
    ("list", (5, 4, 3), lambda L: [0, 2, 4, 2]),
    ("list negative", (5, 4, 3), lambda L: [-1, -5, 0]),
    ("empty list", (5, 4, 3), lambda L: []),
    ("index tensor", (5, 4, 3), lambda L: L.t([3, 1, 1])),
    ("2-d index tensor", (5, 4, 3), lambda L: L.t([[0, 1], [4, 3]])),
    ("int32 index", (5, 4, 3), lambda L: L.t([1, 2], dtype=np.int32)),
    ("index on dim 1", (5, 4, 3), lambda L: (slice(None), L.t([3, 0]))),
    ("index on last dim", (5, 4, 3), lambda L: (Ellipsis, L.t([2, 2, 0]))),
    ("two adjacent", (5, 4, 3), lambda L: (L.t([0, 4]), L.t([1, 3]))),
    ("broadcast adjacent", (5, 4, 3), lambda L: (L.t([[0], [4]]), L.t([1, 3, 2]))),
    ("adjacent after slice", (5, 4, 3), lambda L: (slice(1, 3), L.t([0, 3]), L.t([2, 1]))),
    ("separated by slice", (5, 4, 3), lambda L: (L.t([0, 4]), slice(None), L.t([2, 1]))),
    ("separated by None", (5, 4, 3), lambda L: (L.t([0, 4]), None, L.t([2, 1]))),
    ("three broadcast", (5, 4, 3), lambda L: (L.t([[0], [1]]), L.t([[1, 2]]), L.t([0]))),
    ("mask dim 0", (5, 4, 3), lambda L: L.mask(MASK_5)),
    ("mask list", (5, 4, 3), lambda L: [True, False, True, True, False]),
    ("2-d mask", (5, 4, 3), lambda L: L.mask(MASK_5x4)),
    ("mask on last dims", (5, 4, 3), lambda L: (slice(None), L.mask(MASK_4x3))),
    ("mask after ellipsis", (5, 4, 3), lambda L: (Ellipsis, L.mask([True, False, True]))),
    ("full mask", (5, 4, 3), lambda L: L.mask(np.arange(60).reshape(5, 4, 3) % 3 == 0)),
    ("all-false mask", (5, 4, 3), lambda L: L.mask(np.zeros(5, bool))),
    ("mask and index", (5, 4, 3), lambda L: (L.mask(MASK_5), L.t([0, 1, 3]))),
    ("mask and slice", (5, 4, 3), lambda L: (L.mask(MASK_5), slice(1, 3))),
    ("True", (5, 4, 3), lambda L: True),
    ("False", (5, 4, 3), lambda L: False),
    ("None and True", (5, 4, 3), lambda L: (None, True, slice(None))),
    ("slice then True", (5, 4, 3), lambda L: (slice(1, 3), True)),
    ("numpy int scalar", (5, 4, 3), lambda L: np.int64(3)),
    ("numpy index array", (5, 4, 3), lambda L: np.array([4, 0])),
    ("numpy bool array", (5, 4, 3), lambda L: MASK_5),
    ("index into 1-d", (7,), lambda L: L.t([6, 0, 3, 3])),
    ("1-d mask", (7,), lambda L: L.mask([True, False] * 3 + [True])),
    ("0-dim: ellipsis", (), lambda L: Ellipsis),
    ("0-dim: None", (), lambda L: None),
    ("0-dim: True", (), lambda L: True),
    ("0-dim: False", (), lambda L: False),
    ("0-dim: empty tuple", (), lambda L: ()),
    ("empty dim: slice", (0, 3), lambda L: (slice(None), 1)),
    ("empty dim: index", (0, 3), lambda L: (slice(None), L.t([2, 0]))),
    ("empty dim: mask", (0, 3), lambda L: L.mask(np.zeros((0, 3), bool))),
]

CASE_IDS = [c[0] for c in CASES]
BASIC = {
    "int",
    "negative int",
    "two ints",
    "all ints",
    "slice",
    "slice step",
    "slice clamps",
    "empty slice",
    "slices",
    "int and slice",
    "None",
    "None in the middle",
    "ellipsis",
    "ellipsis then int",
    "int ellipsis int",
    "ellipsis None",
    "empty tuple",
    "numpy int scalar",
    "0-dim: ellipsis",
    "0-dim: None",
    "0-dim: empty tuple",
    "empty dim: slice",
}


def check_equal(got: Any, expected: np.ndarray, what: str = "") -> None:
    assert isinstance(got, ea.Tensor), what
    g = got.numpy()
    assert g.shape == expected.shape, f"{what}: shape {g.shape} != {expected.shape}"
    np.testing.assert_array_equal(g, expected, err_msg=what)


# ---- getitem ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "shape", "make"), CASES, ids=CASE_IDS)
def test_getitem_matches_numpy(name: str, shape: tuple[int, ...], make: Callable[[Lib], Any]) -> None:
    a = arange(*shape)
    x = as_ember(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = x[make(Lib("ea"))]
    check_equal(got, a[make(Lib("np"))], name)


@pytest.mark.parametrize(("name", "shape", "make"), CASES, ids=CASE_IDS)
def test_view_or_copy(name: str, shape: tuple[int, ...], make: Callable[[Lib], Any]) -> None:
    """Basic indexing gives a view (writes show in the base); advanced indexing a copy."""
    a = arange(*shape)
    x = as_ember(a)
    r = x[make(Lib("ea"))]
    if r.numel() == 0:
        return
    before = x.numpy().copy()
    r.fill_(-1)
    if name in BASIC:
        assert r._base is x
        expected = before.copy()
        expected[make(Lib("np"))] = -1
        check_equal(x, expected, f"{name}: a write through the view reaches the base")
    else:
        assert r._base is None
        check_equal(x, before, f"{name}: the copy is independent")


@pytest.mark.parametrize(
    "dtype", [ea.bool, ea.uint8, ea.int16, ea.int32, ea.int64, ea.float16, ea.bfloat16, ea.float32, ea.float64]
)
def test_getitem_dtypes(dtype: Any, capability: str) -> None:
    a = arange(6, 5)
    x = as_ember(a).to(dtype)
    ref = x.float().numpy()
    for idx_ea, idx_np in [
        (ea.tensor([5, 0, 2]), np.array([5, 0, 2])),
        ((slice(None), ea.tensor([4, 4, 1])), (slice(None), np.array([4, 4, 1]))),
        (ea.tensor([[1, 2], [3, 0]]), np.array([[1, 2], [3, 0]])),
        (as_ember(MASK_6x5), MASK_6x5),
    ]:
        got = x[idx_ea]
        assert got.dtype == dtype
        check_equal(got.float(), ref[idx_np])


def test_noncontiguous_source_and_index() -> None:
    a = arange(6, 8)
    x = as_ember(a).t()  # transposed: 8 x 6, non-contiguous
    idx = ea.tensor([0, 9, 7, 9, 3, 9, 3, 9])[::2]  # a strided index tensor
    assert not idx.is_contiguous()
    check_equal(x[idx], a.T[[0, 7, 3, 3]])
    cols = ea.tensor([5, 9, 0, 9, 3])[::2]
    check_equal(x[::2, cols], a.T[::2][:, [5, 0, 3]])
    check_equal(x[as_ember(a.T > 20)], a.T[a.T > 20])


def test_int_is_basic_as_in_pytorch() -> None:
    """PyTorch applies ints as selects first: x[0, :, [1, 2]] has shape (4, 2), not NumPy's (2, 4)."""
    a = arange(3, 4, 5)
    x = as_ember(a)
    got = x[0, :, [1, 2]]
    check_equal(got, a[0][:, [1, 2]])
    assert got.shape == (4, 2)
    check_equal(x[[0, 2], 1, [1, 3]], a[:, 1][[0, 2], [1, 3]])
    check_equal(x[1, [0, 3], :, None], a[1][[0, 3], :, None])


def test_list_with_slices_is_a_tuple() -> None:
    a = arange(4, 5)
    x = as_ember(a)
    check_equal(x[[slice(1, 3), 2]], a[1:3, 2])
    check_equal(x[[[0, 1], [2, 3]]], a[[0, 1], [2, 3]])  # nested list: one index per dim
    long_list = list(range(4)) * 10  # 32 items or more: one index, never a tuple
    check_equal(x[long_list], a[long_list])


def test_zero_dim_tensor_indices() -> None:
    a = arange(4, 3)
    x = as_ember(a)
    r = x[ea.tensor(2)]  # 0-dim integer tensor: a select, so a view
    check_equal(r, a[2])
    assert r._base is x
    check_equal(x[ea.tensor(True)], a[None])
    check_equal(x[ea.tensor(False)], a[None][[]])
    check_equal(x[1, ea.tensor(-1)], a[1, -1])


def test_index_operator_direct() -> None:
    """ea.index / index_put_ take the per-dim list themselves (what __getitem__ builds)."""
    a = arange(3, 4)
    x = as_ember(a)
    check_equal(ea.index(x, [ea.tensor(True)]), a[None])  # a 0-dim mask adds a dim, as in NumPy
    check_equal(ea.index(x, [None, ea.tensor(False)]), a[:, None][:, []])
    r = ea.index(x, [None])  # no index tensor at all: a copy
    check_equal(r, a)
    assert r.data_ptr() != x.data_ptr()
    y = ea.zeros(3, 4)
    y.index_put_([None], ea.ones(4))
    check_equal(y, np.ones((3, 4), np.float32))
    y.index_put_([None, None], ea.ones(3, 1), accumulate=True)
    check_equal(y, np.full((3, 4), 2, np.float32))
    with pytest.raises(IndexError, match="at least one index must be provided"):
        ea.index(x, [])


def test_uint8_mask_warns_and_works() -> None:
    a = arange(4)
    x = as_ember(a)
    with pytest.warns(UserWarning, match="indexing with dtype ember.aten.uint8 is now deprecated"):
        got = x[ea.tensor([1, 0, 0, 1], dtype=ea.uint8)]
    check_equal(got, a[[True, False, False, True]])


def test_float_list_index_is_truncated_like_pytorch() -> None:
    a = arange(5)
    check_equal(as_ember(a)[[1.7, 3.2]], a[[1, 3]])


# ---- setitem ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "shape", "make"), CASES, ids=CASE_IDS)
def test_setitem_scalar_matches_numpy(name: str, shape: tuple[int, ...], make: Callable[[Lib], Any]) -> None:
    a = arange(*shape)
    x = as_ember(a)
    v0 = x._version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        x[make(Lib("ea"))] = -7
    a[make(Lib("np"))] = -7
    check_equal(x, a, name)
    assert x._version > v0, "setitem bumps the version counter"


def _writes_each_element_once(shape: tuple[int, ...], make: Callable[[Lib], Any]) -> bool:
    """Duplicate targets: which write wins is unspecified (as in PyTorch), so such cases are left out."""
    pos = np.arange(int(np.prod(shape)) if shape else 1).reshape(shape)[make(Lib("np"))]
    return len(np.unique(pos)) == np.size(pos)


UNIQUE_CASES = [c for c in CASES if _writes_each_element_once(c[1], c[2])]


@pytest.mark.parametrize(("name", "shape", "make"), UNIQUE_CASES, ids=[c[0] for c in UNIQUE_CASES])
def test_setitem_tensor_matches_numpy(name: str, shape: tuple[int, ...], make: Callable[[Lib], Any]) -> None:
    a = arange(*shape)
    x = as_ember(a)
    target_shape = a[make(Lib("np"))].shape
    v = (np.arange(int(np.prod(target_shape)), dtype=np.float32) + 100).reshape(target_shape)
    x[make(Lib("ea"))] = as_ember(v)
    a[make(Lib("np"))] = v
    check_equal(x, a, name)
    # a value that broadcasts (its last dim only), with a leading 1 dim that is dropped
    if len(target_shape) >= 1 and target_shape[-1] > 0:
        row = np.arange(target_shape[-1], dtype=np.float32)[None] - 50
        x[make(Lib("ea"))] = as_ember(row)
        a[make(Lib("np"))] = row[0]
        check_equal(x, a, f"{name} broadcast value")


def test_setitem_converts_dtype_for_basic_indexing() -> None:
    x = ea.zeros(3, 2)
    x[1] = ea.tensor([1.5, 2.5], dtype=ea.float64)  # copy_ converts
    x[0, 1] = True
    x[2] = 7
    check_equal(x, np.array([[0, 1], [1.5, 2.5], [7, 7]], np.float32))
    i = ea.zeros(3, dtype=ea.int64)
    i[[0, 2]] = 4  # Python numbers take the tensor's dtype
    check_equal(i, np.array([4, 0, 4]))


def test_setitem_through_views_and_versions() -> None:
    base = ea.zeros(4, 5)
    view = base[1:3]
    v0 = base._version
    view[:, 2] = 9.0  # basic: through the view
    view[ea.tensor([0]), ea.tensor([4])] = 3.0  # advanced on a view writes the base too
    expected = np.zeros((4, 5), np.float32)
    expected[1:3, 2] = 9
    expected[1, 4] = 3
    check_equal(base, expected)
    assert base._version == view._version == v0 + 2


def test_setitem_mask_fast_path_and_value_tensor() -> None:
    a = _rng.standard_normal((50, 40)).astype(np.float32)
    x = as_ember(a)
    x[as_ember(a < 0)] = 0.0
    a[a < 0] = 0
    check_equal(x, a)
    x[as_ember(a > 1)] = ea.tensor(1.0)  # 0-dim tensor value: masked_fill
    a[a > 1] = 1
    check_equal(x, a)
    m = a > 0.5
    vals = np.arange(m.sum(), dtype=np.float32)
    x[as_ember(m)] = as_ember(vals)
    a[m] = vals
    check_equal(x, a)


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "exc", "msg"),
    [
        (5, IndexError, r"index 5 is out of bounds for dimension 0 with size 3"),
        (-4, IndexError, r"index -4 is out of bounds for dimension 0 with size 3"),
        ((0, 4), IndexError, r"index 4 is out of bounds for dimension 1 with size 4"),
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        (slice(None, None, 0), ValueError, "slice step cannot be zero"),
        ((0, 0, 0), IndexError, r"too many indices for tensor of dimension 2 \(got 3\)"),
        ((Ellipsis, 0, Ellipsis), IndexError, r"an index can only have a single ellipsis"),
        (1.5, IndexError, r"only integers, slices .* are valid indices \(got float\)"),
        ("a", IndexError, r"only integers, slices .* are valid indices \(got str\)"),
        ([0, 3], IndexError, r"index 3 is out of bounds for dimension 0 with size 3"),
        ([-4], IndexError, r"index -4 is out of bounds for dimension 0 with size 3"),
        ((slice(None), [0, 4]), IndexError, r"index 4 is out of bounds for dimension 1 with size 4"),
        ("float tensor", IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
        (
            "bad mask",
            IndexError,
            r"The shape of the mask \[4\] at index 0 does not match the shape of the indexed "
            r"tensor \[3, 4\] at index 0",
        ),
        (
            "mismatch",
            IndexError,
            r"shape mismatch: indexing tensors could not be broadcast together with shapes "
            r"\[2\], \[3\]",
        ),
        ("mask too many", IndexError, r"too many indices for tensor of dimension 2 \(got 3\)"),
    ],
)
def test_getitem_errors(index: Any, exc: type[BaseException], msg: str) -> None:
    x = as_ember(arange(3, 4))
    special = {
        "float tensor": ea.tensor([0.0, 1.0]),
        "bad mask": ea.tensor([True, False, True, True]),
        "mismatch": (ea.tensor([0, 1]), ea.tensor([0, 1, 2])),
        "mask too many": (0, ea.ones(4, 2, dtype=ea.bool)),
    }
    if isinstance(index, str) and index in special:
        index = special[index]
    with pytest.raises(exc, match=msg):
        x[index]
    with pytest.raises(exc, match=msg):
        x[index] = 1.0


def test_setitem_errors() -> None:
    x = ea.zeros(3, 4)
    with pytest.raises(
        RuntimeError,
        match="Index put requires the source and destination dtypes match, got Float "
        "for the destination and Double for the source",
    ):
        x[[0, 1]] = ea.ones(2, 4, dtype=ea.float64)
    with pytest.raises(
        RuntimeError,
        match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
        r"indexing result of shape \[2, 4\]",
    ):
        x[[0, 1]] = ea.ones(3)
    with pytest.raises(RuntimeError, match=r"must match the size"):
        x[0] = ea.ones(3)  # basic: copy_ broadcast error
    with pytest.raises(TypeError, match="can't assign a list to a"):
        x[0] = [1, 2, 3, 4]
    with pytest.raises(TypeError, match="can't assign a str to a"):
        x[0] = "a"
    check_equal(x, np.zeros((3, 4), np.float32), "failed assignments leave x unchanged")


def test_failed_index_put_writes_nothing() -> None:
    x = ea.zeros(5)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for dimension 0 with size 5"):
        x[ea.tensor([0, 1, 2, 5])] = ea.tensor([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for dimension 0 with size 5"):
        x.index_put_((ea.tensor([0, 7]),), ea.tensor(1.0), accumulate=True)
    with pytest.raises(RuntimeError, match=r"index 9 is out of bounds for dimension 0 with size 5"):
        x.scatter_(0, ea.tensor([1, 9]), ea.ones(2))  # scatter and gather: PyTorch's RuntimeError
    with pytest.raises(IndexError, match=r"out of range: tried to access index 5 on a tensor of 5 elements"):
        x.put_(ea.tensor([0, 5]), ea.ones(2))
    check_equal(x, np.zeros(5, np.float32))
    assert x._version == 0


def test_out_of_range_in_parallel_chunks() -> None:
    """The bounds check runs inside OpenMP chunks; the error reaches Python intact."""
    x = ea.zeros(1000)
    idx = np.zeros(300_000, np.int64)
    idx[123_457] = 1000
    with pytest.raises(IndexError, match=r"index 1000 is out of bounds for dimension 0 with size 1000"):
        x[as_ember(idx)]
    idx[123_457] = -1001
    with pytest.raises(RuntimeError, match=r"index -1001 is out of bounds for dimension 0 with size 1000"):
        ea.gather(x, 0, as_ember(idx))
    with pytest.raises(IndexError, match=r"out of range: tried to access index -1001 on a tensor of 1000 elements"):
        ea.take(x, as_ember(idx))


# ---- duplicate indices accumulate ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.int32, ea.int64, ea.float16])
def test_accumulate_duplicates(dtype: Any) -> None:
    n = 200_000  # above the parallel grain: the accumulate path must still be exact
    idx = _rng.integers(0, 10, size=n)
    vals = _rng.integers(-3, 4, size=n)
    expected = np.zeros(10, np.int64)
    np.add.at(expected, idx, vals)
    x = ea.zeros(10, dtype=dtype)
    x.index_put_((as_ember(idx),), as_ember(vals).to(dtype), accumulate=True)
    if dtype == ea.float16:
        np.testing.assert_allclose(x.double().numpy(), expected, rtol=1e-2, atol=4)
    else:
        check_equal(x.to(ea.int64), expected)
    y = ea.zeros(10, dtype=dtype).index_add(0, as_ember(idx), as_ember(vals).to(dtype))
    z = ea.zeros(10, dtype=dtype).scatter_add(0, as_ember(idx), as_ember(vals).to(dtype))
    w = ea.zeros(10, dtype=dtype).put_(as_ember(idx), as_ember(vals).to(dtype), accumulate=True)
    for r in (y, z, w):
        if dtype == ea.float16:
            np.testing.assert_allclose(r.double().numpy(), expected, rtol=1e-2, atol=4)
        else:
            check_equal(r.to(ea.int64), expected)


def test_accumulate_2d_points() -> None:
    a = np.zeros((4, 5), np.float64)
    rows = _rng.integers(0, 4, size=1000)
    cols = _rng.integers(-5, 5, size=1000)
    vals = _rng.standard_normal(1000)
    np.add.at(a, (rows, cols), vals)
    x = ea.zeros(4, 5, dtype=ea.float64)
    x.index_put_((as_ember(rows), as_ember(cols)), as_ember(vals), accumulate=True)
    np.testing.assert_allclose(x.numpy(), a, rtol=1e-12, atol=1e-12)


# ---- large inputs (parallel paths) ------------------------------------------------------------


def test_large_gather_and_masked_select() -> None:
    a = _rng.standard_normal(1_000_000).astype(np.float32)
    idx = _rng.integers(-1_000_000, 1_000_000, size=100_000)
    x = as_ember(a)
    check_equal(x[as_ember(idx)], a[idx])
    m = a > 0.3
    check_equal(x[as_ember(m)], a[m])
    check_equal(ea.masked_select(x, as_ember(m)), a[m])
    nz = np.nonzero(m)[0]
    check_equal(ea.nonzero(as_ember(m))[:, 0], nz)
    b = a.reshape(1000, 1000)
    y = as_ember(b)
    check_equal(y[:, as_ember(idx[:5000] % 1000)], b[:, idx[:5000] % 1000])
    check_equal(ea.index_select(y, 1, as_ember(idx[:300] % 1000)), b[:, idx[:300] % 1000])


# ---- nonzero / where / argwhere ---------------------------------------------------------------


def test_nonzero_as_tuple_and_where() -> None:
    a = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    x = as_ember(a)
    check_equal(ea.nonzero(x), np.argwhere(a))
    check_equal(x.nonzero(), np.argwhere(a))
    t = ea.nonzero(x, as_tuple=True)
    assert isinstance(t, tuple) and len(t) == 2
    for got, exp in zip(t, np.nonzero(a), strict=True):
        check_equal(got, exp)
    w = ea.where(as_ember(a > 0))
    assert isinstance(w, tuple)
    for got, exp in zip(w, np.nonzero(a > 0), strict=True):
        check_equal(got, exp)
    check_equal(x[ea.where(as_ember(a > 1))], a[np.nonzero(a > 1)])
    check_equal(x.nonzero(as_tuple=True)[1], np.nonzero(a)[1])
    check_equal(ea.argwhere(x), np.argwhere(a))
    # 0-dim: as_tuple treats it as 1-d
    z = ea.nonzero(ea.tensor(5.0), as_tuple=True)
    assert len(z) == 1
    check_equal(z[0], np.array([0]))
    check_equal(ea.nonzero(ea.tensor(0.0)), np.zeros((0, 0), np.int64))
    out = ea.empty(0, dtype=ea.int64)
    assert ea.nonzero(x, out=out) is out
    check_equal(out, np.argwhere(a))
    with pytest.raises(RuntimeError, match="Expected out tensor to have scalar type Long"):
        ea.nonzero(x, out=ea.empty(0))


def test_where_three_arguments_still_resolve() -> None:
    """where(condition) joins where(condition, input, other) under one public function."""
    c = ea.tensor([True, False])
    r = ea.where(c, ea.tensor([1.0, 2.0]), ea.tensor([3.0, 4.0]))
    check_equal(r, np.array([1.0, 4.0], np.float32))


# ---- the ops on the CPU capabilities ----------------------------------------------------------


def test_kernels_on_each_capability(capability: str) -> None:
    a = _rng.standard_normal((64, 33)).astype(np.float32)
    x = as_ember(a)
    idx = _rng.integers(-64, 64, size=50)
    check_equal(x[as_ember(idx)], a[idx])
    check_equal(x[:, as_ember(idx % 33)], a[:, idx % 33])
    m = a > 0
    check_equal(x[as_ember(m)], a[m])
    y = x.clone()
    y[as_ember(m)] = 0.0
    b = a.copy()
    b[m] = 0
    check_equal(y, b)
    check_equal(ea.masked_fill(x, as_ember(m), 2.0), np.where(m, 2, a).astype(np.float32))
    check_equal(ea.nonzero(as_ember(m)), np.argwhere(m))


@pytest.mark.parametrize(
    ("np_dtype", "value"),
    [
        (np.float32, -1.5),
        (np.float64, np.inf),
        (np.float16, 2.0),
        (np.int64, -7),
        (np.int32, 5),
        (np.int8, -3),
        (np.uint8, 200),
        (np.bool_, True),
    ],
    ids=str,
)
def test_masked_fill_random_masks_every_element_width(np_dtype: Any, value: Any) -> None:
    # the contiguous loop blends bits (no branch): every element width, a random mask, mask
    # bytes other than 1 (true), and the kept elements bit-exact (NaN, -0.0); then the
    # strided loop (a transposed self, a broadcast mask)
    a = _rng.standard_normal((37, 41)) * 50
    if np_dtype == np.bool_:
        a = a > 0
    elif np.issubdtype(np_dtype, np.floating):
        a[0, :3] = [np.nan, -0.0, np.inf]
    a = a.astype(np_dtype)
    raw = _rng.integers(0, 4, size=a.shape).astype(np.uint8)  # 0 false; 1, 2, 3 true
    m = raw != 0
    mask = ea.from_numpy(raw.copy()).view(ea.bool)
    expected = np.where(m, np.array(value, dtype=np_dtype), a)
    got = ea.masked_fill(as_ember(a), mask, value).numpy()
    assert got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()
    y = as_ember(a)
    y.masked_fill_(mask, value)
    assert y.numpy().tobytes() == expected.tobytes()
    # strided: self transposed, the mask a broadcast row
    row = m[:1].T.copy()  # (41, 1)
    yt = as_ember(a.T.copy()).t()  # (37, 41) viewed through a transpose
    yt.masked_fill_(as_ember(row.T), value)
    np.testing.assert_array_equal(yt.numpy(), np.where(row.T, np.array(value, dtype=np_dtype), a))
