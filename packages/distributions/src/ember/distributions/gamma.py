"""Gamma, Exponential, Dirichlet and Beta: the laws drawn through aten's ``_standard_gamma``.

``_standard_gamma(alpha)`` draws Gamma(alpha, 1) (csrc/native/Gamma.cpp); its autograd
formula is the implicit reparameterisation gradient d sample / d alpha, so Gamma,
Dirichlet (normalised Gammas) and Beta (a two-class Dirichlet) all have ``rsample``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import ember.aten as ea
from ember.aten import Tensor

from . import constraints
from ._util_shapes import as_size
from .distribution import Distribution
from .utils import _finfo_tiny, broadcast_all

__all__ = ["Beta", "Dirichlet", "Exponential", "Gamma"]


def _standard_gamma(concentration: Tensor) -> Tensor:
    # a draw can underflow to 0 for tiny concentrations; PyTorch clamps to the smallest normal
    return ea._standard_gamma(concentration).clamp(min=_finfo_tiny(concentration.dtype))


class Gamma(Distribution):
    """Gamma(concentration, rate, validate_args=None): density
    rate^c x^(c-1) e^(-rate x) / Gamma(c) on x > 0; mean c / rate."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = as_size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        value = ea.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c, rate = self.concentration, self.rate
        return ea.xlogy(c, rate) + ea.xlogy(c - 1, value) - rate * value - ea.lgamma(c)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - ea.log(self.rate) + ea.lgamma(c) + (1.0 - c) * ea.digamma(c)

    def cdf(self, value: Tensor) -> Tensor:
        # the regularised lower incomplete gamma function P(concentration, rate * x)
        value = ea.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return ea.special.gammainc(self.concentration, self.rate * value)


class Exponential(Distribution):
    """Exponential(rate, validate_args=None): density rate e^(-rate x) on x >= 0."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "rate": constraints.positive,
    }
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = as_size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return ea.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        e = ea.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ea.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -ea.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - ea.log(self.rate)


class Dirichlet(Distribution):
    """Dirichlet(concentration, validate_args=None) on the simplex of the last dimension."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration": constraints.independent(constraints.positive, 1)
    }
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = as_size(batch_shape)
        new.concentration = self.concentration.expand((*batch_shape, *self._event_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        g = _standard_gamma(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ea.xlogy(c - 1.0, value).sum(-1) + ea.lgamma(c.sum(-1)) - ea.lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        below = (self.concentration < 1).all(-1)
        k = self.concentration.shape[-1]
        classes = ea.arange(k, device=mode.device)
        one_hot = (classes == self.concentration.argmax(-1).unsqueeze(-1)).to(mode.dtype)
        return ea.where(below.unsqueeze(-1), one_hot, mode)

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        c0 = c.sum(-1)
        return ea.lgamma(c).sum(-1) - ea.lgamma(c0) - (k - c0) * ea.digamma(c0) - ((c - 1.0) * ea.digamma(c)).sum(-1)


class Beta(Distribution):
    """Beta(concentration1, concentration0, validate_args=None) on [0, 1]: density
    x^(a-1) (1-x)^(b-1) / B(a, b) with a = concentration1, b = concentration0."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ea.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = as_size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ea.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
