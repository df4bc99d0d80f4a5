"""tensor() / as_tensor() / Tensor(data) and list indices on hostile Python data (issue 25).

PyTorch 2.13's behaviour is the reference: a list nested past 128 dims (a self-referential
one, a 30,000-deep one) is ``ValueError: too many dimensions 'list'``; a sequence whose
``len`` and iteration disagree is "expected sequence of length N at dim D (got M)"; an
integer that does not fit the dtype is "value cannot be converted to type int8 without
overflow". Inputs that crashed the interpreter run in a subprocess, so that a crash fails
the test instead of killing pytest.
"""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from isolated import run_isolated


def nested(depth: int, leaf: object = 1.0) -> object:
    d = leaf
    for _ in range(depth):
        d = [d]
    return d


# ---- depth and cycles ---------------------------------------------------------------------


def test_128_dims_is_the_limit() -> None:
    assert ea.tensor(nested(128)).dim() == 128
    with pytest.raises(ValueError, match="too many dimensions 'list'"):
        ea.tensor(nested(129))


def test_deep_and_self_referential_lists_are_value_errors_not_crashes() -> None:
    out = run_isolated(
        """
        import sys
        import ember.aten as ea
        sys.setrecursionlimit(100000)
        def nested(n):
            d = 1.0
            for _ in range(n):
                d = [d]
            return d
        cyc = []
        cyc.append(cyc)
        cases = {
            "tensor 20000": lambda: ea.tensor(nested(20000)),
            "as_tensor 20000": lambda: ea.as_tensor(nested(20000)),
            "Tensor 20000": lambda: ea.Tensor(nested(20000)),
            "index 30000": lambda: ea.zeros(3)[nested(30000)],
            "tensor cycle": lambda: ea.tensor(cyc),
            "Tensor cycle": lambda: ea.Tensor(cyc),
        }
        for name, f in cases.items():
            try:
                f()
                print(name, "no error")
            except ValueError as e:
                print(name, "ValueError", e)
        """
    )
    lines = out.strip().splitlines()
    assert len(lines) == 6, out
    for line in lines:
        assert "ValueError too many dimensions 'list'" in line, line


def test_self_reference_below_the_first_element_is_a_type_error() -> None:
    l: list[object] = [1.0]
    l.append(l)
    with pytest.raises(TypeError, match="self-referential lists are incompatible"):
        ea.tensor(l)
    # the shape pass (from first elements) sees rows of length 1, so the fill pass meets l's
    # length 2 first: a clear ValueError, never a recursion
    with pytest.raises(ValueError, match=r"expected sequence of length 1 at dim 1 \(got 2\)"):
        ea.tensor([[1.0], l])


def test_indirect_cycle_is_an_error_not_a_stack_overflow() -> None:
    # a = [1.0, [a]]: PyTorch 2.13 itself overflows the C stack on this one
    out = run_isolated(
        """
        import ember.aten as ea
        a = [1.0]
        a.append([a])
        try:
            ea.tensor(a)
            print("no error")
        except (TypeError, ValueError) as e:
            print(type(e).__name__, e)
        """
    )
    assert out.startswith(("TypeError", "ValueError")), out


def test_str_is_too_many_dimensions() -> None:
    with pytest.raises(ValueError, match="too many dimensions 'str'"):
        ea.tensor("a")
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        ea.tensor([1, "a"])


# ---- sequences that lie or change ------------------------------------------------------------


class LenSaysOne:
    """len() 1, iteration 5 items."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: int) -> float:
        if i < 5:
            return float(i)
        raise IndexError(i)


class LenSaysFive:
    """len() 5, iteration 2 items (PyTorch: a bare IndexError)."""

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: int) -> float:
        if i < 2:
            return float(i)
        raise IndexError(i)


def test_len_disagreeing_with_iteration() -> None:
    with pytest.raises(ValueError, match=r"expected sequence of length 1 at dim 0 \(got 5\)"):
        ea.tensor(LenSaysOne())
    with pytest.raises(ValueError, match=r"expected sequence of length 5 at dim 0 \(got 2\)"):
        ea.tensor(LenSaysFive())


def test_ragged_lists() -> None:
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        ea.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="not a sequence"):
        ea.tensor([[1, 2], 3])
    with pytest.raises(TypeError):
        ea.tensor([1, [2]])


def test_items_changing_between_passes_cannot_write_past_the_buffer() -> None:
    # An item whose __index__ grows or empties the rows after the shape was taken: the old
    # fill trusted the shape and wrote past the buffer ("malloc(): unaligned tcache chunk").
    out = run_isolated(
        """
        import ember.aten as ea
        results = []
        for mode in ("grow", "shrink", "grow-outer"):
            rows = [[0, 0], [0, 0]]
            class Sneaky:
                calls = 0
                def __index__(self):
                    Sneaky.calls += 1
                    if Sneaky.calls == 3:  # during the fill pass
                        if mode == "grow":
                            rows[1].extend(range(10000))
                        elif mode == "shrink":
                            rows[1].clear()
                        else:
                            rows.extend([[0, 0]] * 10000)
                    return 1
            rows[0][0] = Sneaky()
            rows[1][0] = Sneaky()
            try:
                t = ea.tensor(rows)
                results.append(f"{mode} ok {tuple(t.shape)}")
            except (ValueError, RuntimeError, TypeError) as e:
                results.append(f"{mode} {type(e).__name__}")
            # allocate a little, as the corrupted heap used to abort here
            for _ in range(200):
                ea.zeros(64) + 1
        print("|".join(results))
        """
    )
    for part in out.strip().split("|"):
        _mode, verdict = part.split(" ", 1)
        assert verdict.startswith(("ValueError", "RuntimeError", "ok (2, 2)")), part


# ---- values that do not fit the dtype ----------------------------------------------------------

OVERFLOW_CASES = [
    ([300], ea.int8, "int8"),
    (300, ea.int8, "int8"),
    ([-129], ea.int8, "int8"),
    ([127.9], ea.int8, "int8"),
    ([-256], ea.uint8, "uint8"),
    ([256], ea.uint8, "uint8"),
    ([-1.0], ea.uint8, "uint8"),
    ([40000], ea.int16, "int16"),
    ([2**40], ea.int32, "int32"),
    ([1e30], ea.int64, "int64"),
    ([float("nan")], ea.int32, "int32"),
    ([float("inf")], ea.int8, "int8"),
    ([ea.tensor(300)], ea.int8, "int8"),
    ([np.int64(300)], ea.int8, "int8"),
]


@pytest.mark.parametrize(("data", "dtype", "name"), OVERFLOW_CASES)
def test_integer_overflow_is_refused(data: object, dtype: object, name: str) -> None:
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} without overflow"):
        ea.tensor(data, dtype=dtype)


FITTING_CASES = [
    ([127], ea.int8, [127]),
    ([-128.9 + 1], ea.int8, [-127]),
    ([-1], ea.uint8, [255]),  # PyTorch wraps negative ints down to -255 into uint8
    ([-255], ea.uint8, [1]),
    ([5], ea.bool, [True]),
    ([2.5], ea.bool, [True]),
    ([True], ea.int8, [1]),
    ([-(2**63)], ea.int64, [-(2**63)]),
    ([1.9], ea.int32, [1]),
]


@pytest.mark.parametrize(("data", "dtype", "expected"), FITTING_CASES)
def test_values_that_fit(data: object, dtype: object, expected: list[object]) -> None:
    assert ea.tensor(data, dtype=dtype).tolist() == expected


def test_float_dtypes_round_to_inf() -> None:
    assert ea.tensor([1e10], dtype=ea.float16).tolist() == [float("inf")]
    assert ea.tensor([1e39], dtype=ea.float32).tolist() == [float("inf")]


# ---- fuzz ---------------------------------------------------------------------------------------

_leaf = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=2),
    st.none(),
)
_data = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner), max_leaves=30)
_dtype = st.sampled_from([None, ea.bool, ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64, ea.float16, ea.float32])


def _numpy_reference(data: object) -> np.ndarray | None:
    """The array NumPy makes of a rectangular all-number nesting, else None."""
    try:
        a = np.array(data, dtype=object)
    except (ValueError, OverflowError):
        return None
    if a.dtype != object or a.size == 0:
        return a if a.dtype != object else None
    flat = a.reshape(-1)
    if any(isinstance(x, (list, tuple, str)) or x is None for x in flat):
        return None
    return a


@settings(max_examples=300, deadline=None)
@given(_data, _dtype)
def test_fuzz_tensor_from_hostile_nesting(data: object, dtype: object) -> None:
    # Only clean Python errors, and when it succeeds the shape is NumPy's.
    try:
        t = ea.tensor(data, dtype=dtype)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return
    ref = _numpy_reference(data)
    if ref is not None:
        assert tuple(t.shape) == ref.shape


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-5, 5), max_size=4), min_size=1, max_size=4), st.data())
def test_fuzz_rows_mutated_during_fill(rows: list[list[int]], data: st.DataObject) -> None:
    # an element that changes a row (grow, clear, replace) while the tensor is filled
    target = data.draw(st.integers(0, len(rows) - 1))
    action = data.draw(st.sampled_from(["append", "clear", "replace"]))

    class Mutator:
        fired = False

        def __index__(self) -> int:
            if not Mutator.fired:
                Mutator.fired = True
                if action == "append":
                    rows[target].append(1)
                elif action == "clear":
                    rows[target].clear()
                else:
                    rows[target] = [1.5] * 7
            return 2

    if not rows[0]:
        rows[0].append(0)
    rows[0][0] = Mutator()  # type: ignore[call-overload]
    try:
        t = ea.tensor(rows)
    except (TypeError, ValueError, RuntimeError):
        return
    assert t.dim() == 2 and t.numel() == t.shape[0] * t.shape[1]


def test_tensor_in_list_must_cover_the_remaining_dims() -> None:
    with pytest.raises(ValueError):
        ea.tensor([ea.ones(2), ea.ones(3)])
    assert ea.tensor([ea.ones(2), ea.zeros(2)]).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert ea.tensor([ea.tensor(1.0), 2]).tolist() == [1.0, 2.0]
