"""Running a Graph: the Interpreter (every node through the dispatcher) and GraphModule.

``Interpreter(gm).run(*args)`` calls each node's operator through its normal entry
(``node.op(*args)``): dispatch keys, autograd (when grad mode is on), version bumps and
view bases all apply, so it is the reference semantics of a graph. Override
``run_node`` to observe or replace single nodes, as in ``torch.fx.Interpreter``.
"""

from __future__ import annotations

from typing import Any

from ember.aten import Tensor

from .graph import Graph, Node, Value, flatten, unflatten


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


class GraphModule:
    """A captured graph and the tensors it is bound to; callable like the function it came from.

    ``gm.graph``: the :class:`Graph`; ``gm.code``: its printed code; ``gm.table()``: one
    row per node; ``gm.lifted``: the tensors bound to ``graph.lifted`` (None for a
    ``.grad`` placeholder, which is read from its owner at each call).
    """

    def __init__(self, graph: Graph, lifted: list[Any]) -> None:
        self.graph = graph
        self.lifted = lifted

    @property
    def code(self) -> str:
        return self.graph.code()

    def table(self) -> str:
        return self.graph.table()

    def print_readable(self) -> None:
        print(self.graph.code())

    def __repr__(self) -> str:
        return f"GraphModule(\n{self.graph.code()}\n)"

    def flat_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        leaves, _ = flatten((args, kwargs), _is_tensor)
        if len(leaves) != len(self.graph.inputs):
            raise TypeError(
                f"{self.graph.name}: captured with {len(self.graph.inputs)} tensor arguments, called with {len(leaves)}"
            )
        return leaves

    def placeholder_tensors(self, inputs: list[Any]) -> list[Any]:
        """The tensors of graph.placeholders for this call (inputs, then the lifted ones)."""
        out = list(inputs)
        index = {v: i for i, v in enumerate(self.graph.placeholders)}
        for v, t in zip(self.graph.lifted, self.lifted, strict=True):
            if t is None:
                assert v.source is not None
                owner = v.source[1]
                t = out[index[owner]].grad
                if t is None:
                    raise RuntimeError(f"{self.graph.name}: {owner.name}.grad was captured as a tensor but is None now")
            out.append(t)
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return Interpreter(self).run(*args, **kwargs)


class Interpreter:
    def __init__(self, gm: GraphModule) -> None:
        self.gm = gm
        self.graph: Graph = gm.graph

    def run_node(self, node: Node, args: tuple[Any, ...]) -> Any:
        return node.op(*args)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        g = self.graph
        env: dict[Value, Any] = dict(
            zip(g.placeholders, self.gm.placeholder_tensors(self.gm.flat_inputs(args, kwargs)), strict=True)
        )

        def get(a: Any) -> Any:
            if isinstance(a, Value):
                return env[a]
            if isinstance(a, list):
                return [env[x] if isinstance(x, Value) else x for x in a]
            return a

        for node in g.nodes:
            out = self.run_node(node, tuple(get(a) for a in node.args))
            if node.returns == "one":
                env[node.outputs[0]] = out
            elif node.returns in ("tuple", "list"):
                for v, r in zip(node.outputs, out, strict=True):
                    if v is not None:
                        env[v] = r
        for owner, v in g.grad_effects:
            env[owner].grad = None if v is None else env[v]
        return unflatten(g.output_spec, iter(env[v] for v in g.output_values))
