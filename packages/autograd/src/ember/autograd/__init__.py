"""ember.autograd: the dynamic autograd graph (PyTorch's torch.autograd).

Installing ember-autograd is enough: ``import ember.aten`` loads it through the
``ember.aten.plugins`` entry point, which registers the Autograd kernels generated
from ``derivatives.yaml`` into aten's dispatcher.

    >>> import ember.aten as ea
    >>> x = ea.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.])

Modules: ``graph`` (Node, Edge, AccumulateGrad), ``engine`` (the Engine),
``function`` (custom Functions), ``grad_mode``, ``anomaly_mode``, ``gradcheck``,
``functional`` (jacobian, hessian, vjp, jvp).
"""

from importlib import metadata as _metadata

import ember.aten as _ea

from . import functional, graph
from ._api import backward, grad
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import AccumulateGrad, Edge, GradientEdge, Node, get_gradient_edge

__version__ = _metadata.version("ember-autograd")
__all__ = [
    "AccumulateGrad",
    "Edge",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "GradientEdge",
    "InplaceFunction",
    "NestedIOFunction",
    "Node",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "functional",
    "get_gradient_edge",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]
