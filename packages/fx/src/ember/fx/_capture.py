"""Capture: run a function once, eagerly, and record every aten operator it calls.

Capture is a dispatcher mode, built only from aten's public dispatch API:

- while ``capture`` runs, the thread-local *include* set holds the ``Python`` key, so
  every operator call on this thread (factories too) reaches :func:`_capture_fallback`,
  registered as the Python key's fallback (``register_fallback``). Python sits above the
  Autograd keys, so the call is recorded exactly as the user made it -- ``linear``, not
  the ``mm`` it decomposes into -- and a custom ``ember.aten.library`` operator is one
  node whatever its kernel does. One exception: a CompositeImplicitAutograd op called
  with autograd recording (an input requires grad, grad mode on) is replaced by its
  parts, because autograd saves the parts' tensors for backward and the graph must
  produce them (``cross_entropy`` becomes ``log_softmax`` + ``nll_loss_forward``);
- the fallback converts the arguments to graph Values, then redispatches below itself
  (``op.redispatch(keyset, ...)``) with the Python key *excluded*, so the operators the
  kernels call in turn (a composite's parts, an autograd kernel's work) run unrecorded:
  only the top-level calls are the program;
- autograd runs for real under it: ``loss.backward()`` makes the engine call the
  backward formulas, each a top-level call again, so the backward ops appear as nodes;
  ``optimizer.step()``'s in-place updates under ``no_grad`` likewise.

Tensors are identified by their TensorImpl (an autograd SavedVariable hands a formula a
new Python Tensor over the same impl). A tensor an op reads that no node produced and
that is not an argument is *lifted*: parameters, buffers, optimizer state, a ``.grad``
that existed before. Lifted tensors are bound by identity (their current contents are
read on every run), except an existing ``.grad``, bound as "the .grad of that
placeholder" because ``backward`` replaces it.

Data-dependent Python (``.item()``, ``bool(t)``, ``float(t)``, ``.tolist()``,
``.numpy()``, printing a tensor) cannot be a graph: capture raises
:class:`DataDependentError` naming the line that did it. There are no graph breaks.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import traceback
from typing import Any

from ember.aten import Tensor
from ember.aten import extension as _dispatch
from ember.c10py import DispatchKey, DispatchKeySet

from .graph import Graph, Node, TensorMeta, Value, flatten

PYTHON_KEYS = DispatchKeySet(DispatchKey.Python).raw


class DataDependentError(RuntimeError):
    """The captured function asked for a tensor's value in Python (``.item()``, ``bool(t)``, ...)."""


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _impl_key(t: Any) -> int:
    return id(t._impl)


class _Capture:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.values: dict[int, Value] = {}  # id(TensorImpl) -> Value
        self.tensors: dict[Value, Any] = {}  # placeholder Value -> the tensor object
        self.keep: list[Any] = []  # keeps every seen impl alive, so ids are not reused
        self.grad_at_lift: dict[Value, Any] = {}
        self.depth = 0
        self.error: DataDependentError | None = None

    # ---- values ----
    def add_placeholder(self, t: Any, name: str, kind: str, source: tuple[str, Any]) -> Value:
        v = Value(name, TensorMeta.of(t), kind)
        v.source = source
        v.storage = t._impl.storage.data_ptr
        (self.graph.inputs if kind == "input" else self.graph.lifted).append(v)
        self.values[_impl_key(t)] = v
        self.tensors[v] = t
        self.keep.append(t._impl)
        if t.requires_grad and t.is_leaf:
            self.grad_at_lift[v] = t.grad
        return v

    def lift(self, t: Any) -> Value:
        k = _impl_key(t)
        for owner, obj in self.tensors.items():
            if obj.requires_grad and obj.is_leaf and owner.source and owner.source[0] != "grad":
                g = obj.grad
                if g is not None and _impl_key(g) == k:
                    return self.add_placeholder(t, f"{owner.name}_grad", "lifted", ("grad", owner))
        return self.add_placeholder(t, self.graph.fresh_name("p"), "lifted", ("tensor", t))

    def value(self, t: Any) -> Value:
        v = self.values.get(_impl_key(t))
        return v if v is not None else self.lift(t)

    def arg(self, a: Any) -> Any:
        if _is_tensor(a):
            return self.value(a)
        if isinstance(a, (list, tuple)) and any(_is_tensor(x) for x in a):
            return [self.value(x) if _is_tensor(x) else x for x in a]
        return a

    # ---- nodes ----
    def record(self, op: Any, gargs: tuple[Any, ...], result: Any) -> None:
        g = self.graph
        node = Node(op, gargs, [], "none", len(g.nodes))
        schema = node.schema
        if result is None or (isinstance(result, tuple) and not result and not schema.returns):
            rets: list[Any] = []
            node.returns = "none"
        elif _is_tensor(result):
            rets = [result]
            node.returns = "one"
        elif isinstance(result, (list, tuple)) and all(_is_tensor(r) or r is None for r in result):
            rets = list(result)
            node.returns = "list" if len(schema.returns) == 1 and schema.returns[0].type.is_list else "tuple"
        else:
            raise self.fail(f"{op.full_name} returns a Python {type(result).__name__}, a value read from tensor data")
        view_src = None
        if schema.is_view and schema.view_source:
            names = [a.name for a in schema.arguments]
            src = gargs[names.index(schema.view_source)]
            view_src = src if isinstance(src, Value) else None
        for r in rets:
            if r is None:  # an undefined tensor (a gradient output_mask did not ask for)
                node.outputs.append(None)
                continue
            k = _impl_key(r)
            v = self.values.get(k)
            if v is None:
                v = Value(g.fresh_name("t"), TensorMeta.of(r), "node", node)
                v.view_of = view_src
                v.storage = r._impl.storage.data_ptr
                self.values[k] = v
                self.keep.append(r._impl)
            node.outputs.append(v)
        g.nodes.append(node)

    def fail(self, what: str) -> DataDependentError:
        err = DataDependentError(
            f"ember.fx.capture: {what} -- data-dependent Python control flow cannot be captured "
            f"into a graph ({_user_frame()}). Keep the decision in tensor ops (ember.aten.where, "
            "masking) or move it out of the captured function."
        )
        if self.error is None:
            self.error = err
        return err


# ember's installed namespace folder (site-packages/ember): frames below it are ember's own
_EMBER_DIRS: tuple[str, ...] = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(f)))
    for f in [getattr(sys.modules["ember.aten"], "__file__", None)]
    if f is not None
)


def _user_frame() -> str:
    """The innermost frame outside ember's installed packages (the user's line), and the
    innermost ember frame below it when the value was read inside ember (an optimizer)."""
    stack = traceback.extract_stack()[:-3]
    fx_dir = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in stack if not os.path.abspath(f.filename).startswith(fx_dir)]
    user = [f for f in frames if not os.path.abspath(f.filename).startswith(_EMBER_DIRS)]
    parts = []
    if user:
        f = user[-1]
        parts.append(f"at {f.filename}:{f.lineno} in {f.name}: `{(f.line or '').strip()}`")
        inner = frames[frames.index(f) + 1 :] if f in frames else []
        if inner:
            e = inner[-1]
            parts.append(f"inside {os.path.basename(e.filename)}:{e.lineno} in {e.name}")
            if f"{os.sep}optim{os.sep}" in e.filename:
                parts.append("an optimizer's step count read in Python: use fused=True (one fused op) instead")
    return "; ".join(parts) or "at an unknown line"


class _State(threading.local):
    active: _Capture | None = None


_state = _State()


_decomposes: dict[tuple[Any, int], bool] = {}


def _runs_composite_under_autograd(op: Any, ks: int) -> bool:
    """The call reaches an Autograd key whose kernel is the op's CompositeImplicitAutograd one:
    autograd then records the parts the composite calls and saves *their* tensors for backward
    (cross_entropy's log_softmax), so the parts must be the graph's nodes, not the composite."""
    k = (op, ks)
    hit = _decomposes.get(k)
    if hit is None:
        try:
            key, kernel, _ = op.lookup(ks)
        except (RuntimeError, NotImplementedError):
            key, kernel = None, None
        composite = op.kernels().get(DispatchKey.CompositeImplicitAutograd)
        hit = _decomposes[k] = kernel is not None and kernel is composite and key is not None and "Autograd" in key.name
    return hit


def _capture_fallback(op: Any, ks: int, *args: Any) -> Any:
    cap = _state.active
    if cap is None or cap.depth:
        return op.redispatch(ks, *args)
    if ks & _dispatch.AUTOGRAD_FUNCTIONALITY and _runs_composite_under_autograd(op, ks):
        return op.redispatch(ks, *args)  # its parts come back through this fallback
    gargs = tuple(cap.arg(a) for a in args)
    cap.depth += 1
    try:
        with _dispatch.ExcludeKeys(PYTHON_KEYS):
            result = op.redispatch(ks, *args)
    finally:
        cap.depth -= 1
    cap.record(op, gargs, result)
    return result


# Tensor methods that hand a tensor's data to Python; __bool__/__float__/__int__/__index__/
# __format__ go through item(), __array__ through numpy().
_VALUE_READERS = ("item", "tolist", "numpy")


def _guarded(name: str, original: Any) -> Any:
    def reader(self: Any, *args: Any, **kwargs: Any) -> Any:
        cap = _state.active
        if cap is not None and cap.depth == 0:
            raise cap.fail(f"Tensor.{name}() reads the value of {_describe(cap, self)}")
        return original(self, *args, **kwargs)

    reader.__name__ = name
    reader.__qualname__ = f"Tensor.{name}"
    return reader


def _describe(cap: _Capture, t: Any) -> str:
    v = cap.values.get(_impl_key(t))
    return f"%{v.name} ({v.meta})" if v is not None else f"a tensor {TensorMeta.of(t)}"


class capturing:
    """Context manager: record the thread's operator calls into `graph`."""

    def __init__(self, graph: Graph) -> None:
        self.cap = _Capture(graph)
        self._saved: dict[str, Any] = {}
        self._prev_include = 0

    def __enter__(self) -> _Capture:
        if _state.active is not None:
            raise RuntimeError("ember.fx.capture: a capture is already running on this thread (nesting is unsupported)")
        fb = _dispatch.fallback_for(DispatchKey.Python)
        if fb is None or fb.fn is not _capture_fallback:
            if fb is not None:
                raise RuntimeError(
                    f"ember.fx.capture needs the Python dispatch key, which has the fallback {fb.name} registered"
                )
            _dispatch.register_fallback(
                DispatchKey.Python, _capture_fallback, name="ember.fx._capture:_capture_fallback"
            )
        for name in _VALUE_READERS:
            self._saved[name] = Tensor.__dict__[name]
            setattr(Tensor, name, _guarded(name, self._saved[name]))
        _state.active = self.cap
        self._prev_include = _dispatch.included_keys()
        _dispatch.set_included(self._prev_include | PYTHON_KEYS)
        return self.cap

    def __exit__(self, *exc: object) -> None:
        _dispatch.set_included(self._prev_include)
        _state.active = None
        for name, fn in self._saved.items():
            setattr(Tensor, name, fn)


def _input_names(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], n: int) -> list[str]:
    """x, w for fn(x, w); x_0, x_1 for a list argument x; arg<i> when the signature is unknown."""
    names: list[str] = []
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        for pname, val in bound.arguments.items():
            leaves, _ = flatten(val, _is_tensor)
            if len(leaves) == 1 and _is_tensor(val):
                names.append(pname)
            else:
                names += [f"{pname}_{i}" for i in range(len(leaves))]
    except (TypeError, ValueError):
        pass
    if len(names) != n or len(set(names)) != n or not all(s.isidentifier() for s in names):
        names = [f"arg{i}" for i in range(n)]
    return names


def capture_graph(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Graph, Any, list[Any]]:
    """Runs fn(*args, **kwargs) under capture: (graph, fn's real result, the lifted tensors)."""
    name = getattr(fn, "__name__", "graph")
    graph = Graph(name if name.isidentifier() else "graph")
    leaves, _ = flatten((args, kwargs), _is_tensor)
    names = _input_names(fn, args, kwargs, len(leaves))
    ctx = capturing(graph)
    with ctx as cap:
        for t, nm in zip(leaves, names, strict=True):
            if _impl_key(t) in cap.values:
                raise ValueError(f"ember.fx.capture: the argument {nm} is passed twice (the same tensor)")
            cap.add_placeholder(t, nm, "input", ("input", None))
        result = fn(*args, **kwargs)
        if cap.error is not None:
            raise cap.error
        out_leaves, _ = flatten(result, _is_tensor)
        for t in out_leaves:
            cap.value(t)
    graph.set_output(_map_tensors(result, cap))
    # what backward (or the function) left in each placeholder's .grad
    for v in list(graph.placeholders):
        if v not in cap.grad_at_lift:
            continue
        t = cap.tensors[v]
        g = t.grad
        if g is cap.grad_at_lift[v]:
            continue
        graph.grad_effects.append((v, None if g is None else cap.value(g)))
    lifted = [cap.tensors[v] if v.source and v.source[0] == "tensor" else None for v in graph.lifted]
    return graph, result, lifted


def _map_tensors(x: Any, cap: _Capture) -> Any:
    if _is_tensor(x):
        return cap.value(x)
    if isinstance(x, dict):
        return {k: _map_tensors(v, cap) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_map_tensors(v, cap) for v in x]
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*items)
        return type(x)(items)
    return x
