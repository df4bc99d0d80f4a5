"""Backend "replay": the graph's kernels called back to back, as one generated Python function.

For each node the backend kernel is resolved once (``op.lookup(CPU)``: the kernel the
dispatcher would reach below Autograd), and the graph becomes straight-line Python::

    def replay(inputs, lifted):
        v_x, v_w = inputs
        v_t0 = k0(v_x, v_w)          # aten::mul.Tensor -> CPU: mul_out
        v_t1 = k1(v_t0, 1.0, 1)
        del v_t0                     # last use: its block goes back to the allocator
        ...

No key-set computation, no autograd recording (a program that calls aten kernels runs
with the Autograd keys excluded; one of fused kernels only calls none), no argument
parsing. Memory: what aten kernels return is released right after its last use (computed
once, here), so the c10 CPU allocator's size-binned cache hands the same blocks to the
next allocations of the same size. What the program allocates itself (fused kernels'
outputs) follows :func:`memory_plan`: values the caller never sees live in static
buffers, allocated once per program and shared by values whose lives do not overlap;
results are fresh tensors on every call. A program is therefore not re-entrant (one
thread at a time). Mutated arguments get their version counter bumped, as the eager
entry points do.

The fused backend hands this module a plan in which some runs of nodes are replaced by
one :class:`~ember.fx._fused.FusedKernel`; it is emitted as one more call.
"""

from __future__ import annotations

import functools
from typing import Any

from ember.aten import extension as _dispatch

from .graph import Graph, Node, Value, parse_schema


def backend_keys(node: Node) -> int:
    dev = None
    for v in node.input_values():
        dev = v.meta.device
        break
    if dev is None and node.outputs:
        dev = node.outputs[0].meta.device
    return _dispatch.device_keys(dev)


def resolve_kernel(node: Node) -> Any:
    """The callable the dispatcher would run for this node on its backend key."""
    ks = backend_keys(node)
    _key, kernel, below = node.op.lookup(ks)
    assert kernel is not None, f"{node.op}: no kernel for the captured key set"
    fn = kernel.fn
    if kernel.with_keyset:
        if _dispatch.fallback_for(_key) is kernel:
            return functools.partial(fn, node.op, below)
        return functools.partial(fn, below)
    return fn


# ``.out`` overloads: an op with an overload that takes exactly its arguments plus one
# ``out`` and returns it (``add.Tensor`` -> ``add.out``, ``sum`` -> ``sum.IntList_out``) writes
# its result into a planned buffer when the caller never sees that result -- the same kernel
# (TensorIterator's loops over the result's captured strides), so replay stays bit-identical.
# Ops whose result's size depends on the data are left out: their ``.out`` kernel would
# resize the buffer.
DATA_DEPENDENT_SIZE = {"nonzero", "masked_select", "index", "unique", "take_along_dim"}
_out_index: dict[tuple[str, str], list[Any]] = {}


def _out_overloads(namespace: str, name: str) -> list[Any]:
    """The ``.out`` overloads of ``namespace::name`` (every op's, indexed on first use)."""
    if not _out_index:
        for op in _dispatch.all_ops():
            if parse_schema(op).is_out:
                _out_index.setdefault((op.namespace, op.name), []).append(op)
        _out_index[("", "")] = []  # indexed (an empty registry stays indexed too)
    return _out_index.get((namespace, name), [])


def out_overload(node: Node) -> str | None:
    """The full name of the node's ``.out`` overload (same arguments plus ``out``), or None."""
    if node.op.name in DATA_DEPENDENT_SIZE or node.returns != "one" or node.schema.is_out or node.mutated:
        return None
    want = [(a.name, str(a.type)) for a in node.schema.arguments]
    for op in _out_overloads(node.op.namespace, node.op.name):
        sch = parse_schema(op)
        outs = sch.out_arguments
        if len(outs) != 1 or len(sch.returns) != 1 or sch.returns_alias_of_input != [outs[0].name]:
            continue
        if [(a.name, str(a.type)) for a in sch.arguments if a is not outs[0]] == want:
            return op.full_name  # type: ignore[no-any-return]
    return None


def out_kernel(node: Node) -> Any:
    """The backend kernel of the node's ``.out`` overload when its result can be a planned
    buffer (a new tensor, not a view), else None."""
    if len(node.outputs) != 1:
        return None
    v = node.outputs[0]
    if v is None or v.node is not node or v.view_of is not None:
        return None
    name = out_overload(node)
    if name is None:
        return None
    _key, kernel, _ = _dispatch.find_op(name).lookup(backend_keys(node))
    if kernel is None or kernel.with_keyset:
        return None
    return kernel.fn


def _empty_kernel(device: Any) -> Any:
    """aten::empty_strided's backend kernel for `device` (the program's own allocations)."""
    _key, kernel, _ = _dispatch.find_op("aten::empty_strided").lookup(_dispatch.device_keys(device))
    return kernel.fn


_LITERAL_TYPES = (bool, int, str, type(None))


class _Emitter:
    def __init__(self) -> None:
        self.globals: dict[str, Any] = {}
        self.lines: list[str] = []

    def const(self, c: Any) -> str:
        if isinstance(c, _LITERAL_TYPES):
            return repr(c)
        if isinstance(c, float) and c == c and c not in (float("inf"), float("-inf")):
            return repr(c)
        name = f"c{len(self.globals)}"
        self.globals[name] = c
        return name

    def obj(self, prefix: str, o: Any) -> str:
        name = f"{prefix}{len(self.globals)}"
        self.globals[name] = o
        return name


def local(v: Value) -> str:
    return f"v_{v.name}"


def _arg(e: _Emitter, a: Any) -> str:
    if isinstance(a, Value):
        return local(a)
    if isinstance(a, list):
        return "[" + ", ".join(_arg(e, x) for x in a) + "]"
    if isinstance(a, tuple) and all(isinstance(x, _LITERAL_TYPES) for x in a):
        return repr(a)
    return e.const(a)


def last_uses(graph: Graph, plan: list[Any]) -> dict[int, list[Value]]:
    """For each plan step, the values whose last reader it is (and that may then be freed)."""
    keep = set(graph.placeholders) | set(graph.output_values) | {v for _, v in graph.grad_effects if v is not None}
    last: dict[Value, int] = {}
    for i, step in enumerate(plan):
        for v in step.input_values():
            last[v] = i
        for v in step.outputs:
            if v is not None:
                last.setdefault(v, i)  # an output nobody reads dies where it is made
    # a view keeps its base alive: free the base no earlier than its views
    for v in list(last):
        b = v.view_of
        while b is not None:
            if b in last:
                last[b] = max(last[b], last[v])
            b = b.view_of
    out: dict[int, list[Value]] = {}
    for v, i in last.items():
        if v not in keep:
            out.setdefault(i, []).append(v)
    return out


def escaping_storages(graph: Graph) -> set[int]:
    """Storages the caller can see: placeholders', the results', the ``.grad``s'."""
    seen = [*graph.placeholders, *graph.output_values, *(v for _, v in graph.grad_effects if v is not None)]
    return {v.storage for v in seen if isinstance(v, Value)}


def memory_plan(graph: Graph, plan: list[Any]) -> dict[Value, int]:
    """Static buffers for the values the program allocates itself: fused kernels' outputs, and
    the results of the aten ops it calls through their ``.out`` overloads (:func:`out_overload`).

    A value gets a buffer when no value sharing its storage escapes the graph (the caller
    never sees it, so the same memory can serve every replay). A buffer is reused by a later
    value of the same shape, strides, dtype and device once every value on it has had its
    last read -- strictly before the step that writes the new value, so a kernel never
    writes a buffer it reads. Returns value -> buffer index (buffers numbered in order).
    """
    escaping = escaping_storages(graph)
    last: dict[int, int] = {}
    for i, step in enumerate(plan):
        for v in step.input_values():
            last[v.storage] = i
    owner: dict[Value, int] = {}
    buffers: list[tuple[Any, ...]] = []  # buffer -> its key
    busy: list[tuple[int, int]] = []  # (last step, buffer) of buffers in use
    free: dict[tuple[Any, ...], list[int]] = {}
    for i, step in enumerate(plan):
        if isinstance(step, Node) and out_kernel(step) is None:
            continue
        for end, b in [x for x in busy if x[0] < i]:
            busy.remove((end, b))
            free.setdefault(buffers[b], []).append(b)
        for v in step.outputs:
            m = v.meta
            if v.storage in escaping or v.storage == 0 or m.numel == 0:
                continue
            key = (m.shape, m.stride, m.dtype, str(m.device))
            pool = free.get(key)
            if pool:
                b = pool.pop()
            else:
                b = len(buffers)
                buffers.append(key)
            owner[v] = b
            busy.append((last.get(v.storage, i), b))
    return owner


def generate(graph: Graph, plan: list[Any]) -> tuple[str, dict[str, Any]]:
    """Python source of the replay function for `plan` (Nodes and FusedKernels), and its globals."""
    e = _Emitter()
    w = e.lines.append
    w("def replay(inputs, lifted):")
    if graph.inputs:
        w(f"    {', '.join(local(v) for v in graph.inputs)}{',' if len(graph.inputs) == 1 else ''} = inputs")
    if graph.lifted:
        w(f"    {', '.join(local(v) for v in graph.lifted)}{',' if len(graph.lifted) == 1 else ''} = lifted")
    frees = last_uses(graph, plan)
    planned = memory_plan(graph, plan)
    buffers: dict[int, str] = {}
    for v, b in planned.items():
        if b not in buffers:
            m = v.meta
            buffers[b] = e.obj("buf", _empty_kernel(m.device)(m.shape, m.stride, m.dtype, None, m.device, None))
    for i, step in enumerate(plan):
        if isinstance(step, Node) and step.outputs and step.outputs[0] in planned:
            v = step.outputs[0]  # its .out overload writes the planned buffer
            k = e.obj("k", out_kernel(step))
            w(f"    {local(v)} = {buffers[planned[v]]}")
            w(f"    {k}({', '.join([*(_arg(e, a) for a in step.args), local(v)])})  # {out_overload(step)}")
        elif isinstance(step, Node):
            k = e.obj("k", resolve_kernel(step))
            call = f"{k}({', '.join(_arg(e, a) for a in step.args)})"
            new = [v for v in step.outputs if v is not None and v.node is step]
            if step.returns == "one" and new:
                w(f"    {local(new[0])} = {call}  # {step.op.full_name}")
            elif step.returns in ("tuple", "list") and new:
                names = [local(v) if v is not None and v.node is step else "_" for v in step.outputs]
                w(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {call}  # {step.op.full_name}")
            else:
                w(f"    {call}  # {step.op.full_name}")
            for j in step.mutated:
                a = step.args[j]
                for v in a if isinstance(a, list) else [a]:
                    if isinstance(v, Value):
                        w(f"    {local(v)}._impl.bump_version()")
        else:  # a FusedKernel: its outputs are planned buffers, or fresh tensors the caller may keep
            for v in step.outputs:
                if v in planned:
                    w(f"    {local(v)} = {buffers[planned[v]]}")
                else:
                    m = v.meta
                    alloc = e.obj("empty", _empty_kernel(m.device))
                    dt, dev = e.const(m.dtype), e.const(m.device)
                    w(f"    {local(v)} = {alloc}({m.shape!r}, {m.stride!r}, {dt}, None, {dev}, None)")
            ops = (*step.inputs, *step.inplace, *step.outputs)
            if step._fn is not None:  # built: the ctypes call written out (its numel is static)
                if step._numel:
                    fn, arr = e.obj("fused", step._fn), e.obj("ptrs", step._ptr_array)
                    ptrs = ", ".join(f"{local(v)}._impl.data_ptr" for v in ops)
                    w(f"    {fn}({arr}({ptrs}))  # fused: {step.summary()}")
            else:
                f = e.obj("fused", step)
                w(f"    {f}(({', '.join(local(v) for v in ops)},))  # fused: {step.summary()}")
            for v in step.inplace:
                w(f"    {local(v)}._impl.bump_version()")
        dead = frees.get(i)
        if dead:
            w(f"    del {', '.join(local(v) for v in dead)}")
    for owner, grad in graph.grad_effects:
        # the owner requires grad (guarded), so it has autograd metadata; the value's shape and
        # dtype are the captured ones, which Tensor.grad's setter checked at capture
        w(f"    {local(owner)}._meta.grad = {local(grad) if grad is not None else 'None'}")
    result = ", ".join(local(v) for v in graph.output_values)
    w(f"    return ({result}{',' if len(graph.output_values) == 1 else ''})")
    if any(isinstance(step, Node) for step in plan):
        # aten kernels may call operators in turn: those must not reach the Autograd keys
        # (ExcludeKeys(AUTOGRAD_FUNCTIONALITY), written out: a context manager costs microseconds)
        e.globals["_tls"] = _dispatch.dispatch_tls
        head, body = e.lines[:1], e.lines[1:]
        e.lines = [
            *head,
            "    _prev = _tls.exclude_not",
            f"    _tls.exclude_not = _prev & {~_dispatch.AUTOGRAD_FUNCTIONALITY}",
            "    try:",
            *("    " + line for line in body),
            "    finally:",
            "        _tls.exclude_not = _prev",
        ]
    return "\n".join(e.lines) + "\n", e.globals


class ReplayProgram:
    """A compiled plan: ``program(inputs, lifted) -> flat outputs`` with the Autograd keys excluded."""

    def __init__(self, graph: Graph, plan: list[Any] | None = None) -> None:
        self.graph = graph
        self.plan = list(graph.nodes) if plan is None else plan
        self.source, glb = generate(graph, self.plan)
        self.globals = glb  # the kernels, constants and planned buffers the source names
        code = compile(self.source, f"<ember.fx replay of {graph.name}>", "exec")
        exec(code, glb)
        self._fn = glb["replay"]

    def __call__(self, inputs: list[Any], lifted: list[Any]) -> tuple[Any, ...]:
        return self._fn(inputs, lifted)  # type: ignore[no-any-return]
