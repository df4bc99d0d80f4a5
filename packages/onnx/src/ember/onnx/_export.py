"""export(): capture the eval forward with ember.fx, lower node by node, check, write.

Dynamic axes. A captured graph is specialised to the shapes capture saw, so the integers
inside it (a ``view``'s sizes, a ``slice``'s end, a ``zeros``' shape) are the batch size
of that one call. To know which of them follow a dynamic axis, export captures the
forward twice more with the dynamic axes grown (the k-th by k, then by 3k - 1), checks
that all three graphs run the same operators, and compares their constant arguments: an
integer that differs is rebuilt at run time from the input's ``Shape`` (``k * dim``,
``dim + c`` or ``k * dim_a * dim_b``, fitted on two captures and confirmed on the third);
one that no such expression explains is an error rather than a silently fixed size.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ember.aten as ea
import ember.autograd as autograd
import ember.fx as fx
import numpy as np
from ember.fx.extension import active_graph
from ember.fx.graph import Node, Value, flatten
from ember.nn.extension import fused_rnn

import onnx
from onnx import TensorProto, helper, numpy_helper

_DTYPES = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
    "int16": TensorProto.INT16,
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "bool": TensorProto.BOOL,
}


class UnsupportedOperatorError(RuntimeError):
    """A node of the captured graph has no ONNX lowering (and no registered symbolic)."""


def onnx_dtype(dtype: Any) -> int:
    name = str(dtype).rsplit(".", 1)[-1]
    if name not in _DTYPES:
        raise TypeError(f"ember.onnx: dtype {dtype} has no ONNX equivalent")
    return _DTYPES[name]


class Context:
    """What a lowering sees: the node, its arguments by name, and helpers that emit ONNX."""

    def __init__(self, exporter: _Exporter, node: Node, alts: list[Node]) -> None:
        self._ex = exporter
        self.node = node
        self._alts = alts  # this node in the captures at grown dynamic axes (none: static)
        self._alt = alts[0] if alts else None
        names = [a.name for a in node.schema.arguments]
        self.args: dict[str, Any] = dict(zip(names, node.args, strict=True))
        self._alt_args = [dict(zip(names, alt.args, strict=True)) for alt in alts]
        self.opset = exporter.opset

    # --- values ---------------------------------------------------------------------
    def name(self, v: Value) -> str:
        """The ONNX tensor name that currently holds ``v``."""
        return self._ex.env[id(v)]

    def input(self, arg: str) -> str:
        return self.name(self.args[arg])

    def meta(self, arg: str) -> Any:
        return self.args[arg].meta

    @property
    def out_meta(self) -> Any:
        return self.node.outputs[0].meta

    def emit(self, op_type: str, inputs: Sequence[str], n_out: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        outs = [self._ex.fresh(op_type.lower()) for _ in range(n_out)]
        self._ex.nodes.append(helper.make_node(op_type, list(inputs), outs, domain=domain or None, **attrs))
        return outs

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        return self.emit(op_type, inputs, **attrs)[0]

    def const(self, value: Any, dtype: Any = None) -> str:
        """An initializer holding ``value`` (a NumPy array, list or scalar)."""
        arr = np.asarray(value, dtype=dtype)
        return self._ex.add_initializer(arr, "const")

    def scalar_like(self, value: Any, meta: Any) -> str:
        """A 0-d constant of ``meta``'s dtype (for arithmetic with a tensor of that dtype)."""
        return self.const(np.asarray(value, dtype=_np_dtype(meta.dtype)))

    # --- integers that may follow a dynamic axis -------------------------------------
    def is_static(self, arg: str) -> bool:
        return all(_same(self.args[arg], alt[arg]) for alt in self._alt_args)

    def int_arg(self, arg: str) -> int:
        """A constant integer argument that must not depend on a dynamic axis."""
        if not self.is_static(arg):
            raise UnsupportedOperatorError(
                f"ember.onnx: {self.where()}: argument {arg!r} depends on a dynamic axis "
                f"({self.args[arg]} vs {self._alt_args[0][arg]})"
            )
        return self.args[arg]  # type: ignore[no-any-return]

    def ints_tensor(self, arg: str, values: Sequence[int] | None = None) -> str:
        """A 1-D int64 tensor of the argument's integers, computed from the inputs' shapes
        where an integer follows a dynamic axis."""
        v1 = list(self.args[arg] if values is None else values)
        if self.is_static(arg):
            return self.const(np.array(v1, dtype=np.int64))
        others = [list(alt[arg]) for alt in self._alt_args]
        if any(len(o) != len(v1) for o in others):
            raise UnsupportedOperatorError(f"ember.onnx: {self.where()}: the rank of {arg!r} depends on a dynamic axis")
        parts = []
        for i, a in enumerate(v1):
            vals = (a, *(o[i] for o in others))
            same = all(v == a for v in vals)
            parts.append(self.const(np.array([a], dtype=np.int64)) if same else self._ex.dim_expr(vals, self))
        return parts[0] if len(parts) == 1 else self.op("Concat", *parts, axis=0)

    def int_scalar_tensor(self, arg: str) -> str:
        """A 1-element int64 tensor for an int argument (dynamic where it follows an axis)."""
        v1 = self.args[arg]
        if self.is_static(arg):
            return self.const(np.array([v1], dtype=np.int64))
        return self._ex.dim_expr((v1, *(alt[arg] for alt in self._alt_args)), self)

    def where(self) -> str:
        return f"node {self.node.index} ({self.node.format_call()})"

    def unsupported(self, why: str) -> UnsupportedOperatorError:
        return UnsupportedOperatorError(f"ember.onnx: {self.node.target} ({self.where()}): {why}")


def _np_dtype(dtype: Any) -> Any:
    return helper.tensor_dtype_to_np_dtype(onnx_dtype(dtype))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Value) or isinstance(b, Value):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


Lowering = Callable[[Context], Any]
_SYMBOLICS: dict[str, Lowering] = {}


def register_symbolic(qualname: str, fn: Lowering) -> None:
    """Lower every node of operator ``qualname`` (``"mylib::op"`` or ``"mylib::op.overload"``)
    with ``fn(ctx)`` instead of the built-in rule (or the custom-domain node).

    ``fn`` emits ONNX nodes through ``ctx.op(op_type, *inputs, **attrs)`` on
    ``ctx.input(argument_name)`` and returns the output name (or a list, one per output).
    """
    if "::" not in qualname:
        raise ValueError(f"register_symbolic: qualname must be 'namespace::name', got {qualname!r}")
    _SYMBOLICS[qualname] = fn


def unregister_symbolic(qualname: str) -> None:
    _SYMBOLICS.pop(qualname, None)


class _Exporter:
    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.env: dict[int, str] = {}
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.custom_domains: set[str] = set()
        self._count = 0
        self._used: set[str] = set()
        # (input name, axis, its size in each capture) of every dynamic axis
        self.dyn_dims: list[tuple[str, int, tuple[int, ...]]] = []
        self._dim_cache: dict[Any, str] = {}

    def fresh(self, stem: str) -> str:
        while True:
            self._count += 1
            name = f"{stem}_{self._count}"
            if name not in self._used:
                self._used.add(name)
                return name

    def reserve(self, name: str) -> None:
        self._used.add(name)

    def add_initializer(self, arr: np.ndarray, stem: str, name: str | None = None) -> str:
        name = name or self.fresh(stem)
        # np.array keeps a 0-d array 0-d (ascontiguousarray would make it 1-d)
        self.initializers.append(numpy_helper.from_array(np.array(arr, order="C"), name))
        return name

    def dim_expr(self, vals: tuple[int, ...], ctx: Context) -> str:
        """A [1] int64 tensor equal to vals[i] at capture i's sizes: ``k * dim``, ``dim + c``
        or ``k * dim_a * dim_b``, found on two captures and confirmed on the third."""
        if vals in self._dim_cache:
            return self._dim_cache[vals]

        def gather(d: tuple[str, int, tuple[int, ...]]) -> str:
            return ctx.op("Gather", self.nodes_shape(d[0]), ctx.const(np.array([d[1]], dtype=np.int64)), axis=0)

        def i64(v: int) -> str:
            return ctx.const(np.array([v], dtype=np.int64))

        out = None
        for d in self.dyn_dims:  # k * dim first: a reshape's batch * heads
            sizes = d[2]
            k = vals[0] // sizes[0]
            if k > 0 and all(v == k * a for v, a in zip(vals, sizes, strict=True)):
                out = gather(d) if k == 1 else ctx.op("Mul", gather(d), i64(k))
                break
        if out is None:
            for d in self.dyn_dims:  # dim + c: a slice's end past a prefix
                c = vals[0] - d[2][0]
                if all(v == a + c for v, a in zip(vals, d[2], strict=True)):
                    out = ctx.op("Add", gather(d), i64(c))
                    break
        if out is None:  # a product of two dynamic axes (batch * sequence, flattened)
            dd = self.dyn_dims
            for i in range(len(dd)):
                for j in range(i + 1, len(dd)):
                    prod = [a * b for a, b in zip(dd[i][2], dd[j][2], strict=True)]
                    k = vals[0] // prod[0]
                    if out is None and k > 0 and all(v == k * p for v, p in zip(vals, prod, strict=True)):
                        out = ctx.op("Mul", ctx.op("Mul", gather(dd[i]), gather(dd[j])), i64(k))
        if out is None:
            raise UnsupportedOperatorError(
                f"ember.onnx: {ctx.where()}: the integer {vals[0]} changes with the dynamic axes (to "
                f"{list(vals[1:])} when they grow) in a way export cannot express from the inputs' shapes"
            )
        self._dim_cache[vals] = out
        return out

    def nodes_shape(self, inp: str) -> str:
        key = (-1, hash(inp))
        if key not in self._dim_cache:
            out = self.fresh("shape")
            self.nodes.append(helper.make_node("Shape", [inp], [out]))
            self._dim_cache[key] = out
        return self._dim_cache[key]


@contextlib.contextmanager
def _eval_mode(model: Any) -> Iterator[None]:
    """Eval mode and no_grad for a capture; LSTM / GRU run step by step (nn's per-step path),
    so that the graph holds their cells' aten ops -- the fused layer ops (aten::_lstm_layer,
    aten::_gru_layer) have no ONNX lowering yet."""
    modules = list(model.modules()) if hasattr(model, "modules") else []
    was = [m.training for m in modules]
    for m in modules:
        m.training = False
    try:
        with autograd.no_grad(), fused_rnn(False):
            yield
    finally:
        for m, t in zip(modules, was, strict=True):
            m.training = t


def _normalise_axes(axes: Any) -> dict[int, str]:
    if isinstance(axes, dict):
        return {int(k): str(v) for k, v in axes.items()}
    return {int(a): f"dim_{int(a)}" for a in axes}


def _grown(t: Any, growth: dict[int, int]) -> Any:
    shape = list(t.shape)
    for a, g in growth.items():
        shape[a] += g
    if t.dtype.is_floating_point:
        return ea.randn(*shape, dtype=t.dtype)
    return ea.zeros(*shape, dtype=t.dtype)


def export(
    model: Any,
    args: Any,
    f: Any,
    *,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_axes: dict[str, Any] | None = None,
    opset_version: int = 17,
) -> onnx.ModelProto:
    """Export ``model``'s eval-mode forward on ``args`` as an ONNX model written to ``f``
    (a path or a binary file; None: only returned). Returns the ``onnx.ModelProto``.

    ``dynamic_axes`` maps an input or output name to the axes that vary (``{0: "batch"}``
    or ``[0]``), as in ``torch.onnx.export``.
    """
    from . import _lowerings  # noqa: F401  (registers the aten rules)

    if opset_version < 17:
        raise ValueError(f"ember.onnx.export: opset_version must be >= 17 (LayerNormalization), got {opset_version}")
    if not isinstance(args, tuple):
        args = (args,)
    dynamic_axes = dict(dynamic_axes or {})
    with _eval_mode(model), _ModulePaths(model) as paths:
        gm = fx.capture(model, *args)
    graph = gm.graph
    n_in = len(graph.inputs)
    input_names = list(input_names or [f"input_{i}" if n_in > 1 else "input" for i in range(n_in)])
    if len(input_names) != n_in:
        raise ValueError(f"ember.onnx.export: {len(input_names)} input_names for {n_in} tensor inputs")
    flat_out = flatten(graph.output, lambda x: isinstance(x, Value))[0]
    n_out = len(flat_out)
    output_names = list(output_names or [f"output_{i}" if n_out > 1 else "output" for i in range(n_out)])
    if len(output_names) != n_out:
        raise ValueError(f"ember.onnx.export: {len(output_names)} output_names for {n_out} tensor outputs")
    unknown = set(dynamic_axes) - set(input_names) - set(output_names)
    if unknown:
        raise ValueError(f"ember.onnx.export: dynamic_axes names {sorted(unknown)} are neither inputs nor outputs")
    in_axes = {name: _normalise_axes(dynamic_axes[name]) for name in input_names if name in dynamic_axes}

    ex = _Exporter(opset_version)
    alt_graphs: list[Any] = []
    if in_axes:
        flat_args = flatten(args, lambda x: isinstance(x, ea.Tensor))[0]
        # Two more captures with the dynamic axes grown: the k-th axis by k, then by 3k - 1,
        # so that integers following one axis are told apart from those following another,
        # and an expression fitted on two captures is confirmed by the third.
        steps = [lambda k: k, lambda k: 3 * k - 1]
        for step in steps:
            growth: dict[str, dict[int, int]] = {}
            k = 0
            for n in input_names:
                for a in in_axes.get(n, {}):
                    k += 1
                    growth.setdefault(n, {})[a] = step(k)
            grown = [_grown(t, growth[n]) if n in growth else t for t, n in zip(flat_args, input_names, strict=True)]
            try:
                with _eval_mode(model):
                    alt_graph = fx.capture(model, *_rebuild(args, iter(grown))).graph
            except Exception as e:
                raise UnsupportedOperatorError(
                    "ember.onnx.export: to find what follows the dynamic axes, export runs the forward again "
                    f"with them grown by {growth} (input name -> axis -> extra size), and that run failed: "
                    f"{type(e).__name__}: {e}. Export at a size that leaves that room (e.g. a shorter sequence)"
                ) from e
            if [n.target for n in alt_graph.nodes] != [n.target for n in graph.nodes]:
                raise UnsupportedOperatorError(
                    "ember.onnx.export: the model runs different operators when the dynamic axes change "
                    "size (Python control flow on a shape); export it with static shapes"
                )
            alt_graphs.append(alt_graph)
        for name, v, *alts in zip(input_names, graph.inputs, *[g.inputs for g in alt_graphs], strict=True):
            for axis in in_axes.get(name, {}):
                ex.dyn_dims.append((name, axis, (v.meta.shape[axis], *(a.meta.shape[axis] for a in alts))))
    alt_outs = [flatten(g.output, lambda x: isinstance(x, Value))[0] for g in alt_graphs]

    graph_inputs = []
    for name, v in zip(input_names, graph.inputs, strict=True):
        ex.reserve(name)
        ex.env[id(v)] = name
        axes = in_axes.get(name, {})
        in_dims: list[Any] = [axes.get(i, s) for i, s in enumerate(v.meta.shape)]
        graph_inputs.append(helper.make_tensor_value_info(name, onnx_dtype(v.meta.dtype), in_dims))
    params = _parameter_names(model)
    for v in graph.lifted:
        kind, t = v.source or ("", None)
        if kind != "tensor" or t is None:
            raise UnsupportedOperatorError(f"ember.onnx.export: the forward reads {kind} {v.name}, not a tensor")
        init_name = params.get(id(t._impl), v.name)
        ex.reserve(init_name)
        ex.env[id(v)] = ex.add_initializer(t.detach().numpy().copy(), v.name, name=init_name)

    # the lowering rules stand on this module (Context, onnx_dtype): loaded when an export runs
    from ._lowerings import RULES

    for i, node in enumerate(graph.nodes):
        ctx = Context(ex, node, [g.nodes[i] for g in alt_graphs])
        target = node.target
        base = target.split(".", 1)[0]
        if node.mutated:
            where = paths.of(node.index)
            raise UnsupportedOperatorError(
                f"ember.onnx.export: {target} writes its input in place"
                + (f" in module {where}" if where else "")
                + f" (node {node.index}: {node.format_call()}); "
                "ONNX graphs are functional -- use the out-of-place form (e.g. inplace=False)"
            )
        rule = _SYMBOLICS.get(target) or _SYMBOLICS.get(base)
        if rule is None and not base.startswith("aten::"):
            rule = _custom_domain_node
        if rule is None:
            rule = RULES.get(target) or RULES.get(base)
        if rule is None:
            where = paths.of(node.index)
            raise UnsupportedOperatorError(
                f"ember.onnx.export: no ONNX lowering for {target}"
                + (f" in module {where}" if where else "")
                + f" (node {node.index}: {node.format_call()}); "
                f"register one with ember.onnx.register_symbolic({target!r}, fn)"
            )
        result = rule(ctx)
        outs = [result] if isinstance(result, str) else list(result)
        defined = [v for v in node.outputs if v is not None]
        if len(outs) != len(node.outputs) and len(outs) != len(defined):
            raise RuntimeError(
                f"ember.onnx: the lowering of {target} returned {len(outs)} outputs for {len(node.outputs)}"
            )
        for v, o in zip([v for v in node.outputs if v is not None], outs, strict=False):
            ex.env[id(v)] = o

    graph_outputs = []
    for k, (name, v) in enumerate(zip(output_names, flat_out, strict=True)):
        src = ex.env.get(id(v))
        if src is None:
            raise UnsupportedOperatorError(f"ember.onnx.export: output {name} is not computed by the graph")
        ex.reserve(name)
        ex.nodes.append(helper.make_node("Identity", [src], [name]))
        axes = _normalise_axes(dynamic_axes[name]) if name in dynamic_axes else {}
        dims: list[Any] = []
        for i, s in enumerate(v.meta.shape):
            if i in axes:
                dims.append(axes[i])
            elif any(out[k].meta.shape[i] != s for out in alt_outs):
                dims.append(None)  # follows a dynamic input axis; not named by the user
            else:
                dims.append(s)
        graph_outputs.append(helper.make_tensor_value_info(name, onnx_dtype(v.meta.dtype), dims))

    onnx_graph = helper.make_graph(ex.nodes, "ember_graph", graph_inputs, graph_outputs, ex.initializers)
    opsets = [helper.make_opsetid("", opset_version)] + [helper.make_opsetid(d, 1) for d in sorted(ex.custom_domains)]
    model_proto = helper.make_model(onnx_graph, opset_imports=opsets, producer_name="ember.onnx")
    model_proto.ir_version = min(model_proto.ir_version, 9)  # what current ONNX Runtime reads
    if not ex.custom_domains:
        onnx.checker.check_model(model_proto, full_check=True)
    else:  # the checker cannot infer shapes through an operator it does not know
        onnx.checker.check_model(model_proto)
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            onnx.save(model_proto, os.fspath(f))
        else:
            f.write(model_proto.SerializeToString())
    return model_proto


class _ModulePaths:
    """Which submodule (``model.layer3.0.conv1``) each captured node came from.

    ember.fx's IR does not record it, so export installs forward pre/post hooks on every
    submodule while it captures and reads how many nodes the capture in progress holds
    (``ember.fx.extension.active_graph()``, the only place that count lives) at each
    module boundary: the nodes recorded between two boundaries belong to the innermost
    module running then. Without that state the paths are just left out of messages.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.owner: dict[int, str] = {}
        self._stack = ["model"]
        self._mark = 0
        self._handles: list[Any] = []

    def _count(self) -> int | None:
        graph = active_graph()
        return None if graph is None else len(graph.nodes)

    def _assign(self, upto: int) -> None:
        for i in range(self._mark, upto):
            self.owner[i] = self._stack[-1]
        self._mark = upto

    def __enter__(self) -> _ModulePaths:
        if not hasattr(self.model, "named_modules"):
            return self
        for name, mod in self.model.named_modules():
            if not name:
                continue
            path = f"model.{name}"

            def pre(_m: Any, _args: Any, _path: str = path) -> None:
                c = self._count()
                if c is not None:
                    self._assign(c)
                    self._stack.append(_path)

            def post(_m: Any, _args: Any, _out: Any, _path: str = path) -> None:
                c = self._count()
                if c is not None and self._stack[-1] == _path:
                    self._assign(c)
                    self._stack.pop()

            self._handles.append(mod.register_forward_pre_hook(pre))
            self._handles.append(mod.register_forward_hook(post))
        return self

    def __exit__(self, *exc: Any) -> None:
        for h in self._handles:
            h.remove()

    def of(self, index: int) -> str | None:
        return self.owner.get(index)


def _rebuild(obj: Any, it: Iterator[Any]) -> Any:
    if isinstance(obj, ea.Tensor):
        return next(it)
    if isinstance(obj, tuple):
        return tuple(_rebuild(o, it) for o in obj)
    if isinstance(obj, list):
        return [_rebuild(o, it) for o in obj]
    if isinstance(obj, dict):
        return {k: _rebuild(o, it) for k, o in obj.items()}
    return obj


def _parameter_names(model: Any) -> dict[int, str]:
    """TensorImpl id -> the state_dict name (``layer1.0.conv1.weight``) for initializers."""
    names: dict[int, str] = {}
    if hasattr(model, "named_parameters"):
        for n, p in model.named_parameters():
            names.setdefault(id(p._impl), n)
        for n, b in model.named_buffers():
            names.setdefault(id(b._impl), n)
    return names


def _custom_domain_node(ctx: Context) -> list[str]:
    """An ``ember.aten.library`` operator with no symbolic: one node in its own domain."""
    node = ctx.node
    domain, rest = node.target.split("::", 1)
    op_name = rest.split(".", 1)[0]
    inputs: list[str] = []
    attrs: dict[str, Any] = {}
    for a, v in zip(node.schema.arguments, node.args, strict=True):
        if isinstance(v, Value):
            inputs.append(ctx.name(v))
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, Value) for x in v):
            inputs.extend(ctx.name(x) for x in v)
        elif v is None:
            inputs.append("")
        elif isinstance(v, (bool, int, float, str)) or (isinstance(v, (list, tuple)) and v):
            attrs[a.name] = int(v) if isinstance(v, bool) else v
        else:
            raise ctx.unsupported(f"argument {a.name}={v!r} cannot be an ONNX attribute")
    ctx._ex.custom_domains.add(domain)
    n_out = sum(1 for v in node.outputs if v is not None)
    return ctx.emit(op_name, inputs, n_out=n_out, domain=domain, **attrs)
