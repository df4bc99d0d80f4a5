"""threshold_backward(grad_output, self, threshold): grad_output where self > threshold, else 0.

relu's and threshold's backward in one pass (PyTorch's operator of the same name), checked
against NumPy for every dtype it takes, NaN in ``self``, broadcasting, non-contiguous inputs
and the ``out=`` variant (PyTorch's ``grad_input=``).
"""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest

DTYPES = [ea.float32, ea.float64, ea.float16, ea.bfloat16, ea.int32, ea.int64, ea.int8, ea.uint8]


def _reference(g: np.ndarray, x: np.ndarray, th: float) -> np.ndarray:
    return np.where(x <= th, np.zeros_like(g), g)


# a negative threshold has no uint8 value
CASES = [(d, th) for d in DTYPES for th in (0, 0.5, -1) if not (d == ea.uint8 and th < 0)]


@pytest.mark.parametrize(("dtype", "threshold"), CASES, ids=str)
def test_values_match_numpy(dtype: object, threshold: float) -> None:
    rng = np.random.default_rng(0)
    xn = rng.integers(-3, 4, size=(5, 67)).astype(np.float64)  # 67: the vector loop and its tail
    gn = rng.integers(1, 9, size=(5, 67)).astype(np.float64)
    if dtype == ea.uint8:
        xn = np.abs(xn)
    x = ea.tensor(xn.tolist(), dtype=dtype)
    g = ea.tensor(gn.tolist(), dtype=dtype)
    r = ea.threshold_backward(g, x, threshold)
    assert r.dtype == dtype and tuple(r.shape) == (5, 67)
    th = int(threshold) if not dtype.is_floating_point else threshold
    np.testing.assert_array_equal(r.to(ea.float64).numpy(), _reference(gn, xn, th))


def test_nan_in_self_passes_the_gradient() -> None:
    x = ea.tensor([float("nan"), -1.0, 0.0, 2.0] * 5)
    g = ea.arange(20, dtype=ea.float32) + 1
    r = ea.threshold_backward(g, x, 0)
    expected = [v if i % 4 in (0, 3) else 0.0 for i, v in enumerate(range(1, 21))]
    assert r.tolist() == expected


def test_broadcasts_and_promotes_like_a_binary_op() -> None:
    x = ea.tensor([[-1.0], [1.0]], dtype=ea.float32)  # (2, 1)
    g = ea.ones(2, 3, dtype=ea.float64)
    r = ea.threshold_backward(g, x, 0)
    assert r.dtype == ea.float64
    assert r.tolist() == [[0.0] * 3, [1.0] * 3]


def test_non_contiguous_inputs() -> None:
    xn = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    gn = np.random.default_rng(2).standard_normal((8, 6)).astype(np.float32)
    x = ea.from_numpy(xn)
    g = ea.from_numpy(gn).t()  # (6, 8), strides (1, 6)
    r = ea.threshold_backward(g, x, 0.1)
    np.testing.assert_array_equal(r.numpy(), _reference(gn.T, xn, np.float32(0.1)))


def test_out_variant_writes_into_its_argument() -> None:
    x = ea.tensor([-2.0, 3.0, 0.5])
    g = ea.tensor([10.0, 20.0, 30.0])
    out = ea.empty(3)
    r = ea.threshold_backward(g, x, 1.0, out=out)
    assert r is out
    assert out.tolist() == [0.0, 20.0, 0.0]


def test_mismatched_shapes_raise() -> None:
    with pytest.raises(RuntimeError, match="size of tensor"):
        ea.threshold_backward(ea.ones(3), ea.ones(4), 0)
