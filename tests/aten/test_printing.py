"""print(tensor) matches PyTorch's layout. The expected strings are written out literally
(as PyTorch 2.13 prints them, with torch. spelled ember.aten.)."""

from __future__ import annotations

import ember.aten as ea
import pytest

nan, inf = float("nan"), float("inf")

CASES = [
    (lambda: ea.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: ea.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    (lambda: ea.tensor(3.5), "tensor(3.5000)"),
    (lambda: ea.tensor(3.0), "tensor(3.)"),
    (lambda: ea.tensor(7), "tensor(7)"),
    (lambda: ea.tensor(True), "tensor(True)"),
    (lambda: ea.tensor([0.1, 0.2]), "tensor([0.1000, 0.2000])"),
    (lambda: ea.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: ea.tensor([1e10]), "tensor([1.0000e+10])"),
    (lambda: ea.tensor([1.0, 2000.0]), "tensor([1.0000e+00, 2.0000e+03])"),
    (lambda: ea.tensor([1e9, 0.5]), "tensor([1.0000e+09, 5.0000e-01])"),
    (lambda: ea.tensor([1, 2], dtype=ea.int32), "tensor([1, 2], dtype=ember.aten.int32)"),
    (lambda: ea.tensor([1, 2], dtype=ea.uint8), "tensor([1, 2], dtype=ember.aten.uint8)"),
    (lambda: ea.empty((0, 3)), "tensor([], size=(0, 3))"),
    (lambda: ea.tensor([], dtype=ea.int64), "tensor([], dtype=ember.aten.int64)"),
    (lambda: ea.tensor([]), "tensor([])"),
    (lambda: ea.tensor([nan, inf, 1.0]), "tensor([nan, inf, 1.])"),
    (lambda: ea.tensor([nan, -inf, 1.5]), "tensor([   nan,   -inf, 1.5000])"),
    (lambda: ea.tensor([0.0, nan]), "tensor([0., nan])"),
    (lambda: ea.tensor([0.5, nan, 0.0]), "tensor([0.5000,    nan, 0.0000])"),
    (lambda: ea.tensor([1e-5, nan]), "tensor([1.0000e-05,        nan])"),
    (lambda: ea.tensor([0.0, 100.0]), "tensor([  0., 100.])"),
    (lambda: ea.tensor([-inf, 1.0, 0.0]), "tensor([-inf, 1., 0.])"),
    (lambda: ea.tensor([-0.0, 1.0]), "tensor([-0., 1.])"),
    (lambda: ea.tensor([True, False]), "tensor([ True, False])"),
    (lambda: ea.tensor([1.5, 2.25], dtype=ea.float64), "tensor([1.5000, 2.2500], dtype=ember.aten.float64)"),
    (lambda: ea.tensor([1.5, 2.25], dtype=ea.float16), "tensor([1.5000, 2.2500], dtype=ember.aten.float16)"),
    (lambda: ea.tensor([-1.5, 2.0, 100.25]), "tensor([ -1.5000,   2.0000, 100.2500])"),
    (lambda: ea.tensor([123456789, -5]), "tensor([123456789,        -5])"),
    (lambda: ea.tensor([0.0, 0.0, 0.0]), "tensor([0., 0., 0.])"),
    (lambda: ea.tensor(list(range(2000))), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (
        lambda: ea.tensor([[[i * 12 + j * 4 + k for k in range(4)] for j in range(3)] for i in range(2)]),
        "tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n         [ 8,  9, 10, 11]],\n\n"
        "        [[12, 13, 14, 15],\n         [16, 17, 18, 19],\n         [20, 21, 22, 23]]])",
    ),
    (
        lambda: ea.tensor([i * 1000.5 for i in range(30)]),
        "tensor([    0.0000,  1000.5000,  2001.0000,  3001.5000,  4002.0000,  5002.5000,\n"
        "         6003.0000,  7003.5000,  8004.0000,  9004.5000, 10005.0000, 11005.5000,\n"
        "        12006.0000, 13006.5000, 14007.0000, 15007.5000, 16008.0000, 17008.5000,\n"
        "        18009.0000, 19009.5000, 20010.0000, 21010.5000, 22011.0000, 23011.5000,\n"
        "        24012.0000, 25012.5000, 26013.0000, 27013.5000, 28014.0000, 29014.5000])",
    ),
    (
        lambda: ea.tensor([[float(i * 50 + j) for j in range(50)] for i in range(40)]),
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
        "         4.9000e+01],\n"
        "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
        "         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
        "         1.4900e+02],\n"
        "        ...,\n"
        "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
        "         1.8990e+03],\n"
        "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
        "         1.9490e+03],\n"
        "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])",
    ),
]


@pytest.mark.parametrize(("make", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_repr_matches_pytorch_layout(make, expected) -> None:  # type: ignore[no-untyped-def]
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_requires_grad_suffix() -> None:
    t = ea.tensor([1.0, 2.0])
    t.requires_grad_(True)
    assert repr(t) == "tensor([1., 2.], requires_grad=True)"


def test_default_dtype_changes_which_dtype_is_shown() -> None:
    ea.set_default_dtype(ea.float64)
    try:
        assert repr(ea.tensor([1.5])) == "tensor([1.5000])"
        assert repr(ea.tensor([1.5], dtype=ea.float32)) == "tensor([1.5000], dtype=ember.aten.float32)"
    finally:
        ea.set_default_dtype(ea.float32)


def test_printoptions() -> None:
    ea.set_printoptions(precision=2)
    try:
        assert repr(ea.tensor([1.12345])) == "tensor([1.12])"
        ea.set_printoptions(threshold=5)
        assert repr(ea.tensor(list(range(10)))) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    finally:
        ea.set_printoptions(profile="default")
    assert repr(ea.tensor([1.12345])) == "tensor([1.1235])"


def test_format_of_one_element_tensors() -> None:
    assert f"{ea.tensor(3.14159):.2f}" == "3.14"
    assert f"{ea.tensor(42):5d}" == "   42"
