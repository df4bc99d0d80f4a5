"""Activation modules: values against NumPy float64 formulas, in-place variants, gradients, repr."""

from __future__ import annotations

import copy
import math

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F

_erf = np.vectorize(math.erf)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

# (module, NumPy reference)
CASES = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    (nn.ELU(0.7), lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1))),
    (nn.CELU(0.5), lambda x: np.maximum(x, 0) + np.minimum(0, 0.5 * (np.exp(x / 0.5) - 1))),
    (nn.SELU(), lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (
        nn.GELU("tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    (nn.SiLU(), lambda x: x * _sigmoid(x)),
    (nn.Mish(), lambda x: x * np.tanh(_softplus(x))),
    (nn.Sigmoid(), _sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.Softplus(2.0, 3.0), lambda x: _softplus(x, 2.0, 3.0)),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Hardtanh(-0.5, 2.0), lambda x: np.clip(x, -0.5, 2.0)),
    (nn.Hardsigmoid(), lambda x: np.clip(x + 3, 0, 6) / 6),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Threshold(0.1, 20.0), lambda x: np.where(x > 0.1, x, 20.0)),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.Softshrink(0.5), lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    (nn.Hardshrink(0.5), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
]


@pytest.mark.parametrize(("module", "ref"), CASES, ids=[type(m).__name__ + str(i) for i, (m, _) in enumerate(CASES)])
def test_activation_values(module: nn.Module, ref, device: str) -> None:  # type: ignore[no-untyped-def]
    x = ea.linspace(-5, 5, 41, dtype=ea.float64).reshape(41)
    xs = x.numpy()
    y = module(x.to(device))
    assert y.device.type == device
    np.testing.assert_allclose(y.cpu().numpy(), ref(xs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "module",
    [
        nn.ReLU(True),
        nn.ReLU6(True),
        nn.LeakyReLU(0.1, True),
        nn.ELU(1.0, True),
        nn.SELU(True),
        nn.CELU(1.0, True),
        nn.SiLU(True),
        nn.Mish(True),
        nn.Hardtanh(inplace=True),
        nn.Hardsigmoid(True),
        nn.Hardswish(True),
        nn.Threshold(0.0, -1.0, True),
    ],
    ids=lambda m: type(m).__name__,
)
def test_inplace_variants_write_input(module: nn.Module) -> None:
    x = ea.linspace(-3, 3, 13, dtype=ea.float64)
    outplace = copy.copy(module)
    outplace.inplace = False
    expected = outplace(x)
    assert expected.data_ptr() != x.data_ptr()
    out = module(x)
    assert out.data_ptr() == x.data_ptr()
    np.testing.assert_allclose(x.numpy(), expected.numpy())


def test_prelu() -> None:
    p = nn.PReLU(3)
    assert tuple(p.weight.shape) == (3,) and p.weight.tolist() == pytest.approx([0.25] * 3)
    assert list(p.state_dict()) == ["weight"] and repr(p) == "PReLU(num_parameters=3)"
    x = ea.randn(2, 3, 4, dtype=ea.float64)
    w = ea.tensor([0.1, 0.2, 0.3], dtype=ea.float64)
    ref = np.where(x.numpy() > 0, x.numpy(), x.numpy() * w.numpy()[None, :, None])
    np.testing.assert_allclose(F.prelu(x, w).numpy(), ref)
    single = F.prelu(x, ea.tensor([0.5], dtype=ea.float64))
    np.testing.assert_allclose(single.numpy(), np.where(x.numpy() > 0, x.numpy(), 0.5 * x.numpy()))
    with pytest.raises(RuntimeError, match="prelu: Mismatch of parameter numbers and input channel size"):
        F.prelu(x, ea.ones(4, dtype=ea.float64))
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    assert gradcheck(F.prelu, (xg, wg))


def test_glu() -> None:
    x = ea.randn(4, 6, dtype=ea.float64)
    a, b = x.numpy()[:, :3], x.numpy()[:, 3:]
    np.testing.assert_allclose(nn.GLU()(x).numpy(), a * _sigmoid(b))
    np.testing.assert_allclose(F.glu(x.t(), 0).numpy(), (a * _sigmoid(b)).T)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(ea.randn(2, 5))
    assert repr(nn.GLU()) == "GLU(dim=-1)"


@pytest.mark.parametrize(
    "fn",
    [
        F.softsign,
        F.logsigmoid,
        F.tanhshrink,
        lambda x: F.softshrink(x, 0.3),
        lambda x: F.hardshrink(x, 0.3),
        lambda x: F.glu(x, 0),
        F.gelu,
        F.silu,
        F.mish,
        lambda x: F.elu(x, 0.5),
        F.selu,
        lambda x: F.softplus(x, 2.0),
    ],
)
def test_gradcheck(fn) -> None:  # type: ignore[no-untyped-def]
    # stay away from the kinks of the shrink functions
    x = ea.tensor([[-2.0, -0.9, -0.1, 0.2], [0.7, 1.3, 2.1, -1.7]], dtype=ea.float64, requires_grad=True)
    assert gradcheck(fn, (x,))


def test_reprs_match_pytorch() -> None:
    assert repr(nn.ReLU()) == "ReLU()" and repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.ReLU6()) == "ReLU6()"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.LeakyReLU(0.2, True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)" and repr(nn.CELU(2.0, True)) == "CELU(alpha=2.0, inplace=True)"
    assert repr(nn.GELU()) == "GELU(approximate='none')" and repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)" and repr(nn.Hardshrink(0.3)) == "Hardshrink(0.3)"
    assert repr(nn.Threshold(0.1, 20)) == "Threshold(threshold=0.1, value=20)"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.Hardswish()) == "Hardswish()" and repr(nn.Hardsigmoid()) == "Hardsigmoid()"
    assert repr(nn.SiLU(inplace=True)) == "SiLU(inplace=True)" and repr(nn.Mish()) == "Mish()"
    assert repr(nn.SELU()) == "SELU()" and repr(nn.Sigmoid()) == "Sigmoid()" and repr(nn.Tanh()) == "Tanh()"


def test_hardtanh_bounds() -> None:
    with pytest.raises(AssertionError):
        nn.Hardtanh(1.0, 0.0)
