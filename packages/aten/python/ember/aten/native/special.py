"""Python kernels of torch.special's aliases and composites.

The special functions with kernels of their own (Bessel, erfcx, ndtr, zeta, the
orthogonal polynomials, ...) are C++ (csrc/native/SpecialOps.cpp); here are the names
torch.special shares with other operators (special.expit is sigmoid, special.psi is
digamma, ...) and multigammaln, each taking its schema's arguments positionally.
"""

from __future__ import annotations

import math
from typing import Any

from ember.aten._generated import _ops as ops


def special_psi(self: Any) -> Any:
    return ops._call_digamma(self)


def special_digamma(self: Any) -> Any:
    return ops._call_digamma(self)


def special_gammaln(self: Any) -> Any:
    return ops._call_lgamma(self)


def special_erf(self: Any) -> Any:
    return ops._call_erf(self)


def special_erfc(self: Any) -> Any:
    return ops._call_erfc(self)


def special_erfinv(self: Any) -> Any:
    return ops._call_erfinv(self)


def special_expit(self: Any) -> Any:
    return ops._call_sigmoid(self)


def special_exp2(self: Any) -> Any:
    return ops._call_exp2(self)


def special_expm1(self: Any) -> Any:
    return ops._call_expm1(self)


def special_log1p(self: Any) -> Any:
    return ops._call_log1p(self)


def special_round(self: Any, decimals: int) -> Any:
    return ops._call_round_decimals(self, decimals) if decimals else ops._call_round(self)


def special_logit(self: Any, eps: float | None) -> Any:
    return ops._call_logit(self, eps)


def special_xlogy(self: Any, other: Any) -> Any:
    return ops._call_xlogy_Tensor(self, other)


def special_i0(self: Any) -> Any:
    return ops._call_i0(self)


def special_modified_bessel_i0(self: Any) -> Any:
    return ops._call_i0(self)


def special_modified_bessel_i1(self: Any) -> Any:
    return ops._call_special_i1(self)


def special_sinc(self: Any) -> Any:
    return ops._call_sinc(self)


def special_gammainc(self: Any, other: Any) -> Any:
    return ops._call_igamma(self, other)


def special_gammaincc(self: Any, other: Any) -> Any:
    return ops._call_igammac(self, other)


def special_polygamma(n: int, self: Any) -> Any:
    return ops._call_polygamma(n, self)


def special_softmax(self: Any, dim: int, dtype: Any) -> Any:
    return ops._call_softmax_int(self, dim, dtype)


def special_log_softmax(self: Any, dim: int, dtype: Any) -> Any:
    return ops._call_log_softmax_int(self, dim, dtype)


def special_logsumexp(self: Any, dim: Any, keepdim: bool) -> Any:
    return ops._call_logsumexp(self, dim, keepdim)


def mvlgamma(self: Any, p: int) -> Any:
    """The multivariate log-gamma: p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not self.dtype.is_floating_point:  # integers: the default float dtype
        self = self.to(ops._call_ones([], None, None, None, None).dtype)
    if bool((self <= (p - 1) / 2).any().item()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    j = ops._call_arange(p, self.dtype, None, self.device, None)
    terms = ops._call_lgamma(self.unsqueeze(-1) - j / 2)
    return terms.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def special_multigammaln(self: Any, p: int) -> Any:
    return mvlgamma(self, p)
