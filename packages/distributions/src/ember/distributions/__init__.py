"""ember.distributions: probability distributions (PyTorch's torch.distributions).

    >>> import ember.aten as ea
    >>> from ember.distributions import Normal, kl_divergence
    >>> mu = ea.zeros(3, requires_grad=True)
    >>> z = Normal(mu, 1.0).rsample((5,))       # differentiable in mu
    >>> kl_divergence(Normal(mu, 1.0), Normal(0.0, 1.0)).sum().backward()

Draws come from aten's random operators (``randn``, ``rand``, ``bernoulli``,
``multinomial``, ``exponential_`` and ``_standard_gamma`` for Gamma, Beta and Dirichlet),
so ``ember.aten.manual_seed`` reproduces them. Parameters and, in ``log_prob``, values are
validated against ``constraints`` unless ``validate_args=False`` (PyTorch's default: on).
"""

from importlib import metadata as _metadata

from . import constraints, kl, utils
from .bernoulli import Bernoulli, Categorical
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Exponential, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__version__ = _metadata.version("ember-distributions")
__all__ = [
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "Gamma",
    "Independent",
    "MultivariateNormal",
    "Normal",
    "Uniform",
    "constraints",
    "kl",
    "kl_divergence",
    "register_kl",
    "utils",
]
