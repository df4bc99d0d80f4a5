"""The captured graph: a typed, ordered list of aten operator calls.

This is the IR every part of ember.fx works on (the capture mode writes it, the
Interpreter runs it, the replay and fused backends compile it, exporters lower it).
Its public API, kept stable:

``Graph``
    ``inputs``        list[Value]: the function's tensor arguments, in the order
                      :func:`flatten` visits ``(args, kwargs)``.
    ``lifted``        list[Value]: tensors the function read without receiving them as
                      arguments (parameters, buffers, optimizer state, an existing
                      ``.grad``), bound by identity; ``value.source`` says where each
                      comes from (``("tensor", t)`` or ``("grad", owner_value)``).
    ``placeholders``  ``inputs + lifted``: every value not produced by a node.
    ``nodes``         list[Node] in execution order.
    ``output``        the function's result with every tensor replaced by its Value
                      (tuples, lists and dicts kept; other leaves are constants).
    ``grad_effects``  list[(owner, value | None)]: after the nodes run, ``owner``'s
                      ``.grad`` is set to ``value`` (what ``loss.backward()`` leaves).
    ``code()``/``str(graph)``  readable Python-like code; ``table()`` one row per node.

``Node``
    ``op``            the :class:`ember.aten._dispatch.OpOverload` called
                      (``node.op.full_name == "aten::mul.Tensor"``; custom
                      ``ember.aten.library`` operators keep their namespace).
    ``args``          the schema's arguments, positionally: a Value for a Tensor, a list
                      of Values (or None) for Tensor[] / Tensor?[], constants otherwise.
    ``outputs``       list[Value | None]: the returns, flattened (None: an undefined
                      tensor, e.g. a gradient convolution_backward was not asked for). A return that aliases a
                      mutated argument (``add_`` returns ``self``) *is* that argument's
                      Value: the graph is not SSA for mutation, it is a program that
                      runs in order, as the eager code did.
    ``mutated``       tuple of argument positions the op writes (schema ``(a!)``).
    ``returns``       "none" | "one" | "tuple": how to rebuild the Python result.
    ``schema``        the parsed ``FunctionSchema`` (argument names, alias info).

``Value``
    ``name``          unique in its graph (``x``, ``p0``, ``t12``).
    ``meta``          TensorMeta(shape, stride, dtype, device, requires_grad), as seen at
                      capture time; every value of a graph has one.
    ``kind``          "input" | "lifted" | "node".
    ``node``          the producing Node (None for placeholders).
    ``view_of``       the Value this one is a view of (a view op's output), else None.
    ``storage``       the address of the storage the tensor had at capture: values with the
                      same ``storage`` alias (views, ``reshape`` of a contiguous tensor, an op
                      that returned its input's memory); the memory plan and in-place fusion
                      use it to prove that a buffer is not seen through another name.

The graph is specialised to what capture saw: shapes, dtypes, devices, Python scalars
and control flow. ``ember.fx.compile`` guards on those and recaptures on a change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from ember.aten import extension as _schema  # FunctionSchema

_SHORT_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "b8",
    "complex64": "c64",
    "complex128": "c128",
}


class TensorMeta(NamedTuple):
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: Any  # ember.aten dtype
    device: Any  # ember.aten device
    requires_grad: bool

    @staticmethod
    def of(t: Any) -> TensorMeta:
        impl = t._impl
        return TensorMeta(tuple(impl.sizes), tuple(impl.strides), impl.dtype, t.device, bool(t.requires_grad))

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_contiguous(self) -> bool:
        expected = 1
        for size, stride in reversed(list(zip(self.shape, self.stride, strict=True))):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def __str__(self) -> str:
        name = str(self.dtype).rsplit(".", 1)[-1]
        text = f"{_SHORT_DTYPES.get(name, name)}[{', '.join(str(s) for s in self.shape)}]"
        if self.device.type != "cpu":
            text += f"@{self.device}"
        return text


class Value:
    """A tensor of the graph: a placeholder or one output of a node."""

    __slots__ = ("kind", "meta", "name", "node", "source", "storage", "view_of")

    def __init__(self, name: str, meta: TensorMeta, kind: str, node: Node | None = None) -> None:
        self.name = name
        self.meta = meta
        self.kind = kind
        self.node = node
        self.source: tuple[str, Any] | None = None
        self.view_of: Value | None = None
        self.storage = 0

    def __repr__(self) -> str:
        return f"%{self.name}: {self.meta}"


_parsed: dict[str, _schema.FunctionSchema] = {}


def parse_schema(op: Any) -> _schema.FunctionSchema:
    s = _parsed.get(op.schema)
    if s is None:
        s = _parsed[op.schema] = _schema.FunctionSchema.parse(op.schema)
    return s


class Node:
    """One operator call: ``outputs = op(*args)``."""

    __slots__ = ("args", "index", "mutated", "op", "outputs", "returns", "schema")

    def __init__(self, op: Any, args: tuple[Any, ...], outputs: list[Any], returns: str, index: int) -> None:
        self.op = op
        self.args = args
        self.outputs = outputs
        self.returns = returns
        self.index = index
        self.schema = parse_schema(op)
        names = [a.name for a in self.schema.arguments]
        self.mutated = tuple(names.index(a.name) for a in self.schema.mutated_arguments)

    @property
    def target(self) -> str:
        return self.op.full_name

    def input_values(self) -> Iterator[Value]:
        """Every Value among the arguments (Tensor[] elements included), in order."""
        for a in self.args:
            if isinstance(a, Value):
                yield a
            elif isinstance(a, (list, tuple)):
                for v in a:
                    if isinstance(v, Value):
                        yield v

    def format_call(self) -> str:
        parts = []
        for arg, a in zip(self.args, self.schema.arguments, strict=True):
            text = _format_arg(arg)
            if a.kwarg_only:
                if a.default is not None and _is_default(arg, a.default):
                    continue
                text = f"{a.name}={text}"
            parts.append(text)
        return f"{self.op.full_name}({', '.join(parts)})"

    def __repr__(self) -> str:
        return f"<Node {self.index}: {self.format_call()}>"


def _is_default(arg: Any, default: str) -> bool:
    if default == "None":
        return arg is None
    if default in ("True", "False"):
        return arg is (default == "True")
    try:
        return not isinstance(arg, (Value, list, tuple)) and float(arg) == float(default)
    except (TypeError, ValueError):
        return False


def _format_arg(a: Any) -> str:
    if isinstance(a, Value):
        return a.name
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(v) for v in a) + "]"
    if isinstance(a, tuple):
        return "(" + ", ".join(_format_arg(v) for v in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, float):
        return repr(a)
    if type(a).__name__ in ("dtype", "device", "memory_format"):
        return str(a)
    return repr(a)


# ---------------------------------------------------------------------------
# nested Python structures (a function's args and results)
# ---------------------------------------------------------------------------


def flatten(tree: Any, is_leaf: Callable[[Any], bool]) -> tuple[list[Any], Any]:
    """Leaves of tuples / lists / dicts (in order) and a spec that rebuilds the structure."""
    leaves: list[Any] = []

    def walk(x: Any) -> Any:
        if is_leaf(x):
            leaves.append(x)
            return _LEAF
        if isinstance(x, (tuple, list)):
            return (type(x), [walk(v) for v in x])
        if isinstance(x, dict):
            return (dict, [(k, walk(v)) for k, v in x.items()])
        return ("const", x)

    return leaves, walk(tree)


def unflatten(spec: Any, leaves: Iterator[Any]) -> Any:
    if spec is _LEAF:
        return next(leaves)
    kind, payload = spec
    if kind == "const":
        return payload
    if kind is dict:
        return {k: unflatten(v, leaves) for k, v in payload}
    items = [unflatten(v, leaves) for v in payload]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a named tuple (return_types.max)


class _Leaf:
    def __repr__(self) -> str:
        return "*"


_LEAF = _Leaf()


# ---------------------------------------------------------------------------
# the graph
# ---------------------------------------------------------------------------


class Graph:
    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.inputs: list[Value] = []
        self.lifted: list[Value] = []
        self.nodes: list[Node] = []
        self.output: Any = None
        self.output_spec: Any = None  # flatten() spec of `output`
        self.output_values: list[Any] = []  # flattened leaves of `output`
        self.grad_effects: list[tuple[Value, Value | None]] = []
        self._counter = 0

    @property
    def placeholders(self) -> list[Value]:
        return self.inputs + self.lifted

    def fresh_name(self, prefix: str = "t") -> str:
        used = {v.name for v in self.values()}
        while True:
            name = f"{prefix}{self._counter}"
            self._counter += 1
            if name not in used:
                return name

    def values(self) -> Iterator[Value]:
        yield from self.inputs
        yield from self.lifted
        for n in self.nodes:
            for v in n.outputs:
                if v is not None and v.node is n:
                    yield v

    def set_output(self, output: Any) -> None:
        self.output = output
        self.output_values, self.output_spec = flatten(output, lambda x: isinstance(x, Value))

    def users(self) -> dict[Value, list[Node]]:
        """For each value, the nodes that read it (in order)."""
        out: dict[Value, list[Node]] = {}
        for n in self.nodes:
            for v in n.input_values():
                out.setdefault(v, []).append(n)
        return out

    def mutated_placeholders(self) -> list[Value]:
        """Placeholders (or views of them) some node writes: the graph's mutable inputs."""
        roots = set()
        for n in self.nodes:
            for i in n.mutated:
                for v in _values_in(n.args[i]):
                    while v.view_of is not None:
                        v = v.view_of
                    if v.node is None:
                        roots.add(v)
        return [v for v in self.placeholders if v in roots]

    # ---- printing ----
    def code(self) -> str:
        mutable = set(self.mutated_placeholders())

        def decl(v: Value) -> str:
            return f"{v.name}: {v.meta}" + (" (mutated)" if v in mutable else "")

        lines = [f"def {self.name}({', '.join(decl(v) for v in self.inputs)}):"]
        for v in self.lifted:
            kind, src = v.source or ("tensor", None)
            where = f"{src.name}.grad" if kind == "grad" and src is not None else "bound tensor"
            lines.append(f"    # lifted {decl(v)} = {where}")
        for n in self.nodes:
            new = [v for v in n.outputs if v is not None and v.node is n]
            call = n.format_call()
            if not n.outputs:
                lines.append(f"    {call}")
            elif not new:
                lines.append(f"    {', '.join(v.name for v in n.outputs if v is not None)} = {call}  # in place")
            else:
                lhs = ", ".join(
                    "_" if v is None else f"{v.name}: {v.meta}" if v.node is n else v.name for v in n.outputs
                )
                lines.append(f"    {lhs} = {call}")
        for owner, g in self.grad_effects:
            lines.append(f"    {owner.name}.grad = {g.name if g is not None else 'None'}")
        lines.append(f"    return {_format_output(self.output)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.code()

    def table(self) -> str:
        """One row per placeholder and node: index, name, op, arguments, shape/dtype/device."""
        rows = [("#", "name", "op", "args", "value")]
        for v in self.inputs:
            rows.append(("", v.name, "input", "", str(v.meta)))
        for v in self.lifted:
            rows.append(("", v.name, "lifted", "", str(v.meta)))
        for n in self.nodes:
            args = n.format_call()[len(n.op.full_name) + 1 : -1]
            outs = n.outputs or [None]
            for j, v in enumerate(outs):
                rows.append(
                    (
                        str(n.index) if j == 0 else "",
                        v.name if v is not None else "_",
                        n.op.full_name if j == 0 else "",
                        (args if len(args) <= 60 else args[:57] + "...") if j == 0 else "",
                        str(v.meta) if v is not None else "",
                    )
                )
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        out.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.placeholders)} placeholders, {len(self.nodes)} nodes>"


def _values_in(a: Any) -> list[Value]:
    if isinstance(a, Value):
        return [a]
    if isinstance(a, (list, tuple)):
        return [v for v in a if isinstance(v, Value)]
    return []


def _format_output(o: Any) -> str:
    if isinstance(o, dict):
        return "{" + ", ".join(f"{k!r}: {_format_output(v)}" for k, v in o.items()) + "}"
    if isinstance(o, (list, tuple)) and not isinstance(o, Value):
        inner = ", ".join(_format_output(v) for v in o)
        return f"[{inner}]" if isinstance(o, list) else f"({inner}{',' if len(o) == 1 else ''})"
    return _format_arg(o)
