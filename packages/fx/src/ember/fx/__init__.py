"""ember.fx: graph capture and compilation (PyTorch's make_fx / torch.compile roles).

    gm = ember.fx.capture(fn, *example_args)    # a GraphModule: gm.graph, gm.code, gm.table()
    step = ember.fx.compile(train_step)          # guarded, recaptured on change, fused C++ on CPU
    model = ember.fx.compile(model)              # an nn.Module: forward compiled in place

The IR (``ember.fx.graph``: Graph, Node, Value, TensorMeta) is documented in that module.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ._capture import DataDependentError
from ._capture import capture_graph as _capture_graph
from ._compile import CompiledFunction, compile
from .graph import Graph, Node, TensorMeta, Value
from .interpreter import GraphModule, Interpreter

try:
    __version__ = version("ember-fx")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"


def capture(fn: Any, *example_args: Any, **example_kwargs: Any) -> GraphModule:
    """Run ``fn(*example_args, **example_kwargs)`` once, eagerly, and return the graph of every
    aten operator it called, bound to the tensors it read (see ember.fx._capture).

    Running ``fn`` has its usual effects (a training step updates the parameters once).
    """
    graph, _result, lifted = _capture_graph(fn, example_args, example_kwargs)
    return GraphModule(graph, lifted)


__all__ = [
    "CompiledFunction",
    "DataDependentError",
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "TensorMeta",
    "Value",
    "capture",
    "compile",
]
