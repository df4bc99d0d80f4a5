"""``Parameter``, ``Buffer`` and the uninitialized placeholders of lazy modules.

A ``Parameter`` is a Tensor subclass: assigning one to a Module attribute registers it
in the module's ``_parameters`` (see ``Module.__setattr__``). It shares the storage of
the tensor it was made from, requires grad by default, and operations on it return
plain Tensors (as in PyTorch, where Parameter disables ``__torch_function__``).

    >>> p = Parameter(ember.aten.zeros(2))
    >>> p
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import ember.aten as ea
from ember.aten import Tensor
from ember.aten.extension import register_parameter_class, wrap

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


def _alias(cls: type, data: Tensor) -> Any:
    """A ``cls`` instance over data's TensorImpl (detached: no autograd history)."""
    return wrap(data.detach()._impl, cls)


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True)

    A Tensor that a Module registers as a parameter when assigned as an attribute.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = ea.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        p = _alias(cls, data)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    # (mypy 2.4 drops the names of a dunder's keyword-only arguments: equal signatures compare unequal)
    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        if self.grad is not None:
            result.grad = copy.deepcopy(self.grad, memo)
        if self.__dict__:
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach(), self.requires_grad, OrderedDict(self.__dict__)))


def _rebuild_parameter(data: Tensor, requires_grad: bool, state: dict[str, Any]) -> Parameter:
    p = Parameter(data, requires_grad)
    p.__dict__.update(state)
    return p


# ember.aten.load rebuilds saved parameters (torch._utils._rebuild_parameter) as this class.
register_parameter_class(Parameter)


class _BufferMeta(type):
    # isinstance(t, Buffer) is True for the tensors Buffer(...) returns (flagged, not subclassed)
    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Buffer(data, *, persistent=True)

    Marks a tensor as a buffer: assigning it to a Module attribute calls
    ``register_buffer(name, data, persistent)``.
    """

    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            data = ea.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        # flags in the tensor's __dict__, read through Buffer's attributes below
        t.__dict__.update(_is_buffer=True, persistent=persistent)
        return t


class UninitializedTensorMixin:
    """The shape-less placeholder of a lazy module; ``materialize(shape)`` turns it into a real tensor."""

    cls_to_become: type | None = None
    data: Any
    requires_grad: bool

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        if device is None:
            device = self.data.device  # type: ignore[attr-defined]
        if dtype is None:
            dtype = self.data.dtype  # type: ignore[attr-defined]
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = ea.empty(shape, device=device, dtype=dtype)  # type: ignore[attr-defined]
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:  # type: ignore[override]
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def numel(self) -> int:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes."
        )

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (self.__class__, (self.requires_grad,))  # type: ignore[attr-defined]


class UninitializedParameter(UninitializedTensorMixin, Parameter):  # type: ignore[misc]
    """UninitializedParameter(requires_grad=True, device=None, dtype=None)

    LazyLinear's weight before its first call.
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        return Parameter.__new__(cls, ea.empty(0, device=device, dtype=dtype), requires_grad)  # type: ignore[return-value]

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):  # type: ignore[misc]
    """UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)"""

    cls_to_become = Tensor

    def __new__(  # type: ignore[misc]
        cls, requires_grad: bool = False, device: Any = None, dtype: Any = None, persistent: bool = True
    ) -> UninitializedBuffer:
        t = _alias(cls, ea.empty(0, device=device, dtype=dtype))
        if requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """True for an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
