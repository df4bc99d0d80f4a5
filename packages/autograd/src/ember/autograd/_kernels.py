"""Registering autograd into aten's dispatcher.

``install()`` (run once, by the ``ember.aten.plugins`` entry point) does:

1. reads ``derivatives.yaml`` and checks each entry's schema against the operator
   aten registered under that name;
2. loads the Node classes and kernels generated from it (``_codegen``), the module
   ``ember.autograd._generated`` built with the wheel (or, if aten's operators changed
   since, generated again in memory);
3. registers, for the Autograd alias key (AutogradCPU / AutogradCUDA / AutogradOther):
   the generated kernel of every op with an entry and of its in-place variants; a
   kernel refusing inputs that require grad for every ``.out`` variant; and one
   fallback for every other operator: it runs the op below Autograd and, if an input
   required grad and a floating-point result came out, raises "the derivative for
   'op' is not implemented". CompositeImplicitAutograd operators need nothing: the
   dispatcher runs them at the Autograd key, and the ops they call record the graph;
4. (``_plugin.load``) installs the hooks aten's Tensor methods call (Tensor.backward,
   register_hook, ...: ``ember.aten.extension.set_autograd_hook``).
"""

from __future__ import annotations

import importlib
import importlib.resources
import linecache
import math
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ember.aten as ea
from ember.aten import extension as ext
from ember.aten.extension import (
    AutogradMeta,
    FunctionSchema,
    Tensor,
    call_below_autograd,
    gradient_edge_function,
    save_input_function,
)
from ember.aten.extension import entries as ops
from ember.aten.extension import set_history_1 as _c_set_history_1
from ember.c10py import DispatchKey

from . import _codegen, _formulas, _formulas_linalg, _formulas_nn, _formulas_nnops, _formulas_special, _meta
from .anomaly_mode import _anomaly, record_trace
from .graph import _ACCUMULATE_SEQ, _RELEASED, AccumulateGrad, Node, _next_seq

_NOT_AUTOGRAD = ext.ALL_KEYS & ~ext.AUTOGRAD_FUNCTIONALITY
_AUTOGRAD_KEYS = (DispatchKey.AutogradCPU, DispatchKey.AutogradCUDA, DispatchKey.AutogradOther)
AUTOGRAD_BIT = ext.AUTOGRAD_KEY

# entries whose op aten does not define, or defines with another schema (tests assert these are empty)
SKIPPED: list[str] = []


# ---------------------------------------------------------------------------
# runtime helpers of the generated kernels
# ---------------------------------------------------------------------------


# Runs the op below Autograd, with the Autograd keys excluded on this thread: _plain(redispatch, ks, args).
_plain = call_below_autograd


# _meta.gradient_edge and _meta.save in aten's C++ (but for views, and sparse tensors: these two)
_edge = gradient_edge_function(AccumulateGrad, _ACCUMULATE_SEQ, _meta.gradient_edge)
_save = save_input_function(_meta.save)


def _any_edge(edges: Any) -> bool:
    for e in edges:
        if e is not None:
            return True
    return False


def _set_history_list(rs: Any, node: Node) -> None:
    meta: list[Any] = []
    for i, r in enumerate(rs):
        if r._impl.dtype.is_floating_point:
            _meta.set_history(r, node, i)
            meta.append(_meta.input_meta(r))
        else:
            meta.append(None)
    node._input_meta = tuple(meta)


def _set_history_multi(rs: Any, node: Node, differentiable: tuple[bool, ...]) -> None:
    meta: list[Any] = []
    for i, r in enumerate(rs):
        if differentiable[i] and r is not None and r._impl.dtype.is_floating_point:
            _meta.set_history(r, node, i)
            meta.append(_meta.input_meta(r))
        else:
            meta.append(None)
    node._input_meta = tuple(meta)


def _assign_list(out: list[Any], offset: int, n: int, grads: Any, op: str) -> None:
    grads = list(grads)
    if len(grads) != n:
        raise RuntimeError(f"{op}: the derivative formula returned {len(grads)} gradients for a list of {n} tensors")
    out[offset : offset + n] = grads


def _clone(t: Any) -> Any:
    """self before an in-place op overwrites it (recorded, so double backward still reaches self)."""
    return ops._call_clone(t, None)


def _redispatch(qualname: str) -> Any:
    """The generated kernel of `qualname` continues the call below Autograd through this:
    ``redispatch(ks, *args)`` with the Autograd keys excluded on this thread during the call
    (one C++ entry; the same as ``_plain(op.redispatch, ks, args)``)."""
    return ext.redispatcher_below_autograd(ext.find_op(qualname))


# The modules of derivatives.yaml's helpers: _formulas (every name it defines) and, beside it, the
# ones named by each module's __all__ (linear algebra; convolution and pooling; softmax,
# normalization, losses, embedding, dropout; special functions).
FORMULA_MODULES = (_formulas_linalg, _formulas_nn, _formulas_nnops, _formulas_special)


def formula_helpers() -> dict[str, Any]:
    """The names the formulas of derivatives.yaml may call; one name defined by two of the
    modules is an error (no source silently wins)."""
    ns: dict[str, Any] = {k: v for k, v in vars(_formulas).items() if not k.startswith("__")}
    owner = dict.fromkeys(ns, _formulas.__name__)
    for mod in FORMULA_MODULES:
        for name in mod.__all__:
            value = getattr(mod, name)
            if name in ns and ns[name] is not value:
                raise ImportError(f"derivatives.yaml helper {name} is defined by both {owner[name]} and {mod.__name__}")
            ns[name] = value
            owner[name] = mod.__name__
    return ns


def runtime_namespace() -> dict[str, Any]:
    """The globals of ember.autograd._generated: the formulas' helpers and the kernels' runtime helpers."""
    ns: dict[str, Any] = {"math": math, "ea": ea, "inf": math.inf, "nan": math.nan}
    ns.update(formula_helpers())
    ns.update(
        _Node=Node,
        _next_seq=_next_seq,
        _edge=_edge,
        _any_edge=_any_edge,
        _plain=_plain,
        _check_no_requires_grad=_meta.check_no_requires_grad,
        _check_inplace=_meta.check_inplace,
        _check_no_grad_view=_meta.check_no_grad_view,
        _anomaly=_anomaly,
        _record_trace=record_trace,
        _save=_save,
        _save_list=_meta.save_list,
        _save_output=_meta.save_output,
        _unpack=_meta.unpack,
        _clone=_clone,
        _NOT_AUTOGRAD=_NOT_AUTOGRAD,
        _rebase_history=_meta.rebase_history,
        _set_history_1=_c_set_history_1,  # (r, node, _AutogradMeta, _AUTOGRAD_BIT): aten's C++ helper
        _AutogradMeta=AutogradMeta,
        _AUTOGRAD_BIT=AUTOGRAD_BIT,
        _set_history_list=_set_history_list,
        _set_history_multi=_set_history_multi,
        _mark_view=_meta.mark_view,
        _assign_list=_assign_list,
        _RELEASED=_RELEASED,
        _redispatch=_redispatch,
    )
    return ns


# ---------------------------------------------------------------------------
# kernels that are not generated
# ---------------------------------------------------------------------------


def _tensors_in(args: Sequence[Any]) -> Any:
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    yield x


def _any_requires_grad(args: tuple[Any, ...]) -> bool:
    return any(_meta.requires_grad(t) for t in _tensors_in(args))


def _float_results(r: Any) -> bool:
    return any(t._impl.dtype.is_floating_point for t in _tensors_in(r if isinstance(r, (list, tuple)) else (r,)))


def _make_out_kernel(op: Any, schema: FunctionSchema) -> Any:
    out_pos = [i for i, a in enumerate(schema.arguments) if a in schema.out_arguments]
    name = schema.name

    def out_kernel(ks: int, *args: Any) -> Any:
        if _any_requires_grad(args) and any(
            isinstance(args[i], Tensor) and args[i]._impl.dtype.is_floating_point for i in out_pos
        ):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of "
                "the arguments requires grad."
            )
        return _plain(op.redispatch, ks, args)

    out_kernel.__qualname__ = f"out_kernel[{schema.qualname}]"
    return out_kernel


def _make_non_differentiable_kernel(op: Any, schema: FunctionSchema) -> Any:
    """Entries whose outputs are all non-differentiable (detach, factories like zeros_like)."""
    is_view = schema.is_view

    def kernel(ks: int, *args: Any) -> Any:
        r = _plain(op.redispatch, ks, args)
        for t in r if isinstance(r, (list, tuple)) else (r,):
            if isinstance(t, Tensor):
                ext.remove_keys(t, AUTOGRAD_BIT)  # a view copies its input's key set: this one never requires grad
                if is_view:
                    _meta.mark_non_differentiable_view(t)
        return r

    kernel.__qualname__ = f"non_differentiable_kernel[{schema.qualname}]"
    return kernel


def autograd_fallback(op: Any, ks: int, *args: Any) -> Any:
    """Operators without a derivatives.yaml entry: fine unless a gradient would be needed."""
    needs = _any_requires_grad(args)
    if needs and op.name.endswith("_") and _float_results(args[0] if args else None):
        raise NotImplementedError(f"the derivative for '{op.name}' is not implemented.")
    r = _plain(op.redispatch, ks, args)
    if needs and _float_results(r):
        raise NotImplementedError(f"the derivative for '{op.name}' is not implemented.")
    return r


# ---------------------------------------------------------------------------
# install
# ---------------------------------------------------------------------------


_installed = False
NODES: dict[str, type] = {}


def _load_generated(text: str, schemas: dict[str, str], backend_ops: set[str]) -> types.ModuleType:
    """ember.autograd._generated: the module built with the wheel when it was generated for these very
    operators and derivatives.yaml, else the same source generated now, in memory (nothing is written)."""
    want = _codegen.fingerprint(text, schemas, backend_ops)
    name = "ember.autograd._generated"
    try:
        mod = importlib.import_module(name)
        if getattr(mod, "FINGERPRINT", None) == want:
            mod.__dict__.setdefault("SOURCE", Path(mod.__file__ or "").read_text())
            return mod
    except (ImportError, KeyError):
        pass  # not built with this wheel (a source checkout), or generated for other operators
    source = _codegen.generate(text, schemas, backend_ops)
    filename = f"<ember.autograd._generated {want[:12]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show formulas
    mod = types.ModuleType(name, "Backward nodes and kernels generated from derivatives.yaml.")
    mod.__dict__["SOURCE"] = source
    sys.modules[name] = mod
    exec(compile(source, filename, "exec"), mod.__dict__)
    return mod


def install() -> None:
    """Registers every Autograd kernel: the generated ones (ember.autograd._generated), the ``.out``
    and non-differentiable kernels, and the fallback for operators without a derivatives.yaml entry."""
    global _installed
    if _installed:
        return
    _installed = True
    text = importlib.resources.files("ember.autograd").joinpath("derivatives.yaml").read_text()
    ops_by_name = {op.qualname: op for op in ext.all_ops() if op.namespace == "aten"}
    backend = (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd)
    backend_ops = {q for q, op in ops_by_name.items() if any(op.has_kernel_for(k) for k in backend)}
    mod = _load_generated(text, {q: op.schema for q, op in ops_by_name.items()}, backend_ops)
    SKIPPED[:] = mod.SKIPPED
    mod.__dict__["record_as_strided"] = _make_record_as_strided(mod)
    NODES.update(mod.NODES)

    yaml_path = str(importlib.resources.files("ember.autograd").joinpath("derivatives.yaml"))
    entry_lines = _entry_lines(text)
    for q, kind in mod.PLAN:
        op = ops_by_name[q]
        if kind == "generated":
            k = mod.KERNELS[q]
            # the dispatch trace shows the formula's entry in derivatives.yaml as the kernel's source
            src = (yaml_path, entry_lines[q]) if q in entry_lines else None
            _register(op, k, f"ember.autograd._generated:{k.__name__}", src)
        else:
            s = FunctionSchema.parse(op.schema)
            fn = _make_out_kernel(op, s) if kind == "out" else _make_non_differentiable_kernel(op, s)
            _register(op, fn, f"ember.autograd._kernels:{fn.__qualname__}")
    for key_ in _AUTOGRAD_KEYS:
        ext.register_fallback(key_, autograd_fallback, name="ember.autograd._kernels:autograd_fallback")


def _register(op: Any, fn: Any, name: str, source: tuple[str, int] | None = None) -> None:
    ext.register_kernel(op, DispatchKey.Autograd, fn, with_keyset=True, name=name, source=source)


def _entry_lines(text: str) -> dict[str, int]:
    """qualname ("add.Tensor") -> line number of its "- name:" entry in derivatives.yaml."""
    lines: dict[str, int] = {}
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("- name:"):
            lines.setdefault(stripped[len("- name:") :].strip().split("(", 1)[0], i)
    return lines


def _make_record_as_strided(mod: Any) -> Any:
    kernel = mod.KERNELS.get("as_strided")
    backend_only = ~ext.AUTOGRAD_FUNCTIONALITY

    def record_as_strided(base: Any, sizes: Any, strides: Any, offset: int) -> Any:
        if kernel is None:
            raise NotImplementedError("derivatives.yaml has no entry for as_strided")
        ks = (base._keys | ext.included_keys()) & backend_only & ext.ALL_KEYS
        return kernel(ks, base, tuple(sizes), tuple(strides), offset)

    return record_as_strided
