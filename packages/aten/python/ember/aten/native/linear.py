"""linear: input @ weight.T + bias as one operator (CompositeExplicitAutograd).

The kernel runs below autograd, so ``nn.Linear`` records a single ``LinearBackward0``
node (derivatives.yaml) instead of a transpose and an addmm. With a bias, a contiguous
input of any rank is folded to (rows, in_features) for one addmm, as PyTorch's linear
does: the GEMM adds the bias (beta = 1 over the broadcast bias), not a second pass.
"""

from __future__ import annotations

import math
from typing import Any

from ember.aten._dispatch import find_op
from ember.aten._dispatch import tls as _tls
from ember.aten._generated import _ops as ops

_op_t = find_op("t")
_tab_t = _op_t._table
_op_view = find_op("view")
_tab_view = _op_view._table


def _t(weight: Any) -> Any:
    """weight.t() as an operand only: the dispatch of ``_call_t`` without its view bookkeeping
    (``_base``, and the no-grad-view mark this kernel would give a view of a weight requiring grad,
    as it runs with the Autograd keys excluded): the transpose never leaves this function."""
    ks = (weight._keys | _tls.include) & _tls.exclude_not
    return (_tab_t.get(ks) or _op_t._slow(ks))(weight)


def _view(t: Any, size: tuple[int, ...]) -> Any:
    """t.view(size) by its backend kernel, as _t: no view bookkeeping (the folded input never
    leaves linear; the result's base is the addmm temporary, which nothing else holds)."""
    ks = (t._keys | _tls.include) & _tls.exclude_not
    return (_tab_view.get(ks) or _op_view._slow(ks))(t, size)


def linear(input: Any, weight: Any, bias: Any) -> Any:
    if bias is not None and input.dim() == 2:
        return ops._call_addmm(bias, input, _t(weight), 1, 1)
    if bias is not None and input.dim() > 2 and input.is_contiguous():
        shape = tuple(input.shape)
        rows = math.prod(shape[:-1])  # not -1: a 0-row input has no inferable size
        out = ops._call_addmm(bias, _view(input, (rows, shape[-1])), _t(weight), 1, 1)
        return _view(out, (*shape[:-1], out.size(-1)))
    out = ops._call_matmul(input, _t(weight))
    if bias is not None:
        out = ops._call_add_Tensor(out, bias, 1)
    return out
