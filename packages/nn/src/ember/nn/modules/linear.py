"""``Identity``, ``Linear``, ``Bilinear``, ``LazyLinear``.

Default initialisation is PyTorch's: Linear's weight kaiming_uniform(a=sqrt(5)) (so
U(-1/sqrt(in), 1/sqrt(in))) and its bias U(-1/sqrt(in), 1/sqrt(in)).
"""

from __future__ import annotations

import math
from typing import Any

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import no_grad

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


class Identity(Module):
    """Identity(*args, **kwargs): returns its input (arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """Linear(in_features, out_features, bias=True, device=None, dtype=None)

    y = x W^T + b: (*, in_features) -> (*, out_features); weight (out_features,
    in_features), bias (out_features).

    >>> Linear(20, 30)(ember.aten.randn(128, 20)).shape
    ember.aten.Size([128, 30])
    """

    __constants__ = ("in_features", "out_features")
    in_features: int
    out_features: int
    weight: Tensor

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ea.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ea.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """Bilinear(in1_features, in2_features, out_features, bias=True, device=None, dtype=None)

    y = x1^T A x2 + b: weight (out, in1, in2), bias (out), both U(-1/sqrt(in1), 1/sqrt(in1)).
    """

    __constants__ = ("in1_features", "in2_features", "out_features")

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(ea.empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ea.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """LazyLinear(out_features, bias=True, device=None, dtype=None)

    A Linear whose in_features is taken from the last dim of its first input; it then
    becomes a Linear.
    """

    cls_to_become = Linear
    weight: UninitializedParameter  # type: ignore[assignment]
    bias: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # bias=False: Linear registers bias=None; the uninitialized ones are set here
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


def __getattr__(name: str) -> object:
    # PyTorch's path torch.nn.modules.linear.NonDynamicallyQuantizableLinear (the class of
    # MultiheadAttention.out_proj, named in pickled modules); ember's lives in attention.py,
    # which imports this module, hence the lazy lookup.
    if name == "NonDynamicallyQuantizableLinear":
        from .attention import NonDynamicallyQuantizableLinear  # attention.py imports this module

        return NonDynamicallyQuantizableLinear
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
