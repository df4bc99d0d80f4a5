"""derivatives.yaml -> backward Node classes and Autograd kernels (Python source).

The module is generated when the ember-autograd wheel is built (``hatch_build.py``, from
this package's derivatives.yaml and aten's native_functions.yaml) and installed as
``ember/autograd/_generated.py``: open it to read any ``*Backward0`` class or ``_k_*``
kernel. ``python packages/autograd/hatch_build.py OUT_DIR`` writes the same file for
reading without a build. If the installed aten's operators differ from the ones it was
generated for (its FINGERPRINT), ``_kernels.install()`` generates it again in memory;
nothing is ever written outside the install.

For an entry

    - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
      self: grad * other
      other: grad * self

it writes a Node class ``MulBackward0`` whose ``apply`` evaluates each input's formula
when that input needs a gradient, and a kernel for the Autograd dispatch key that
(1) finds which inputs require grad -- none: redispatch and return; (2) creates the
node, its edges, and saves exactly what the needed formulas use (``self.shape`` is
saved as a tuple, not the tensor); (3) runs the operator below Autograd; (4) makes
the outputs the node's outputs. The in-place variant (``mul_.Tensor``) gets a kernel
from the same entry (checks, rebasing a view's history, ``result`` = self after the
op); ``.out`` variants refuse inputs that require grad.

Formulas are Python expressions, rewritten with ``ast`` before compilation:
``x.shape`` / ``x.size()`` / ``x.dtype`` / ``x.device`` / ``x.dim()`` / ``x.ndim`` /
``x.numel()`` / ``x.stride()`` / ``x.storage_offset()`` / ``x.is_contiguous()`` of a
tensor argument (or of ``result``) become values saved at forward time, and
``xs.shapes`` / ``xs.dtypes`` of a ``Tensor[]`` argument the lists of its elements'.
Any other use of a tensor name saves the tensor (a SavedVariable, version-checked).
"""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass, field
from typing import Any

from ember.aten.extension import FunctionSchema

# attribute (or zero-argument method) of a tensor -> snapshot helper suffix
_TENSOR_ATTRS = {"shape": "shape", "dtype": "dtype", "device": "device", "ndim": "dim"}
_TENSOR_METHODS = {
    "size": "shape",
    "dim": "dim",
    "numel": "numel",
    "stride": "stride",
    "storage_offset": "storage_offset",
    "is_contiguous": "is_contiguous",
}
_LIST_ATTRS = {"shapes": "shapes", "dtypes": "dtypes"}

# class names PyTorch gives that do not follow the <Name>Backward<N> rule
_SPECIAL_NAMES = {"copy_": "CopyBackwards"}


class DerivativesError(ValueError):
    pass


def py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def camel(name: str) -> str:
    # str.title(), as PyTorch's generator: a letter after a digit is capitalised too
    # (log1p -> Log1PBackward0, max_pool2d_with_indices -> MaxPool2DWithIndicesBackward0)
    return "".join(p.title() for p in name.strip("_").split("_") if p)


@dataclass
class Formula:
    inputs: tuple[str, ...]  # schema names of the inputs this formula gives gradients for
    source: str  # as written
    expr: str = ""  # rewritten Python expression
    tensors: set[str] = field(default_factory=set)  # tensor args / results used whole
    values: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (source name, attr)
    scalars: set[str] = field(default_factory=set)  # non-tensor args used
    grads: set[str] = field(default_factory=set)  # grad, grads, grad_<output>, grad_input_mask


@dataclass
class Entry:
    schema: FunctionSchema
    node_name: str
    formulas: list[Formula]
    non_differentiable: set[str]
    output_differentiability: list[bool]
    line: int

    @property
    def qualname(self) -> str:
        return self.schema.qualname

    @property
    def differentiable_inputs(self) -> list[str]:
        named = {n for f in self.formulas for n in f.inputs}
        return [a.name for a in self.schema.arguments if a.name in named]

    @property
    def all_outputs_non_differentiable(self) -> bool:
        return not any(self.output_differentiability)


def output_names(schema: FunctionSchema) -> list[str]:
    rets = schema.returns
    if len(rets) == 1:
        return ["result"]
    return [r.name or f"result{i}" for i, r in enumerate(rets)]


def parse_entries(raw: list[dict[str, Any]]) -> list[Entry]:
    """The yaml's list of entries -> Entry objects (schema parsed, formulas analysed, names numbered)."""
    counters: dict[str, int] = {}
    entries: list[Entry] = []
    seen: set[str] = set()
    for e in raw:
        line = int(e.pop("__line__", 0)) if isinstance(e, dict) else 0
        if not isinstance(e, dict) or "name" not in e:
            raise DerivativesError(f"derivatives.yaml:{line}: every entry needs a 'name:' (the schema)")
        schema = FunctionSchema.parse(str(e["name"]))
        if schema.qualname in seen:
            raise DerivativesError(f"derivatives.yaml:{line}: {schema.qualname} is listed twice")
        seen.add(schema.qualname)
        base = schema.name
        if base in _SPECIAL_NAMES:
            node_name = _SPECIAL_NAMES[base]
        else:
            key = camel(base)
            n = counters.get(key, 0)
            counters[key] = n + 1
            node_name = f"{key}Backward{n}"
        args = {a.name: a for a in schema.arguments}
        outs = output_names(schema)
        od = e.get("output_differentiability")
        if od is None:
            od = [True] * len(schema.returns)
        if not isinstance(od, list) or len(od) != len(schema.returns):
            raise DerivativesError(
                f"derivatives.yaml:{line}: {schema.qualname}: output_differentiability needs one bool per return"
            )
        formulas: list[Formula] = []
        nondiff: set[str] = set()
        for key, value in e.items():
            if key in ("name", "output_differentiability", "result", "dispatch"):
                continue  # `result:` is a forward-mode formula in PyTorch's file; ember has no forward mode
            names = tuple(k.strip() for k in str(key).split(","))
            for arg in names:
                if arg not in args:
                    raise DerivativesError(f"derivatives.yaml:{line}: {schema.qualname} has no argument '{arg}'")
                if args[arg].type.base != "Tensor":
                    raise DerivativesError(
                        f"derivatives.yaml:{line}: {schema.qualname}: '{arg}' is not a Tensor argument"
                    )
            text = str(value).strip()
            if text == "non_differentiable":
                nondiff.update(names)
                continue
            f = Formula(names, text)
            _analyse(f, schema, outs, line)
            formulas.append(f)
        entries.append(Entry(schema, node_name, formulas, nondiff, [bool(x) for x in od], line))
    return entries


class _Rewriter(ast.NodeTransformer):
    def __init__(self, tensor_names: set[str], list_names: set[str]) -> None:
        self.tensor_names = tensor_names
        self.list_names = list_names
        self.values: dict[str, tuple[str, str]] = {}

    def _snap(self, name: str, attr: str, node: ast.AST) -> ast.Name:
        local = f"{name}__{attr}"
        self.values[local] = (name, attr)
        return ast.copy_location(ast.Name(local, ast.Load()), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in self.tensor_names
            and f.attr in _TENSOR_METHODS
            and not node.args
            and not node.keywords
        ):
            return self._snap(f.value.id, _TENSOR_METHODS[f.attr], node)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.value.id in self.tensor_names and node.attr in _TENSOR_ATTRS:
                return self._snap(node.value.id, _TENSOR_ATTRS[node.attr], node)
            if node.value.id in self.list_names and node.attr in _LIST_ATTRS:
                return self._snap(node.value.id, _LIST_ATTRS[node.attr], node)
        self.generic_visit(node)
        return node


def _free_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            for t in ast.walk(node.target):
                if isinstance(t, ast.Name):
                    bound.add(t.id)
        elif isinstance(node, ast.Lambda):
            bound.update(a.arg for a in node.args.args)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _analyse(f: Formula, schema: FunctionSchema, outs: list[str], line: int) -> None:
    args = {a.name: a for a in schema.arguments}
    tensor_names = {n for n, a in args.items() if a.type.is_tensor} | set(outs)
    list_names = {n for n, a in args.items() if a.type.is_tensor_list}
    try:
        tree = ast.parse(f.source, mode="eval")
    except SyntaxError as e:
        raise DerivativesError(f"derivatives.yaml:{line}: {schema.qualname}: bad formula {f.source!r}: {e}") from None
    rw = _Rewriter(tensor_names, list_names)
    tree = rw.visit(tree)
    ast.fix_missing_locations(tree)
    f.values = rw.values
    f.expr = ast.unparse(tree)
    grad_names = {"grad", "grads", "grad_input_mask"} | {f"grad_{o}" for o in outs}
    for n in _free_names(tree):
        if n in f.values:
            continue
        if n in grad_names:
            f.grads.add(n)
        elif n in args:
            if args[n].type.base == "Tensor":
                f.tensors.add(n)
            else:
                f.scalars.add(n)
        elif n in outs:
            f.tensors.add(n)
        # anything else is a helper function or constant (checked when the module is compiled)


# ---------------------------------------------------------------------------
# code generation
# ---------------------------------------------------------------------------


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str = "", indent: int = 0) -> None:
        self.lines.append("    " * indent + line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def mangle(qualname: str) -> str:
    return qualname.replace(".", "_")


def _cond_for(entry: Entry, inputs: tuple[str, ...]) -> str:
    """Python condition (in the kernel) that some of these inputs need a gradient."""
    parts = []
    for n in inputs:
        a = next(x for x in entry.schema.arguments if x.name == n)
        parts.append(f"_any_edge(es_{n})" if a.type.is_tensor_list else f"e_{n} is not None")
    return " or ".join(parts)


@dataclass
class Field:
    name: str  # slot name f_<local>
    local: str  # local variable name in apply()
    kind: str  # "tensor" | "tensor_list" | "output" | "value" | "scalar" | "output_value"
    source: str  # schema name the value comes from
    attr: str = ""  # snapshot kind for values
    formulas: list[int] = field(default_factory=list)  # indices of the formulas that use it


def _fields(entry: Entry) -> list[Field]:
    args = {a.name: a for a in entry.schema.arguments}
    outs = output_names(entry.schema)
    fields: dict[str, Field] = {}
    for i, f in enumerate(entry.formulas):
        for n in sorted(f.tensors):
            if n in outs:
                kind = "output"
            elif args[n].type.is_tensor_list:
                kind = "tensor_list"
            else:
                kind = "tensor"
            fields.setdefault(n, Field(f"f_{n}", py_name(n), kind, n)).formulas.append(i)
        for local, (src, attr) in sorted(f.values.items()):
            kind = "output_value" if src in outs else "value"
            fields.setdefault(local, Field(f"f_{local}", local, kind, src, attr)).formulas.append(i)
        for n in sorted(f.scalars):
            fields.setdefault(n, Field(f"f_{n}", py_name(n), "scalar", n)).formulas.append(i)
    return list(fields.values())


def gen_node_class(w: Writer, entry: Entry) -> None:
    s = entry.schema
    fields = _fields(entry)
    diff = entry.differentiable_inputs
    args = {a.name: a for a in s.arguments}
    list_inputs = [n for n in diff if args[n].type.is_tensor_list]
    outs = output_names(s)
    slots = [f.name for f in fields] + [f"n_{n}" for n in list_inputs]
    saved_tensor_fields = [f.name for f in fields if f.kind in ("tensor", "tensor_list", "output")]
    w(f"class {entry.node_name}(_Node):")
    w(f'"""Backward of {s.qualname} (derivatives.yaml line {entry.line})."""', 1)
    w(f"__slots__ = {tuple(slots)!r}", 1)
    w(f"_saved_fields = {tuple(saved_tensor_fields)!r}", 1)
    w(f"_op = {s.qualname!r}", 1)
    w("", 1)
    w("def __init__(node):", 1)
    w("node.next_edges = ()", 2)
    w("node._input_meta = ()", 2)
    w("node._seq = _next_seq()", 2)
    for f in fields:
        w(f"node.{f.name} = None", 2)
    w("", 1)
    w("def apply(node, grads):", 1)
    all_grads = set().union(*(f.grads for f in entry.formulas)) if entry.formulas else set()
    w("grad = grads[0]", 2)
    if len(outs) == 1 and not s.returns[0].type.is_list:
        w("if grad is None:", 2)
    else:
        for i, o in enumerate(outs):
            if f"grad_{o}" in all_grads:
                w(f"grad_{o} = grads[{i}]", 2)
        w("if all(g is None for g in grads):", 2)
    w("return [None] * len(node.next_edges)", 3)
    w("e = node.next_edges", 2)
    w("out = [None] * len(e)", 2)
    # positions of each differentiable input among the edges
    pos: dict[str, str] = {}
    if list_inputs:
        w("o = 0", 2)
        for n in diff:
            w(f"o_{n} = o", 2)
            pos[n] = f"o_{n}"
            w(f"o += {'node.n_' + n if n in list_inputs else '1'}", 2)
    else:
        for i, n in enumerate(diff):
            pos[n] = str(i)

    def needs(n: str) -> str:
        if n in list_inputs:
            return f"_any_edge(e[{pos[n]}:{pos[n]} + node.n_{n}])"
        return f"e[{pos[n]}] is not None"

    for f in fields:
        if f.kind in ("tensor", "tensor_list", "output"):
            w(f"{f.local} = _unpack(node.{f.name}, node)", 2)
        else:
            w(f"{f.local} = node.{f.name}", 2)
    for formula in entry.formulas:
        cond = " or ".join(needs(n) for n in formula.inputs)
        w(f"if {cond}:", 2)
        if "grad_input_mask" in formula.grads:
            w(f"grad_input_mask = ({', '.join(needs(n) for n in formula.inputs)},)", 3)
        if len(formula.inputs) == 1:
            n = formula.inputs[0]
            if n in list_inputs:
                w(f"_assign_list(out, {pos[n]}, node.n_{n}, {formula.expr}, {s.qualname!r})", 3)
            else:
                w(f"out[{pos[n]}] = {formula.expr}", 3)
        else:
            w(f"_r = {formula.expr}", 3)
            for j, n in enumerate(formula.inputs):
                if n in list_inputs:
                    w(f"_assign_list(out, {pos[n]}, node.n_{n}, _r[{j}], {s.qualname!r})", 3)
                else:
                    w(f"out[{pos[n]}] = _r[{j}]", 3)
    w("return out", 2)
    if saved_tensor_fields:
        w("", 1)
        w("def release_variables(node):", 1)
        for name in saved_tensor_fields:
            w(f"if node.{name} is not None:", 2)
            w(f"node.{name} = _RELEASED", 3)
    else:
        w("", 1)
        w("def release_variables(node):", 1)
        w("pass", 2)
    for f in fields:
        if f.kind in ("tensor", "tensor_list", "output"):
            w(f"_saved_{f.local.rstrip('_')} = property(lambda node: _unpack(node.{f.name}, node))", 1)
        else:
            w(f"_saved_{f.local} = property(lambda node: node.{f.name})", 1)
    w("")
    w("")


def gen_kernel(w: Writer, entry: Entry, op_schema: FunctionSchema, mode: str) -> str:
    """mode: "functional" (the entry's own op) or "inplace" (a Tensor(a!) self variant of it)."""
    s = op_schema
    m = mangle(s.qualname)
    kname = f"_k_{m}"
    params = [py_name(a.name) for a in s.arguments]
    plist = ", ".join(params)
    args = {a.name: a for a in s.arguments}
    diff = entry.differentiable_inputs
    list_inputs = [n for n in diff if args[n].type.is_tensor_list]
    fields = _fields(entry)
    outs = output_names(entry.schema)
    inplace = mode == "inplace"
    w(f"_rd_{m} = _redispatch({s.qualname!r})  # the op below Autograd, its keys excluded meanwhile")
    w(f"def {kname}(ks, {plist}):")
    for n in diff:
        if n in list_inputs:
            w(f"es_{n} = [_edge(t) for t in {py_name(n)}]", 1)
        else:
            w(f"e_{n} = _edge({py_name(n)})", 1)
    none = " and ".join(f"not _any_edge(es_{n})" if n in list_inputs else f"e_{n} is None" for n in diff) or "True"
    w(f"if {none}:", 1)
    if inplace:
        w("if self._meta is not None:", 2)
        w("_check_no_grad_view(self)", 3)
    for a in s.arguments:
        if a.type.base == "Tensor" and a.name not in diff and a.name not in entry.non_differentiable:
            if not (inplace and a.name == "self"):
                w(f"_check_no_requires_grad({py_name(a.name)}, {a.name!r}, {s.name!r})", 2)
    w(f"return _rd_{m}(ks, {plist})", 2)
    for a in s.arguments:
        if a.type.base == "Tensor" and a.name not in diff and a.name not in entry.non_differentiable:
            if not (inplace and a.name == "self"):
                w(f"_check_no_requires_grad({py_name(a.name)}, {a.name!r}, {s.name!r})", 1)
    if inplace:
        w("_check_inplace(self)", 1)
    w(f"node = {entry.node_name}()", 1)
    edge_items = [f"*es_{n}" if n in list_inputs else f"e_{n}" for n in diff]
    w(f"node.next_edges = ({', '.join(edge_items)}{',' if len(edge_items) == 1 else ''})", 1)
    for n in list_inputs:
        w(f"node.n_{n} = len(es_{n})", 1)
    w("if _anomaly.enabled:", 1)
    w("_record_trace(node)", 2)
    # inputs saved before the op runs
    for f in fields:
        if f.kind in ("output", "output_value"):
            continue
        conds = " or ".join(f"({_cond_for(entry, entry.formulas[i].inputs)})" for i in f.formulas)
        src = py_name(f.source)
        if f.kind == "tensor":
            if inplace and f.source == "self":
                value = "_save(_clone(self))"  # the op overwrites self
            else:
                value = f"_save({src})"
        elif f.kind == "tensor_list":
            value = f"_save_list({src})"
        elif f.kind == "value":
            value = f"_a_{f.attr}({src})"
        else:
            value = src
        w(f"if {conds}:", 1)
        w(f"node.{f.name} = {value}", 2)
    w(f"r = _rd_{m}(ks, {plist})", 1)
    rets = entry.schema.returns
    od = tuple(entry.output_differentiability)
    if inplace:
        w("_rebase_history(self, node)", 1)
    elif len(rets) == 1 and rets[0].type.is_list:
        w("_set_history_list(r, node)", 1)
    elif len(rets) == 1:
        w("_set_history_1(r, node, _AutogradMeta, _AUTOGRAD_BIT)", 1)
    else:
        w(f"_set_history_multi(r, node, {od!r})", 1)
    # outputs saved after
    for f in fields:
        if f.kind not in ("output", "output_value"):
            continue
        conds = " or ".join(f"({_cond_for(entry, entry.formulas[i].inputs)})" for i in f.formulas)
        if inplace:
            val = "self"
        elif len(outs) == 1:
            val = "r"
        else:
            val = f"r[{outs.index(f.source)}]"
        w(f"if {conds}:", 1)
        if f.kind == "output":
            w(f"node.{f.name} = _save_output({val}, {1 if inplace else 0})", 2)
        else:
            w(f"node.{f.name} = _a_{f.attr}({val})", 2)
    if not inplace and s.is_view:
        if rets[0].type.is_list:
            w("for _t in r:", 1)
            w("if _t._meta is not None:", 2)
            w("_mark_view(_t, True)", 3)
        else:
            w("if r._meta is not None:", 1)
            w("_mark_view(r)", 2)
    w("return r", 1)
    w("")
    w("")
    return kname


def gen_module(
    entries: list[Entry],
    variants: dict[str, list[tuple[FunctionSchema, str]]],
    fingerprint_: str = "",
    plan_: list[tuple[str, str]] | None = None,
    skipped: list[str] | None = None,
) -> str:
    """variants: entry qualname -> [(schema of an op to register, mode)]."""
    w = Writer()
    w("# Generated from derivatives.yaml by ember.autograd._codegen (at build time: hatch_build.py). Do not edit.")
    w("# ruff: noqa")
    w('"""Backward nodes (``*Backward0``) and Autograd kernels (``_k_*``) generated from derivatives.yaml."""')
    w("from ember.autograd._kernels import runtime_namespace as _runtime_namespace")
    w("")
    w("# the formulas' helpers (ember.autograd._formulas) and the kernels' runtime helpers (_edge, _save, ...)")
    w("globals().update(_runtime_namespace())")
    w(f"FINGERPRINT = {fingerprint_!r}")
    w("# what _kernels.install() registers: (operator, generated kernel | out= refusal | non-differentiable)")
    w("PLAN = [")
    for item in plan_ or []:
        w(f"{item!r},", 1)
    w("]")
    w("# derivatives.yaml entries aten does not define (tests assert there are none)")
    w(f"SKIPPED = {skipped or []!r}")
    w("")
    w("")
    for e in entries:
        gen_node_class(w, e)
    w("KERNELS = {}")
    for e in entries:
        if e.all_outputs_non_differentiable:
            continue
        for schema, mode in variants.get(e.qualname, []):
            k = gen_kernel(w, e, schema, mode)
            w(f"KERNELS[{schema.qualname!r}] = {k}")
            w("")
    w("NODES = {" + ", ".join(f"{e.qualname!r}: {e.node_name}" for e in entries) + "}")
    return w.text()


# ---------------------------------------------------------------------------
# the whole module: what is registered, and the fingerprint of what it was made from
# ---------------------------------------------------------------------------

# Bump when the generated code's contract with _kernels.py changes.
GENERATOR_VERSION = "2"


def fingerprint(derivatives_yaml: str, schemas: dict[str, str], backend_ops: set[str]) -> str:
    """A digest of everything the generated module depends on: derivatives.yaml, this generator,
    and aten's operators (schema, and whether a backend kernel exists). _kernels.install() uses the
    module built with the wheel only if its fingerprint is the running aten's."""
    import hashlib

    h = hashlib.sha256()
    for part in (GENERATOR_VERSION, derivatives_yaml):
        h.update(part.encode())
    for q in sorted(schemas):
        h.update(f"{q}|{schemas[q]}|{q in backend_ops}\n".encode())
    return h.hexdigest()[:32]


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


def generate(derivatives_yaml: str, schemas: dict[str, str], backend_ops: set[str]) -> str:
    """The source of ember.autograd._generated for aten's operators `schemas` (qualname -> schema text),
    of which `backend_ops` have a CPU/CUDA/CompositeExplicitAutograd kernel.

    Its PLAN lists what _kernels.install() registers: (qualname, "generated" | "out" | "nondiff");
    SKIPPED the entries whose op aten does not define or defines with another schema."""
    import yaml

    parsed = {q: FunctionSchema.parse(t) for q, t in schemas.items()}
    raw = yaml.load(derivatives_yaml, Loader=_line_loader())
    entries = parse_entries(raw or [])
    skipped: list[str] = []
    live: list[Entry] = []
    for e in entries:
        op_schema = parsed.get(e.qualname)
        if op_schema is None:
            skipped.append(f"{e.qualname}: aten has no such operator")
        elif not _schema_matches(e.schema, op_schema):
            skipped.append(f"{e.qualname}: schema differs from aten's {op_schema.text}")
        else:
            live.append(e)
    by_qualname = {e.qualname: e for e in live}
    by_base: dict[str, list[Entry]] = {}
    for e in live:
        by_base.setdefault(e.schema.name, []).append(e)
    variants: dict[str, list[tuple[FunctionSchema, str]]] = {}
    plan: list[tuple[str, str]] = []
    for q, s in parsed.items():
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
    fp = fingerprint(derivatives_yaml, schemas, backend_ops)
    return gen_module(live, variants, fp, plan, skipped)
