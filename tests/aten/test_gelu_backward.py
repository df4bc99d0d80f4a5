"""gelu_backward (grad * gelu'(x) in one kernel) and the branches of the float32 gelu kernel.

The float32 kernel evaluates Phi by pieces (|x| < 1/sqrt(2), |x| < 2.5, the asymptotic
tail) and skips a piece no lane of a vector needs (a vector with no lane in the tail takes
a short path of its own), so inputs are laid out so that whole vectors fall in one piece,
or in the first two, or straddle a boundary, on every CPU capability. References:
float64 NumPy (math.erfc).
"""

from __future__ import annotations

import math

import ember.aten as ea
import numpy as np
import pytest
from opinfo.unary import gelu_scalar

_erfc = np.vectorize(math.erfc)


def gelu_grad_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * _erfc(-x / math.sqrt(2)) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def gelu_tanh_grad_ref(x: np.ndarray) -> np.ndarray:
    """0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u), written with s = 0.5 (1 + t) = sigmoid(2u)
    (0.5 (1 - t^2) = 2 s (1 - s)) so that it does not cancel for negative x."""
    x = x.astype(np.float64)
    k = math.sqrt(2 / math.pi)
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-2 * k * (x + 0.044715 * x**3)))
    return s + x * 2 * s * (1 - s) * k * (1 + 3 * 0.044715 * x * x)


def _layouts() -> np.ndarray:
    """Runs of 64 equal-region values (whole vectors in one piece), then values around each
    boundary interleaved with ones far from it (every vector straddles), then a shuffle."""
    r = np.random.default_rng(0)
    runs = [
        r.uniform(-0.7, 0.7, 64),  # all |x| < 1/sqrt(2)
        r.uniform(0.71, 2.49, 64) * r.choice([-1, 1], 64),  # all in the middle piece
        r.uniform(2.51, 12.0, 64) * r.choice([-1, 1], 64),  # all in the tail
        r.uniform(-2.49, 2.49, 64),  # the first two pieces mixed: the short path
        # lanes just below 2.5 or just below / above 1/sqrt(2), none in the tail
        np.stack([np.tile([2.4999998, -2.4999998, 2.4, -2.45], 8), r.uniform(-0.75, 0.75, 32)], axis=1).ravel(),
    ]
    edges = np.array([0.70710677, 0.70710678, 0.7071068, 2.4999998, 2.5, 2.5000002], dtype=np.float32)
    straddle = np.stack([np.tile(edges, 8), r.uniform(-12, 12, 48)], axis=1).ravel()
    mixed = r.standard_normal(1000) * 3
    return np.concatenate([*runs, straddle, -straddle, mixed, [0.0, -0.0]]).astype(np.float32)


def test_gelu_forward_pieces_float32(capability: str) -> None:
    x = _layouts()
    got = ea.nn.gelu(ea.from_numpy(x)).numpy().astype(np.float64)
    ref = np.vectorize(gelu_scalar)(x.astype(np.float64))
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    err = np.abs(got - ref) / spacing
    assert err.max() <= 4.0, f"{err.max():.2f} ulp at x={x[np.argmax(err)]!r}"


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_float32(approximate: str, capability: str) -> None:
    x = _layouts()
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    got = ea.nn.gelu_backward(ea.from_numpy(g), ea.from_numpy(x), approximate=approximate).numpy()
    ref = g * (gelu_grad_ref(x) if approximate == "none" else gelu_tanh_grad_ref(x))
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6 * np.abs(g).max())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_float64(approximate: str) -> None:
    x = np.linspace(-12, 12, 2001)
    g = np.random.default_rng(2).standard_normal(x.shape)
    got = ea.nn.gelu_backward(ea.from_numpy(g), ea.from_numpy(x), approximate=approximate).numpy()
    ref = g * (gelu_grad_ref(x) if approximate == "none" else gelu_tanh_grad_ref(x))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)


def test_gelu_backward_strided_and_broadcast_operands(capability: str) -> None:
    x = np.random.default_rng(3).standard_normal((33, 17)).astype(np.float32) * 3
    g = np.random.default_rng(4).standard_normal((17,)).astype(np.float32)
    xt = ea.from_numpy(np.ascontiguousarray(x.T)).t()  # non-contiguous
    assert not xt.is_contiguous()
    got = ea.nn.gelu_backward(ea.from_numpy(g).expand(33, 17), xt).numpy()
    contiguous = ea.nn.gelu_backward(ea.from_numpy(np.broadcast_to(g, (33, 17)).copy()), ea.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, g * gelu_grad_ref(x), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got, contiguous, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gelu_backward_half_types(dtype: str) -> None:
    dt = getattr(ea, dtype)
    x = np.linspace(-4, 4, 41).astype(np.float32)
    xh = ea.from_numpy(x).to(dt)
    got = ea.nn.gelu_backward(ea.ones((41,), dtype=dt), xh)
    assert got.dtype == dt
    tol = 1e-2 if dtype == "float16" else 4e-2  # one rounding of the result to the type
    np.testing.assert_allclose(got.float().numpy(), gelu_grad_ref(xh.float().numpy()), atol=tol)


def test_gelu_backward_special_values() -> None:
    got = ea.nn.gelu_backward(ea.ones((4,)), ea.tensor([math.nan, 0.0, -30.0, 30.0])).tolist()
    assert math.isnan(got[0])
    assert got[1] == 0.5 and got[2] == 0.0 and got[3] == 1.0


def test_gelu_backward_errors() -> None:
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        ea.nn.gelu_backward(ea.ones((2,)), ea.ones((2,)), approximate="fast")
    with pytest.raises(RuntimeError, match="gelu_backward"):
        ea.nn.gelu_backward(ea.ones((2,), dtype=ea.int64), ea.ones((2,), dtype=ea.int64))
    with pytest.raises(RuntimeError, match="size"):
        ea.nn.gelu_backward(ea.ones((3,)), ea.ones((2,)))
