"""Python side of the codegen: operator handles, public functions, Tensor methods, stubs.

For every operator overload ``f`` it writes ``_call_f(args...)``: the dispatcher's
fast entry. It takes the schema's arguments positionally, computes the call's key
set (the tensor arguments' keys, plus the thread-local included keys, minus the
excluded ones), looks the kernel up in the operator's table (a dict keyed by key
set, filled on first use), calls it, and then does what the schema promises:
a mutated argument gets its version bumped and is returned itself; a view gets
its ``_base``; named multiple returns become a named tuple. Where nothing is left to
do after the kernel, the Python function is the reference and the fallback of a C++
entry doing the same steps (``_c_entry``, csrc/python/dispatch_entry.cpp), which then
takes its name.

Public functions (``ember.aten.add``) and Tensor methods (``Tensor.add``) carry
PyTorch's Python signatures (``input`` for ``self``, ``out=`` from the .out
overload, varargs sizes) and call the ``_call_`` entries.
"""

from __future__ import annotations

import keyword
from collections import defaultdict

from schema_model import Argument, FunctionSchema, NativeFunction, Type

PY_MODULES = ("linalg", "special", "fft", "nn")

# Ops whose result aliases an input without being a view of it: PyTorch's detach() shares
# storage but x.detach()._base is None and x.detach()._is_view() is False.
ALIASES_NOT_VIEWS = frozenset({"detach"})


def mangle(schema: FunctionSchema) -> str:
    return f"{schema.name}_{schema.overload}" if schema.overload else schema.name


def py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def py_default(a: Argument) -> str | None:
    d = a.default
    if d is None:
        return None
    if d in ("None", "True", "False"):
        return d
    if d.startswith("[") and d.endswith("]"):
        inner = d[1:-1].strip()
        if not inner:
            return "()"
        items = [x.strip() for x in inner.split(",")]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if d in ("inf", "-inf"):
        return d.replace("inf", "_math.inf")
    if d in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        return f"_mf.{d}"
    if d.startswith(("'", '"')):
        return d
    if a.type.base == "ScalarType" and d != "None":
        return f"_dtypes.{d}"
    try:
        float(d)
        return d
    except ValueError as e:
        raise ValueError(f"cannot translate default {d!r} of {a.name}") from e


# TensorOptions arguments of factory functions (a schema with pin_memory is a factory).
OPTION_NAMES = ("dtype", "layout", "device", "pin_memory")


def is_factory(s: FunctionSchema) -> bool:
    """Factories take TensorOptions; their Python signature adds `requires_grad=False` (PyTorch's)."""
    return any(a.name == "pin_memory" for a in s.arguments)


def options_free_key(s: FunctionSchema) -> tuple[str, ...]:
    """A factory's argument types without its TensorOptions: what its out= overload shares with it."""
    return tuple(
        str(a.type).replace("(a!)", "").replace("(a)", "")
        for a in s.arguments
        if a not in s.out_arguments and a.name not in OPTION_NAMES
    )


def _without_self(args: list[Argument]) -> list[Argument]:
    """A method's arguments after `self` is bound: the one named self (where.self's
    `self` is its second argument: `x.where(condition, y)`), else the first."""
    if any(a.name == "self" for a in args):
        return [a for a in args if a.name != "self"]
    return args[1:]


def type_kind(t: Type) -> str:
    """Short type tags used by the overload resolver."""
    if t.base == "Tensor":
        if t.is_list:
            return "TL"
        return "T?" if t.optional else "T"
    if t.is_int_list:
        return "IL?" if t.optional else "IL"
    if t.base in ("int", "SymInt"):
        return "I?" if t.optional else "I"
    if t.base == "float":
        if t.is_list:  # float[]? (histogram's range): a list, None allowed
            return "FL?" if t.optional else "FL"
        return "F?" if t.optional else "F"
    if t.base == "bool":
        return "B?" if t.optional else "B"
    if t.base == "Scalar":
        if t.is_list:
            return "SL"
        return "S?" if t.optional else "S"
    if t.base == "str":
        return "STR?" if t.optional else "STR"
    if t.base == "ScalarType":
        return "DT?" if t.optional else "DT"
    return "ANY"


def pyi_type(t: Type) -> str:
    base = {
        "Tensor": "Tensor",
        "int": "int",
        "SymInt": "int",
        "float": "float",
        "bool": "bool",
        "str": "str",
        "Scalar": "Number",
        "ScalarType": "dtype",
        "Device": "DeviceLike",
        "Layout": "object",
        "MemoryFormat": "object",
        "Generator": "Generator",
    }[t.base]
    if t.is_list:
        inner = f"{base} | None" if t.elem_optional else base
        s = f"Sequence[{inner}]"
        if t.base in ("int", "SymInt"):
            s = "int | Sequence[int]"
    elif t.base == "Tensor":
        s = "Tensor | Number"
    else:
        s = base
    if t.optional:
        s = f"{s} | None"
    return s


class PythonGen:
    def __init__(self, functions: list[NativeFunction]):
        self.functions = functions
        self.by_name = {f.qualname: f for f in functions}
        self.lines: list[str] = []
        self.pyi: list[str] = []
        self.call_names: list[str] = []  # the _call_* handles, declared in the pyi
        # python_numbers of an overload hold for every overload of its name (lt, lt_, lt.Tensor_out)
        self.numbers: dict[str, tuple[str, ...]] = {
            f.schema.name.rstrip("_"): f.python_numbers for f in functions if f.python_numbers is not None
        }

    def number_checks(self, s: FunctionSchema, params: list[str], method: bool, display: str) -> list[str]:
        """Lines refusing a Python number for each Tensor argument that PyTorch types as Tensor only
        (an op with `python_numbers`: torch.maximum(t, 2) is a TypeError, as PyTorch's), and a
        Tensor for a Tensor[] argument (torch.cat(t))."""
        allowed = self.numbers.get(s.name.rstrip("_"))
        names = []  # the positional parameters, numbered as PyTorch's messages do (self not counted)
        for p in params:
            if p.startswith("*"):
                break
            if p != "self":
                names.append(p.partition("=")[0])
        lines = []
        for a in s.arguments:
            if a.type.base != "Tensor" or a in s.out_arguments or (method and a.name == "self"):
                continue
            pname = "input" if (a.name == "self" and not method) else py_name(a.name)
            pos = names.index(pname) + 1 if pname in names else 0
            if a.type.is_list:
                # a Tensor where PyTorch's signature has Tensor[] (torch.cat(t)): TypeError, as PyTorch's
                lines.append(f"    if hasattr({pname}, '_impl'):")
                lines.append(f"        raise _not_tensor({display!r}, {pname!r}, {pos}, {pname}, 'tuple of Tensors')")
            elif allowed is not None and a.name not in allowed:
                lines.append(f"    if type({pname}) in _NUMBER_TYPES:")
                lines.append(f"        raise _not_tensor({display!r}, {pname!r}, {pos}, {pname})")
        return lines

    # ---- per-overload dispatcher entries ----
    def keys_expr(self, s: FunctionSchema) -> str:
        parts = []
        for a in s.arguments:
            if a.type.base != "Tensor":
                continue
            n = py_name(a.name)
            if a.type.is_list:
                parts.append(f"_keys_of_list({n})")
            else:
                parts.append(f'getattr({n}, "_keys", 0)')
        if not parts:
            dev = next((a for a in s.arguments if a.type.base == "Device"), None)
            parts.append(f"_device_keys({py_name(dev.name)})" if dev else "_CPU_KEYS")
        return " | ".join(parts)

    def emit_call(self, f: NativeFunction) -> None:
        s = f.schema
        m = mangle(s)
        params = [py_name(a.name) for a in s.arguments]
        plist = ", ".join(params)
        L = self.lines
        L.append(f"_op_{m} = _register({s.qualname!r}, {s.text!r})")
        L.append(f"_tab_{m} = _op_{m}._table")
        L.append("")
        L.append(f"def _call_{m}({plist}):")
        self.call_names.append(f"_call_{m}")
        # normalise int[N] arguments given as one int
        for a in s.arguments:
            if a.type.is_int_list:
                n = py_name(a.name)
                size = a.type.list_size or 0
                L.append(f"    {n} = _intlist({n}, {size})")
        L.append("    tls_ = _tls")
        L.append(f"    ks = ({self.keys_expr(s)} | tls_.include) & tls_.exclude_not")
        L.append("    try:")
        L.append(f"        r = (_tab_{m}.get(ks) or _op_{m}._slow(ks))({plist})")
        L.append("    except TypeError as e:")
        L.append(f"        raise _op_{m}._type_error(e, ({plist}{',' if len(params) == 1 else ''})) from None")
        aliases = s.returns_alias_of_input
        if s.mutated_arguments and not s.returns:
            # `-> ()` ops writing through Tensor(a!)[] lists (_foreach_add_, _fused_adam_): every
            # tensor written gets its version bumped; a lone mutated `self` is returned, as PyTorch's
            # bindings return the list given to _foreach_add_
            for a in s.mutated_arguments:
                n = py_name(a.name)
                L.append(f"    _bump_list({n})" if a.type.is_list else f"    _bump({n})")
            mutated = s.mutated_arguments
            L.append(f"    return {py_name(mutated[0].name)}" if len(mutated) == 1 else "    return None")
        elif s.mutated_arguments and all(aliases) and aliases:
            for a in s.mutated_arguments:
                L.append(f"    _bump({py_name(a.name)})")
            outs = [py_name(x) for x in aliases]  # type: ignore[arg-type]
            if len(outs) == 1:
                L.append(f"    return {outs[0]}")
                tensors = [i for i, a in enumerate(s.arguments) if a.type.base == "Tensor"]
                if tensors and not any(s.arguments[i].type.is_list for i in tensors):
                    # an in-place / out= op returning the one tensor it wrote: the same steps (kernel,
                    # version bump, return of the argument) run in C++ (csrc/python/dispatch_entry.cpp)
                    intlists = [(i, a.type.list_size or 0) for i, a in enumerate(s.arguments) if a.type.is_int_list]
                    bump = [params.index(py_name(a.name)) for a in s.mutated_arguments]
                    ret = params.index(outs[0])
                    L.append(
                        f"_call_{m} = _c_entry(_op_{m}, _call_{m}, {len(params)}, {tensors!r}, {intlists!r},"
                        f" {bump!r}, {ret})"
                    )
            elif all(r.name for r in s.returns):
                L.append(f"    return _rt_{s.name.rstrip('_')}({', '.join(outs)})")
            else:
                L.append(f"    return ({', '.join(outs)})")
        elif s.is_view and s.name not in ALIASES_NOT_VIEWS:
            src = py_name(s.view_source or "self")
            if s.returns[0].type.is_list:
                # a Tensor[] return is a tuple in Python, as PyTorch's (split, unbind, ...)
                L.append("    r = tuple(r)")
                L.append(f"    _set_view_base_list(r, {src})")
            else:
                L.append(f"    _set_view_base(r, {src})")
            L.append("    return r")
        elif len(s.returns) > 1 and all(r.name for r in s.returns):
            L.append(f"    return _rt_{s.name}(*r)")
        elif len(s.returns) == 1 and s.returns[0].type.is_tensor_list:
            L.append("    return tuple(r)")
        else:
            L.append("    return r")
            tensors = [i for i, a in enumerate(s.arguments) if a.type.base == "Tensor"]
            if tensors and not any(s.arguments[i].type.is_list for i in tensors):
                # the result needs no post-processing: the same steps run in C++ (csrc/python/dispatch_entry.cpp)
                intlists = [(i, a.type.list_size or 0) for i, a in enumerate(s.arguments) if a.type.is_int_list]
                L.append(f"_call_{m} = _c_entry(_op_{m}, _call_{m}, {len(params)}, {tensors!r}, {intlists!r})")
        L.append(f"_op_{m}._call = _call_{m}")
        L.append("")

    # ---- return types ----
    def emit_return_types(self) -> None:
        seen: dict[str, tuple[str, ...]] = {}
        for f in self.functions:
            s = f.schema
            if len(s.returns) > 1 and all(r.name for r in s.returns):
                base = s.name.rstrip("_")
                names = tuple(r.name for r in s.returns)  # type: ignore[misc]
                if base in seen and seen[base] != names:
                    continue
                seen[base] = names
        for base, names in sorted(seen.items()):
            self.lines.append(f"_rt_{base} = _return_type({base!r}, {list(names)!r})")
        self.lines.append("RETURN_TYPES = {" + ", ".join(f"{b!r}: _rt_{b}" for b in sorted(seen)) + "}")
        self.lines.append("")

    # ---- public API ----
    def api_params(self, s: FunctionSchema, method: bool) -> tuple[list[str], list[Argument], bool]:
        """Python parameter strings for the public signature (no out), and whether varargs sizes apply."""
        args = [a for a in s.arguments if a not in s.out_arguments]
        if method:
            args = _without_self(args)
        positional = [a for a in args if not a.kwarg_only]
        varargs = (
            len(positional) == 1
            and positional[0].type.is_int_list
            and not positional[0].type.optional
            and positional[0].type.list_size is None
            and positional[0].default is None
        )
        params: list[str] = []
        if method:
            params.append("self")
        kw_started = False
        for a in args:
            name = "input" if (a.name == "self" and not method) else py_name(a.name)
            if varargs and a is positional[0]:
                params.append(f"*{name}")
                kw_started = True
                continue
            if a.kwarg_only and not kw_started:
                params.append("*")
                kw_started = True
            d = py_default(a)
            params.append(f"{name}={d}" if d is not None else name)
        return params, args, varargs

    def call_args(self, s: FunctionSchema, method: bool, varargs_name: str | None) -> list[str]:
        out = []
        for _i, a in enumerate(s.arguments):
            if a in s.out_arguments:
                continue
            if a.name == "self":
                out.append("self" if method else "input")
            else:
                out.append(py_name(a.name))
        return out

    def emit_api(self, name: str, overloads: list[NativeFunction], method: bool) -> str | None:
        """Writes one public function (or method) for all overloads of `name`; returns its Python name."""
        functional = [f for f in overloads if not f.schema.is_out]
        outs = [f for f in overloads if f.schema.is_out]
        if not functional:
            functional, outs = outs, []
        pyfn = f"_m_{name}" if method else f"_f_{name}"
        display = name.split("__", 1)[1] if "__" in name.strip("_") else name  # special__erf: erf
        L = self.lines
        if len(functional) == 1:
            f = functional[0]
            s = f.schema
            params, args, varargs = self.api_params(s, method)
            out_fn = None
            if not method:
                for o in outs:
                    if o.schema.functional_signature_key == s.functional_signature_key:
                        out_fn = o
                        break
                if out_fn is None and outs and len(outs) == 1:
                    out_fn = outs[0]
            if out_fn is not None:
                if "*" not in params and not any(p.startswith("*") for p in params):
                    params.append("*")
                params.append("out=None")
            factory = is_factory(s)
            if factory:
                if "*" not in params and not any(p.startswith("*") for p in params):
                    params.append("*")
                params.append("requires_grad=False")
            # a varargs size list may also be passed by keyword (zeros(size=(2, 3)))
            def_params = params + (["**_kw"] if varargs else [])
            L.append(f"def {pyfn}({', '.join(def_params)}):")
            L += self.number_checks(s, params, method, display)
            if varargs:
                vn = py_name(next(a for a in args if not a.kwarg_only).name)
                L.append(f"    {vn} = _varargs_kw({vn}, _kw, {vn!r}) if _kw else _varargs({vn})")
            cargs = self.call_args(s, method, None)
            ret = "_r = " if factory else "return "
            if out_fn is not None:
                L.append("    if out is None:")
                L.append(f"        {ret}_call_{mangle(s)}({', '.join(cargs)})")
                if factory:
                    L.append("    else:")
                n_out = len(out_fn.schema.out_arguments)
                ocargs = self.call_args(out_fn.schema, method, None)
                ind = "        " if factory else "    "
                if n_out == 1:
                    L.append(f"{ind}{ret}_call_{mangle(out_fn.schema)}({', '.join([*ocargs, 'out'])})")
                else:
                    L.append(f"{ind}{ret}_call_{mangle(out_fn.schema)}({', '.join(ocargs)}, *_out_tuple(out, {n_out}))")
            else:
                L.append(f"    {ret}_call_{mangle(s)}({', '.join(cargs)})")
            if factory:
                L.append("    if requires_grad:")
                L.append("        _r.requires_grad_(True)")
                L.append("    return _r")
            L.append("")
            self.emit_pyi(name, s, params, method, out_fn is not None)
            return pyfn
        # several functional overloads: resolve at call time
        cands = []
        any_factory = False
        for f in functional:
            s = f.schema
            m = mangle(s)
            params, args, varargs = self.api_params(s, method)
            out_fn = None
            adapt_out = False
            if not method:
                for o in outs:
                    if o.schema.functional_signature_key == s.functional_signature_key:
                        out_fn = o
                if out_fn is None and is_factory(s):
                    # arange(end, *, dtype, ...) pairs with arange.out(end, *, out)
                    for o in outs:
                        if o.schema.functional_signature_key == options_free_key(s):
                            out_fn, adapt_out = o, True
            if out_fn is not None:
                if "*" not in params and not any(p.startswith("*") for p in params):
                    params.append("*")
                params.append("out=None")
            if is_factory(s):
                any_factory = True
            binder = f"_bind_{'m' if method else 'f'}_{m}"
            cargs = self.call_args(s, method, None)
            L.append(f"def {binder}({', '.join(params + (['**_kw'] if varargs else []))}):")
            L += self.number_checks(s, params, method, display)
            if varargs:
                vn = py_name(next(a for a in args if not a.kwarg_only).name)
                L.append(f"    {vn} = _varargs_kw({vn}, _kw, {vn!r}) if _kw else _varargs({vn})")
            out_expr = "out" if out_fn is not None else "None"
            L.append(f"    return ({', '.join(cargs)}{',' if len(cargs) == 1 else ''}), {out_expr}")
            kinds = [type_kind(a.type) for a in s.arguments if a not in s.out_arguments]
            call_out = f"_call_{mangle(out_fn.schema)}" if out_fn is not None else "None"
            if adapt_out:
                # the resolver passes the functional overload's arguments: drop the options
                assert out_fn is not None
                call_out = f"_outcall_{'m' if method else 'f'}_{m}"
                ocargs = self.call_args(out_fn.schema, method, None)
                n_out = len(out_fn.schema.out_arguments)
                outs_p = [f"_out{i}" for i in range(n_out)]
                L.append(f"def {call_out}({', '.join(cargs + outs_p)}):")
                L.append(f"    return _call_{mangle(out_fn.schema)}({', '.join(ocargs + outs_p)})")
            sig = f"({', '.join(params)})"
            cands.append(f"({binder}, {kinds!r}, _call_{m}, {call_out}, {sig!r})")
            self.emit_pyi(name, s, params, method, out_fn is not None, overload=True)
        L.append(f"_cands_{'m' if method else 'f'}_{name} = [{', '.join(cands)}]")
        rg = "requires_grad=False, " if any_factory else ""
        ret = "_r = " if any_factory else "return "
        if method:
            L.append(f"def {pyfn}(self, *args, {rg}**kwargs):")
            L.append(f"    {ret}_resolve({name!r}, _cands_m_{name}, (self, *args), kwargs)")
        else:
            L.append(f"def {pyfn}(*args, {rg}**kwargs):")
            L.append(f"    {ret}_resolve({name!r}, _cands_f_{name}, args, kwargs)")
        if any_factory:
            L.append("    if requires_grad:")
            L.append("        _r.requires_grad_(True)")
            L.append("    return _r")
        L.append("")
        return pyfn

    def emit_pyi(
        self, name: str, s: FunctionSchema, params: list[str], method: bool, has_out: bool, overload: bool = False
    ) -> None:
        args = [a for a in s.arguments if a not in s.out_arguments]
        if method:
            args = _without_self(args)
        by_py = {("input" if (a.name == "self" and not method) else py_name(a.name)): a for a in args}
        typed = []
        for p in params:
            if p in ("*", "self"):
                typed.append(p)
                continue
            star = "*" if p.startswith("*") else ""
            p = p.lstrip("*")
            pname, _, default = p.partition("=")
            if pname == "out" and pname not in by_py:  # out=, not an input named out (a backward's)
                typed.append("out: Tensor | Sequence[Tensor] | None = None")
                continue
            if pname == "requires_grad" and pname not in by_py:
                typed.append("requires_grad: bool = False")
                continue
            a = by_py.get(pname)
            ty = pyi_type(a.type) if a else "object"
            if star:
                ty = "int | Sequence[int]"
            typed.append(f"{star}{pname}: {ty}" + (" = ..." if default else ""))
        if len(s.returns) == 0:
            ret = "None"
        elif len(s.returns) == 1:
            r = s.returns[0].type
            ret = (
                "list[Tensor]"
                if r.is_list
                else {
                    "Tensor": "Tensor",
                    "bool": "bool",
                    "int": "int",
                    "float": "float",
                    "Scalar": "Number",
                    "ScalarType": "dtype",
                }.get(r.base, "object")
            )
        else:
            ret = "tuple[Tensor, ...]"
        deco = "    @overload\n" if (overload and method) else ("@overload\n" if overload else "")
        indent = "    " if method else ""
        self.pyi.append(f"{deco}{indent}def {name}({', '.join(typed)}) -> {ret}: ...")

    def generate(self) -> tuple[str, str, list[tuple[str, str, str]]]:
        L = self.lines
        L += [
            "# Generated by tools/codegen/gen.py from native_functions.yaml. Do not edit.",
            "# ruff: noqa",
            "import math as _math",
            "from ember.aten import _dispatch",
            "from ember.aten._dispatch import (",
            "    register_schema as _register, tls as _tls, device_keys as _device_keys, CPU_KEYS as _CPU_KEYS,",
            "    keys_of_list as _keys_of_list, set_view_base as _set_view_base,",
            "    set_view_base_list as _set_view_base_list, bump_version as _bump, bump_versions as _bump_list,",
            "    intlist as _intlist,",
            "    varargs as _varargs, out_tuple as _out_tuple, resolve_overload as _resolve,",
            "    return_type as _return_type, c_entry as _c_entry,",
            ")",
            "from ember.aten import _memory_format as _mf",
            "from ember.aten import _dtypes",
            "",
            "",
            "_NUMBER_TYPES = (int, float, bool, complex)",
            "",
            "",
            "def _not_tensor(fn, name, pos, value, what='Tensor'):",
            "    # a Python number for a Tensor argument of an op with python_numbers (native_functions.yaml),",
            "    # or a Tensor for a Tensor[] argument",
            "    where = f' (position {pos})' if pos else ''",
            "    return TypeError(f\"{fn}(): argument '{name}'{where} must be {what}, not {type(value).__name__}\")",
            "",
            "",
            "def _varargs_kw(pos, kw, name):",
            "    # f(size=(2, 3)) for a varargs f(*size)",
            "    bad = [k for k in kw if k != name]",
            "    if bad:",
            "        raise TypeError(f\"got an unexpected keyword argument '{bad[0]}'\")",
            "    if pos:",
            "        raise TypeError(f\"got multiple values for argument '{name}'\")",
            "    return _varargs((kw[name],))",
            "",
        ]
        self.emit_return_types()
        for f in self.functions:
            self.emit_call(f)

        # group overloads by (python module, public name)
        groups: dict[tuple[str, str], list[NativeFunction]] = defaultdict(list)
        methods: dict[str, list[NativeFunction]] = defaultdict(list)
        for f in self.functions:
            if f.manual_python:
                continue
            name = f.schema.name
            if "function" in f.variants:
                mod = f.python_module or ""
                pub = name
                if mod and mod != "nn" and name.startswith(mod + "_"):
                    pub = name[len(mod) + 1 :]
                groups[(mod, pub)].append(f)
            if "method" in f.variants:
                methods[name].append(f)
        # out overloads join their functional group
        for f in self.functions:
            if f.manual_python or "function" in f.variants:
                continue
        exports: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.pyi += [
            "# Generated by tools/codegen/gen.py. Do not edit.",
            "from collections.abc import Sequence",
            "from collections.abc import Callable",
            "from typing import Any, overload",
            "from ember.aten._tensor import Tensor",
            "from ember.c10py import dtype, device",
            "from ember.aten import Generator",
            "Number = int | float | bool",
            "DeviceLike = device | str | int",
            "",
        ]
        for (mod, pub), overloads in sorted(groups.items()):
            fname = self.emit_api(f"{mod}__{pub}" if mod else pub, overloads, method=False)
            exports[mod].append((pub, fname))  # type: ignore[arg-type]
        # the rest of _ops.py that other modules use: the dispatcher handles and the tables
        # (a module __getattr__ would do, but mypy leaves it unresolved in an import cycle)
        self.pyi += [f"{name}: Callable[..., Any]" for name in sorted(self.call_names)]
        self.pyi += [
            "FUNCTIONS: dict[str, dict[str, Callable[..., Any]]]",
            "TENSOR_METHODS: dict[str, Callable[..., Any]]",
            "RETURN_TYPES: dict[str, type]",
            "PYTHON_KERNELS: list[tuple[str, str, str]]",
            "OPS: dict[str, Any]",
            "def _varargs(size: Any) -> Any: ...",
        ]
        self.pyi.append("class _TensorMethods:")
        method_names: list[tuple[str, str]] = []
        for name, overloads in sorted(methods.items()):
            fname = self.emit_api(name, overloads, method=True)
            method_names.append((name, fname))  # type: ignore[arg-type]
        L.append("FUNCTIONS = {")
        for mod in sorted(exports):
            L.append(f"    {mod!r}: {{" + ", ".join(f"{p!r}: {fn}" for p, fn in sorted(exports[mod])) + "},")
        L.append("}")
        L.append("TENSOR_METHODS = {" + ", ".join(f"{n!r}: {fn}" for n, fn in method_names) + "}")
        composite = []
        for f in self.functions:
            if f.is_composite_implicit:
                composite.append((f.qualname, "CompositeImplicitAutograd", mangle(f.schema)))
            for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
                if key in f.dispatch:
                    composite.append((f.qualname, key, f.dispatch[key]))
        L.append("PYTHON_KERNELS = " + repr(composite))
        L.append("OPS = {" + ", ".join(f"{f.qualname!r}: _op_{mangle(f.schema)}" for f in self.functions) + "}")
        L.append("")
        # the pyi: functions then methods; fix function names with module prefixes
        return "\n".join(L), "\n".join(self.pyi) + "\n", composite
