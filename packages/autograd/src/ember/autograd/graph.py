"""The backward graph: ``Node`` (one backward function), ``Edge``, ``AccumulateGrad``, hooks.

A tensor produced by a recorded operation points at its ``grad_fn`` (a Node) and its
``output_nr`` (which output of that operation it is). A Node's ``next_edges`` are the
``(node, input_nr)`` pairs its gradients flow to: one per differentiable input of the
forward operation, ``None`` for an input that does not require grad. A leaf tensor
that requires grad is reached through its ``AccumulateGrad`` node, which adds the
incoming gradient into ``tensor.grad``. Edges point from outputs to inputs only, so
the graph is a DAG whose only owners are the tensors (and the nodes downstream of
them): when the last output of a graph is freed, the whole graph is freed with it.

Every Node records, for each of the forward operation's outputs, the shape, dtype and
backend of that output (``_input_meta``): the engine uses it to sum a broadcast
gradient back to the input's shape and to cast it to the input's dtype, so the
per-op formulas (``derivatives.yaml``) never deal with broadcasting.

Hooks (PyTorch's order when a node runs): tensor pre-hooks (``Tensor.register_hook``,
per output), retains-grad hooks, node pre-hooks (``Node.register_prehook``), then
``apply``, then node post-hooks (``Node.register_hook``).
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from ember.aten.extension import BACKEND_MASK
from ember.aten.extension import input_meta as _input_meta

from ._accumulate import accumulate_grad

__all__ = [
    "AccumulateGrad",
    "Edge",
    "GradientEdge",
    "Node",
    "RemovableHandle",
    "get_gradient_edge",
    "increment_version",
]


class Edge(NamedTuple):
    """Where a gradient goes: ``function`` receives it as its input number ``input_nr``."""

    function: Node
    input_nr: int


class GradientEdge(NamedTuple):
    """The gradient edge of a tensor (PyTorch's torch.autograd.graph.GradientEdge)."""

    node: Node
    output_nr: int


class RemovableHandle:
    """Returned by every ``register_*hook``: ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict[int, Any]) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _add_hook(d: OrderedDict[int, Any], fn: Callable[..., Any]) -> RemovableHandle:
    h = RemovableHandle(d)
    d[h.id] = fn
    return h


_next_seq = itertools.count().__next__

# Saved tensors of a node whose graph was already run without retain_graph.
_RELEASED = type("_Released", (), {"__repr__": lambda self: "<released>", "__slots__": ()})()

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class Node:
    """One backward function of the graph (PyTorch's torch.autograd.graph.Node).

    ``apply(grads)`` takes one gradient per output of the forward operation (None when
    no gradient reached that output) and returns one gradient per entry of
    ``next_edges`` (None where there is nothing to send).
    """

    __slots__ = ("__dict__", "__weakref__", "_input_meta", "_seq", "next_edges")

    # Rarely used state lives in the instance __dict__ (allocated on first write);
    # these class attributes are the defaults.
    _pre_hooks: OrderedDict[int, Any] | None = None
    _post_hooks: OrderedDict[int, Any] | None = None
    _tensor_pre_hooks: dict[int, OrderedDict[int, Any]] | None = None
    _retains_grad_hooks: dict[int, Any] | None = None
    _metadata: dict[str, Any] | None = None
    _saved_fields: tuple[str, ...] = ()  # attributes holding saved tensors (released after backward)

    def __init__(self) -> None:
        self.next_edges: tuple[tuple[Node, int] | None, ...] = ()
        self._input_meta: tuple[Any, ...] = ()
        self._seq = _next_seq()

    # ---- the public API -----------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    @property
    def metadata(self) -> dict[str, Any]:
        m = self._metadata
        if m is None:
            m = self._metadata = {}
        return m

    def register_hook(self, fn: Callable[[tuple[Any, ...], tuple[Any, ...]], Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = OrderedDict()
        return _add_hook(self._post_hooks, fn)

    def register_prehook(self, fn: Callable[[tuple[Any, ...]], Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_pre_hook(self, output_nr: int, fn: Callable[[Any], Any]) -> RemovableHandle:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d = self._tensor_pre_hooks.setdefault(output_nr, OrderedDict())
        return _add_hook(d, fn)

    def _sequence_nr(self) -> int:
        return self._seq

    def _input_metadata(self) -> tuple[Any, ...]:
        return self._input_meta

    @property
    def num_inputs(self) -> int:
        return len(self._input_meta)

    @property
    def num_outputs(self) -> int:
        return len(self.next_edges)

    def apply(self, grads: list[Any]) -> Any:
        raise NotImplementedError(f"{self.name()}.apply")

    def release_variables(self) -> None:
        for f in self._saved_fields:
            if getattr(self, f) is not None:
                setattr(self, f, _RELEASED)

    def __call__(self, *grads: Any) -> Any:
        out = tuple(self.apply(list(grads)))
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        # Node.__init__'s fields, written here: a leaf's AccumulateGrad is made again for every graph
        # (the leaf holds it weakly), so this runs once per leaf per forward pass. The generated
        # kernels make it in aten's C++ instead, writing these same four fields (_kernels._edge)
        self.next_edges = ()
        self.variable = variable
        self._input_meta = (_input_meta(variable),)  # (sizes, dtype, backend bits) in one C++ call
        self._seq = _ACCUMULATE_SEQ  # runs as soon as it is ready (PyTorch gives it the top priority)

    def name(self) -> str:
        return "ember::autograd::AccumulateGrad"

    def apply(self, grads: list[Any]) -> tuple[()]:
        # the list, not grads[0]: a name bound to the gradient here would keep it from being stolen
        if grads[0] is not None:
            accumulate_grad(self.variable, grads)
        return ()


_BACKEND_BITS = BACKEND_MASK  # the CPU / CUDA backend bits of a key set
_ACCUMULATE_SEQ = 1 << 62


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The (node, output_nr) a gradient for `tensor` flows into (its AccumulateGrad for a leaf)."""
    # graph.py is the bottom of autograd (Node, Edge, AccumulateGrad) and _meta stands on it;
    # this function of torch.autograd.graph's API reads a tensor's edge, which _meta owns
    from ._meta import gradient_edge

    e = gradient_edge(tensor)
    if e is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(e[0], e[1])


def increment_version(tensor: Any) -> None:
    """Bumps the version counter, as an in-place operation would."""
    tensor._impl.bump_version()
