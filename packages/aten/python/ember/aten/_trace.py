"""Dispatch trace: every operator call, the keys it had, the kernel chosen and where it lives.

``with ember.aten.trace_dispatch():`` (or ``EMBER_TRACE_DISPATCH=1`` in the environment)
adds the Tracer key to every call on this thread. Tracer is the highest-priority key, so
the dispatcher sends each call to :func:`_tracer_fallback` first; it prints one line and
redispatches below itself. A kernel that calls other operators (a composite, an autograd
kernel's redispatch target, a backward formula) makes nested calls, printed indented one
level deeper. A with-keyset kernel (autograd) redispatches without passing through the
tracer again, so the line shows that step too (``AutogradCPU -> CPU``)::

    aten::mul.Tensor(Tensor[float32 (3,)], Tensor[float32 (3,)]) keys=[AutogradCPU, CPU]
      AutogradCPU: ember.autograd._generated:mul_Tensor (.../derivatives.yaml)
      -> CPU: mul_out (csrc/native/BinaryOps.cpp:88)

With tracing off nothing of this runs: the key is simply absent from the call's key set,
and the per-key-set dispatch tables are separate, so there is no per-call cost.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from ember.c10py import DispatchKey, DispatchKeySet

from . import _dispatch

TRACER_KEYS = DispatchKeySet(DispatchKey.Tracer).raw


class _State(threading.local):
    def __init__(self) -> None:  # runs once per thread
        self.depth = 0
        # (stream, op-name filter or None) of each active trace_dispatch, innermost last
        self.sinks: list[tuple[IO[str], frozenset[str] | None]] = []


_state = _State()


def _describe(x: Any) -> str:
    if hasattr(x, "_impl"):
        dev = "" if x.device.type == "cpu" else f" {x.device}"
        shape = "(" + ",".join(str(s) for s in x.shape) + ("," if x.dim() == 1 else "") + ")"
        return f"Tensor[{x.dtype._name} {shape}{dev}]"
    if isinstance(x, (list, tuple)):
        if any(hasattr(v, "_impl") for v in x):
            inner = ", ".join(_describe(v) for v in x[:4]) + (", ..." if len(x) > 4 else "")
            return f"[{inner}]"
        return repr(list(x)) if isinstance(x, list) else repr(x)
    if x is None or isinstance(x, (bool, int, float, str)):
        return repr(x)
    if type(x).__name__ in ("dtype", "device", "memory_format"):
        return str(x)
    return type(x).__name__


def _key_names(ks: int) -> str:
    return "[" + ", ".join(k.name for k in DispatchKeySet.from_raw(ks)) + "]"


def _where(kernel: _dispatch.Kernel) -> str:
    if kernel.source is None:
        return ""
    file, line = kernel.source
    return f" ({file}:{line})"


def _kernel_line(op: _dispatch.OpOverload, key: DispatchKey, kernel: _dispatch.Kernel) -> str:
    """ "CPU: add_out (file:line)"; a kernel registered under another key (a composite, a
    fallback) names that key too: "CPU [CompositeImplicitAutograd]: ..."."""
    registered = next((k for k, v in op.kernels().items() if v is kernel), None)
    if registered is None and _dispatch.fallback_for(key) is kernel:
        via = " [fallback]"
    elif registered is not None and registered != key:
        via = f" [{registered.name}]"
    else:
        via = ""
    return f"{key.name}{via}: {kernel.name}{_where(kernel)}"


def _tracer_fallback(op: _dispatch.OpOverload, ks: int, *args: Any) -> Any:
    stream, names = _state.sinks[-1]
    if names is not None and op.name not in names and op.full_name not in names:
        return op.redispatch(ks, *args)
    pad = "  " * _state.depth
    key, kernel, below = op.lookup(ks)
    lines = [f"{pad}{op.full_name}({', '.join(_describe(a) for a in args)}) keys={_key_names(ks)}"]
    lines.append(f"{pad}  {_kernel_line(op, key, kernel)}")
    if kernel.with_keyset and kernel.fn not in _dispatch._fallback_fns and below:
        # an autograd-style kernel: it continues the call at `below` itself
        try:
            key2, kernel2, _ = op.lookup(below)
            lines.append(f"{pad}  -> {_kernel_line(op, key2, kernel2)}")
        except (RuntimeError, NotImplementedError):
            pass
    stream.write("\n".join(lines) + "\n")
    _state.depth += 1
    try:
        return op.redispatch(ks, *args)
    finally:
        _state.depth -= 1


def trace_backward_node(node: Any) -> None:
    """Called by the autograd engine for each Node it executes while tracing is on."""
    if not _state.sinks:
        return
    stream, _ = _state.sinks[-1]
    name = node.name() if callable(getattr(node, "name", None)) else type(node).__name__
    stream.write(f"{'  ' * _state.depth}[backward] {name}\n")


def is_tracing() -> bool:
    return bool(_state.sinks)


@contextmanager
def trace_dispatch(file: IO[str] | None = None, ops: Iterable[str] | None = None) -> Iterator[None]:
    """Print every operator call made on this thread inside the block.

    file: a writable text stream (default ``sys.stderr``); ops: only these operators
    (names like ``"conv2d"`` or ``"aten::conv2d"``), others are called silently.
    """
    names = None if ops is None else frozenset(ops)
    _state.sinks = [*_state.sinks, (file if file is not None else sys.stderr, names)]
    if _dispatch.fallback_for(DispatchKey.Tracer) is None:
        _dispatch.register_fallback(DispatchKey.Tracer, _tracer_fallback, name="ember.aten._trace:_tracer_fallback")
    prev = _dispatch.included_keys()
    _dispatch.set_included(prev | TRACER_KEYS)
    try:
        yield
    finally:
        _dispatch.set_included(prev)
        _state.sinks = _state.sinks[:-1]


def _enable_from_environment() -> None:
    """EMBER_TRACE_DISPATCH=1 traces the main thread from import on (to stderr)."""
    global _env_trace
    if os.environ.get("EMBER_TRACE_DISPATCH", "") not in ("", "0"):
        _env_trace = trace_dispatch()  # kept referenced: a collected generator would end the block
        _env_trace.__enter__()


_env_trace: Any = None
