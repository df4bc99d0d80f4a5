"""The dispatcher: a table op x dispatch key -> kernel, and the key set that picks one.

Every operator overload is an :class:`OpOverload`. A call computes its key set --
the union of its tensor arguments' keys, plus the thread-local *included* keys,
minus the thread-local *excluded* keys (``no_grad`` excludes the Autograd keys) --
and runs the kernel of the highest-priority key (c10's DispatchKeySet order:
Tracer > Profiler > Python > Autograd* > CUDA > CPU). The answer for each distinct
key set is cached in ``OpOverload._table`` (a dict from the raw 64-bit set to a
callable), so the steady-state cost of dispatch is one dict lookup.

Resolving a key K for an operator, on a cache miss:
  1. a kernel registered for K itself;
  2. backend keys (CPU, CUDA): a CompositeExplicitAutograd kernel, then a
     CompositeImplicitAutograd one;
  3. autograd keys: a kernel for the Autograd alias, then CompositeImplicitAutograd
     (composite ops get their gradient from the ops they call);
  4. a fallback registered for K for every operator (autograd, tracer, profiler);
  5. otherwise K falls through: its functionality bit is removed and we try again.
Kernels registered ``with_keyset`` (autograd, tracer, ...) receive, as first
argument, the key set to *redispatch* with: the call's set masked to the keys
below K. ``op.redispatch(ks, *args)`` continues the call there.

Kernels always take the schema's arguments positionally. The generated
``_call_<op>`` functions (in ``_generated/_ops.py``) are the fast entry points.
"""

from __future__ import annotations

import collections
import functools
import inspect
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import ember.c10py as _c10
from ember.aten import _C
from ember.c10py import DispatchKey, DispatchKeySet

from ._schema import FunctionSchema
from ._tensor import AutogradMeta

# ---------------------------------------------------------------------------
# key-set constants
# ---------------------------------------------------------------------------

CPU_KEYS = DispatchKeySet(DispatchKey.CPU).raw
CUDA_KEYS = DispatchKeySet(DispatchKey.CUDA).raw
AUTOGRAD_CPU_KEYS = DispatchKeySet(DispatchKey.AutogradCPU).raw
AUTOGRAD_CUDA_KEYS = DispatchKeySet(DispatchKey.AutogradCUDA).raw
# The functionality bits of the autograd keys (without backend bits): what no_grad excludes.
AUTOGRAD_FUNCTIONALITY = DispatchKeySet([DispatchKey.AutogradFunctionality, DispatchKey.AutogradOther]).raw
BACKEND_MASK = DispatchKeySet([DispatchKey.CPU, DispatchKey.CUDA]).raw & ~DispatchKeySet(DispatchKey.Dense).raw
ALL_BITS = (1 << 64) - 1

_BACKEND_KEYS = {DispatchKey.CPU, DispatchKey.CUDA}
_AUTOGRAD_KEYS = {DispatchKey.AutogradCPU, DispatchKey.AutogradCUDA, DispatchKey.AutogradOther}


def key_bits(key: DispatchKey) -> int:
    return DispatchKeySet(key).raw


def functionality_bits(key: DispatchKey) -> int:
    """The bit(s) of `key` without its backend bit (what removing a key clears)."""
    return DispatchKeySet(key).raw & ~BACKEND_MASK


# ---------------------------------------------------------------------------
# thread-local include / exclude sets
# ---------------------------------------------------------------------------


class _TLS(threading.local):
    include = 0  # keys added to every call on this thread (Tracer, Profiler, Python)
    exclude_not = ALL_BITS  # ~excluded keys (no_grad clears the autograd bits)
    # what a view made now with the Autograd keys excluded is marked as (set_view_base):
    # ember.autograd's inference_mode switches it to INFERENCE_MODE_VIEW
    view_creation: Any = None


def _make_tls() -> Any:
    """The thread-local sets: `include` and `exclude_not` in C++ (csrc/python/dispatch_entry.cpp,
    DispatchTLS: the C++ entries read them with no attribute lookup), every other attribute on a
    _TLS. Under EMBER_PYTHON_DISPATCH=1, a plain _TLS (the reference)."""
    if os.environ.get("EMBER_PYTHON_DISPATCH") == "1":
        return _TLS()
    return _C._dispatch_tls(0, ALL_BITS, _TLS())


tls: Any = _make_tls()


def excluded_keys() -> int:
    return ALL_BITS & ~tls.exclude_not


def set_excluded(bits: int) -> None:
    tls.exclude_not = ALL_BITS & ~bits


def included_keys() -> int:
    return tls.include


def set_included(bits: int) -> None:
    tls.include = bits


class ExcludeKeys:
    """Context manager: exclude `bits` on this thread (e.g. AUTOGRAD_FUNCTIONALITY)."""

    __slots__ = ("bits", "prev")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.prev = 0

    def __enter__(self) -> None:
        self.prev = tls.exclude_not
        tls.exclude_not = self.prev & ~self.bits

    def __exit__(self, *exc: object) -> None:
        tls.exclude_not = self.prev


class IncludeKeys:
    """Context manager: include `bits` in every call on this thread."""

    __slots__ = ("bits", "prev")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.prev = 0

    def __enter__(self) -> None:
        self.prev = tls.include
        tls.include = self.prev | self.bits

    def __exit__(self, *exc: object) -> None:
        tls.include = self.prev


# ---------------------------------------------------------------------------
# kernels and operators
# ---------------------------------------------------------------------------


class Kernel(NamedTuple):
    fn: Callable[..., Any]
    with_keyset: bool
    name: str  # "add_out" / "ember.autograd._kernels:add_autograd"
    source: tuple[str, int] | None  # (file, line) where it is defined
    fallthrough: bool = False


def python_source(fn: Callable[..., Any]) -> tuple[str, int] | None:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return None
    return (code.co_filename, code.co_firstlineno)


class OpOverload:
    """One operator overload, e.g. ``aten::add.Tensor``, with its kernel table."""

    __slots__ = (
        "__weakref__",
        "_call",
        "_kernels",
        "_table",
        "name",
        "namespace",
        "overload",
        "qualname",
        "schema",
    )

    def __init__(self, namespace: str, qualname: str, schema: str) -> None:
        self.namespace = namespace
        self.qualname = qualname  # "add.Tensor"
        self.name, _, self.overload = qualname.partition(".")
        self.schema = schema
        self._kernels: dict[DispatchKey, Kernel] = {}
        self._table: dict[int, Callable[..., Any]] = {}
        self._call: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return f"<OpOverload {self.namespace}::{self.qualname}>"

    @property
    def full_name(self) -> str:
        return f"{self.namespace}::{self.qualname}"

    # ---- registration ----
    def register(self, key: DispatchKey, kernel: Kernel) -> None:
        self._kernels[key] = kernel
        self._table.clear()

    def kernels(self) -> dict[DispatchKey, Kernel]:
        return dict(self._kernels)

    def has_kernel_for(self, key: DispatchKey) -> bool:
        return key in self._kernels

    # ---- resolution ----
    def _resolve_key(self, key: DispatchKey) -> Kernel | None:
        k = self._kernels.get(key)
        if k is not None:
            return k
        if key in _BACKEND_KEYS:
            return self._kernels.get(DispatchKey.CompositeExplicitAutograd) or self._kernels.get(
                DispatchKey.CompositeImplicitAutograd
            )
        if key in _AUTOGRAD_KEYS:
            k = self._kernels.get(DispatchKey.Autograd) or self._kernels.get(DispatchKey.CompositeImplicitAutograd)
            if k is not None:
                return k
        return _fallbacks.get(key)

    def lookup(self, ks: int) -> tuple[DispatchKey, Kernel, int]:
        """The key, kernel and redispatch key set chosen for the raw key set `ks`."""
        while True:
            kset = DispatchKeySet.from_raw(ks)
            key = kset.highest_priority_key()
            if key == DispatchKey.Undefined:
                raise RuntimeError(
                    f"{self.name}: no kernel registered for {kset} (the call has no tensor arguments on a known device)"
                )
            kernel = self._resolve_key(key)
            if kernel is None or kernel.fallthrough:
                if key in _BACKEND_KEYS:
                    raise NotImplementedError(f"{self.name}: no kernel registered for dispatch key {key.name}")
                ks &= ~functionality_bits(key)
                continue
            below = ks & _c10.keys_after(key).raw
            return key, kernel, below

    def _slow(self, ks: int) -> Callable[..., Any]:
        _key, kernel, below = self.lookup(ks)
        fn: Callable[..., Any]
        if kernel.with_keyset:
            if kernel.fn in _fallback_fns:
                fn = functools.partial(kernel.fn, self, below)
            else:
                fn = functools.partial(kernel.fn, below)
        else:
            fn = kernel.fn
        self._table[ks] = fn
        return fn

    def redispatch(self, ks: int, *args: Any) -> Any:
        """Continue a call below the current key (positional schema arguments)."""
        return (self._table.get(ks) or self._slow(ks))(*args)

    # ---- calling ----
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self._call
        if call is None:
            raise RuntimeError(f"{self.full_name} has no Python entry point")
        if kwargs or len(args) != len(_schema_params(self.schema)[0]):
            args = _bind_schema(self, args, kwargs)
        return call(*args)

    def _type_error(self, err: TypeError, args: tuple[Any, ...]) -> TypeError:
        """A kernel refused an argument's type: PyTorch's "invalid combination of arguments" message,
        listing the signatures of every overload of this operator's name."""
        msg = str(err)
        if "incompatible function arguments" not in msg and "incompatible constructor arguments" not in msg:
            return err
        return invalid_arguments(self.name, args, {}, overload_signatures(self.namespace, self.name))


# How PyTorch's argument parser names schema types in its messages.
_PY_TYPE_NAMES = {"Scalar": "Number", "ScalarType": "dtype", "SymInt": "int", "MemoryFormat": "memory_format"}


def _signature(schema: str) -> str:
    """'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor' -> '(Tensor input, Tensor other, *,
    Number alpha = 1)': the Python signature PyTorch prints in argument errors."""

    s = FunctionSchema.parse(schema)
    parts: list[str] = []
    star = False
    for a in s.arguments:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        t = a.type
        base = _PY_TYPE_NAMES.get(t.base, t.base)
        if t.is_list:
            ty = "tuple of ints" if t.base in ("int", "SymInt") else f"tuple of {base}s"
        else:
            ty = base
        if t.optional:
            ty += "?"
        name = "input" if a.name == "self" else a.name
        parts.append(f"{ty} {name}" + (f" = {a.default}" if a.default is not None else ""))
    return "(" + ", ".join(parts) + ")"


def overload_signatures(namespace: str, name: str) -> list[str]:
    """The Python signatures of every overload named `name` (out= overloads last). Cached: `t == None`
    reaches this on every call (the kernel refuses None, the operator returns NotImplemented)."""
    sigs = _signatures_cache.get((namespace, name))
    if sigs is None:
        ops = [op for op in _ops.values() if op.namespace == namespace and op.name == name]
        ops.sort(key=lambda op: op.overload in ("out", "Tensor_out", "Scalar_out"))
        sigs = _signatures_cache[(namespace, name)] = [_signature(op.schema) for op in ops]
    return sigs


_signatures_cache: dict[tuple[str, str], list[str]] = {}


def invalid_arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], signatures: list[str]) -> TypeError:
    """PyTorch's TypeError for arguments that match no signature of `name`."""
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    sigs = "\n".join(f" * {sig}" for sig in signatures)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but expected one of:\n{sigs}"
    )


def _type_name(x: Any) -> str:
    if hasattr(x, "_impl"):
        return "Tensor"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of [{', '.join(_type_name(v) for v in x[:3])}{', ...' if len(x) > 3 else ''}]"
    return type(x).__name__


def _bind_schema(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Binds keyword arguments to the schema's positional order (slow path of OpOverload.__call__)."""
    names, defaults = _schema_params(op.schema)
    if len(args) > len(names):
        raise TypeError(f"{op.full_name}() takes {len(names)} arguments but {len(args)} were given")
    bound = list(args) + [_MISSING] * (len(names) - len(args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{op.full_name}() got an unexpected keyword argument '{k}'")
        i = names.index(k)
        if i < len(args):
            raise TypeError(f"{op.full_name}() got multiple values for argument '{k}'")
        bound[i] = v
    for i, v in enumerate(bound):
        if v is _MISSING:
            if names[i] not in defaults:
                raise TypeError(f"{op.full_name}() missing required argument '{names[i]}'")
            bound[i] = defaults[names[i]]
    return tuple(bound)


_MISSING = object()


@functools.cache
def _schema_params(schema: str) -> tuple[list[str], dict[str, Any]]:
    inner = schema[schema.index("(") + 1 : schema.rindex(")", 0, schema.index("->"))]
    names: list[str] = []
    defaults: dict[str, Any] = {}
    depth, cur, parts = 0, "", []
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    for p in parts:
        if p == "*":
            continue
        decl, _, default = p.partition("=")
        name = decl.split()[-1]
        names.append(name)
        if default:
            defaults[name] = _eval_default(default.strip())
    return names, defaults


def _eval_default(d: str) -> Any:
    if d == "None":
        return None
    if d in ("True", "False"):
        return d == "True"
    if d.startswith("["):
        inner = d[1:-1].strip()
        return tuple(int(x) for x in inner.split(",")) if inner else ()
    if d.startswith(('"', "'")):
        return d[1:-1]
    try:
        return int(d)
    except ValueError:
        pass
    try:
        return float(d)
    except ValueError:
        pass

    return getattr(_C.memory_format, d, d)


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------

_ops: dict[str, OpOverload] = {}  # "aten::add.Tensor" -> op
_fallbacks: dict[DispatchKey, Kernel] = {}
_fallback_fns: set[Callable[..., Any]] = set()


def register_schema(qualname: str, schema: str, namespace: str = "aten") -> OpOverload:
    full = f"{namespace}::{qualname}"
    op = _ops.get(full)
    if op is None:
        op = OpOverload(namespace, qualname, schema)
        _ops[full] = op
        _signatures_cache.pop((namespace, op.name), None)
    return op


def find_op(full_name: str) -> OpOverload:
    """'aten::add.Tensor' (or 'add.Tensor' for aten) -> OpOverload; KeyError naming it if unknown."""
    if "::" not in full_name:
        full_name = "aten::" + full_name
    try:
        return _ops[full_name]
    except KeyError:
        raise KeyError(f"unknown operator {full_name!r}") from None


def all_ops() -> list[OpOverload]:
    return list(_ops.values())


def register_kernel(
    op: OpOverload | str,
    key: DispatchKey | str,
    fn: Callable[..., Any],
    *,
    with_keyset: bool = False,
    name: str | None = None,
    source: tuple[str, int] | None = None,
) -> None:
    if isinstance(op, str):
        op = find_op(op)
    dispatch_key: DispatchKey = getattr(DispatchKey, key) if isinstance(key, str) else key
    if name is None:
        name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
    op.register(dispatch_key, Kernel(fn, with_keyset, name, source or python_source(fn)))


def register_fallthrough(op: OpOverload | str, key: DispatchKey) -> None:
    if isinstance(op, str):
        op = find_op(op)
    op.register(key, Kernel(lambda *a: None, False, "fallthrough", None, fallthrough=True))


def register_fallback(key: DispatchKey, fn: Callable[..., Any] | None, *, name: str | None = None) -> None:
    """A kernel for `key` of every operator: fn(op, redispatch_keyset, *args). None removes it."""
    if fn is None:
        old = _fallbacks.pop(key, None)
        if old is not None:
            _fallback_fns.discard(old.fn)
    else:
        _fallbacks[key] = Kernel(fn, True, str(name or getattr(fn, "__qualname__", "fallback")), python_source(fn))
        _fallback_fns.add(fn)
    invalidate_tables()


def invalidate_tables() -> None:
    for op in _ops.values():
        op._table.clear()


def fallback_for(key: DispatchKey) -> Kernel | None:
    return _fallbacks.get(key)


# ---------------------------------------------------------------------------
# helpers used by the generated entry points
# ---------------------------------------------------------------------------


def device_keys(device: Any) -> int:
    if device is None:
        return CPU_KEYS
    if isinstance(device, str):
        return CUDA_KEYS if device.startswith("cuda") else CPU_KEYS
    if isinstance(device, int):
        return CUDA_KEYS
    return CUDA_KEYS if device.type == "cuda" else CPU_KEYS


def keys_of_list(tensors: Iterable[Any] | None) -> int:
    ks = 0
    if tensors is not None:
        for t in tensors:
            ks |= getattr(t, "_keys", 0)
    # a list without tensors (cat([])) still reaches a kernel, which names the problem
    return ks or CPU_KEYS


class _NoGradView:
    """``view_info`` of a view made, with the Autograd keys excluded (no_grad, inference_mode), of a
    tensor that requires grad (PyTorch's CreationMeta NO_GRAD_MODE / INFERENCE_MODE). The view keeps
    its input's Autograd key, so an in-place op on it later reaches ember.autograd, which refuses it
    with grad mode on: the op could not be recorded into the base's history."""

    __slots__ = ("mode",)

    def __init__(self, mode: str) -> None:
        self.mode = mode  # "no_grad" | "inference"

    def __repr__(self) -> str:
        return f"<view made in {self.mode} mode>"


NO_GRAD_VIEW = _NoGradView("no_grad")
INFERENCE_MODE_VIEW = _NoGradView("inference")
_TLS.view_creation = NO_GRAD_VIEW


def _mark_no_grad_view(r: Any, src_keys: int, marker: _NoGradView) -> None:
    m = r._meta
    if m is None:
        m = r._meta = AutogradMeta()
    m.view_info = marker
    _C._add_keys(r, src_keys & AUTOGRAD_FUNCTIONALITY)


def _no_grad_view_marker(src: Any) -> _NoGradView | None:
    """What a view of `src` (which requires grad) made now is marked as: the thread's marker when the Autograd
    keys are excluded; `src`'s own when it is such a view (its views inherit it, as PyTorch's creation_meta)."""
    if not tls.exclude_not & AUTOGRAD_FUNCTIONALITY:
        marker: _NoGradView = tls.view_creation
        return marker
    m = src._meta
    if m is not None and m.view_info.__class__ is _NoGradView:
        return m.view_info  # type: ignore[no-any-return]
    return None


def set_view_base(r: Any, src: Any) -> None:
    base = src._base
    r._base = src if base is None else base
    if src._keys & AUTOGRAD_FUNCTIONALITY:
        marker = _no_grad_view_marker(src)
        if marker is not None:
            _mark_no_grad_view(r, src._keys, marker)


def set_view_base_list(rs: Iterable[Any], src: Any) -> None:
    base = src._base
    b = src if base is None else base
    ks = src._keys
    marker = _no_grad_view_marker(src) if ks & AUTOGRAD_FUNCTIONALITY else None
    for r in rs:
        r._base = b
        if marker is not None:
            _mark_no_grad_view(r, ks, marker)


bump_version = _C._bump_version  # bump_version(t): t was written in place


def bump_versions(ts: Iterable[Any]) -> None:
    """Every tensor of a Tensor(a!)[] argument (the in-place _foreach_ ops) was written."""
    for t in ts:
        _C._bump_version(t)


def intlist(x: Any, n: int) -> Any:
    """int[N] arguments: a single int means N copies (int[1]: a one-element list)."""
    if x is None or isinstance(x, (tuple, list)):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return (x,) * (n or 1)
    if hasattr(x, "__index__") and not hasattr(x, "__len__"):
        return (x.__index__(),) * (n or 1)
    return x


def varargs(size: tuple[Any, ...]) -> Any:
    """x.view(2, 3) and x.view((2, 3)) both give (2, 3)."""
    if len(size) == 1 and not isinstance(size[0], int) and not hasattr(size[0], "__index__"):
        return size[0]
    if len(size) == 1 and hasattr(size[0], "__len__"):
        return size[0]
    return size


# ---------------------------------------------------------------------------
# the C++ entries (csrc/python/dispatch_entry.cpp)
# ---------------------------------------------------------------------------

# EMBER_PYTHON_DISPATCH=1: every call goes through the generated Python entries (for debugging
# the dispatcher, and for the tests that check both paths agree).
PYTHON_DISPATCH = os.environ.get("EMBER_PYTHON_DISPATCH", "0") == "1"
# op full name -> (Python entry, number of arguments, tensor positions, int[] positions and sizes,
# positions of the tensors written, position of the argument returned or -1)
_entry_specs: dict[str, tuple[Callable[..., Any], int, list[int], list[tuple[int, int]], list[int], int]] = {}


def c_entry(
    op: OpOverload,
    python_entry: Callable[..., Any],
    nargs: int,
    tensor_pos: list[int],
    intlists: list[tuple[int, int]],
    bump: list[int] | None = None,
    ret: int = -1,
) -> Callable[..., Any]:
    """The C++ dispatcher entry of `op` doing what `python_entry` (a generated ``_call_``) does:
    key set from the tensor arguments and the TLS sets, the kernel from ``op._table``; for an
    in-place or out= op, the version bump of the tensors at `bump` and the return of argument
    `ret`. Unusual calls (keywords, an int[] given as a NumPy int, ...) go to `python_entry`."""
    if PYTHON_DISPATCH:
        return python_entry

    bump = bump or []
    _entry_specs[op.full_name] = (python_entry, nargs, tensor_pos, intlists, bump, ret)
    return _C._dispatch_entry(  # type: ignore[no-any-return]
        op, tls, python_entry, "call", nargs, tensor_pos, intlists, None, None, python_entry.__name__, bump, ret
    )


def dunder_entry(
    call: Any, reflected: bool, extra: tuple[Any, ...], is_operand: Callable[[Any], bool], name: str
) -> Callable[..., Any] | None:
    """A C++ Tensor operator (``__add__``: call(self, other, *extra); reflected: call(other, self,
    *extra)) returning NotImplemented for an operand `is_operand` refuses; None without a C++ entry."""
    op = getattr(call, "op", None)
    spec = _entry_specs.get(op.full_name) if isinstance(op, OpOverload) else None
    if spec is None:
        return None

    python_entry, nargs, tensor_pos, intlists, bump, ret = spec
    if nargs == 1:  # a unary operator (__neg__): the entry itself, under the dunder's name
        return _C._dispatch_entry(  # type: ignore[no-any-return]
            op, tls, python_entry, "call", nargs, tensor_pos, intlists, None, None, name, bump, ret
        )
    mode = "rdunder" if reflected else "dunder"
    return _C._dispatch_entry(  # type: ignore[no-any-return]
        op, tls, python_entry, mode, nargs, tensor_pos, intlists, tuple(extra), is_operand, name, bump, ret
    )


def redispatcher(op: OpOverload, exclude: int = 0) -> Callable[..., Any]:
    """``op.redispatch`` (ks, *args) in C++: what a kernel registered with_keyset calls below itself.
    With `exclude` (key bits), those keys are excluded on this thread during the call, as
    ``with ExcludeKeys(exclude): op.redispatch(ks, *args)`` (an Autograd kernel running the op below
    itself)."""
    python_entry = op.redispatch if not exclude else _redispatch_excluding(op, exclude)
    if PYTHON_DISPATCH or tls.__class__ is _TLS:
        return python_entry

    nargs = len(_schema_params(op.schema)[0])
    if not exclude:
        return _C._dispatch_entry(  # type: ignore[no-any-return]
            op, tls, op.redispatch, "redispatch", nargs, [], [], None, None, f"redispatch[{op.full_name}]"
        )
    return _C._dispatch_entry(  # type: ignore[no-any-return]
        op, tls, python_entry, "redispatch_below", nargs, [], [], exclude, None, f"redispatch[{op.full_name}]"
    )


def _redispatch_excluding(op: OpOverload, exclude: int) -> Callable[..., Any]:
    """The Python reference of a "redispatch_below" entry."""
    redispatch = op.redispatch
    keep = ALL_BITS & ~exclude

    def below(ks: int, *args: Any) -> Any:
        prev = tls.exclude_not
        tls.exclude_not = prev & keep
        try:
            return redispatch(ks, *args)
        finally:
            tls.exclude_not = prev

    below.__name__ = f"redispatch_below[{op.full_name}]"
    return below


def out_tuple(out: Any, n: int) -> tuple[Any, ...]:
    if not isinstance(out, (tuple, list)) or len(out) != n:
        raise TypeError(f"out= expected a tuple of {n} tensors")
    return tuple(out)


_return_types: dict[str, type] = {}


def return_type(name: str, fields: list[str]) -> type:
    """A named tuple like torch.return_types.max(values=..., indices=...)."""
    cls = collections.namedtuple(name, fields)  # type: ignore[misc]
    cls.__module__ = "ember.aten.return_types"
    _return_types[name] = cls
    return cls


# Overload resolution for functions with several schemas (max, min, ...).
def _matches(value: Any, kind: str, strict: bool) -> bool:
    is_tensor = hasattr(value, "_impl")
    if kind.endswith("?") and value is None:
        return True
    k = kind.rstrip("?")
    if k == "T":
        return is_tensor or (not strict and isinstance(value, (int, float, bool)))
    if k == "TL":
        # strict: the elements are tensors (_foreach_add(xs, [1.0, 2.0]) is the Scalar[] overload)
        return isinstance(value, (list, tuple)) and (not strict or all(hasattr(v, "_impl") for v in value))
    if k == "SL":
        return isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float)) or (not strict and hasattr(v, "_impl")) for v in value
        )
    if k == "IL":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value)
        )
    if k == "I":
        return (isinstance(value, int) and not isinstance(value, bool)) or (is_tensor and not strict)
    if k == "FL":
        return isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value)
    if k in ("F", "S"):
        return isinstance(value, (int, float)) or (is_tensor and (k == "S" or not strict))
    if k == "B":
        return isinstance(value, bool)
    if k == "STR":
        return isinstance(value, str)
    if k == "DT":
        return type(value).__name__ == "dtype"
    return True


def resolve_overload(name: str, candidates: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for strict in (True, False):
        for binder, kinds, call, call_out, _sig in candidates:
            try:
                bound, out = binder(*args, **kwargs)
            except TypeError:
                continue
            if not all(_matches(v, k, strict) for v, k in zip(bound, kinds, strict=False)):
                continue
            if out is None:
                return call(*bound)
            if call_out is None:
                raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
            outs = out if isinstance(out, (tuple, list)) else (out,)
            return call_out(*bound, *outs)
    raise invalid_arguments(name, args, kwargs, [sig for *_, sig in candidates])
