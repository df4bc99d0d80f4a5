"""ember.nn.init: gains, fans, bounds and moments of each initialiser, determinism under a seed."""

from __future__ import annotations

import math

import ember.aten as ea
import numpy as np
import pytest
from ember.nn import init


def test_calculate_gain() -> None:
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fans() -> None:
    assert init._calculate_fan_in_and_fan_out(ea.empty(8, 3, 5, 5)) == (75, 200)
    assert init._calculate_fan_in_and_fan_out(ea.empty(4, 6)) == (6, 4)
    with pytest.raises(
        ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
    ):
        init._calculate_fan_in_and_fan_out(ea.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(ea.empty(3, 3), mode="fan_avg")


def _w(*shape: int) -> ea.Tensor:
    return ea.empty(*shape, dtype=ea.float64)


def test_uniform_normal_constant() -> None:
    t = init.uniform_(_w(200, 200), -2.0, 3.0).numpy()
    assert t.min() >= -2.0 and t.max() <= 3.0 and abs(t.mean() - 0.5) < 0.05
    n = init.normal_(_w(200, 200), 1.0, 2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    assert (init.constant_(_w(3), 1.5).numpy() == 1.5).all()
    assert (init.ones_(_w(3)).numpy() == 1).all() and (init.zeros_(_w(3)).numpy() == 0).all()


def test_trunc_normal() -> None:
    t = init.trunc_normal_(_w(300, 300), mean=0.5, std=1.0, a=-1.0, b=1.5).numpy()
    assert t.min() >= -1.0 and t.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1, 1.5]: mu + sigma (phi(alpha) - phi(beta)) / Z
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    alpha, beta = -1.5, 1.0
    expected = 0.5 + (phi(alpha) - phi(beta)) / (cdf(beta) - cdf(alpha))
    assert abs(t.mean() - expected) < 0.02


def test_xavier_kaiming_moments() -> None:
    w = init.xavier_uniform_(_w(300, 500), gain=2.0).numpy()
    a = 2.0 * math.sqrt(6 / 800)
    assert np.abs(w).max() <= a and abs(w.std() - a / math.sqrt(3)) < 0.02 * a
    w = init.xavier_normal_(_w(300, 500)).numpy()
    assert abs(w.std() - math.sqrt(2 / 800)) < 0.02 * math.sqrt(2 / 800)
    w = init.kaiming_uniform_(_w(200, 50, 3, 3), nonlinearity="relu").numpy()
    bound = math.sqrt(2) * math.sqrt(3 / 450)
    assert np.abs(w).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    w = init.kaiming_normal_(_w(400, 300), mode="fan_out", nonlinearity="relu").numpy()
    assert abs(w.std() - math.sqrt(2 / 400)) < 0.02 * math.sqrt(2 / 400)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(_w(0, 3))


def test_eye_dirac() -> None:
    np.testing.assert_array_equal(init.eye_(_w(2, 3)).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(_w(2, 2, 2))
    d = init.dirac_(_w(4, 2, 3, 3), groups=2).numpy()
    expected = np.zeros((4, 2, 3, 3))
    for g in range(2):
        for i in range(2):
            expected[g * 2 + i, i, 1, 1] = 1
    np.testing.assert_array_equal(d, expected)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(_w(2, 2))


def test_orthogonal() -> None:
    for shape in [(5, 3), (3, 5), (4, 2, 2)]:
        w = init.orthogonal_(_w(*shape), gain=2.0).numpy().reshape(shape[0], -1)
        if w.shape[0] <= w.shape[1]:
            np.testing.assert_allclose(w @ w.T, 4 * np.eye(w.shape[0]), atol=1e-10)
        else:
            np.testing.assert_allclose(w.T @ w, 4 * np.eye(w.shape[1]), atol=1e-10)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(_w(3))


def test_sparse() -> None:
    w = init.sparse_(_w(10, 6), sparsity=0.3).numpy()
    assert ((w == 0).sum(axis=0) >= 3).all()


def test_seeded_determinism_and_generator() -> None:
    ea.manual_seed(7)
    a = init.kaiming_uniform_(_w(4, 4)).numpy().copy()
    ea.manual_seed(7)
    b = init.kaiming_uniform_(_w(4, 4)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    g1 = ea.Generator().manual_seed(1)
    g2 = ea.Generator().manual_seed(1)
    np.testing.assert_array_equal(init.normal_(_w(5), generator=g1).numpy(), init.normal_(_w(5), generator=g2).numpy())


def test_init_does_not_record_graph() -> None:
    from ember import nn

    p = nn.Parameter(ea.zeros(3, 3))
    init.xavier_uniform_(p)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
