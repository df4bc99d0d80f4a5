"""ember.distributions against SciPy: log_prob, entropy, mean, variance; sample moments;
rsample gradients (Normal exactly, Gamma's implicit gradient against SciPy's gammainc);
KL divergences against numerical integration / closed forms written in NumPy; errors."""

from __future__ import annotations

import math

import ember.aten as ea
import ember.distributions as D
import numpy as np
import pytest
from scipy import integrate, special, stats


def t(x, dtype=ea.float64):
    return ea.tensor(np.asarray(x, dtype=np.float64), dtype=dtype)


def a(x):
    return x.detach().numpy().astype(np.float64)


# (name, ember distribution, frozen scipy distribution, values at which log_prob is compared)
CONTINUOUS = [
    ("Normal", lambda: D.Normal(t([0.5, -1.0]), t([2.0, 0.3])), stats.norm([0.5, -1.0], [2.0, 0.3]), [0.1, -0.8]),
    ("Uniform", lambda: D.Uniform(t([0.0, -2.0]), t([1.0, 3.0])), stats.uniform([0.0, -2.0], [1.0, 5.0]), [0.3, 2.0]),
    ("Exponential", lambda: D.Exponential(t([0.5, 3.0])), stats.expon(scale=[2.0, 1 / 3.0]), [1.5, 0.2]),
    ("Gamma", lambda: D.Gamma(t([0.4, 3.0]), t([2.0, 0.5])), stats.gamma([0.4, 3.0], scale=[0.5, 2.0]), [0.3, 4.0]),
    ("Beta", lambda: D.Beta(t([0.5, 2.0]), t([3.0, 1.5])), stats.beta([0.5, 2.0], [3.0, 1.5]), [0.2, 0.7]),
]


@pytest.mark.parametrize("name,make,ref,values", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_against_scipy(name, make, ref, values):
    d = make()
    np.testing.assert_allclose(a(d.log_prob(t(values))), ref.logpdf(values), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a(d.entropy()), ref.entropy(), rtol=1e-10)
    np.testing.assert_allclose(a(d.mean), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(a(d.variance), ref.var(), rtol=1e-12)
    if name != "Beta":  # PyTorch's Beta has no cdf
        np.testing.assert_allclose(a(d.cdf(t(values))), ref.cdf(values), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,make,ref,values", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_sample_moments(name, make, ref, values):
    ea.manual_seed(0)
    d = make()
    n = 40000
    x = a(d.sample((n,)))
    assert x.shape == (n, 2)
    se = np.sqrt(ref.var() / n)
    np.testing.assert_array_less(np.abs(x.mean(0) - ref.mean()), 5 * se)
    # every draw is in the support, and the distribution's shape is scipy's (KS test)
    assert bool(d.support.check(t(x)).all())
    for j in range(2):
        args = [np.asarray(arg)[j] for arg in ref.args]
        kwds = {k: np.asarray(v)[j] for k, v in ref.kwds.items()}
        assert stats.kstest(x[:4000, j], ref.dist(*args, **kwds).cdf).pvalue > 1e-4


def test_gamma_small_and_large_concentration_moments():
    ea.manual_seed(1)
    for alpha in (0.05, 0.7, 1.0, 25.0):
        x = a(D.Gamma(t([alpha]), t([1.0])).sample((40000,)))[:, 0]
        assert (x >= 0).all()
        np.testing.assert_allclose(x.mean(), alpha, rtol=6 / math.sqrt(40000 * alpha) + 1e-3)
        np.testing.assert_allclose(x.var(), alpha, rtol=0.1)


def test_bernoulli_and_categorical_against_scipy():
    p = np.array([0.2, 0.9])
    d = D.Bernoulli(t(p))
    np.testing.assert_allclose(a(d.log_prob(t([1.0, 0.0]))), stats.bernoulli(p).logpmf([1, 0]), rtol=1e-12)
    np.testing.assert_allclose(a(d.entropy()), stats.bernoulli(p).entropy(), rtol=1e-12)
    np.testing.assert_allclose(a(D.Bernoulli(logits=t(special.logit(p))).probs), p, rtol=1e-12)
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    c = D.Categorical(t(probs * 4))  # unnormalised on purpose
    np.testing.assert_allclose(a(c.log_prob(t([2, 1]))), np.log([0.7, 0.25]), rtol=1e-12)
    np.testing.assert_allclose(a(c.entropy()), [stats.entropy(row) for row in probs], rtol=1e-12)
    logits = np.log(probs) + 3.0
    np.testing.assert_allclose(a(D.Categorical(logits=t(logits)).probs), probs, rtol=1e-12)
    ea.manual_seed(2)
    s = a(c.sample((30000,)))
    assert s.shape == (30000, 2)
    for row in range(2):
        freq = np.bincount(s[:, row].astype(np.int64), minlength=3) / 30000
        np.testing.assert_allclose(freq, probs[row], atol=0.012)
    b = a(D.Bernoulli(t(p)).sample((30000,)))
    np.testing.assert_allclose(b.mean(0), p, atol=0.012)


def test_dirichlet_against_scipy():
    alpha = np.array([0.5, 2.0, 3.5])
    d = D.Dirichlet(t(alpha))
    x = np.array([0.2, 0.3, 0.5])
    ref = stats.dirichlet(alpha)
    np.testing.assert_allclose(a(d.log_prob(t(x))), ref.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(a(d.entropy()), ref.entropy(), rtol=1e-10)
    np.testing.assert_allclose(a(d.mean), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(a(d.variance), ref.var(), rtol=1e-12)
    np.testing.assert_allclose(a(D.Dirichlet(t([2.0, 3.0, 5.0])).mode), np.array([1.0, 2.0, 4.0]) / 7, rtol=1e-12)
    np.testing.assert_allclose(a(D.Dirichlet(t([0.5, 0.2, 0.9])).mode), [0.0, 0.0, 1.0])
    ea.manual_seed(3)
    s = a(d.sample((40000,)))
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s.mean(0), ref.mean(), atol=5 * np.sqrt(ref.var().max() / 40000))


def test_multivariate_normal_against_scipy():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 3))
    cov = m @ m.T + 3 * np.eye(3)
    loc = np.array([1.0, -2.0, 0.5])
    ref = stats.multivariate_normal(loc, cov)
    x = rng.standard_normal((4, 3))
    for kwargs in (
        {"covariance_matrix": t(cov)},
        {"scale_tril": t(np.linalg.cholesky(cov))},
        {"precision_matrix": t(np.linalg.inv(cov))},
    ):
        d = D.MultivariateNormal(t(loc), **kwargs)
        assert d.batch_shape == () and d.event_shape == (3,)
        np.testing.assert_allclose(a(d.log_prob(t(x))), ref.logpdf(x), rtol=1e-9)
        np.testing.assert_allclose(a(d.entropy()), ref.entropy(), rtol=1e-10)
        np.testing.assert_allclose(a(d.covariance_matrix), cov, rtol=1e-10)
        np.testing.assert_allclose(a(d.variance), np.diag(cov), rtol=1e-10)
    ea.manual_seed(4)
    s = a(D.MultivariateNormal(t(loc), covariance_matrix=t(cov)).sample((40000,)))
    np.testing.assert_allclose(s.mean(0), loc, atol=0.06)
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.15)


def test_independent_shapes_and_log_prob():
    loc = ea.zeros(4, 3, dtype=ea.float64)
    scale = ea.full((4, 3), 2.0, dtype=ea.float64)
    d = D.Independent(D.Normal(loc, scale), 1)
    assert d.batch_shape == (4,) and d.event_shape == (3,)
    assert d.sample((5,)).shape == (5, 4, 3)
    x = np.arange(12.0).reshape(4, 3) / 10
    np.testing.assert_allclose(a(d.log_prob(t(x))), stats.norm(0, 2).logpdf(x).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(a(d.entropy()), np.full(4, 3 * stats.norm(0, 2).entropy()), rtol=1e-12)
    assert d.has_rsample


def test_shapes_and_expand():
    d = D.Normal(t([0.0, 1.0]), 1.0)
    assert d.batch_shape == (2,) and d.event_shape == ()
    assert d.sample().shape == (2,)
    assert d.rsample((3, 5)).shape == (3, 5, 2)
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.sample().shape == (4, 2)
    c = D.Categorical(logits=ea.zeros(2, 5))
    assert c.batch_shape == (2,) and c.sample((7,)).shape == (7, 2)
    assert c.enumerate_support().shape == (5, 2)
    dir_ = D.Dirichlet(ea.ones(2, 4))
    assert dir_.batch_shape == (2,) and dir_.event_shape == (4,) and dir_.rsample((3,)).shape == (3, 2, 4)


# ---- rsample gradients ---------------------------------------------------------------------


def test_normal_rsample_gradient_is_the_reparameterisation():
    loc = t([0.3, -1.0]).requires_grad_()
    scale = t([1.5, 0.2]).requires_grad_()
    ea.manual_seed(5)
    z = D.Normal(loc, scale).rsample((6,))
    z.sum().backward()
    eps = (a(z) - a(loc)) / a(scale)
    np.testing.assert_allclose(a(loc.grad), [6.0, 6.0])
    np.testing.assert_allclose(a(scale.grad), eps.sum(0), rtol=1e-12)


def _implicit_gamma_grad(alpha, x):
    # dx/dalpha at fixed CDF: -(dP/dalpha) / density, dP/dalpha by a central difference of SciPy's gammainc
    h = 1e-6 * alpha
    dp = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    return -dp / stats.gamma(alpha).pdf(x)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0, 50.0])
def test_gamma_rsample_gradient_against_scipy(alpha):
    ea.manual_seed(6)
    conc = ea.full((200,), alpha, dtype=ea.float64, requires_grad=True)
    rate = ea.full((200,), 2.0, dtype=ea.float64, requires_grad=True)
    x = D.Gamma(conc, rate).rsample()
    x.sum().backward()
    xs = a(x)
    standard = xs * 2.0
    np.testing.assert_allclose(a(conc.grad), _implicit_gamma_grad(alpha, standard) / 2.0, rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(a(rate.grad), -xs / 2.0, rtol=1e-12)
    # E[d x / d alpha] = d E[x] / d alpha = 1 / rate
    assert abs(a(conc.grad).mean() - 0.5) < 0.1


def test_beta_and_dirichlet_rsample_gradients_match_finite_differences_of_the_mean():
    # d E[x] / d c1 for Beta(c1, c0) is c0 / (c1 + c0)^2: the mean of the pathwise gradients estimates it
    ea.manual_seed(7)
    c1 = ea.full((20000,), 2.0, dtype=ea.float64, requires_grad=True)
    c0 = ea.full((20000,), 3.0, dtype=ea.float64, requires_grad=True)
    D.Beta(c1, c0).rsample().sum().backward()
    assert abs(a(c1.grad).mean() - 3.0 / 25.0) < 0.01
    assert abs(a(c0.grad).mean() + 2.0 / 25.0) < 0.01
    conc = t([1.0, 2.0, 3.0]).requires_grad_()
    x = D.Dirichlet(conc.expand(20000, 3)).rsample()
    x[:, 0].sum().backward()
    # d E[x_0] / d c = (e_0 * 6 - 1) / 36 ... = [5, -1, -1] / 36, times the 20000 draws
    np.testing.assert_allclose(a(conc.grad) / 20000, np.array([5.0, -1.0, -1.0]) / 36, atol=0.01)


def test_mvn_rsample_gradient():
    loc = t([1.0, 2.0]).requires_grad_()
    tril = t([[2.0, 0.0], [0.5, 1.0]]).requires_grad_()
    ea.manual_seed(8)
    z = D.MultivariateNormal(loc, scale_tril=tril).rsample((3,))
    z.sum().backward()
    np.testing.assert_allclose(a(loc.grad), [3.0, 3.0])
    eps = np.linalg.solve(a(tril), (a(z) - a(loc)).T).T  # z = loc + L eps
    # z_i = loc_i + sum_j L_ij eps_j: dL_ij = sum over draws of eps_j (every entry, as PyTorch's full product)
    np.testing.assert_allclose(a(tril.grad), np.ones((2, 1)) * eps.sum(0)[None, :], rtol=1e-9)


# ---- KL ------------------------------------------------------------------------------------


def _kl_quad(p_pdf, q_logpdf, p_logpdf, lo, hi):
    return integrate.quad(lambda x: p_pdf(x) * (p_logpdf(x) - q_logpdf(x)), lo, hi, limit=200)[0]


KL_CASES = [
    (lambda: (D.Normal(0.3, 1.2), D.Normal(-0.5, 0.7)), stats.norm(0.3, 1.2), stats.norm(-0.5, 0.7), (-30, 30)),
    (
        lambda: (D.Gamma(2.0, 1.5), D.Gamma(3.0, 0.5)),
        stats.gamma(2.0, scale=1 / 1.5),
        stats.gamma(3.0, scale=2.0),
        (0, 80),
    ),
    (lambda: (D.Beta(2.0, 3.0), D.Beta(1.5, 1.2)), stats.beta(2.0, 3.0), stats.beta(1.5, 1.2), (0, 1)),
    (lambda: (D.Exponential(2.0), D.Exponential(0.5)), stats.expon(scale=0.5), stats.expon(scale=2.0), (0, 60)),
    (lambda: (D.Uniform(0.2, 0.5), D.Uniform(0.0, 1.0)), stats.uniform(0.2, 0.3), stats.uniform(0.0, 1.0), (0.2, 0.5)),
]


@pytest.mark.parametrize("make,p,q,bounds", KL_CASES, ids=["normal", "gamma", "beta", "exponential", "uniform"])
def test_kl_against_numerical_integration(make, p, q, bounds):
    dp, dq = make()
    ref = _kl_quad(p.pdf, q.logpdf, p.logpdf, *bounds)
    np.testing.assert_allclose(float(D.kl_divergence(dp, dq)), ref, rtol=1e-6)


def test_kl_discrete_and_multivariate_against_numpy():
    p = np.array([0.2, 0.5, 0.3])
    q = np.array([0.4, 0.4, 0.2])
    got = D.kl_divergence(D.Categorical(t(p)), D.Categorical(t(q)))
    np.testing.assert_allclose(float(got), np.sum(p * np.log(p / q)), rtol=1e-12)
    got = D.kl_divergence(D.Bernoulli(t(0.3)), D.Bernoulli(t(0.6)))
    np.testing.assert_allclose(float(got), 0.3 * np.log(0.3 / 0.6) + 0.7 * np.log(0.7 / 0.4), rtol=1e-12)
    assert float(D.kl_divergence(D.Categorical(t(p)), D.Categorical(t([0.5, 0.5, 0.0])))) == math.inf
    rng = np.random.default_rng(1)
    m1, m2 = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    s1, s2 = m1 @ m1.T + np.eye(3), m2 @ m2.T + np.eye(3)
    mu1, mu2 = rng.standard_normal(3), rng.standard_normal(3)
    got = D.kl_divergence(
        D.MultivariateNormal(t(mu1), covariance_matrix=t(s1)), D.MultivariateNormal(t(mu2), covariance_matrix=t(s2))
    )
    inv2 = np.linalg.inv(s2)
    d = mu2 - mu1
    ref = 0.5 * (np.trace(inv2 @ s1) + d @ inv2 @ d - 3 + np.log(np.linalg.det(s2) / np.linalg.det(s1)))
    np.testing.assert_allclose(float(got), ref, rtol=1e-9)
    a1, a2 = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 0.5])
    got = D.kl_divergence(D.Dirichlet(t(a1)), D.Dirichlet(t(a2)))
    ref = (
        special.gammaln(a1.sum())
        - special.gammaln(a2.sum())
        - np.sum(special.gammaln(a1) - special.gammaln(a2))
        + np.sum((a1 - a2) * (special.digamma(a1) - special.digamma(a1.sum())))
    )
    np.testing.assert_allclose(float(got), ref, rtol=1e-10)
    ind = D.kl_divergence(
        D.Independent(D.Normal(ea.zeros(2, 3), 1.0), 1), D.Independent(D.Normal(ea.ones(2, 3), 1.0), 1)
    )
    np.testing.assert_allclose(a(ind), [1.5, 1.5], rtol=1e-6)


def test_kl_registry_dispatches_on_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return ea.tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0))) == pytest.approx(0.5)
    with pytest.raises(NotImplementedError, match=r"No KL.*Normal.*Gamma"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))


# ---- errors ---------------------------------------------------------------------------------


def test_invalid_arguments_raise_value_errors():
    with pytest.raises(ValueError, match=r"scale.*GreaterThan"):
        D.Normal(0.0, -1.0)
    D.Normal(0.0, -1.0, validate_args=False)  # validation off: no check
    with pytest.raises(ValueError, match=r"concentration"):
        D.Gamma(ea.tensor([1.0, -2.0]), 1.0)
    with pytest.raises(ValueError, match=r"either `probs` or `logits`"):
        D.Categorical(probs=ea.ones(3), logits=ea.zeros(3))
    with pytest.raises(ValueError, match=r"probs.*Simplex"):
        D.Categorical(probs=ea.tensor([0.5, -0.1, 0.6]))
    with pytest.raises(ValueError, match=r"low >= high"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match=r"Exactly one of"):
        D.MultivariateNormal(ea.zeros(2))
    with pytest.raises(ValueError, match=r"reinterpreted_batch_ndims"):
        D.Independent(D.Normal(ea.zeros(3), 1.0), 2)
    with pytest.raises(ValueError, match=r"support"):
        D.Gamma(1.0, 1.0).log_prob(ea.tensor(-1.0))
    with pytest.raises(ValueError, match=r"support"):
        D.Bernoulli(ea.tensor(0.3)).log_prob(ea.tensor(0.5))
    with pytest.raises(ValueError, match=r"broadcastable"):
        D.Normal(ea.zeros(3), 1.0).log_prob(ea.zeros(4))
    with pytest.raises(RuntimeError, match=r"_standard_gamma.*positive"):
        ea._standard_gamma(ea.tensor([1.0, 0.0]))


def test_sampling_is_reproducible_under_manual_seed():
    ea.manual_seed(11)
    x = a(D.Gamma(ea.tensor([0.5, 2.0]), 1.0).sample((5,)))
    ea.manual_seed(11)
    y = a(D.Gamma(ea.tensor([0.5, 2.0]), 1.0).sample((5,)))
    np.testing.assert_array_equal(x, y)
    assert not np.array_equal(x[0], x[1])
