"""kl_divergence(p, q) = KL(p || q) and the ``register_kl`` registry (PyTorch's torch.distributions.kl).

Implementations are registered per pair of types; a call picks the registered pair
that matches the most specific classes of (p, q) -- earliest in p's MRO, then in q's --
so a subclass inherits its parent's formula unless it registers its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.aten import Tensor

from ._util_shapes import sum_rightmost
from .bernoulli import Bernoulli, Categorical, softplus
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Exponential, Gamma
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[[Any, Any], Tensor]], Callable[[Any, Any], Tensor]]:
    """Decorator: ``@register_kl(Normal, Normal) def kl_normal_normal(p, q): ...``."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: Callable[[Any, Any], Tensor]) -> Callable[[Any, Any], Tensor]:
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> Callable[[Any, Any], Tensor] | None:
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    best: tuple[int, int] | None = None
    fn = None
    for (sp, sq), f in _KL_REGISTRY.items():
        if sp in mro_p and sq in mro_q:
            rank = (mro_p.index(sp), mro_q.index(sq))
            if best is None or rank < best:
                best, fn = rank, f
    return fn


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the (broadcast) batch shapes of p and q.

    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    fn = _dispatch_kl(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p of type {type(p).__name__} and q of type {type(q).__name__}"
        )
    return fn(p, q)


def _inf_like(t: Tensor) -> Tensor:
    return ea.full_like(t, math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = ea.where(q.probs == 0, _inf_like(t1), t1)
    t1 = ea.where(p.probs == 0, ea.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = ea.where(q.probs == 1, _inf_like(t2), t2)
    t2 = ea.where(p.probs == 1, ea.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = ea.where((q.probs == 0).expand_as(t), _inf_like(t), t)
    t = ea.where((p.probs == 0).expand_as(t), ea.zeros_like(t), t)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return ea.where(outside, _inf_like(result), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * ea.log(p.rate / q.rate)
    t2 = ea.lgamma(q.concentration) - ea.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ea.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = ea.lgamma(q.concentration1) + ea.lgamma(q.concentration0) + ea.lgamma(sum_p)
    t2 = ea.lgamma(p.concentration1) + ea.lgamma(p.concentration0) + ea.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * ea.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ea.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * ea.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = ea.lgamma(sum_p) - ea.lgamma(sum_q)
    t2 = (ea.lgamma(p.concentration) - ea.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ea.digamma(p.concentration) - ea.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    k = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    batch = tuple(ea.broadcast_tensors(p.loc[..., 0], q.loc[..., 0])[0].shape)
    half_term1 = q._half_log_det() - p._half_log_det()
    # tr(Sq^-1 Sp) = |Lq^-1 Lp|_F^2 ; (mq - mp)^T Sq^-1 (mq - mp) = |Lq^-1 (mq - mp)|^2
    solved = ea.linalg.solve(Lq.expand((*batch, k, k)), Lp.expand((*batch, k, k)))
    term2 = solved.pow(2).sum((-2, -1))

    term3 = _batch_mahalanobis(Lq, (q.loc - p.loc).expand((*batch, k)))
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL(Independent || Independent) needs equal reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
