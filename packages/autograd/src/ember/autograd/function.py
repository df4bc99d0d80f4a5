"""Custom differentiable operations: ``Function`` (PyTorch's torch.autograd.Function).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

``apply`` runs ``forward`` with grad mode off. If grad mode is on and an input requires
grad, the ``ctx`` passed to forward is the graph node itself (class ``ExpBackward``):
its edges are the inputs' gradient edges (one per positional argument of forward),
the outputs become its outputs, and ``backward`` runs when the engine reaches it.
Tensors given to ``save_for_backward`` are saved like the built-in ops' (version-
checked; outputs saved without a reference to their grad_fn, so no cycle).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ember.aten import Tensor
from ember.aten.extension import backend_device_type
from ember.aten.extension import entries as ops

from . import _meta
from .anomaly_mode import _anomaly, record_trace
from .grad_mode import _state, no_grad
from .graph import _RELEASED, ERR_BACKWARD_TWICE, Node

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` can tell ``backward`` (the methods of ``ctx``)."""

    def save_for_backward(self, *tensors: Any) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {tensors.index(t)} is of type "
                    f"{type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Any) -> None:
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Any) -> None:
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The graph node of one ``Function.apply`` call; it is also that call's ``ctx``."""

    _forward_cls: type[Function]

    def __init__(self) -> None:
        Node.__init__(self)
        self.to_save: tuple[Any, ...] = ()
        self.dirty_tensors: tuple[Any, ...] = ()
        self.non_differentiable: tuple[Any, ...] = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._saved: Any = None
        self._input_is_tensor: tuple[bool, ...] = ()
        self._output_meta: tuple[Any, ...] = ()  # every tensor output (to materialize zeros)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._saved
        if saved is _RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if saved is None:
            return tuple(self.to_save)
        return tuple(_meta.unpack(s, self) if s is not None else None for s in saved)

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        return self.saved_tensors

    def release_variables(self) -> None:
        if self._saved is not None:
            self._saved = _RELEASED

    def apply(self, grads: list[Any]) -> Any:
        if self.materialize_grads:
            grads = [g if g is not None else _zeros(meta) for g, meta in zip(grads, self._output_meta, strict=True)]
        cls = self._forward_cls
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_edges)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {n}, got "
                    f"{len(result)})"
                )
        for i, r in enumerate(result):
            if r is None:
                continue
            if not isinstance(r, Tensor):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type {type(r).__name__} at position {i + 1}; "
                    "gradients must be Tensors or None"
                )
            if not self._input_is_tensor[i]:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position {i + 1}, but the "
                    "corresponding forward input was not a Variable"
                )
        return result


def _zeros(meta: Any) -> Any:
    if meta is None:
        return None
    sizes, dtype, backend = meta
    return ops._call_zeros(sizes, dtype, None, backend_device_type(backend), None)


class FunctionMeta(type):
    """Gives every Function subclass its node class ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls  # type: ignore[attr-defined]
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations; call them with ``MyFunction.apply(...)``."""

    _backward_cls: type[BackwardCFunction]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html"
            "#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    @staticmethod
    def vjp(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        uses_setup_context = cls.setup_context is not Function.setup_context
        if cls.backward is Function.backward and cls.vjp is not Function.vjp:
            cls.backward = cls.vjp  # type: ignore[method-assign]
        needs = tuple(isinstance(a, Tensor) and _meta.requires_grad(a) for a in args) if _state.enabled else ()
        record = any(needs)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = needs if needs else (False,) * len(args)
        ctx._input_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        with no_grad():
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not record:
            return outputs
        if _anomaly.enabled:
            record_trace(ctx)
        ctx.next_edges = tuple(_meta.gradient_edge(a) if isinstance(a, Tensor) else None for a in args)
        return _wrap_outputs(ctx, args, outputs)


def _wrap_outputs(ctx: BackwardCFunction, args: tuple[Any, ...], outputs: Any) -> Any:
    is_tuple = isinstance(outputs, tuple)
    outs = outputs if is_tuple else (outputs,)
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    new_outs: list[Any] = []
    metas: list[Any] = []
    out_metas: list[Any] = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            new_outs.append(o)
            metas.append(None)
            out_metas.append(None)
            continue
        is_input = any(o is a for a in args)
        differentiable = id(o) not in non_diff and o.dtype.is_floating_point
        if id(o) in dirty:
            m = o._meta
            if m is not None and m.requires_grad and o.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            if differentiable:
                if _meta.is_differentiable_view(o):
                    if len(outs) != 1:
                        raise NotImplementedError(
                            "mark_dirty on a view is supported for Functions with a single output"
                        )
                    _meta.rebase_history(o, ctx)
                else:
                    _meta.set_history(o, ctx, i)
        elif is_input or (o._meta is not None and o._meta.grad_fn is not None):
            # an input returned as it is (or a tensor with history of its own): a fresh alias gets the history
            with no_grad():
                o = ops._call_alias(o)
            o._base = None
            if differentiable:
                _meta.set_history(o, ctx, i)
        elif differentiable:
            _meta.set_history(o, ctx, i)
        new_outs.append(o)
        metas.append(_meta.input_meta(o) if differentiable else None)
        out_metas.append(_meta.input_meta(o))
    ctx._input_meta = tuple(metas)
    ctx._output_meta = tuple(out_metas)
    # save after the outputs exist: an output is saved without its grad_fn (no cycle)
    if ctx.to_save:
        out_ids = {id(o): o for o in new_outs if isinstance(o, Tensor)}
        orig_ids = {id(o): new for o, new in zip(outs, new_outs, strict=True) if isinstance(o, Tensor)}
        saved: list[Any] = []
        for t in ctx.to_save:
            if t is None:
                saved.append(None)
            elif id(t) in orig_ids and orig_ids[id(t)]._meta is not None and orig_ids[id(t)]._meta.grad_fn is ctx:
                saved.append(_meta.save_output(orig_ids[id(t)]))
            elif id(t) in out_ids and t._meta is not None and t._meta.grad_fn is ctx:
                saved.append(_meta.save_output(t))
            else:
                saved.append(_meta.SavedVariable(t))
        ctx._saved = saved
        ctx.to_save = ()
    else:
        ctx._saved = []
    return tuple(new_outs) if is_tuple else new_outs[0]


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:  # pragma: no cover (legacy API)
        self.inplace = inplace


class NestedIOFunction(Function):  # pragma: no cover (legacy API)
    pass


class DelayedError(Node):
    """Node whose backward raises: what @once_differentiable puts after a backward run without a graph."""

    __slots__ = ("msg",)

    def __init__(self, msg: str) -> None:
        Node.__init__(self)
        self.msg = msg

    def apply(self, grads: list[Any]) -> Any:
        raise RuntimeError(self.msg)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorates ``backward``: it runs without recording; differentiating its result again raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        err = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable")
        err.next_edges = tuple(_meta.gradient_edge(a) if isinstance(a, Tensor) else None for a in args)
        err._input_meta = tuple(_meta.input_meta(o) if isinstance(o, Tensor) else None for o in outs)
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.dtype.is_floating_point:
                with no_grad():
                    o = ops._call_alias(o)
                o._base = None
                _meta.set_history(o, err, i)
            wrapped.append(o)
        return tuple(wrapped) if is_tuple else wrapped[0]

    return wrapper
