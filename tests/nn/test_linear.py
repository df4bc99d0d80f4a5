"""Identity, Linear, Bilinear, LazyLinear, Flatten, Unflatten: shapes, values, init, gradients, repr."""

from __future__ import annotations

import math
import warnings

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def test_linear_parameters_and_state_dict() -> None:
    lin = nn.Linear(20, 30)
    assert tuple(lin.weight.shape) == (30, 20) and tuple(lin.bias.shape) == (30,)
    assert list(lin.state_dict()) == ["weight", "bias"]
    assert lin.weight.requires_grad and isinstance(lin.weight, nn.Parameter)
    assert repr(lin) == "Linear(in_features=20, out_features=30, bias=True)"
    nb = nn.Linear(2, 3, bias=False, dtype=ea.float64)
    assert nb.bias is None and nb.weight.dtype == ea.float64
    assert repr(nb) == "Linear(in_features=2, out_features=3, bias=False)"


def test_linear_default_init_bounds_and_seed() -> None:
    ea.manual_seed(3)
    a = nn.Linear(64, 128)
    ea.manual_seed(3)
    b = nn.Linear(64, 128)
    np.testing.assert_array_equal(_np(a.weight), _np(b.weight))
    bound = 1 / math.sqrt(64)  # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(in), 1/sqrt(in))
    w = _np(a.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(_np(a.bias)).max() <= bound


@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4)])
def test_linear_values_vs_numpy(shape: tuple[int, ...]) -> None:
    lin = nn.Linear(4, 3).double()
    x = ea.randn(*shape, dtype=ea.float64)
    ref = _np(x) @ _np(lin.weight).T + _np(lin.bias)
    out = lin(x)
    assert tuple(out.shape) == (*shape[:-1], 3)
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12, atol=1e-12)
    nob = nn.Linear(4, 3, bias=False).double()
    np.testing.assert_allclose(_np(nob(x)), _np(x) @ _np(nob.weight).T, rtol=1e-12, atol=1e-12)


def test_linear_float32_close_to_float64_reference() -> None:
    lin = nn.Linear(16, 8)
    x = ea.randn(10, 16)
    ref = _np(x).astype(np.float64) @ _np(lin.weight).astype(np.float64).T + _np(lin.bias)
    np.testing.assert_allclose(_np(lin(x)), ref, rtol=1e-5, atol=1e-5)


def test_linear_gradcheck() -> None:
    x = ea.randn(3, 4, dtype=ea.float64, requires_grad=True)
    w = ea.randn(2, 4, dtype=ea.float64, requires_grad=True)
    b = ea.randn(2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(F.linear, (x, w, b))
    x3 = ea.randn(2, 3, 4, dtype=ea.float64, requires_grad=True)
    assert gradcheck(F.linear, (x3, w, b))
    assert gradcheck(lambda a, c: F.linear(a, c), (x, w))


def test_linear_backward_values() -> None:
    lin = nn.Linear(3, 2).double()
    x = ea.randn(4, 3, dtype=ea.float64)
    lin(x).sum().backward()
    np.testing.assert_allclose(_np(lin.weight.grad), np.ones((4, 2)).T @ _np(x))
    np.testing.assert_allclose(_np(lin.bias.grad), np.full(2, 4.0))


def test_linear_shape_error() -> None:
    with pytest.raises(RuntimeError):
        nn.Linear(3, 2)(ea.randn(4, 5))


def test_bilinear() -> None:
    bl = nn.Bilinear(3, 4, 2).double()
    assert tuple(bl.weight.shape) == (2, 3, 4) and tuple(bl.bias.shape) == (2,)
    assert list(bl.state_dict()) == ["weight", "bias"]
    assert repr(bl) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"
    bound = 1 / math.sqrt(3)
    assert np.abs(_np(bl.weight)).max() <= bound
    x1 = ea.randn(5, 3, dtype=ea.float64)
    x2 = ea.randn(5, 4, dtype=ea.float64)
    ref = np.einsum("bi,kij,bj->bk", _np(x1), _np(bl.weight), _np(x2)) + _np(bl.bias)
    np.testing.assert_allclose(_np(bl(x1, x2)), ref, rtol=1e-12, atol=1e-12)
    a = x1.clone().requires_grad_()
    b = x2.clone().requires_grad_()
    w = bl.weight.detach().clone().requires_grad_()
    assert gradcheck(F.bilinear, (a, b, w))
    with pytest.raises(
        RuntimeError, match="bilinear\\(\\): input1 size does not match weight size: got 4 but expected 3"
    ):
        bl(x2, x2)


def test_lazy_linear_becomes_linear() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = nn.LazyLinear(3)
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(lazy.weight, nn.UninitializedParameter)
    out = lazy(ea.randn(2, 5))
    assert type(lazy) is nn.Linear and tuple(out.shape) == (2, 3)
    assert tuple(lazy.weight.shape) == (3, 5) and type(lazy.weight) is nn.Parameter
    assert lazy.in_features == 5 and not lazy._forward_pre_hooks
    assert np.abs(_np(lazy.weight)).max() <= 1 / math.sqrt(5)
    # a lazy module loads a checkpoint: parameters take the checkpoint's shapes
    src = nn.Linear(7, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy2 = nn.LazyLinear(3)
    lazy2.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(_np(lazy2.weight), _np(src.weight))
    out2 = lazy2(ea.randn(1, 7))
    assert type(lazy2) is nn.Linear and tuple(out2.shape) == (1, 3)


def test_identity_flatten_unflatten() -> None:
    x = ea.randn(2, 3, 4, 5)
    assert nn.Identity(54, unused="x")(x) is x
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 2)(x).shape) == (24, 5)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    u = nn.Unflatten(1, (2, 6))
    assert tuple(u(ea.randn(4, 12)).shape) == (4, 2, 6)
    assert repr(u) == "Unflatten(dim=1, unflattened_size=(2, 6))"
    with pytest.raises(
        TypeError, match="unflattened_size must be tuple of ints, but found element of type float at pos 1"
    ):
        nn.Unflatten(1, (2, 6.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 5)
