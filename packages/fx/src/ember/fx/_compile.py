"""ember.fx.compile: guards, a small cache of captured graphs, and the backends.

A call of a compiled function computes its *guard key*: for every tensor argument its
shape, strides, dtype, device, requires_grad and whether its ``.grad`` is None; every
other argument by value (numbers, strings, None) or identity (other objects); the
grad mode. Each cache entry also checks the same facts of its lifted tensors
(parameters, state). A hit runs the entry's program. A miss:

1. the first call with a new key runs eagerly (a warm-up: optimizers create their
   state on the first step, and state created inside a captured run would be a node
   of the graph instead of an input of it);
2. the next call with that key is captured (running eagerly once more, recording)
   and compiled with the backend; later calls replay it.

At most ``recompile_limit`` (8) entries per function: past it, a warning, and the
function runs eagerly for keys it has not seen (as torch._dynamo's recompile_limit).

A graph whose outputs require grad (a forward under grad mode, whose caller will call
backward) runs by the Interpreter -- autograd needs the dispatcher; the backends are
for graphs that end in values without history: inference, and whole training steps
(forward + backward + optimizer) captured together.
"""

from __future__ import annotations

import functools
import time
import warnings
from typing import Any

from ember.aten import Tensor
from ember.autograd import is_grad_enabled
from ember.c10py import DispatchKey, DispatchKeySet
from ember.nn import Module

from . import _fused
from ._capture import capture_graph
from ._replay import ReplayProgram
from .graph import Graph, unflatten
from .interpreter import GraphModule, Interpreter

BACKENDS = ("fused", "replay", "interpreter")
RECOMPILE_LIMIT = 8


def _grad_enabled() -> bool:
    return bool(is_grad_enabled())


# A CPU tensor's dispatch key bits say its device (CPU has no index): its ``device`` (a new
# Python object per read, the guard's most expensive attribute) is read only for other devices.
_CPU_BIT = DispatchKeySet(DispatchKey.CPU).raw


def _tensor_key(t: Any) -> tuple[Any, ...]:
    impl = t._impl
    rg = t.requires_grad
    kb = impl._key_bits
    return (
        impl.sizes,
        impl.strides,
        impl.dtype,
        kb,
        None if kb & _CPU_BIT else impl.device,
        rg,
        rg and t.is_leaf and t.grad is None,
    )


def _key(x: Any) -> Any:
    if isinstance(x, Tensor):
        return _tensor_key(x)
    if type(x) is tuple and all(type(v) is Tensor for v in x):  # the common call: tensors only
        return tuple([_tensor_key(v) for v in x])
    if x is None or isinstance(x, (bool, int, float, str)):
        return (type(x), x)
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_key(v) for v in x))
    if isinstance(x, dict):
        return (dict, tuple((k, _key(v)) for k, v in x.items()))
    return ("id", id(x))


def _flat_tensors(x: Any, out: list[Any]) -> None:
    if isinstance(x, Tensor):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _flat_tensors(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _flat_tensors(v, out)


class CompiledEntry:
    def __init__(self, gm: GraphModule, backend: str) -> None:
        self.gm = gm
        g = gm.graph
        self.lifted_keys = [(_tensor_key(t) if t is not None else None) for t in gm.lifted]
        self.lifted_objs = [t for t in gm.lifted if t is not None]
        # the common case of the lifted guard: each lifted tensor still has its TensorImpl (so its
        # dtype and device), its sizes and strides, requires_grad and whether its .grad is None
        self._lifted_fast = [
            (t, t._impl, k[0], k[1], k[5], k[6])
            for t, k in zip(gm.lifted, self.lifted_keys, strict=True)
            if t is not None and k is not None
        ]
        self.has_grad_lifts = any(t is None for t in gm.lifted)
        # outputs with history that backward has not consumed yet: the caller will differentiate
        # them, so they must come from the dispatcher with autograd (a step that ran backward
        # itself has grad effects, and its loss is returned as a value)
        self.needs_autograd = (
            _grad_enabled()
            and not g.grad_effects
            and any(v.meta.requires_grad for v in g.output_values if hasattr(v, "meta"))
        )
        self.backend = "interpreter" if self.needs_autograd else backend
        self.plan: list[Any] = list(g.nodes)
        self.cpp_source: str | None = None
        self.program: ReplayProgram | None = None
        t0 = time.perf_counter()
        if self.backend == "fused":
            self.plan, self.cpp_source = _fused.build(g, _fused.fuse(g))
        if self.backend in ("fused", "replay"):
            self.program = ReplayProgram(g, self.plan)
        self.compile_seconds = time.perf_counter() - t0

    def lifted_match(self) -> bool:
        for t, impl, sizes, strides, rg, no_grad in self._lifted_fast:
            i = t._impl
            if i is not impl or i.sizes != sizes or i.strides != strides or t.requires_grad != rg:
                return self._lifted_match_slow()
            if rg and (t.is_leaf and t.grad is None) != no_grad:
                return False
        return True

    def _lifted_match_slow(self) -> bool:
        for t, k in zip(self.gm.lifted, self.lifted_keys, strict=True):
            if t is not None and _tensor_key(t) != k:
                return False
        return True

    def run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.program is None:
            return Interpreter(self.gm).run(*args, **kwargs)
        inputs: list[Any] = []
        if kwargs:
            _flat_tensors((args, kwargs), inputs)
        else:
            for a in args:
                if type(a) is not Tensor:
                    inputs = []
                    _flat_tensors(args, inputs)
                    break
                inputs.append(a)
        if self.has_grad_lifts:
            lifted = self.gm.placeholder_tensors(inputs)[len(inputs) :]
        else:
            lifted = self.lifted_objs
        flat = self.program(inputs, lifted)
        g: Graph = self.gm.graph
        return unflatten(g.output_spec, iter(flat))


class CompiledFunction:
    """What ``ember.fx.compile(fn)`` returns: call it like ``fn``."""

    def __init__(self, fn: Any, backend: str, recompile_limit: int, module: Any = None) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"ember.fx.compile: unknown backend {backend!r} (expected one of {', '.join(BACKENDS)})")
        self.fn = fn
        self.backend = backend
        self.recompile_limit = recompile_limit
        self.entries: dict[Any, list[CompiledEntry]] = {}
        self.warmed: set[Any] = set()
        self.captures = 0
        self.last_capture_seconds = 0.0
        self._warned = False
        # a Module's train/eval flags change what forward does (dropout, batch norm)
        self._modules = list(module.modules()) if module is not None else None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key: Any = (_key(args), _key(kwargs) if kwargs else None, _grad_enabled())
        if self._modules is not None:
            key = (key, tuple(m.training for m in self._modules))
        for entry in self.entries.get(key, ()):
            if entry.lifted_match():
                return entry.run(args, kwargs)
        if self.captures >= self.recompile_limit:
            if not self._warned:
                warnings.warn(
                    f"ember.fx.compile: {getattr(self.fn, '__qualname__', self.fn)} was captured "
                    f"{self.captures} times (recompile_limit={self.recompile_limit}); new input "
                    "signatures now run eagerly",
                    RuntimeWarning,
                    stacklevel=2,
                )
                self._warned = True
            return self.fn(*args, **kwargs)
        if key not in self.warmed:
            self.warmed.add(key)
            return self.fn(*args, **kwargs)
        t0 = time.perf_counter()
        graph, result, lifted = capture_graph(self.fn, args, kwargs)
        entry = CompiledEntry(GraphModule(graph, lifted), self.backend)
        self.last_capture_seconds = time.perf_counter() - t0
        self.entries.setdefault(key, []).append(entry)
        self.captures += 1
        return result

    # ---- introspection ----
    def graphs(self) -> list[GraphModule]:
        return [e.gm for es in self.entries.values() for e in es]

    def entries_list(self) -> list[CompiledEntry]:
        return [e for es in self.entries.values() for e in es]


def compile(fn_or_module: Any, *, backend: str = "fused", recompile_limit: int = RECOMPILE_LIMIT) -> Any:
    """Compile a function, or an ``ember.nn.Module`` in place (its ``forward``), with `backend`.

    backend: "fused" (default: pointwise chains become generated C++), "replay" (the graph's
    kernels back to back, no dispatch), or "interpreter" (the captured graph through the
    dispatcher; for debugging).
    """
    if isinstance(fn_or_module, Module):
        module = fn_or_module
        compiled = CompiledFunction(module.forward, backend, recompile_limit, module)
        object.__setattr__(module, "forward", compiled)
        return module
    if not callable(fn_or_module):
        raise TypeError(
            f"ember.fx.compile: expected a function or an ember.nn.Module, got {type(fn_or_module).__name__}"
        )
    return CompiledFunction(fn_or_module, backend, recompile_limit)
