"""Defining operators and registering kernels from Python (PyTorch's torch.library).

    lib = ember.aten.library.Library("myops", "DEF")
    lib.define("my_add(Tensor x, Tensor y) -> Tensor")
    lib.impl("my_add", lambda x, y: 2 * x + y, "CPU")
    ember.aten.ops.myops.my_add(x, y)

or with the functional forms::

    ember.aten.library.define("myops::my_add", "(Tensor x, Tensor y) -> Tensor")

    @ember.aten.library.impl("myops::my_add", "cpu")
    def my_add_cpu(x, y): ...

Kernels are registered per dispatch key ("CPU", "CUDA", "Autograd",
"CompositeImplicitAutograd", "CompositeExplicitAutograd", "Python", ...); a key
registered to replace aten's own kernel overrides it for as long as the Library
object lives (``lib._destroy()`` restores the previous kernel). ``fallback``
registers one kernel for a key for every operator; it is called as
``fn(op, keyset, *args)`` where ``keyset`` redispatches below the key
(``op.redispatch(keyset, *args)``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ember.c10py import DispatchKey

from . import _C, _dispatch, _schema
from ._dispatch import Kernel, OpOverload, python_source

_KEY_ALIASES = {
    "cpu": "CPU",
    "cuda": "CUDA",
    "default": "CompositeExplicitAutograd",
    "": "CompositeImplicitAutograd",
}

_defined_namespaces: dict[str, weakref.ref[Library]] = {}


def _to_key(key: str | DispatchKey) -> DispatchKey:
    if isinstance(key, DispatchKey):
        return key
    name = _KEY_ALIASES.get(key, key)
    try:
        return getattr(DispatchKey, name)
    except AttributeError:
        raise ValueError(f"unknown dispatch key {key!r}") from None


def _make_call(op: OpOverload, schema: _schema.FunctionSchema) -> Callable[..., Any]:
    """The dispatcher entry of an operator defined at run time (what codegen writes for aten's)."""
    tensor_pos = [i for i, a in enumerate(schema.arguments) if a.type.base == "Tensor" and not a.type.is_list]
    list_pos = [i for i, a in enumerate(schema.arguments) if a.type.is_tensor_list]
    names = [a.name for a in schema.arguments]
    mutated = [names.index(a.name) for a in schema.mutated_arguments]
    aliases = schema.returns_alias_of_input
    returns_mutated = bool(mutated) and bool(aliases) and all(aliases)
    view_src = names.index(schema.view_source) if schema.is_view and schema.view_source else None
    device_pos = next((i for i, a in enumerate(schema.arguments) if a.type.base == "Device"), None)
    tls = _dispatch.tls
    table = op._table

    def call(*args: Any) -> Any:
        ks = 0
        for i in tensor_pos:
            ks |= getattr(args[i], "_keys", 0)
        for i in list_pos:
            ks |= _dispatch.keys_of_list(args[i])
        if not tensor_pos and not list_pos:
            ks = _dispatch.device_keys(args[device_pos] if device_pos is not None else None)
        ks = (ks | tls.include) & tls.exclude_not
        try:
            r = (table.get(ks) or op._slow(ks))(*args)
        except TypeError as e:
            raise op._type_error(e, args) from None
        if returns_mutated:
            for i in mutated:
                _dispatch.bump_version(args[i])
            outs = tuple(args[names.index(a)] for a in aliases)  # type: ignore[arg-type]
            return outs[0] if len(outs) == 1 else outs
        if view_src is not None:
            if isinstance(r, (list, tuple)):
                _dispatch.set_view_base_list(r, args[view_src])
            else:
                _dispatch.set_view_base(r, args[view_src])
        return r

    call.__name__ = f"_call_{schema.name}_{schema.overload}".rstrip("_")
    return call


class Library:
    """A set of definitions / registrations in one namespace (PyTorch's torch.library.Library)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Library kind must be 'DEF', 'IMPL' or 'FRAGMENT', got {kind!r}")
        if not ns.isidentifier():
            raise ValueError(f"invalid namespace {ns!r}")
        if kind == "DEF":
            prev = _defined_namespaces.get(ns)
            if (prev is not None and prev() is not None) or (ns == "aten"):
                raise RuntimeError(
                    f"Only a single Library(..., 'DEF') can be used to register the namespace {ns}; "
                    "use 'FRAGMENT' to add definitions to it or 'IMPL' to register kernels."
                )
            _defined_namespaces[ns] = weakref.ref(self)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list[str] = []
        self._impls: list[tuple[OpOverload, DispatchKey, Kernel | None]] = []
        self._fallbacks: list[tuple[DispatchKey, Kernel | None]] = []

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Declares an operator: ``lib.define("my_add(Tensor x, Tensor y) -> Tensor")``."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on a Library of kind 'IMPL'")
        parsed = _schema.FunctionSchema.parse(schema)
        full = f"{self.ns}::{parsed.qualname}"
        if full in _dispatch._ops:
            raise RuntimeError(f"operator {full} is already defined")
        op = _dispatch.register_schema(parsed.qualname, parsed.text, namespace=self.ns)
        op._call = _make_call(op, parsed)
        self._defined.append(full)
        return parsed.qualname

    def impl(
        self, op_name: str | OpOverload, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = False
    ) -> None:
        """Registers ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        op = _lookup(op_name, self.ns)
        key = _to_key(dispatch_key or self.dispatch_key)
        previous = op._kernels.get(key)
        _dispatch.register_kernel(op, key, fn, with_keyset=with_keyset, source=python_source(fn))
        self._impls.append((op, key, previous))

    def fallback(self, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = True) -> None:
        """One kernel for ``dispatch_key`` of every operator: ``fn(op, keyset, *args)``."""
        key = _to_key(dispatch_key or self.dispatch_key)
        previous = _dispatch.fallback_for(key)
        _dispatch.register_fallback(key, fn)
        self._fallbacks.append((key, previous))

    def _destroy(self) -> None:
        """Undoes every registration of this Library (kernels restored, definitions removed)."""
        for op, key, previous in reversed(self._impls):
            if previous is None:
                op._kernels.pop(key, None)
                op._table.clear()
            else:
                op.register(key, previous)
        for key, previous in reversed(self._fallbacks):
            if previous is None:
                _dispatch.register_fallback(key, None)
            else:
                _dispatch.register_fallback(key, previous.fn, name=previous.name)
        for full in self._defined:
            _dispatch._ops.pop(full, None)
        self._impls.clear()
        self._fallbacks.clear()
        self._defined.clear()
        if _defined_namespaces.get(self.ns, lambda: None)() is self:
            del _defined_namespaces[self.ns]


def _lookup(op_name: str | OpOverload, ns: str) -> OpOverload:
    if isinstance(op_name, OpOverload):
        return op_name
    if "::" not in op_name:
        op_name = f"{ns}::{op_name}"
    ns_part, _, name = op_name.partition("::")
    full = f"{ns_part}::{name}"
    if full in _dispatch._ops:
        return _dispatch._ops[full]
    # a bare name means its default overload
    raise RuntimeError(f"operator {full} is not defined (define it first)")


# ---- functional forms ------------------------------------------------------------------

_keepalive: list[Library] = []


def _fragment(ns: str) -> Library:
    lib = Library(ns, "FRAGMENT")
    _keepalive.append(lib)
    return lib


def define(qualname: str, schema: str, *, lib: Library | None = None, tags: Any = ()) -> OpOverload:
    """``define("myops::my_add", "(Tensor x, Tensor y) -> Tensor")``."""
    ns, _, name = qualname.partition("::")
    if not name:
        raise ValueError(f"define() expects 'namespace::name', got {qualname!r}")
    lib = lib or _fragment(ns)
    qual = lib.define(f"{name}{schema}")
    return _dispatch._ops[f"{ns}::{qual}"]


def impl(
    qualname: str, types: str | list[str], func: Callable[..., Any] | None = None, *, lib: Library | None = None
) -> Any:
    """Registers a kernel for device types / dispatch keys; usable as a decorator."""
    keys = [types] if isinstance(types, str) else list(types)
    ns = qualname.partition("::")[0]

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        target = lib or _fragment(ns)
        for key in keys:
            target.impl(qualname, fn, key)
        return fn

    return register(func) if func is not None else register


# ---- operators from C++ extension packages ------------------------------------------------


def _load_cpp_library(records: list[tuple[Any, ...]]) -> None:
    """Takes the EMBER_LIBRARY / EMBER_LIBRARY_IMPL blocks of a C++ extension (see
    ember/aten/library.h): ("def", ns, schema, None, None, file, line) and
    ("impl", "ns::name", key, kernel name, function, file, line), definitions first."""
    for kind, a, b, kernel_name, fn, file, line in records:
        if kind == "def":
            _fragment(a).define(b)
        elif kind == "impl":
            op = _lookup(a, "")
            _dispatch.register_kernel(op, _to_key(b), fn, name=kernel_name, source=(file, line))
        else:
            raise ValueError(f"_load_cpp_library: unknown record kind {kind!r}")


def cmake_prefix_path() -> str:
    """Add to ``CMAKE_PREFIX_PATH`` for ``find_package(ember_aten CONFIG)`` (the headers,
    libember_aten.so and the CMake package config ship inside the ember.aten package)."""
    import os

    return os.path.dirname(os.path.abspath(_C.__file__))


# ---- derivatives of custom operators -----------------------------------------------------
#
# aten stores the formula; the autograd layer, when it is installed, turns each one into an
# Autograd kernel (it sets `_autograd_installer` when it loads, and installs what was
# registered before). Without ember-autograd the operator still runs, with no graph.

_autograd_formulas: dict[str, tuple[Callable[..., Any], Callable[..., Any] | None]] = {}
_autograd_installer: Callable[[OpOverload, Callable[..., Any], Callable[..., Any] | None], None] | None = None


def register_autograd(
    op: str | OpOverload,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Callable[..., Any] | None = None,
    lib: Library | None = None,
) -> None:
    """The derivative of a custom operator, as ``torch.library.register_autograd``.

    ``setup_context(ctx, inputs, output)`` saves what the backward needs (``ctx.save_for_backward``,
    attributes); ``backward(ctx, *grad_outputs)`` returns one gradient per input (None for
    inputs without one, e.g. non-tensors)::

        def setup_context(ctx, inputs, output): ...
        def backward(ctx, grad): return 2 * grad, grad
        ember.aten.library.register_autograd("myops::my_add", backward, setup_context=setup_context)
    """
    o = _lookup(op, "aten")
    if not callable(backward):
        raise TypeError(f"register_autograd: backward must be callable, got {type(backward).__name__}")
    if setup_context is not None and not callable(setup_context):
        raise TypeError(f"register_autograd: setup_context must be callable, got {type(setup_context).__name__}")
    _autograd_formulas[o.full_name] = (backward, setup_context)
    if _autograd_installer is not None:
        _autograd_installer(o, backward, setup_context)


def set_autograd_installer(
    installer: Callable[[OpOverload, Callable[..., Any], Callable[..., Any] | None], None],
) -> None:
    """Called by ember-autograd when it loads: installs the formulas registered so far and later."""
    global _autograd_installer
    _autograd_installer = installer
    for name, (backward, setup_context) in _autograd_formulas.items():
        installer(_dispatch._ops[name], backward, setup_context)


# ---- ember.aten.ops.<ns>.<name>[.<overload>] ------------------------------------------------


class OpOverloadPacket:
    """All overloads of one operator name; calling it picks the first overload whose schema binds."""

    def __init__(self, ns: str, name: str) -> None:
        self._ns = ns
        self._name = name

    def __repr__(self) -> str:
        return f"<OpOverloadPacket {self._ns}::{self._name}>"

    def overloads(self) -> list[str]:
        prefix = f"{self._ns}::{self._name}"
        return [o.overload or "default" for k, o in _dispatch._ops.items() if k == prefix or k.startswith(prefix + ".")]

    def __getattr__(self, overload: str) -> OpOverload:
        key = f"{self._ns}::{self._name}" if overload == "default" else f"{self._ns}::{self._name}.{overload}"
        op = _dispatch._ops.get(key)
        if op is None:
            raise AttributeError(f"{self._ns}::{self._name} has no overload {overload!r}")
        return op

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        candidates = [getattr(self, o) for o in self.overloads()]
        if not candidates:
            raise RuntimeError(f"operator {self._ns}::{self._name} is not defined")
        for op in candidates:
            try:
                bound = _dispatch._bind_schema(op, args, kwargs)
            except TypeError:
                continue
            return op._call(*bound)  # type: ignore[misc]
        sigs = "; ".join(op.schema for op in candidates)
        raise TypeError(f"{self._ns}::{self._name}: no overload matches the arguments (overloads: {sigs})")


class _OpNamespace:
    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        prefix = f"{self._ns}::{name}"
        if not any(k == prefix or k.startswith(prefix + ".") for k in _dispatch._ops):
            raise AttributeError(f"no operator {prefix}")
        return OpOverloadPacket(self._ns, name)


class _Ops:
    """``ember.aten.ops.aten.add.Tensor``, ``ember.aten.ops.myops.my_add``."""

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _OpNamespace(ns)


ops = _Ops()
