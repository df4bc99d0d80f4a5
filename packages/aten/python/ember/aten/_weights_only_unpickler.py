"""The weights-only unpickler behind ``ember.aten.load`` (PyTorch's ``torch._weights_only_unpickler``).

A small pickle virtual machine that understands only the opcodes ``torch.save`` emits
with protocol 2 and resolves only allowlisted globals: the tensor rebuild functions,
storage and dtype names, ``torch.device``/``torch.Size``, ``OrderedDict``/``Counter``,
the builtins protocol 2 needs for bytes, bytearray, set and complex, and whatever the
caller added with ``add_safe_globals``. Everything else -- any other global, opcode,
persistent id or malformed stream -- raises ``pickle.UnpicklingError`` naming what was
refused, before any of it runs.

Invariants the VM keeps (why it is safe to feed it untrusted bytes):
- nothing is imported: GLOBAL looks names up in a table, never in ``sys.modules``;
- REDUCE / NEWOBJ call only callables from that table, with arguments checked by the
  table's entry where an argument could make it allocate (``bytearray(10**12)``);
- BUILD sets state only on OrderedDict (``_metadata``), tensors' ``__dict__`` and
  allowlisted user classes;
- the stream comes from a bytes object already in memory, so a length field can never
  make a read allocate more than the record holds;
- containers nest at most MAX_NESTING levels (a 10**6-deep tuple used as a dict key
  would overflow the C stack in CPython's tuple hash): each container's depth is
  recorded as it is built and grows as items are added, so the depth of every tuple --
  the only containers hashing recurses into -- is exact;
- only protocols 0..5 are read (``PROTO 99`` is refused, as plain pickle does);
- storages come only through ``persistent_load``, which the loader checks against the
  bytes in the archive before allocating.
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import io
import pickle
import struct
import warnings
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "MAX_NESTING",
    "RefusedByAllowlist",
    "Unpickler",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
]

UnpicklingError = pickle.UnpicklingError

# Deeper than any real checkpoint (a state dict nests a handful of levels) and far below
# the depth at which CPython's recursive tuple hash / repr exhaust the C stack.
MAX_NESTING = 1000


class RefusedByAllowlist(pickle.UnpicklingError):
    """What plain pickle would do but the weights-only allowlist refuses (a global, an opcode,
    a call or a BUILD): only these errors carry the advice that ``weights_only=False``
    would load the file. Malformed streams, corrupt archives and bad arguments raise
    their own errors, which loading with ``weights_only=False`` would not cure."""


# Modules whose globals are refused with their own message (PyTorch's blocklist).
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_user_safe_globals: set[Any] = set()


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Marks globals as safe for ``load(weights_only=True)``.

    Each item is a class/function (looked up by ``f"{obj.__module__}.{obj.__qualname__}"``)
    or a tuple ``(obj, "full.path.name")`` when the pickle names it differently.

        >>> ember.aten.serialization.add_safe_globals([MyConfig])
    """
    for g in safe_globals:
        _check_safe_global(g)
    _user_safe_globals.update(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals added with ``add_safe_globals``."""
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    """Forgets every global added with ``add_safe_globals``."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_: list[Any]) -> Iterator[None]:
    """Context manager that adds ``globals_`` as safe for its duration."""
    added = [g for g in globals_ if g not in _user_safe_globals]
    add_safe_globals(added)
    try:
        yield
    finally:
        _user_safe_globals.difference_update(added)


def _check_safe_global(g: Any) -> None:
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(
                f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(g)}"
            )
        if type(g[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(g[1])}")


def _user_allowed() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in _user_safe_globals:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
            # an ember class allow-listed as torch.nn.Linear is named torch.nn.modules.linear.Linear
            # in PyTorch's checkpoints: the name ember.torch gives it counts too
            for torch_name in _torch_names_of(g):
                out.setdefault(torch_name, g)
    return out


# ---- PyTorch's names of ember's objects (registered by ember.torch) ------------------
# (resolve "torch.nn.modules.linear", "Linear" -> the ember object or None; names_of object -> its torch names)
_torch_names: list[tuple[Any, Any]] = []


def register_torch_names(resolve: Any, names_of: Any) -> None:
    """Called by ember.torch: how ``torch.<path>.<name>`` globals map to ember's objects and back."""
    _torch_names[:] = [(resolve, names_of)]


def _torch_names_hooks() -> tuple[Any, Any] | None:
    if not _torch_names:
        # the facade registers itself when imported; a checkpoint naming torch.nn.* is what needs it
        import importlib.util

        try:
            if importlib.util.find_spec("ember.torch") is not None:
                importlib.import_module("ember.torch")
        except ImportError:
            pass
    return _torch_names[0] if _torch_names else None


def resolve_torch_name(module: str, name: str) -> Any:
    """The ember object PyTorch's global ``module.name`` stands for (through ember.torch), or None."""
    if module != "torch" and not module.startswith("torch."):
        return None
    hooks = _torch_names_hooks()
    return None if hooks is None else hooks[0](module, name)


def _torch_names_of(obj: Any) -> list[str]:
    if not str(getattr(obj, "__module__", "")).startswith("ember."):
        return []
    hooks = _torch_names_hooks()
    return [] if hooks is None else list(hooks[1](obj))


# ---- checked constructors for the builtins protocol 2 needs -------------------------
def _bytearray(*args: Any) -> bytearray:
    # bytearray(n) would allocate n bytes: only the forms pickle emits are accepted.
    if len(args) == 0:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, list)):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], str):
        return bytearray(args[0], args[1])
    raise UnpicklingError(
        f"builtins.bytearray called with unsupported arguments {tuple(type(a).__name__ for a in args)}"
    )


def _set(*args: Any) -> set[Any]:
    if len(args) > 1 or (args and not isinstance(args[0], (list, tuple, set))):
        raise UnpicklingError("builtins.set called with unsupported arguments")
    return set(*args)


def _complex(*args: Any) -> complex:
    if len(args) > 2 or not all(type(a) in (int, float) for a in args):
        raise UnpicklingError("builtins.complex called with unsupported arguments")
    return complex(*args)


def _encode(obj: Any, encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
    if type(obj) is not str or type(encoding) is not str or type(errors) is not str:
        raise UnpicklingError("_codecs.encode called with unsupported arguments")
    if encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise UnpicklingError(f"_codecs.encode: unsupported encoding {encoding!r}")
    # An error handler is looked up in codecs' registry, which any imported module may
    # extend with its own code: only the built-in "strict" (what pickle writes) is run.
    if errors != "strict":
        raise UnpicklingError(f"_codecs.encode: unsupported error handler {errors!r} (only 'strict' is allowed)")
    return obj.encode(encoding)


def _counter(*args: Any) -> collections.Counter[Any]:
    if len(args) > 1 or (args and not isinstance(args[0], dict)):
        raise UnpicklingError("collections.Counter called with unsupported arguments")
    return collections.Counter(*args)


def _ordered_dict(*args: Any) -> collections.OrderedDict[Any, Any]:
    if len(args) > 1 or (args and not isinstance(args[0], (list, dict))):
        raise UnpicklingError("collections.OrderedDict called with unsupported arguments")
    return collections.OrderedDict(*args)


_ordered_dict.__name__ = "OrderedDict"

BUILTIN_ALLOWED: dict[str, Any] = {
    "collections.OrderedDict": _ordered_dict,
    "collections.Counter": _counter,
    "_codecs.encode": _encode,
    "builtins.bytearray": _bytearray,
    "builtins.set": _set,
    "builtins.complex": _complex,
}


# ---- the VM ------------------------------------------------------------------------
_OP = {name: getattr(pickle, name)[0] for name in (
    "APPEND", "APPENDS", "BINFLOAT", "BINGET", "BININT", "BININT1", "BININT2", "BINPERSID", "BINPUT",
    "BINUNICODE", "BUILD", "EMPTY_DICT", "EMPTY_LIST", "EMPTY_SET", "EMPTY_TUPLE", "GLOBAL", "LONG1",
    "LONG_BINGET", "LONG_BINPUT", "MARK", "NEWFALSE", "NEWOBJ", "NEWTRUE", "NONE", "PROTO", "REDUCE",
    "SETITEM", "SETITEMS", "SHORT_BINSTRING", "STOP", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
)}  # fmt: skip
_OPNAME = {v: k for k, v in _OP.items()}
_ALL_OPNAMES = {op.code.encode("latin-1")[0]: op.name for op in __import__("pickletools").opcodes}


_CONTAINERS = (tuple, list, dict, set, collections.OrderedDict, collections.Counter)


class Unpickler:
    """Unpickler(data, allowed, persistent_load, *, unsupported, build_hook, newobj_hook, call_overrides).

    ``allowed`` maps full global names ("torch._utils._rebuild_tensor_v2") to the objects
    that stand for them; ``unsupported`` maps names ember knows but cannot load to the
    reason. ``build_hook(inst, state)`` returns True when it handled a BUILD on ``inst``.
    ``call_overrides`` maps an allowed object to the function REDUCE calls instead (the
    checked form of a constructor whose arguments could allocate, e.g. ``torch.Tensor``).
    """

    def __init__(
        self,
        data: bytes,
        allowed: dict[str, Any],
        persistent_load: Callable[[Any], Any],
        *,
        unsupported: dict[str, str] | None = None,
        build_hook: Callable[[Any, Any], bool] | None = None,
        newobj_hook: Callable[[Any, tuple[Any, ...]], Any] | None = None,
        call_overrides: dict[Any, Callable[..., Any]] | None = None,
    ) -> None:
        self._file = io.BytesIO(data)
        self._allowed = dict(BUILTIN_ALLOWED)
        self._allowed.update(allowed)
        self._user = _user_allowed()
        self._unsupported = unsupported or {}
        self._persistent_load = persistent_load
        self._build_hook = build_hook
        self._newobj_hook = newobj_hook
        self._call_overrides = {id(k): (k, v) for k, v in (call_overrides or {}).items()}
        self._allowed_ids = {id(v) for v in self._allowed.values()} | {id(v) for v in self._user.values()}
        self._user_types = {id(v) for v in self._user.values() if isinstance(v, type)}
        # id(container) -> (nesting depth, container): the container is kept alive so that
        # its id is never reused by another object while the stream is read.
        self._depths: dict[int, tuple[int, Any]] = {}
        self.memo: dict[int, Any] = {}
        self.proto = -1

    # -- reading helpers: a short read means the stream is truncated, never a big allocation
    def _read(self, n: int) -> bytes:
        b = self._file.read(n)
        if len(b) != n:
            raise UnpicklingError("pickle data was truncated")
        return b

    def _readline(self) -> bytes:
        line = self._file.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated")
        return line[:-1]

    # -- nesting depth
    def _depth(self, x: Any) -> int:
        if not isinstance(x, _CONTAINERS):
            return 0
        d = self._depths.get(id(x))
        return d[0] if d is not None and d[1] is x else 1

    def _record(self, container: Any, depth: int) -> Any:
        if depth > MAX_NESTING:
            raise UnpicklingError(
                f"pickle data is nested more than {MAX_NESTING} levels deep (a checkpoint nests a handful); refusing "
                "it before it can exhaust the stack"
            )
        self._depths[id(container)] = (depth, container)
        return container

    def _grow(self, container: Any, *items: Any) -> None:
        depth = 1 + max(self._depth(v) for v in items)
        if depth > self._depth(container):
            self._record(container, depth)

    def _resolve_global(self, module: str, name: str) -> Any:
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise RefusedByAllowlist(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self._user:
            return self._user[full]
        if full in self._allowed:
            return self._allowed[full]
        if full in self._unsupported:
            raise UnpicklingError(f"GLOBAL {full}: {self._unsupported[full]}")
        shown = full[len("builtins.") :] if full.startswith("builtins.") else full
        raise RefusedByAllowlist(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
            f"`ember.aten.serialization.add_safe_globals([{shown}])` or the "
            f"`ember.aten.serialization.safe_globals([{shown}])` context manager to allowlist this global "
            "if you trust this class/function."
        )

    def load(self) -> Any:
        try:
            return self._load()
        except UnpicklingError:
            raise
        except RecursionError:
            raise UnpicklingError("pickle data is nested too deeply") from None
        except (IndexError, KeyError, TypeError, AttributeError, OverflowError) as e:
            # Stack underflow, a MARK missing, a memo slot never written, an allowed function
            # called with the wrong arguments: a malformed stream, not something to allow.
            raise UnpicklingError(f"malformed pickle data ({type(e).__name__}: {e})") from None
        finally:
            self._depths.clear()

    def _load(self) -> Any:
        stack: list[Any] = []
        metastack: list[list[Any]] = []
        memo = self.memo
        read = self._read
        op = _OP
        record = self._record
        depth = self._depth

        def pop_mark() -> list[Any]:
            nonlocal stack
            items = stack
            stack = metastack.pop()
            return items

        def new_tuple(items: Any) -> tuple[Any, ...]:
            t = tuple(items)
            return record(t, 1 + max(map(depth, t), default=0)) if t else t

        while True:
            key = self._file.read(1)
            if not key:
                raise UnpicklingError("pickle data was truncated (no STOP opcode)")
            k = key[0]
            if k == op["GLOBAL"]:
                module = self._readline().decode("utf-8", "strict")
                name = self._readline().decode("utf-8", "strict")
                stack.append(self._resolve_global(module, name))
            elif k == op["NEWOBJ"]:
                args = stack.pop()
                cls = stack.pop()
                if type(args) is not tuple:
                    raise UnpicklingError("NEWOBJ expected a tuple of arguments")
                if self._newobj_hook is not None:
                    handled = self._newobj_hook(cls, args)
                    if handled is not None:
                        stack.append(handled)
                        continue
                if isinstance(cls, type) and id(cls) in self._user_types:
                    stack.append(cls.__new__(cls, *args))
                else:
                    raise RefusedByAllowlist(
                        f"Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` "
                        f"but got {cls}"
                    )
            elif k == op["REDUCE"]:
                args = stack.pop()
                func = stack[-1]
                if type(args) is not tuple:
                    raise UnpicklingError("REDUCE expected a tuple of arguments")
                if id(func) not in self._allowed_ids:
                    raise RefusedByAllowlist(f"Trying to call reduce for unrecognized function {func}")
                override = self._call_overrides.get(id(func))
                result = override[1](*args) if override is not None and override[0] is func else func(*args)
                if isinstance(result, _CONTAINERS) and result:
                    # set(list), OrderedDict(pairs), ...: no deeper than its arguments
                    record(result, max(depth(result), depth(args)))
                stack[-1] = result
            elif k == op["BUILD"]:
                state = stack.pop()
                inst = stack[-1]
                self._build(inst, state)
            elif k == op["APPEND"]:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise RefusedByAllowlist(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
                self._grow(stack[-1], item)
            elif k == op["APPENDS"]:
                items = pop_mark()
                if type(stack[-1]) is not list:
                    raise RefusedByAllowlist(f"Can only extend lists, but got {type(stack[-1])}")
                stack[-1].extend(items)
                if items:
                    self._grow(stack[-1], *items)
            elif k == op["SETITEM"]:
                v = stack.pop()
                kk = stack.pop()
                self._check_dict(stack[-1], "SETITEM")
                self._setitem(stack[-1], kk, v)
            elif k == op["SETITEMS"]:
                items = pop_mark()
                self._check_dict(stack[-1], "SETITEMS")
                if len(items) % 2:
                    raise UnpicklingError("SETITEMS expected key/value pairs")
                for i in range(0, len(items), 2):
                    self._setitem(stack[-1], items[i], items[i + 1])
            elif k == op["MARK"]:
                metastack.append(stack)
                stack = []
            elif k == op["TUPLE"]:
                items = pop_mark()
                stack.append(new_tuple(items))
            elif k == op["TUPLE1"]:
                stack[-1] = new_tuple(stack[-1:])
            elif k == op["TUPLE2"]:
                if len(stack) < 2:
                    raise IndexError("stack underflow")
                stack[-2:] = [new_tuple(stack[-2:])]
            elif k == op["TUPLE3"]:
                if len(stack) < 3:
                    raise IndexError("stack underflow")
                stack[-3:] = [new_tuple(stack[-3:])]
            elif k == op["NONE"]:
                stack.append(None)
            elif k == op["NEWFALSE"]:
                stack.append(False)
            elif k == op["NEWTRUE"]:
                stack.append(True)
            elif k == op["EMPTY_TUPLE"]:
                stack.append(())
            elif k == op["EMPTY_LIST"]:
                stack.append([])
            elif k == op["EMPTY_DICT"]:
                stack.append({})
            elif k == op["EMPTY_SET"]:
                stack.append(set())
            elif k == op["BININT"]:
                stack.append(struct.unpack("<i", read(4))[0])
            elif k == op["BININT1"]:
                stack.append(read(1)[0])
            elif k == op["BININT2"]:
                stack.append(struct.unpack("<H", read(2))[0])
            elif k == op["BINFLOAT"]:
                stack.append(struct.unpack(">d", read(8))[0])
            elif k == op["BINUNICODE"]:
                n = struct.unpack("<I", read(4))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif k == op["SHORT_BINSTRING"]:
                n = read(1)[0]
                stack.append(read(n))
            elif k == op["LONG1"]:
                n = read(1)[0]
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif k == op["BINPERSID"]:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise RefusedByAllowlist(f"Only persistent_load of storage is allowed, but got {pid[0]!r}")
                stack.append(self._persistent_load(pid))
            elif k == op["BINGET"] or k == op["LONG_BINGET"]:
                idx = read(1)[0] if k == op["BINGET"] else struct.unpack("<I", read(4))[0]
                if idx not in memo:
                    raise UnpicklingError(f"memo slot {idx} read before it was written")
                stack.append(memo[idx])
            elif k == op["BINPUT"] or k == op["LONG_BINPUT"]:
                idx = read(1)[0] if k == op["BINPUT"] else struct.unpack("<I", read(4))[0]
                memo[idx] = stack[-1]
            elif k == op["PROTO"]:
                self.proto = read(1)[0]
                if self.proto > pickle.HIGHEST_PROTOCOL:
                    # plain pickle refuses it too (ValueError: unsupported pickle protocol)
                    raise UnpicklingError(f"unsupported pickle protocol: {self.proto}")
                if self.proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {self.proto} in the checkpoint, which was not the default pickle "
                        "protocol used by `ember.aten.save` (2). The weights_only Unpickler might not support all "
                        "instructions implemented by this protocol.",
                        UserWarning,
                        stacklevel=3,
                    )
            elif k == op["STOP"]:
                if len(stack) != 1 or metastack:
                    raise UnpicklingError("malformed pickle data (STOP with an unbalanced stack)")
                return stack.pop()
            else:
                opname = _ALL_OPNAMES.get(k)
                if opname is None:
                    raise UnpicklingError(f"Unsupported operand {k} (not a pickle opcode)")
                raise RefusedByAllowlist(f"Unsupported operand {k} ({opname})")

    @staticmethod
    def _check_dict(target: Any, opcode: str) -> None:
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise RefusedByAllowlist(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got {type(target)}"
            )

    def _setitem(self, target: dict[Any, Any], k: Any, v: Any) -> None:
        # The key's depth is known before it is hashed: a 10**6-deep tuple never reaches hash().
        self._grow(target, k, v)
        try:
            target[k] = v
        except TypeError as e:  # an unhashable key
            raise UnpicklingError(f"dict key rejected: {e}") from None

    def _build(self, inst: Any, state: Any) -> None:
        if self._build_hook is not None and self._build_hook(inst, state):
            return
        if type(inst) is collections.OrderedDict:
            if type(state) is not dict or not all(type(k) is str for k in state):
                raise UnpicklingError("BUILD of an OrderedDict expects a dict of attribute names")
            inst.__dict__.update(state)
            return
        if id(type(inst)) in self._user_types:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for kk, vv in slotstate.items():
                    setattr(inst, kk, vv)
            return
        raise RefusedByAllowlist(
            f"Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, "
            f"but got {type(inst)}"
        )


def _ascii(s: Any) -> Any:
    if isinstance(s, bytes):
        return s.decode("ascii", "replace")
    return s
