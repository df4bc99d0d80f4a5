"""The schema language of native_functions.yaml, parsed into plain dataclasses.

Used twice, from one file: by the code generator at build time (tools/codegen loads
this file by path) and at run time by ember.aten.library for operators defined from
Python or C++ extensions. It must not import anything from ember.

    func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)

is a FunctionSchema named ``add`` with overload ``out``; ``Tensor(a!)`` marks an
argument the op writes through (and returns); arguments after ``*`` are keyword-only.
Everything the generators know about an operator comes from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BASE_TYPES = {
    "Tensor",
    "int",
    "SymInt",
    "float",
    "bool",
    "str",
    "Scalar",
    "ScalarType",
    "Device",
    "Layout",
    "MemoryFormat",
    "Generator",
}


@dataclass(frozen=True)
class Type:
    base: str  # Tensor, int, float, ...
    is_list: bool = False
    list_size: int | None = None  # int[2] -> 2
    optional: bool = False  # the whole type is optional (int? / int[]?)
    elem_optional: bool = False  # Tensor?[]
    alias: str | None = None  # "a" in Tensor(a) / Tensor(a!)
    mutable: bool = False  # the "!" in Tensor(a!)

    @staticmethod
    def parse(text: str) -> Type:
        t = text.strip()
        m = re.fullmatch(r"(\w+)(\((\w+)(!?)\))?(\?)?(\[(\d*)\])?(\?)?", t)
        if not m:
            raise ValueError(f"cannot parse type {text!r}")
        base, _, alias, bang, q1, is_list, size, q2 = m.groups()
        if base not in BASE_TYPES:
            raise ValueError(f"unknown type {base!r} in {text!r}")
        if is_list:
            return Type(
                base,
                is_list=True,
                list_size=int(size) if size else None,
                optional=bool(q2),
                elem_optional=bool(q1),
                alias=alias,
                mutable=bool(bang),
            )
        return Type(base, optional=bool(q1), alias=alias, mutable=bool(bang))

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list

    @property
    def is_int_list(self) -> bool:
        return self.base in ("int", "SymInt") and self.is_list

    def __str__(self) -> str:
        s = self.base
        if self.alias:
            s += f"({self.alias}{'!' if self.mutable else ''})"
        if self.is_list:
            s += ("?" if self.elem_optional else "") + f"[{self.list_size or ''}]"
        if self.optional:
            s += "?"
        return s


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None
    kwarg_only: bool

    def __str__(self) -> str:
        d = f"={self.default}" if self.default is not None else ""
        return f"{self.type} {self.name}{d}"


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type


def _split_top_level(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


@dataclass(frozen=True)
class FunctionSchema:
    name: str  # "add" / "add_"
    overload: str  # "out" / "" for the default overload
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    text: str

    @staticmethod
    def parse(text: str) -> FunctionSchema:
        m = re.fullmatch(r"\s*([\w.]+)\((.*)\)\s*->\s*(.+?)\s*", text)
        if not m:
            raise ValueError(f"cannot parse schema {text!r}")
        full, args_text, ret_text = m.groups()
        name, _, overload = full.partition(".")
        args: list[Argument] = []
        kwarg_only = False
        for part in _split_top_level(args_text):
            if part == "*":
                kwarg_only = True
                continue
            am = re.fullmatch(r"(\S+)\s+(\w+)(\s*=\s*(.+))?", part)
            if not am:
                raise ValueError(f"cannot parse argument {part!r} in {text!r}")
            ty, arg_name, _, default = am.groups()
            args.append(Argument(arg_name, Type.parse(ty), default.strip() if default else None, kwarg_only))
        rets: list[Return] = []
        rt = ret_text.strip()
        if rt.startswith("(") and rt.endswith(")"):
            inner = rt[1:-1].strip()
            items = _split_top_level(inner) if inner else []
        else:
            items = [rt]
        for item in items:
            bits = item.split()
            if len(bits) == 2:
                rets.append(Return(bits[1], Type.parse(bits[0])))
            else:
                rets.append(Return(None, Type.parse(bits[0])))
        return FunctionSchema(name, overload, tuple(args), tuple(rets), text.strip())

    # ---- derived facts ----
    @property
    def qualname(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.endswith("__")

    @property
    def out_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only and a.type.mutable)

    @property
    def is_out(self) -> bool:
        return bool(self.out_arguments)

    @property
    def mutated_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.type.mutable)

    @property
    def returns_alias_of_input(self) -> list[str | None]:
        """For each return: the name of the input it aliases (mutated or view), else None."""
        out: list[str | None] = []
        for r in self.returns:
            hit = None
            if r.type.alias:
                for a in self.arguments:
                    if a.type.alias == r.type.alias:
                        hit = a.name
                        break
            out.append(hit)
        return out

    @property
    def is_view(self) -> bool:
        """Returns a view (Tensor(a) without '!') of an input."""
        return any(r.type.alias and not r.type.mutable for r in self.returns)

    @property
    def view_source(self) -> str | None:
        for r in self.returns:
            if r.type.alias and not r.type.mutable:
                for a in self.arguments:
                    if a.type.alias == r.type.alias:
                        return a.name
        return None

    @property
    def tensor_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.type.base == "Tensor")

    @property
    def functional_signature_key(self) -> tuple[str, ...]:
        """Argument types without the out arguments: what an out overload shares with its functional twin."""
        return tuple(
            str(a.type).replace("(a!)", "").replace("(a)", "") for a in self.arguments if a not in self.out_arguments
        )


@dataclass
class NativeFunction:
    schema: FunctionSchema
    variants: set[str]
    dispatch: dict[str, str]  # key -> kernel name (C++ for CPU/CUDA, Python for Composite*)
    structured_delegate: str | None
    python_module: str | None  # None (ember.aten), "linalg", "nn", "special", "fft"
    manual_python: bool  # the public Python function is written by hand
    tags: set[str] = field(default_factory=set)
    # `python_numbers: [other]`: the Tensor arguments that also take a Python number in the
    # public functions and methods, as PyTorch's `.Scalar` overloads do; its other Tensor
    # arguments refuse one (torch.lt(2, t), torch.maximum(t, 2): TypeError). Given on one
    # overload, it holds for every overload of the name (lt, lt.Tensor_out, lt_). Without it,
    # every Tensor argument takes a number (a 0-dim wrapped number).
    python_numbers: tuple[str, ...] | None = None
    line: int = 0

    @property
    def qualname(self) -> str:
        return self.schema.qualname

    @property
    def is_composite_implicit(self) -> bool:
        return not self.dispatch and not self.structured_delegate


def parse_native_functions(entries: list[dict]) -> list[NativeFunction]:
    out: list[NativeFunction] = []
    seen: set[str] = set()
    for e in entries:
        unknown = set(e) - {
            "func",
            "variants",
            "dispatch",
            "structured_delegate",
            "python_module",
            "manual_python",
            "python_numbers",
            "tags",
            "__line__",
        }
        if unknown:
            raise ValueError(f"{e.get('func')}: unknown keys {sorted(unknown)}")
        schema = FunctionSchema.parse(e["func"])
        if schema.qualname in seen:
            raise ValueError(f"duplicate operator {schema.qualname}")
        seen.add(schema.qualname)
        variants = {v.strip() for v in str(e.get("variants", "function")).split(",")}
        dispatch: dict[str, str] = {}
        for keys, kernel in (e.get("dispatch") or {}).items():
            for k in str(keys).split(","):
                dispatch[k.strip()] = str(kernel).strip()
        tags = e.get("tags") or []
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        out.append(
            NativeFunction(
                schema=schema,
                variants=variants,
                dispatch=dispatch,
                structured_delegate=e.get("structured_delegate"),
                python_module=e.get("python_module"),
                manual_python=bool(e.get("manual_python", False)),
                tags=set(tags),
                python_numbers=None if e.get("python_numbers") is None else tuple(e["python_numbers"]),
                line=int(e.get("__line__", 0)),
            )
        )
    by_name = {f.qualname: f for f in out}
    for f in out:
        if f.structured_delegate and f.structured_delegate not in by_name:
            raise ValueError(f"{f.qualname}: structured_delegate {f.structured_delegate} is not an operator")
        if f.structured_delegate and f.dispatch:
            raise ValueError(f"{f.qualname}: has both dispatch and structured_delegate")
        tensors = {a.name for a in f.schema.arguments if a.type.base == "Tensor"}
        if f.python_numbers is not None and not set(f.python_numbers) <= tensors:
            raise ValueError(
                f"{f.qualname}: python_numbers names no Tensor argument {sorted(set(f.python_numbers) - tensors)}"
            )
    return out
