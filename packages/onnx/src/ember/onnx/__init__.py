"""ember.onnx: export a model to ONNX (PyTorch's torch.onnx.export role).

    ember.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})

The exporter is built on ember.fx: the model's eval-mode forward is captured once
(``ember.fx.capture``, under ``no_grad``), and every aten node of that graph is lowered to
standard ONNX operators (``ember.onnx._lowerings``); parameters and buffers become
initializers named as in ``state_dict``. The result is checked by ``onnx.checker`` with
full checking (shape inference included). An operator with no lowering is an
:class:`UnsupportedOperatorError` naming it; an ``ember.aten.library`` operator exports as
one node of its own domain (``mylib::op`` -> domain ``mylib``, op_type ``op``) unless
:func:`register_symbolic` gives it a lowering.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._export import Context, UnsupportedOperatorError, export, register_symbolic, unregister_symbolic

try:
    __version__ = version("ember-onnx")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"

__all__ = ["Context", "UnsupportedOperatorError", "export", "register_symbolic", "unregister_symbolic"]
