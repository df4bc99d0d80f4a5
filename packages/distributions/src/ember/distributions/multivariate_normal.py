"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import ember.aten as ea
from ember.aten import Tensor

from . import constraints
from ._util_shapes import as_size
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _broadcast_shape(*shapes: Any) -> tuple[int, ...]:
    return tuple(ea.broadcast_tensors(*[ea.empty(tuple(s)).expand(tuple(s)) for s in shapes])[0].shape)


def _batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """|L^-1 x|^2 over the last dimension, L broadcast to x's batch."""
    k = x.shape[-1]
    batch = tuple(x.shape[:-1])
    y = ea.linalg.solve(L.expand((*batch, k, k)), x.unsqueeze(-1)).squeeze(-1)
    return y.pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
    validate_args=None): exactly one of the three matrices; sampled as loc + L eps with
    L the lower Cholesky factor of the covariance."""

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        name = (
            "scale_tril"
            if scale_tril is not None
            else "covariance_matrix"
            if covariance_matrix is not None
            else ("precision_matrix")
        )
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = _broadcast_shape(matrix.shape[:-2], loc.shape[:-1])
        k = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (k, k):
            raise ValueError(f"{name} must be a {k} x {k} matrix (loc has {k} elements), got {tuple(matrix.shape)}")
        setattr(self, name, matrix.expand((*batch_shape, k, k)))
        self.loc = loc.expand((*batch_shape, k))
        super().__init__(batch_shape, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ea.linalg.cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None  # exactly one of the three is given (checked above)
            self._unbroadcasted_scale_tril = ea.linalg.cholesky(ea.linalg.inv(precision_matrix))

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = as_size(batch_shape)
        k = self._event_shape[0]
        new.loc = self.loc.expand((*batch_shape, k))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand((*batch_shape, k, k)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        k = self._event_shape[0]
        return self._unbroadcasted_scale_tril.expand((*self._batch_shape, k, k))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        k = self._event_shape[0]
        return (L @ L.mT).expand((*self._batch_shape, k, k))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return ea.linalg.inv(self.covariance_matrix)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps = ea.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
