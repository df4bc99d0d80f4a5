"""linear: input @ weight.T + bias as one operator (CompositeExplicitAutograd).

The kernel runs below autograd, so ``nn.Linear`` records a single ``LinearBackward0``
node (derivatives.yaml) instead of a transpose and an addmm.
"""

from __future__ import annotations

from typing import Any

from ember.aten._dispatch import find_op
from ember.aten._dispatch import tls as _tls
from ember.aten._generated import _ops as ops

_op_t = find_op("t")
_tab_t = _op_t._table


def _t(weight: Any) -> Any:
    """weight.t() as an operand only: the dispatch of ``_call_t`` without its view bookkeeping
    (``_base``, and the no-grad-view mark this kernel would give a view of a weight requiring grad,
    as it runs with the Autograd keys excluded): the transpose never leaves this function."""
    ks = (weight._keys | _tls.include) & _tls.exclude_not
    return (_tab_t.get(ks) or _op_t._slow(ks))(weight)


def linear(input: Any, weight: Any, bias: Any) -> Any:
    if input.dim() == 2 and bias is not None:
        return ops._call_addmm(bias, input, _t(weight), 1, 1)
    out = ops._call_matmul(input, _t(weight))
    if bias is not None:
        out = ops._call_add_Tensor(out, bias, 1)
    return out
