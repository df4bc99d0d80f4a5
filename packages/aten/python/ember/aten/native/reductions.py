"""Python kernels of the composite reductions: max/min of two tensors, norm, unique.

Each takes its schema's arguments positionally (see native_functions.yaml, section
"reductions, scans, sorting") and calls C++ operators.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
from ember.aten._generated import _ops as _ops


def _elementwise(name: str) -> Any:
    fn = getattr(ea, name, None)
    if fn is None:
        raise NotImplementedError(f"{name}(): ember.aten.{name} is not available in this build")
    return fn


# ---- max(input, other) / min(input, other): the elementwise maximum / minimum ----


def max_other(self: Any, other: Any) -> Any:
    return _elementwise("maximum")(self, other)


def max_out(self: Any, other: Any, out: Any) -> Any:
    return _elementwise("maximum")(self, other, out=out)


def min_other(self: Any, other: Any) -> Any:
    return _elementwise("minimum")(self, other)


def min_out(self: Any, other: Any, out: Any) -> Any:
    return _elementwise("minimum")(self, other, out=out)


# ---- norm: torch.norm's p ('fro', 'nuc' or a number) on top of linalg.vector_norm ----


def _norm_order(p: Any) -> Any:
    if isinstance(p, str):
        if p == "fro":
            return 2  # the Frobenius norm of the reduced dims is their vector 2-norm
        if p == "nuc":
            raise NotImplementedError("norm(): the nuclear norm (p='nuc') is not implemented")
        raise RuntimeError(f"norm(): p must be a number, 'fro' or 'nuc', but got {p!r}")
    return 2 if p is None else p


def norm(self: Any, p: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _ops._call_linalg_vector_norm(self, _norm_order(p), dim, keepdim, dtype)


def norm_out(self: Any, p: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> Any:
    return _ops._call_linalg_vector_norm_out(self, _norm_order(p), dim, keepdim, dtype, out)


# ---- unique / unique_consecutive: a tensor, or a tuple with the inverse and/or counts ----


def _unique_result(out: Any, inverse: Any, counts: Any, return_inverse: bool, return_counts: bool) -> Any:
    if return_inverse and return_counts:
        return out, inverse, counts
    if return_inverse:
        return out, inverse
    if return_counts:
        return out, counts
    return out


def unique(self: Any, sorted: bool, return_inverse: bool, return_counts: bool, dim: Any) -> Any:
    if dim is None:
        out, inverse, counts = _ops._call__unique2(self, sorted, return_inverse, return_counts)
    else:
        out, inverse, counts = _ops._call_unique_dim(self, dim, sorted, return_inverse, return_counts)
    return _unique_result(out, inverse, counts, return_inverse, return_counts)


def unique_consecutive(self: Any, return_inverse: bool, return_counts: bool, dim: Any) -> Any:
    out, inverse, counts = _ops._call__unique_consecutive(self, return_inverse, return_counts, dim)
    return _unique_result(out, inverse, counts, return_inverse, return_counts)
