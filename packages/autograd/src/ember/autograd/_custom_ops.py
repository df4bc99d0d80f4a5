"""Autograd kernels for custom operators whose derivative was given from Python with
``ember.aten.library.register_autograd(op, backward, setup_context=...)``.

Each such operator gets a kernel for the Autograd key: it runs the operator below
autograd inside an :class:`~ember.autograd.Function`, so the formula's ``setup_context``
and ``backward`` become that Function's, and the graph records one Node per call
(named ``<op>Backward``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.aten import extension as ext
from ember.c10py import DispatchKey

from .function import Function


def install(op: ext.OpOverload, backward: Callable[..., Any], setup_context: Callable[..., Any] | None) -> None:
    n_inputs = len(ext.schema_params(op.schema)[0])

    def forward(ks: int, *args: Any) -> Any:
        return op.redispatch(ks, *args)

    def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        # the user's setup_context and backward see the operator's inputs only
        ctx.needs_input_grad = ctx.needs_input_grad[1:]
        if setup_context is not None:
            setup_context(ctx, inputs[1:], output)  # inputs[0] is the key set

    def grads(ctx: Any, *grad_outputs: Any) -> tuple[Any, ...]:
        g = backward(ctx, *grad_outputs)
        g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        if len(g) != n_inputs:
            raise RuntimeError(
                f"{op.full_name}: the backward registered with register_autograd returned {len(g)} gradients, "
                f"expected {n_inputs} (one per input, None for those without one)"
            )
        return (None, *g)

    name = "".join(part.title() for part in op.name.split("_"))
    fn_cls: Any = type(
        name,
        (Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup),
            "backward": staticmethod(grads),
        },
    )

    def autograd_kernel(ks: int, *args: Any) -> Any:
        return fn_cls.apply(ks, *args)

    ext.register_kernel(
        op,
        DispatchKey.Autograd,
        autograd_kernel,
        with_keyset=True,
        name=f"ember.autograd._custom_ops:{op.full_name}",
        source=ext.python_source(backward),
    )
