"""Cases where ember answered PyTorch's own OpInfo samples differently (issue 18's list):
which index kthvalue and mode report among equal values, index_add on bool with alpha,
matmul with an empty batched operand.

The expected indices below were recorded from PyTorch 2.13's CPU kernels on the same
inputs (NumPy's RandomState streams are fixed across versions, so the inputs are too)."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from opinfo.reductions import quickselect_position


def _rs() -> np.random.RandomState:
    return np.random.RandomState(7)


def test_mode_of_a_long_row_reports_pytorchs_index() -> None:
    rs = _rs()
    x = rs.randint(0, 10, size=3000).astype(np.float32)
    v, i = ea.mode(ea.from_numpy(x))
    assert v.item() == 0.0 and i.item() == 1058  # PyTorch 2.13: values=0., indices=1058
    x2 = rs.randint(0, 3, size=(4, 50)).astype(np.int64)
    v2, i2 = ea.mode(ea.from_numpy(x2), 1)
    assert i2.tolist() == [23, 11, 24, 29]
    assert (x2[np.arange(4), i2.numpy()] == v2.numpy()).all()


def test_kthvalue_ties_report_pytorchs_index() -> None:
    rs = _rs()
    rs.randint(0, 10, size=3000)  # the stream position of the recording
    rs.randint(0, 3, size=(4, 50))
    x3 = rs.randint(0, 3, size=(5, 7)).astype(np.int64)
    got = [ea.kthvalue(ea.from_numpy(x3), k, 1).indices.tolist() for k in (1, 3, 7)]
    assert got == [[6, 2, 6, 6, 3], [5, 6, 5, 3, 6], [3, 3, 4, 0, 4]]
    x4 = rs.randint(0, 4, size=(6, 40)).astype(np.float64)
    x4[1, 3] = np.nan
    x4[2, ::5] = np.nan
    got = [ea.kthvalue(ea.from_numpy(x4), k, 1).indices.tolist() for k in (1, 20, 40)]
    assert got == [[19, 4, 32, 34, 35, 29], [37, 37, 31, 37, 33, 27], [0, 3, 0, 39, 19, 0]]
    assert ea.kthvalue(ea.from_numpy(x3), 2, 0).indices.tolist() == [0, 0, 2, 3, 3, 2, 2]


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float16])
def test_kthvalue_matches_the_quickselect_reference(dtype: type) -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(1, 60))
        x = rng.integers(0, 4, size=(3, n)).astype(dtype)
        if dtype != np.int64 and n > 2:
            x[0, int(rng.integers(0, n))] = np.nan
        k = int(rng.integers(1, n + 1))
        v, i = ea.kthvalue(ea.from_numpy(x), k, 1)
        expected = [quickselect_position(row, k - 1) for row in x]
        assert i.tolist() == expected
        np.testing.assert_array_equal(v.numpy(), x[np.arange(3), expected])


def test_kthvalue_of_a_noncontiguous_input_leaves_it_unchanged() -> None:
    base = ea.from_numpy(np.array([[3, 1, 2], [2, 2, 0], [1, 1, 1]], dtype=np.int64))
    x = base.t()
    before = base.clone()
    v, i = x.kthvalue(2, 1)
    assert ea.equal(base, before)
    assert v.tolist() == [2, 1, 1]  # rows of x are base's columns
    assert i.tolist() == [quickselect_position(r, 1) for r in x.numpy()]


def test_index_add_bool_uses_alpha() -> None:
    s = ea.zeros(3, dtype=ea.bool)
    src = ea.tensor([True, False, True])
    idx = ea.tensor([0, 1, 2])
    assert s.index_add(0, idx, src, alpha=False).tolist() == [False, False, False]
    assert s.index_add(0, idx, src).tolist() == [True, False, True]
    assert ea.tensor([True, False, False]).index_add(0, idx, src, alpha=True).tolist() == [True, False, True]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((5, 5, 0), (0, 5), (5, 5, 5)),
        ((2, 0, 3), (3, 4), (2, 0, 4)),
        ((0, 3), (2, 3, 4), (2, 0, 4)),
        ((3, 0, 2), (2,), (3, 0)),
    ],
)
def test_matmul_with_empty_operands(a: tuple[int, ...], b: tuple[int, ...], expected: tuple[int, ...]) -> None:
    x, y = ea.ones(a), ea.ones(b)
    r = ea.matmul(x, y)
    assert tuple(r.shape) == expected
    np.testing.assert_array_equal(r.numpy(), np.matmul(np.ones(a, np.float32), np.ones(b, np.float32)))
    assert tuple(y.__rmatmul__(x).shape) == expected
