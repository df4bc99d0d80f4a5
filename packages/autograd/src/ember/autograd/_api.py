"""``backward``, ``grad`` and the Tensor autograd methods (installed into aten's ``_autograd_hooks``)."""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, TypeAlias

from ember.aten.extension import Tensor, meta_of
from ember.aten.extension import check_grad_assignable as _check_grad_assignable
from ember.aten.extension import set_requires_grad as _set_requires_grad

from . import engine
from ._meta import ViewInfo, gradient_edge
from .graph import RemovableHandle, _add_hook

_TensorOrTensors: TypeAlias = "Tensor | Sequence[Tensor]"


def _as_tuple(x: Any, what: str) -> tuple[Any, ...]:
    if isinstance(x, Tensor):
        return (x,)
    if x is None:
        return ()
    try:
        return tuple(x)
    except TypeError:
        raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}") from None


def _make_grads(outputs: Sequence[Any], grads: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for i, (o, g) in enumerate(zip(outputs, grads, strict=True)):
        if isinstance(g, Tensor):
            if tuple(o.shape) != tuple(g.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of "
                    f"{o.shape}."
                )
            if o.dtype.is_floating_point and not g.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad_output[{i}] has dtype {g.dtype._name} but output[{i}] has the floating point dtype "
                    f"{o.dtype._name}"
                )
            out.append(g)
        elif g is None:
            if isinstance(o, Tensor) and o.requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not o.dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {o.dtype}")
                out.append(o.new_ones(tuple(o.shape)))
            else:
                out.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return out


def _root_edges(tensors: Sequence[Any]) -> list[Any]:
    edges = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"element {i} of tensors is not a Tensor (got {type(t).__name__})")
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(e)
    return edges


def _targets(inputs: Sequence[Any]) -> list[engine.Target]:
    targets = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, but element {i} is {type(t).__name__}")
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append(engine.Target(i, e[0], e[1], t))
    return targets


def backward(
    tensors: _TensorOrTensors,
    grad_tensors: _TensorOrTensors | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: _TensorOrTensors | None = None,
) -> None:
    """Accumulates into the leaves' ``.grad`` the gradients of `tensors` (PyTorch's torch.autograd.backward).

    >>> x = ember.aten.ones(3, requires_grad=True)
    >>> backward((x * x).sum())
    >>> x.grad
    tensor([2., 2., 2.])
    """
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError(
                "'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                "backward(). Please only use 'grad_tensors'."
            )
        grad_tensors = grad_variables
    if inputs is not None and not isinstance(inputs, Tensor) and len(inputs) == 0:  # type: ignore[arg-type]
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outs = _as_tuple(tensors, "tensors")
    grads = _as_tuple(grad_tensors, "grad_tensors") if grad_tensors is not None else (None,) * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outs)} tensors")
    grads_ = _make_grads(outs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outs)
    targets = _targets(_as_tuple(inputs, "inputs")) if inputs is not None else None
    if create_graph and inputs is None:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
            "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
            "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
            "to None after use to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=3,
        )
    engine.execute(edges, grads_, retain_graph, create_graph, targets, accumulate=True)


def grad(
    outputs: _TensorOrTensors,
    inputs: _TensorOrTensors,
    grad_outputs: _TensorOrTensors | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """The gradients of `outputs` with respect to `inputs`, returned (``.grad`` untouched).

    >>> x = ember.aten.ones(3, requires_grad=True)
    >>> grad((x * x).sum(), x)
    (tensor([2., 2., 2.]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True).", stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) needs vmap, which ember does not have")
    outs = _as_tuple(outputs, "outputs")
    ins = _as_tuple(inputs, "inputs")
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    gouts = _as_tuple(grad_outputs, "grad_outputs") if grad_outputs is not None else (None,) * len(outs)
    if len(gouts) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(gouts)} for {len(outs)} outputs")
    grads_ = _make_grads(outs, gouts)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outs)
    targets = _targets(ins)
    captured = engine.execute(edges, grads_, retain_graph, create_graph, targets, accumulate=False)
    assert captured is not None
    result = []
    for i, (t, g) in enumerate(zip(ins, captured, strict=True)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. Set "
                    "allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = t.new_zeros(tuple(t.shape))
        result.append(g)
    return tuple(result)


# ---------------------------------------------------------------------------
# Tensor methods (aten calls these through _autograd_hooks)
# ---------------------------------------------------------------------------


def tensor_backward(t: Tensor, gradient: Any, retain_graph: Any, create_graph: bool, inputs: Any) -> None:
    backward(t, gradient, retain_graph, create_graph, inputs=inputs)


def _checked_tensor_hook(hook: Any) -> Any:
    """``hook`` with PyTorch's checks of what it returns: a gradient of another dtype, size
    or device is an error (it would be cast or broadcast silently further on)."""
    name = getattr(hook, "__name__", type(hook).__name__)

    def checked(grad: Any) -> Any:
        r = hook(grad)
        if r is None or not isinstance(grad, Tensor):
            return r
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Tensor or None (got {type(r).__name__})")
        if r.dtype != grad.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {r.type()})")
        if r.device != grad.device:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {r.type()})")
        if tuple(r.shape) != tuple(grad.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        return r

    return checked


def register_hook(t: Tensor, hook: Any) -> RemovableHandle:
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = t._meta
    assert m is not None
    fn = t.grad_fn
    if fn is None:
        if not isinstance(m.hooks, OrderedDict):
            m.hooks = OrderedDict()
        return _add_hook(m.hooks, _checked_tensor_hook(hook))
    return fn._register_tensor_pre_hook(m.output_nr, _checked_tensor_hook(hook))


def register_post_accumulate_grad_hook(t: Tensor, hook: Any) -> RemovableHandle:
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    m = t._meta
    assert m is not None
    if not isinstance(m.post_accumulate_hooks, OrderedDict):
        m.post_accumulate_hooks = OrderedDict()
    return _add_hook(m.post_accumulate_hooks, hook)


def retain_grad(t: Tensor) -> None:
    if not t.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = t.grad_fn
    m = t._meta
    assert m is not None
    if fn is None or m.retains_grad:
        return
    ref = weakref.ref(t)

    def retain_grad_hook(g: Any) -> None:
        var = ref()
        if var is None or var._meta is None:
            return
        vm = var._meta
        vm.grad = g.clone() if vm.grad is None else vm.grad + g

    if fn._retains_grad_hooks is None:
        fn._retains_grad_hooks = {}
    fn._retains_grad_hooks[m.output_nr] = retain_grad_hook
    m.retains_grad = True


def requires_grad_(t: Tensor, flag: bool) -> None:
    flag = bool(flag)
    if t.grad_fn is not None:
        if not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        return
    _set_requires_grad(t, flag)  # raises "only Tensors of floating point dtype can require gradients"


def set_grad(t: Tensor, value: Any) -> None:
    if value is not None:
        _check_grad_assignable(t, value)
    m = t._meta
    if m is None:
        if value is None:
            return
        m = meta_of(t)
    m.grad = value


def detach_(t: Tensor) -> Tensor:
    m = t._meta
    if m is None:
        return t
    if m.view_info.__class__ is ViewInfo and m.requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    m.grad_fn = None
    m.output_nr = 0
    m.retains_grad = False
    if m.requires_grad:
        _set_requires_grad(t, False)
    return t
