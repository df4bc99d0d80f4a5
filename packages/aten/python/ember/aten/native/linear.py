"""linear: input @ weight.T + bias as one operator (CompositeExplicitAutograd).

The kernel runs below autograd, so ``nn.Linear`` records a single ``LinearBackward0``
node (derivatives.yaml) instead of a transpose and an addmm.
"""

from __future__ import annotations

from typing import Any

from ember.aten._generated import _ops as ops


def linear(input: Any, weight: Any, bias: Any) -> Any:
    if input.dim() == 2 and bias is not None:
        return ops._call_addmm(bias, input, ops._call_t(weight), 1, 1)
    out = ops._call_matmul(input, ops._call_t(weight))
    if bias is not None:
        out = ops._call_add_Tensor(out, bias, 1)
    return out
