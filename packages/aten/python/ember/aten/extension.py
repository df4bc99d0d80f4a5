"""ember.aten.extension: the API the layers above aten build on (autograd, nn, optim, data, fx, ...).

``ember.aten`` is the user's namespace (PyTorch's ``torch``); this module is the other face
of the layer, the one a layer *above* it uses to plug in, as PyTorch's autograd uses
``c10::impl`` and ``torch._C``. Everything another layer needs from aten is named here; the
modules whose names begin with an underscore (``_tensor``, ``_dispatch``, ``_generated``, ...)
are aten's own and may change without notice. ``tests/test_layering.py`` fails on any import
of, or attribute access to, another layer's underscore module or name.

Key bits
--------
A tensor's dispatch key set is its TensorImpl's; ``t._keys`` reads it as an int (the raw bits
of a ``DispatchKeySet``) and ``add_keys(t, bits)`` / ``remove_keys(t, bits)`` change it.
The constants below are computed from c10py's ``DispatchKey`` / ``DispatchKeySet`` (never
written as numbers elsewhere):

* ``AUTOGRAD_KEY``: the AutogradFunctionality bit. A tensor carries it exactly while it
  requires grad (its backend bit then makes it AutogradCPU / AutogradCUDA).
* ``AUTOGRAD_OTHER_KEY``: AutogradOther (tensors of no backend with an autograd key).
* ``AUTOGRAD_FUNCTIONALITY``: both; what ``no_grad`` excludes on a thread.
* ``BACKEND_MASK``: the backend bits; ``CPU_BACKEND`` / ``CUDA_BACKEND`` their values
  (``backend_device_type(bits)`` names the device of a backend value).
* ``ALL_KEYS``: every bit (the thread's "not excluded" set starts as this).

Running below Autograd (the exclude-autograd guard)
---------------------------------------------------
An Autograd kernel runs the op below itself with the Autograd keys excluded on the thread:
``call_below_autograd(redispatch, ks, args)`` (the generic path), ``redispatcher_below_autograd(op)``
(one C++ entry doing the same for one op), ``exclude_autograd()`` (a context manager, for
code that calls many ops). ``set_autograd_excluded(flag)`` is what grad mode switches;
``set_view_creation_marker`` says how views made meanwhile are marked (``NO_GRAD_VIEW``,
``INFERENCE_MODE_VIEW``: see ``_dispatch.set_view_base``).

The Tensor protocol
-------------------
A ``Tensor`` is the native handle of one TensorImpl (``_C.TensorBase``, PyTorch's THPVariable).
aten and autograd share four attributes of it, read directly on the hot path (a call would
cost more than the op's bookkeeping): ``TENSOR_PROTOCOL``.

* ``t._impl``: the c10py ``TensorImpl`` (sizes, strides, dtype, device, version counter); read-only;
* ``t._keys``: the TensorImpl's raw dispatch key bits, read-only (autograd sets / clears
  ``AUTOGRAD_KEY`` with ``add_keys`` / ``remove_keys``);
* ``t._base``: the root tensor of a view, else None (set by aten's view kernels);
* ``t._meta``: the ``AutogradMeta`` (requires_grad, grad, grad_fn, output_nr, hooks,
  view_info), None until autograd or ``requires_grad_`` needs it (``meta_of`` creates it).

``wrap(impl, cls=None)`` makes a Tensor (or a ``cls`` instance, a Tensor subclass such as
nn.Parameter) that is the handle of a TensorImpl (the one construction entry besides the
factories); ``set_requires_grad`` / ``check_grad_assignable`` keep the flag, the key bit and
PyTorch's errors in one place; ``input_meta(t)`` / ``meta_matches(g, meta)`` read (sizes,
dtype, backend bits) in one C++ call; ``grad_stealable(grads, i, leaf)`` tells AccumulateGrad
whether the gradient ``grads[i]`` is held by that list alone and laid out like ``leaf`` (then it
becomes ``leaf.grad`` uncopied); ``set_history_1(r, node, AutogradMeta, AUTOGRAD_KEY)`` makes
``r`` the one output of the recorded ``node`` (its ``_input_meta``, ``_meta`` and key bit);
``gradient_edge_function(AccumulateGrad, seq, fallback)`` makes autograd's ``gradient_edge(t)`` in
C++ for the common tensors (a view: ``fallback(t)``), a leaf's new AccumulateGrad included;
``save_input_function(fallback)`` makes its ``save(t)`` (a saved input's record) for dense tensors.

The autograd engine's loop
--------------------------
``run_backward_graph(root, root_grads, keep_graph, plain, useful, captures, capture, helpers)``
is the routing loop of ember.autograd's Engine in C++ (``csrc/python/autograd_engine.cpp``):
dependency counts, input buffers, the ready queue, each gradient into the buffer its edge
points at; it calls the nodes' ``apply`` / ``release_variables`` and the engine's Python
``helpers`` for everything else. engine.py's ``_run_graph`` is the same loop in Python.

Hooks aten calls
----------------
``Tensor.backward``, ``register_hook``, ``retain_grad``, ``requires_grad_``, the ``grad``
setter, ``detach_`` and ``grad_fn`` are aten methods that call into autograd through
``set_autograd_hook(name, fn)`` (names: ``AUTOGRAD_HOOKS``): a lower layer never imports a
higher one. ``library.set_autograd_installer`` is the same for ``library`` ops, and
``register_parameter_class`` / ``register_torch_pickle_names`` for ``load``'s unpickler.

Operators
---------
``entries`` is the generated module of dispatcher entries: ``entries._call_<op>_<overload>``
calls an operator with its schema's arguments positionally and no argument parsing (the
autograd formulas use them); the ``_call_`` prefix keeps them out of ``ember.aten``'s
namespace, not out of this API. Operators whose PyTorch name begins with an underscore
(``ember.aten._foreach_add_``, ``_standard_gamma``) are public operators too: the layering
test accepts every name native_functions.yaml declares.
"""

from __future__ import annotations

from typing import Any

from ember.c10py import DispatchKey, DispatchKeySet

from . import _dispatch, _tensor, _trace, _weights_only_unpickler, serialization
from ._C import _add_keys as add_keys
from ._C import _grad_stealable as grad_stealable
from ._C import _gradient_edge_function as gradient_edge_function
from ._C import _input_meta as input_meta
from ._C import _meta_matches as meta_matches
from ._C import _remove_keys as remove_keys
from ._C import _run_backward_graph as run_backward_graph
from ._C import _save_input_function as save_input_function
from ._C import _set_history_1 as set_history_1
from ._dispatch import (
    INFERENCE_MODE_VIEW,
    NO_GRAD_VIEW,
    ExcludeKeys,
    IncludeKeys,
    OpOverload,
    all_ops,
    bump_version,
    device_keys,
    excluded_keys,
    fallback_for,
    find_op,
    included_keys,
    python_source,
    redispatcher,
    register_fallback,
    register_kernel,
    set_excluded,
    set_included,
)
from ._dispatch import _schema_params as schema_params
from ._generated import _ops as entries
from ._schema import FunctionSchema
from ._sparse import SparseTensor
from ._tensor import AutogradMeta, Tensor
from ._tensor import _check_grad_assignable as check_grad_assignable
from ._tensor import _meta_of as meta_of
from ._tensor import _set_requires_grad as set_requires_grad
from ._tensor import _wrap as wrap
from ._trace import trace_backward_node

# -- key bits ------------------------------------------------------------------------------

AUTOGRAD_KEY = DispatchKeySet(DispatchKey.AutogradFunctionality).raw
AUTOGRAD_OTHER_KEY = DispatchKeySet(DispatchKey.AutogradOther).raw
AUTOGRAD_FUNCTIONALITY = _dispatch.AUTOGRAD_FUNCTIONALITY
BACKEND_MASK = _dispatch.BACKEND_MASK
CPU_BACKEND = DispatchKeySet(DispatchKey.CPU).raw & BACKEND_MASK
CUDA_BACKEND = DispatchKeySet(DispatchKey.CUDA).raw & BACKEND_MASK
ALL_KEYS = _dispatch.ALL_BITS
_NOT_AUTOGRAD = ALL_KEYS & ~AUTOGRAD_FUNCTIONALITY

assert AUTOGRAD_FUNCTIONALITY == AUTOGRAD_KEY | AUTOGRAD_OTHER_KEY


def backend_device_type(backend: int) -> str:
    """The device type ("cpu" / "cuda") of a key set's backend bits (``keys & BACKEND_MASK``)."""
    return "cuda" if backend == CUDA_BACKEND else "cpu"


# -- running below Autograd ------------------------------------------------------------------

# The thread-local include / exclude-not sets (C++'s DispatchTLS unless EMBER_PYTHON_DISPATCH=1):
# one object for the life of the process, so binding it here is safe.
_tls = _dispatch.tls

# The same object, public for generated code that excludes keys around a run of kernels without a
# call per run (ember.fx's replay programs write `dispatch_tls.exclude_not` inline, restoring it in a
# `finally:`); everything else uses the guards below.
dispatch_tls = _tls


def call_below_autograd(redispatch: Any, ks: int, args: tuple[Any, ...]) -> Any:
    """``redispatch(ks, *args)`` with the Autograd keys excluded on this thread during the call."""
    tls = _tls
    prev = tls.exclude_not
    tls.exclude_not = prev & _NOT_AUTOGRAD
    try:
        return redispatch(ks, *args)
    finally:
        tls.exclude_not = prev


def redispatcher_below_autograd(op: OpOverload) -> Any:
    """One entry ``f(ks, *args)`` running ``op`` below Autograd (``call_below_autograd`` in C++)."""
    return redispatcher(op, exclude=AUTOGRAD_FUNCTIONALITY)


def exclude_autograd() -> ExcludeKeys:
    """Context manager: the Autograd keys are excluded on this thread inside it."""
    return ExcludeKeys(AUTOGRAD_FUNCTIONALITY)


def set_autograd_excluded(excluded: bool) -> None:
    """Excludes (grad mode off) or re-includes the Autograd keys on this thread."""
    if excluded:
        _tls.exclude_not &= ~AUTOGRAD_FUNCTIONALITY
    else:
        _tls.exclude_not |= AUTOGRAD_FUNCTIONALITY


def view_creation_marker() -> Any:
    """How a view made now with the Autograd keys excluded is marked (None: NO_GRAD_VIEW)."""
    return _tls.view_creation


def set_view_creation_marker(marker: Any) -> None:
    """``NO_GRAD_VIEW`` or ``INFERENCE_MODE_VIEW`` (inference_mode's views refuse in-place ops later)."""
    _tls.view_creation = marker


# -- the Tensor protocol and the hooks aten calls ---------------------------------------------

TENSOR_PROTOCOL = frozenset(("_impl", "_keys", "_base", "_meta"))

AUTOGRAD_HOOKS = frozenset(
    (
        "backward",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "retain_grad",
        "requires_grad_",
        "set_grad",
        "detach_",
        "grad_fn",
    )
)


def set_autograd_hook(name: str, fn: Any) -> None:
    """Installs the autograd function a Tensor method calls (``name`` in ``AUTOGRAD_HOOKS``)."""
    if name not in AUTOGRAD_HOOKS:
        raise ValueError(f"set_autograd_hook: unknown hook {name!r}; expected one of {sorted(AUTOGRAD_HOOKS)}")
    _tensor._autograd_hooks[name] = fn


# -- serialization: what the layers above register (a lower layer never imports a higher one) --


def register_parameter_class(cls: type) -> None:
    """ember.nn: tensors saved as ``nn.Parameter`` load as ``cls(data, requires_grad)``."""
    serialization._register_parameter_class(cls)


def register_torch_pickle_names(resolve: Any, names_of: Any) -> None:
    """ember.torch: how a checkpoint's ``torch.<path>.<name>`` globals map to ember's objects and back."""
    _weights_only_unpickler.register_torch_names(resolve, names_of)


# -- tracing (ember.aten.trace_dispatch) ------------------------------------------------------

# ``trace_state.sinks`` is non-empty while a dispatch trace is on; the engine then reports each
# node it runs through ``trace_backward_node``.
trace_state = _trace._state

__all__ = [
    "ALL_KEYS",
    "AUTOGRAD_FUNCTIONALITY",
    "AUTOGRAD_HOOKS",
    "AUTOGRAD_KEY",
    "AUTOGRAD_OTHER_KEY",
    "BACKEND_MASK",
    "CPU_BACKEND",
    "CUDA_BACKEND",
    "INFERENCE_MODE_VIEW",
    "NO_GRAD_VIEW",
    "TENSOR_PROTOCOL",
    "AutogradMeta",
    "ExcludeKeys",
    "FunctionSchema",
    "IncludeKeys",
    "OpOverload",
    "SparseTensor",
    "Tensor",
    "add_keys",
    "all_ops",
    "backend_device_type",
    "bump_version",
    "call_below_autograd",
    "check_grad_assignable",
    "device_keys",
    "dispatch_tls",
    "entries",
    "exclude_autograd",
    "excluded_keys",
    "fallback_for",
    "find_op",
    "grad_stealable",
    "gradient_edge_function",
    "included_keys",
    "input_meta",
    "meta_matches",
    "meta_of",
    "python_source",
    "redispatcher",
    "redispatcher_below_autograd",
    "register_fallback",
    "register_kernel",
    "register_parameter_class",
    "register_torch_pickle_names",
    "remove_keys",
    "run_backward_graph",
    "save_input_function",
    "schema_params",
    "set_autograd_excluded",
    "set_autograd_hook",
    "set_excluded",
    "set_history_1",
    "set_included",
    "set_requires_grad",
    "set_view_creation_marker",
    "trace_backward_node",
    "trace_state",
    "view_creation_marker",
    "wrap",
]
