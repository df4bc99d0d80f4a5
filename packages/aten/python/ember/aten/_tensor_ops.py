"""Python's operators on Tensor (+ - * / // % ** @, comparisons, bitwise, unary, in-place).

Each dunder calls an operator's dispatcher entry directly (no public-signature
layer in between): ``a + b`` is ``_call_add_Tensor(a, b, 1)``, and where that entry is
a C++ one (csrc/python/dispatch_entry.cpp) the dunder is a C++ entry too, so the call
enters no Python code before the kernel. A Python
number on either side reaches the kernel as a 0-dim wrapped-number tensor, which
type promotion treats as weak (``int_tensor * 2.5`` is float, ``uint8_tensor + 1``
stays uint8).
"""

from __future__ import annotations

import numbers as _numbers
from typing import Any

from . import _dispatch

# (dunder, operator entry, how the arguments are passed)
#   "ab":  op(self, other, *extra)       "ba":  op(other, self, *extra)
#   "a":   op(self, *extra)              "ip":  in-place op(self, other, *extra) -> self
_TABLE: list[tuple[str, str, str, tuple[Any, ...]]] = [
    ("__add__", "add_Tensor", "ab", (1,)),
    ("__radd__", "add_Tensor", "ab", (1,)),
    ("__iadd__", "add__Tensor", "ip", (1,)),
    ("__sub__", "sub_Tensor", "ab", (1,)),
    ("__rsub__", "sub_Tensor", "ba", (1,)),
    ("__isub__", "sub__Tensor", "ip", (1,)),
    ("__mul__", "mul_Tensor", "ab", ()),
    ("__rmul__", "mul_Tensor", "ab", ()),
    ("__imul__", "mul__Tensor", "ip", ()),
    ("__truediv__", "div_Tensor", "ab", (None,)),
    ("__rtruediv__", "div_Tensor", "ba", (None,)),
    ("__rdiv__", "div_Tensor", "ba", (None,)),  # Python 2's name, kept by PyTorch
    ("__itruediv__", "div__Tensor", "ip", (None,)),
    ("__floordiv__", "floor_divide", "ab", ()),
    ("__rfloordiv__", "floor_divide", "ba", ()),
    ("__ifloordiv__", "floor_divide__Tensor", "ip", ()),
    ("__mod__", "remainder_Tensor", "ab", ()),
    ("__rmod__", "remainder_Tensor", "ba", ()),
    ("__imod__", "remainder__Tensor", "ip", ()),
    ("__pow__", "pow_Tensor_Tensor", "ab", ()),
    ("__rpow__", "pow_Tensor_Tensor", "ba", ()),
    ("__ipow__", "pow__Tensor", "ip", ()),
    ("__matmul__", "matmul", "ab", ()),
    ("__rmatmul__", "matmul", "ba", ()),
    ("__eq__", "eq_Tensor", "ab", ()),
    ("__ne__", "ne_Tensor", "ab", ()),
    ("__lt__", "lt_Tensor", "ab", ()),
    ("__le__", "le_Tensor", "ab", ()),
    ("__gt__", "gt_Tensor", "ab", ()),
    ("__ge__", "ge_Tensor", "ab", ()),
    ("__and__", "bitwise_and_Tensor", "ab", ()),
    ("__rand__", "bitwise_and_Tensor", "ab", ()),
    ("__iand__", "bitwise_and__Tensor", "ip", ()),
    ("__or__", "bitwise_or_Tensor", "ab", ()),
    ("__ror__", "bitwise_or_Tensor", "ab", ()),
    ("__ior__", "bitwise_or__Tensor", "ip", ()),
    ("__xor__", "bitwise_xor_Tensor", "ab", ()),
    ("__rxor__", "bitwise_xor_Tensor", "ab", ()),
    ("__ixor__", "bitwise_xor__Tensor", "ip", ()),
    ("__lshift__", "bitwise_left_shift_Tensor", "ab", ()),
    ("__rlshift__", "bitwise_left_shift_Tensor", "ba", ()),
    ("__ilshift__", "bitwise_left_shift__Tensor", "ip", ()),
    ("__rshift__", "bitwise_right_shift_Tensor", "ab", ()),
    ("__rrshift__", "bitwise_right_shift_Tensor", "ba", ()),
    ("__irshift__", "bitwise_right_shift__Tensor", "ip", ()),
    ("__neg__", "neg", "a", ()),
    ("__abs__", "abs", "a", ()),
    ("__invert__", "bitwise_not", "a", ()),
]


def _is_operand(x: Any) -> bool:
    return hasattr(x, "_impl") or isinstance(x, _numbers.Number)


def _make(call: Any, mode: str, extra: tuple[Any, ...], name: str = "") -> Any:
    if mode in ("a", "ab", "ba"):
        # the same, in C++, where the operator has a C++ entry (csrc/python/dispatch_entry.cpp)
        fast = _dispatch.dunder_entry(call, mode == "ba", extra, _is_operand, name)
        if fast is not None:
            return fast
    if mode == "a":
        return lambda self: call(self)
    # An operand the operator cannot take (None, a str, a list) gives NotImplemented, as
    # PyTorch's dunders do, so that Python tries the reflected operator and otherwise
    # raises its own TypeError -- and `t == None` is False, `t in [None]` works.
    if mode == "ba":

        def reflected(self: Any, other: Any) -> Any:
            try:
                return call(other, self, *extra)
            except TypeError:
                if _is_operand(other):
                    raise
                return NotImplemented

        return reflected

    def binary(self: Any, other: Any) -> Any:
        try:
            return call(self, other, *extra)
        except TypeError:
            if _is_operand(other):
                raise
            return NotImplemented

    return binary


def install(tensor_cls: type, ops: Any) -> list[str]:
    """Attaches every dunder whose operator exists; returns the ones that could not be."""
    missing = []
    for dunder, entry, mode, extra in _TABLE:
        call = getattr(ops, f"_call_{entry}", None)
        if call is None:
            missing.append(dunder)
            continue
        fn = _make(call, mode, extra, dunder)
        fn.__name__ = dunder
        setattr(tensor_cls, dunder, fn)
    setattr(tensor_cls, "__pos__", lambda self: self)  # noqa: B010 (a dunder set on the class, like those above)
    return missing
