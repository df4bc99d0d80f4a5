"""The Engine: runs the backward graph in dependency order.

PyTorch's algorithm, without recursion (a 100k-node chain is a 100k-iteration loop):

1. From a ``GraphRoot`` node whose edges are the roots, walk the graph once and count,
   for every node, how many edges point at it (its *dependencies*).
2. If only some inputs are wanted (``grad(outputs, inputs)``, ``backward(inputs=...)``)
   mark the nodes that lead to them; the others are not run.
3. A priority queue holds the nodes whose dependencies are all satisfied, the most
   recently created first (highest sequence number; AccumulateGrad nodes first of all).
   Running a node: tensor pre-hooks, captures, retains-grad hooks, node pre-hooks,
   ``apply``, post-hooks, then each returned gradient is checked against the
   receiving input's metadata (summed back to its shape when it was broadcast, cast
   to its dtype) and added into that node's input buffer -- gradients of several
   paths meeting at one input are summed there. The receiver's count drops by one;
   at zero it is ready.
4. Without ``retain_graph``, each node's saved tensors are released after it runs.

Grad mode during the pass is ``create_graph``: with it on, the formulas' operations
are recorded and the gradients are themselves differentiable.

Steps 1, 3 and 4 are one loop, ``_run_graph``. aten runs the same loop in C++
(``ember.aten.extension.run_backward_graph``): the counting, the buffers, the queue and the
routing of every gradient happen there, and it calls back into Python for what a node does
(``apply``, ``release_variables``) and for this module's helpers of the rarer cases (tensor
pre-hooks, hooks, anomaly mode, a gradient to sum / cast / check, the targets of step 2).
``_run_graph`` stays the reference: ``EMBER_PYTHON_ENGINE=1`` runs it instead.
"""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Sequence
from typing import Any

from ember.aten.extension import SparseTensor, backend_device_type, run_backward_graph, trace_backward_node
from ember.aten.extension import meta_matches as _meta_matches
from ember.aten.extension import trace_state as _trace_state

from . import anomaly_mode
from ._formulas import sum_to
from .grad_mode import _set_grad_enabled, _state
from .graph import _BACKEND_BITS, AccumulateGrad, Node

# EMBER_PYTHON_ENGINE=1: every pass runs _run_graph, the Python loop, instead of aten's C++ one
PYTHON_LOOP = os.environ.get("EMBER_PYTHON_ENGINE", "0") == "1"


class GraphRoot(Node):
    """Virtual first node: its outputs are the root gradients."""

    __slots__ = ("grads",)

    def __init__(self, edges: Sequence[tuple[Node, int]], grads: list[Any]) -> None:
        Node.__init__(self)
        self.next_edges = tuple(edges)
        self.grads = grads
        self._seq = 1 << 63

    def apply(self, grads: list[Any]) -> list[Any]:
        return self.grads


class Target:
    """An input of grad() / backward(inputs=): where its gradient arrives and what to do with it."""

    __slots__ = ("index", "input_nr", "node", "tensor")

    def __init__(self, index: int, node: Node, input_nr: int, tensor: Any) -> None:
        self.index = index
        self.node = node
        self.input_nr = input_nr
        self.tensor = tensor


def _count_dependencies(root: Node) -> dict[Node, int]:
    deps: dict[Node, int] = {}
    stack = [root]
    while stack:
        fn = stack.pop()
        for e in fn.next_edges:
            if e is not None:
                nxt = e[0]
                c = deps.get(nxt)
                if c is None:
                    deps[nxt] = 1
                    stack.append(nxt)
                else:
                    deps[nxt] = c + 1
    return deps


def _useful_nodes(root: Node, deps: dict[Node, int], wanted: set[Node]) -> set[Node]:
    """Nodes that lead to a wanted node (or are one): the only nodes the pass visits."""
    # a topological order (Kahn, on a copy of the counts), then children before parents
    remaining = dict(deps)
    order = [root]
    i = 0
    while i < len(order):
        fn = order[i]
        i += 1
        for e in fn.next_edges:
            if e is not None:
                nxt = e[0]
                c = remaining[nxt] - 1
                remaining[nxt] = c
                if c == 0:
                    order.append(nxt)
    useful: set[Node] = set()
    for fn in reversed(order):
        if fn in wanted:
            useful.add(fn)
            continue
        for e in fn.next_edges:
            if e is not None and e[0] in useful:
                useful.add(fn)
                break
    return useful


class _Capture:
    """grad() / backward(inputs=): what the pass does at a node that receives a target's gradient.
    Called with the node's gradients (after its tensor pre-hooks); True when the node still runs."""

    __slots__ = ("accumulate", "by_node", "captured", "runs_anyway", "useful")

    def __init__(self, targets: list[Target], root: Node, accumulate: bool) -> None:
        self.by_node: dict[Node, list[Target]] = {}
        self.runs_anyway: set[Node] = set()  # targets that still run (leaves under backward(inputs=))
        for t in targets:
            self.by_node.setdefault(t.node, []).append(t)
            if accumulate and t.node.__class__ is AccumulateGrad:
                self.runs_anyway.add(t.node)
        self.useful = _useful_nodes(root, _count_dependencies(root), set(self.by_node))
        self.captured: list[Any] = [None] * len(targets)
        self.accumulate = accumulate

    def __call__(self, fn: Node, grads: list[Any]) -> bool:
        for t in self.by_node[fn]:
            g = grads[t.input_nr]
            if self.accumulate:
                if fn.__class__ is not AccumulateGrad and g is not None:
                    _accumulate_non_leaf(t.tensor, g)
            else:
                self.captured[t.index] = g
        # a captured node runs only if it is a leaf of backward(inputs=) or some other target lies beyond it
        return fn in self.runs_anyway or any(e is not None and e[0] in self.useful for e in fn.next_edges)


def execute(
    root_edges: Sequence[tuple[Node, int]],
    root_grads: list[Any],
    keep_graph: bool,
    create_graph: bool,
    targets: list[Target] | None = None,
    accumulate: bool = True,
) -> list[Any] | None:
    """Runs backward from `root_edges` with `root_grads`.

    targets=None: every reachable node runs (leaves accumulate into .grad).
    targets with accumulate=False (grad()): returns the gradient arriving at each target.
    targets with accumulate=True (backward(inputs=)): only the targets' .grad are written.
    """
    root = GraphRoot(root_edges, root_grads)
    capture = _Capture(targets, root, accumulate) if targets is not None else None
    useful = capture.useful if capture is not None else None
    captures = capture.by_node if capture is not None else None
    prev_mode = _state.enabled
    _set_grad_enabled(create_graph)
    # anomaly mode and trace_dispatch() are read once per pass (as PyTorch's engine reads anomaly
    # mode): without them a node with one gradient and no hooks runs inline
    plain = not anomaly_mode._anomaly.enabled and not _trace_state.sinks
    try:
        if PYTHON_LOOP:
            _run_graph(root, root_grads, keep_graph, plain, useful, captures, capture)
        else:
            run_backward_graph(root, root_grads, keep_graph, plain, useful, captures, capture, _HELPERS)
    finally:
        _set_grad_enabled(prev_mode)
    return capture.captured if capture is not None else None


def _run_graph(
    root: Node,
    root_grads: list[Any],
    keep_graph: bool,
    plain: bool,
    useful: set[Node] | None,
    captures: dict[Node, list[Target]] | None,
    capture: _Capture | None,
) -> None:
    """The pass's loop: steps 1 and 3-4 of the module's docstring. aten's C++ run_backward_graph is
    this function step for step (csrc/python/autograd_engine.cpp); this is the reference
    (EMBER_PYTHON_ENGINE=1 runs it)."""
    deps = _count_dependencies(root)
    buffers: dict[Node, list[Any]] = {}
    ready: list[tuple[int, int, Node]] = []
    order = itertools.count(1).__next__
    _route(root, root_grads, buffers, deps, useful, ready, order)
    while ready:
        fn = heapq.heappop(ready)[2]
        grads = buffers.pop(fn)
        if fn._tensor_pre_hooks is not None or fn.__class__ is AccumulateGrad:
            grads = _call_tensor_pre_hooks(fn, grads)
        if captures is not None and fn in captures:
            assert capture is not None
            if not capture(fn, grads):
                continue
        if (
            plain
            and len(grads) == 1
            and grads[0] is not None
            and fn._retains_grad_hooks is None
            and fn._pre_hooks is None
            and fn._post_hooks is None
        ):
            # the common node (one gradient in, no hooks): what _call_function does, inline
            outputs = fn.apply(grads)
            if not keep_graph:
                fn.release_variables()
        else:
            outputs = _call_function(fn, grads, keep_graph)
        _route(fn, outputs, buffers, deps, useful, ready, order)
        # the buffers alone hold the gradients now: a leaf's first gradient that nothing else
        # holds becomes its .grad uncopied (AccumulateGrad, _accumulate.py)
        outputs = None


def _route(
    fn: Node,
    outputs: Any,
    buffers: dict[Node, list[Any]],
    deps: dict[Node, int],
    useful: set[Node] | None,
    ready: list[tuple[int, int, Node]],
    order: Any,
) -> None:
    """Each of fn's gradients into the input buffer of the node its edge points at (summed with
    what is there; checked against the input's metadata first); a node whose last edge arrived is
    ready, the most recently created first."""
    edges = fn.next_edges
    if len(outputs) != len(edges):
        raise RuntimeError(
            f"Function {fn.name()} returned an incorrect number of gradients (expected {len(edges)}, "
            f"got {len(outputs)})"
        )
    for i, e in enumerate(edges):
        if e is None:
            continue
        nxt, nr = e
        if useful is not None and nxt not in useful:
            continue
        g = outputs[i]
        buf = buffers.get(nxt)
        if buf is None:
            buf = buffers[nxt] = [None] * len(nxt._input_meta)
        if g is not None:
            meta = nxt._input_meta[nr]
            # the common case in one C++ call; _validate sums / casts / raises otherwise
            if meta is not None and (g.__class__ is SparseTensor or not _meta_matches(g, meta)):
                g = _validate(fn, i, g, meta)
            old = buf[nr]
            buf[nr] = g if old is None else old + g
        c = deps[nxt] - 1
        deps[nxt] = c
        if c == 0:
            heapq.heappush(ready, (-nxt._seq, order(), nxt))


def _call_tensor_pre_hooks(fn: Node, grads: list[Any]) -> list[Any]:
    if fn.__class__ is AccumulateGrad:
        m = fn.variable._meta  # type: ignore[attr-defined]
        hooks = m.hooks if m is not None else None
        if hooks and grads[0] is not None:
            for h in tuple(hooks.values()):
                r = h(grads[0])
                if r is not None:
                    grads[0] = r
        return grads
    assert fn._tensor_pre_hooks is not None
    for nr, hooks in fn._tensor_pre_hooks.items():
        if grads[nr] is None:
            continue
        for h in tuple(hooks.values()):
            r = h(grads[nr])
            if r is not None:
                grads[nr] = r
    return grads


def _call_function(fn: Node, grads: list[Any], keep_graph: bool) -> Any:
    """A node with hooks, several gradients or none, or run under anomaly mode / trace_dispatch()."""
    if fn._retains_grad_hooks is not None:
        for nr, h in fn._retains_grad_hooks.items():
            if grads[nr] is not None:
                h(grads[nr])
    if fn._pre_hooks is not None:
        for h in tuple(fn._pre_hooks.values()):
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
    for g in grads:
        if g is not None:
            break
    else:
        # no gradient reached this node: nothing to compute, nothing to send
        if not keep_graph:
            fn.release_variables()
        return (None,) * len(fn.next_edges)
    if _trace_state.sinks:
        trace_backward_node(fn)  # inside ember.aten.trace_dispatch(): name the Node being run
    anomaly = anomaly_mode._anomaly
    if anomaly.enabled:
        try:
            outputs = fn.apply(grads)
        except Exception:
            anomaly_mode.report_error(fn)
            raise
        if anomaly.check_nan:
            anomaly_mode.check_nan(fn, outputs)
    else:
        outputs = fn.apply(grads)
    if not keep_graph:
        fn.release_variables()
    if fn._post_hooks is not None:
        for h in tuple(fn._post_hooks.values()):
            r = h(tuple(outputs), tuple(grads))
            if r is not None:
                outputs = r
    return outputs


def _validate(fn: Node, i: int, g: Any, meta: Any) -> Any:
    """Sums a broadcast gradient to the input's shape and casts it to its dtype (PyTorch's validate_outputs)."""
    if meta is None:
        return g
    sizes, dtype, backend = meta
    if g.__class__ is SparseTensor:  # a sparse gradient (Embedding(sparse=True)): exactly the input's shape
        if tuple(g.shape) != tuple(sizes):
            raise RuntimeError(
                f"Function {fn.name()} returned an invalid gradient at index {i} - got {list(g.shape)} but expected "
                f"shape {list(sizes)}"
            )
        return g if g.dtype is dtype else g.to(dtype)
    impl = g._impl
    gsizes = impl.sizes
    if gsizes != sizes:
        if not _expandable(sizes, gsizes):
            raise RuntimeError(
                f"Function {fn.name()} returned an invalid gradient at index {i} - got {list(gsizes)} but expected "
                f"shape compatible with {list(sizes)}"
            )

        g = sum_to(g, sizes)
    if impl.dtype is not dtype:
        g = g.to(dtype)
    if (g._keys & _BACKEND_BITS) != backend:
        raise RuntimeError(
            f"Function {fn.name()} returned an invalid gradient at index {i} - expected device "
            f"{backend_device_type(backend)} but got {g.device}"
        )
    return g


def _expandable(shape: Sequence[int], to: Sequence[int]) -> bool:
    """`shape` broadcasts to `to`."""
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to), strict=False):
        if a != b and a != 1:
            return False
    return True


def _accumulate_non_leaf(t: Any, g: Any) -> None:
    """backward(inputs=[non_leaf]): its .grad gets the gradient, like retain_grad()."""
    m = t._meta
    if m.grad is None:
        m.grad = g.clone() if not g.requires_grad or _state.enabled else g.detach().clone()
    else:
        m.grad = m.grad + g


# what aten's C++ loop calls for everything but the routing (run_backward_graph's last argument)
_HELPERS = (AccumulateGrad, SparseTensor, _call_tensor_pre_hooks, _call_function, _validate)
