"""Registering autograd into aten's dispatcher.

``install()`` (run once, by the ``ember.aten.plugins`` entry point) does:

1. reads ``derivatives.yaml`` and checks each entry's schema against the operator
   aten registered under that name;
2. generates the Node classes and kernels (``_codegen``), compiles them once into the
   module ``ember.autograd._generated``;
3. registers, for the Autograd alias key (AutogradCPU / AutogradCUDA / AutogradOther):
   the generated kernel of every op with an entry and of its in-place variants; a
   kernel refusing inputs that require grad for every ``.out`` variant; and one
   fallback for every other operator: it runs the op below Autograd and, if an input
   required grad and a floating-point result came out, raises "the derivative for
   'op' is not implemented". CompositeImplicitAutograd operators need nothing: the
   dispatcher runs them at the Autograd key, and the ops they call record the graph;
4. fills aten's ``_autograd_hooks`` (Tensor.backward, register_hook, ...).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import linecache
import marshal
import math
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ember.aten as ea
from ember.aten import _dispatch
from ember.aten import _generated_ops as ops
from ember.aten._schema import FunctionSchema
from ember.aten._tensor import AutogradMeta, Tensor
from ember.c10py import DispatchKey

from . import _codegen, _formulas, _meta
from .anomaly_mode import _anomaly, record_trace
from .graph import _BACKEND_BITS, _RELEASED, Node, _next_seq

_NOT_AUTOGRAD = _dispatch.ALL_BITS & ~_dispatch.AUTOGRAD_FUNCTIONALITY
_AUTOGRAD_KEYS = (DispatchKey.AutogradCPU, DispatchKey.AutogradCUDA, DispatchKey.AutogradOther)
AUTOGRAD_BIT = _meta.AUTOGRAD_BIT

# entries whose op aten does not define, or defines with another schema (tests assert these are empty)
SKIPPED: list[str] = []


# ---------------------------------------------------------------------------
# runtime helpers of the generated kernels
# ---------------------------------------------------------------------------


def _plain(redispatch: Any, ks: int, args: tuple[Any, ...]) -> Any:
    """Runs the op below Autograd, with the Autograd keys excluded on this thread."""
    tls = _dispatch.tls
    prev = tls.exclude_not
    tls.exclude_not = prev & _NOT_AUTOGRAD
    try:
        return redispatch(ks, *args)
    finally:
        tls.exclude_not = prev


def _any_edge(edges: Any) -> bool:
    for e in edges:
        if e is not None:
            return True
    return False


_FLOATING = frozenset((ea.float16, ea.bfloat16, ea.float32, ea.float64))


def _set_history_1(r: Any, node: Node) -> None:
    impl = r._impl
    dt = impl.dtype
    if dt in _FLOATING:
        m = AutogradMeta()
        m.requires_grad = True
        m.grad_fn = node
        r._meta = m
        keys = r._keys | AUTOGRAD_BIT
        r._keys = keys
        node._input_meta = ((impl.sizes, dt, keys & _BACKEND_BITS),)
    else:
        node._input_meta = (None,)


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


def _runtime_namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"math": math, "ea": ea, "inf": math.inf, "nan": math.nan}
    ns.update({k: v for k, v in vars(_formulas).items() if not k.startswith("__")})
    ns.update(
        _Node=Node,
        _next_seq=_next_seq,
        _edge=_meta.gradient_edge,
        _any_edge=_any_edge,
        _plain=_plain,
        _check_no_requires_grad=_meta.check_no_requires_grad,
        _check_inplace=_meta.check_inplace,
        _check_no_grad_view=_meta.check_no_grad_view,
        _anomaly=_anomaly,
        _record_trace=record_trace,
        _save=_meta.save,
        _save_list=_meta.save_list,
        _save_output=_meta.save_output,
        _unpack=_meta.unpack,
        _clone=_clone,
        _tls=_dispatch.tls,
        _NOT_AUTOGRAD=_NOT_AUTOGRAD,
        _rebase_history=_meta.rebase_history,
        _set_history_1=_set_history_1,
        _set_history_list=_set_history_list,
        _set_history_multi=_set_history_multi,
        _mark_view=_meta.mark_view,
        _assign_list=_assign_list,
        _RELEASED=_RELEASED,
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
                t._keys &= ~AUTOGRAD_BIT  # a view copies its input's key set: this one never requires grad
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


def _same_signature(a: FunctionSchema, b: FunctionSchema) -> bool:
    """Argument names and types equal, ignoring alias annotations and defaults."""
    if len(a.arguments) != len(b.arguments):
        return False
    for x, y in zip(a.arguments, b.arguments, strict=True):
        if x.name != y.name or x.type.base != y.type.base or x.type.is_list != y.type.is_list:
            return False
        if x.type.optional != y.type.optional:
            return False
    return True


def _schema_matches(entry: FunctionSchema, op: FunctionSchema) -> bool:
    return _same_signature(entry, op) and [str(r.type) for r in entry.returns] == [str(r.type) for r in op.returns]


_installed = False
NODES: dict[str, type] = {}
_CACHE_VERSION = "1"


def _plan(text: str, schemas: dict[str, FunctionSchema], backend_ops: set[str]) -> tuple[str, list[Any], list[str]]:
    """Generated source, registration plan [(qualname, "generated" | "out" | "nondiff")], skipped entries."""
    import yaml

    raw = yaml.load(text, Loader=_line_loader())
    entries = _codegen.parse_entries(raw or [])
    skipped: list[str] = []
    live: list[_codegen.Entry] = []
    for e in entries:
        op_schema = schemas.get(e.qualname)
        if op_schema is None:
            skipped.append(f"{e.qualname}: aten has no such operator")
        elif not _schema_matches(e.schema, op_schema):
            skipped.append(f"{e.qualname}: schema differs from aten's {op_schema.text}")
        else:
            live.append(e)
    by_qualname = {e.qualname: e for e in live}
    by_base: dict[str, list[_codegen.Entry]] = {}
    for e in live:
        by_base.setdefault(e.schema.name, []).append(e)
    variants: dict[str, list[tuple[FunctionSchema, str]]] = {}
    plan: list[tuple[str, str]] = []
    for q, s in schemas.items():
        if q not in backend_ops:
            continue  # CompositeImplicitAutograd (or no kernel at all)
        entry = by_qualname.get(q)
        if entry is None and s.is_out:
            plan.append((q, "out"))
            continue
        if entry is None and s.is_inplace:
            entry = next(
                (x for x in by_base.get(s.name[:-1], []) if not x.schema.is_inplace and _same_signature(x.schema, s)),
                None,
            )
        if entry is None:
            continue  # the fallback handles it
        if entry.all_outputs_non_differentiable:
            plan.append((q, "nondiff"))
        else:
            variants.setdefault(entry.qualname, []).append((s, "inplace" if s.is_inplace else "functional"))
            plan.append((q, "generated"))
    return _codegen.gen_module(live, variants), plan, skipped


def _line_loader() -> Any:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class LineLoader(base):  # type: ignore[valid-type, misc]
        pass

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return LineLoader


def _cache_dir() -> Path | None:
    if os.environ.get("EMBER_AUTOGRAD_CACHE", "1") == "0":
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "ember" / "autograd"


def _cache_load(key: str) -> Any:
    d = _cache_dir()
    if d is None:
        return None
    try:
        return marshal.loads((d / f"derivatives-{key}.bin").read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _cache_store(key: str, value: Any) -> None:
    d = _cache_dir()
    if d is None:
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".derivatives-{key}.{os.getpid()}.tmp"
        tmp.write_bytes(marshal.dumps(value))
        os.replace(tmp, d / f"derivatives-{key}.bin")
    except OSError:
        pass  # a read-only home: generate on every import


def install() -> None:
    """Generates (or loads from the cache) the derivative kernels and registers every Autograd kernel.

    The generated source and its code object are cached on disk (``~/.cache/ember/autograd``,
    ``EMBER_AUTOGRAD_CACHE=0`` disables it), keyed by derivatives.yaml, the generator, the
    Python version and aten's operator schemas: a later import only loads and runs it.
    """
    global _installed
    if _installed:
        return
    _installed = True
    text = importlib.resources.files("ember.autograd").joinpath("derivatives.yaml").read_text()
    ops_by_name = {op.qualname: op for op in _dispatch.all_ops() if op.namespace == "aten"}
    backend = (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd)
    backend_ops = {q for q, op in ops_by_name.items() if any(op.has_kernel_for(k) for k in backend)}
    h = hashlib.sha256()
    for part in (_CACHE_VERSION, sys.version, text, Path(_codegen.__file__).read_text(), Path(__file__).read_text()):
        h.update(part.encode())
    for q in sorted(ops_by_name):
        h.update(f"{ops_by_name[q].schema}|{q in backend_ops}\n".encode())
    key = h.hexdigest()[:32]
    filename = f"<ember.autograd._generated {key[:12]}>"
    cached = _cache_load(key)
    if cached is not None:
        source, code, plan, skipped = cached
    else:
        schemas = {q: FunctionSchema.parse(op.schema) for q, op in ops_by_name.items()}
        source, plan, skipped = _plan(text, schemas, backend_ops)
        code = compile(source, filename, "exec")
        _cache_store(key, (source, code, plan, skipped))
    SKIPPED[:] = skipped
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show formulas

    mod = types.ModuleType("ember.autograd._generated", "Backward nodes and kernels generated from derivatives.yaml.")
    mod.__dict__.update(_runtime_namespace())
    for q, op in ops_by_name.items():
        mod.__dict__[f"_rd_{_codegen.mangle(q)}"] = op.redispatch
    mod.__dict__["SOURCE"] = source
    exec(code, mod.__dict__)
    mod.__dict__["record_as_strided"] = _make_record_as_strided(mod)
    sys.modules["ember.autograd._generated"] = mod
    NODES.update(mod.NODES)

    yaml_path = str(importlib.resources.files("ember.autograd").joinpath("derivatives.yaml"))
    entry_lines = _entry_lines(text)
    for q, kind in plan:
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
        _dispatch.register_fallback(key_, autograd_fallback, name="ember.autograd._kernels:autograd_fallback")


def _register(op: Any, fn: Any, name: str, source: tuple[str, int] | None = None) -> None:
    _dispatch.register_kernel(op, DispatchKey.Autograd, fn, with_keyset=True, name=name, source=source)


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
    backend_only = ~(AUTOGRAD_BIT | 0x8)

    def record_as_strided(base: Any, sizes: Any, strides: Any, offset: int) -> Any:
        if kernel is None:
            raise NotImplementedError("derivatives.yaml has no entry for as_strided")
        ks = (base._keys | _dispatch.tls.include) & backend_only & _dispatch.ALL_BITS
        return kernel(ks, base, tuple(sizes), tuple(strides), offset)

    return record_as_strided
