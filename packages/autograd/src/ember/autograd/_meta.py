"""A tensor's place in the graph: its gradient edge, its history, views and in-place rebasing.

The autograd state of a tensor is aten's ``AutogradMeta`` (``t._meta``): requires_grad,
grad, grad_fn, output_nr, hooks, view_info, grad_accumulator. A tensor carries the
Autograd dispatch key exactly while it requires grad, so every helper here that makes
a tensor require grad also sets that key bit in its TensorImpl's key set (``add_keys``).

Views and in-place operations (PyTorch's "view + inplace" rules)
----------------------------------------------------------------
* aten gives every view its root ``_base``. A view made by a recorded op (its input
  required grad) also gets ``view_info`` = a ``ViewInfo`` holding the version of the
  shared version counter at which its ``grad_fn`` was last valid.
* An in-place op on a view ``v`` of ``base`` rewrites base's history: base's grad_fn
  becomes ``CopySlices(base, geometry of v, fn)`` where ``fn`` is the in-place op's
  node; CopySlices sends the part of base's gradient outside ``v`` to base's old
  history and the part inside ``v`` through ``fn``. ``v``'s own grad_fn is then stale.
* Any in-place op bumps the version counter shared by base and all its views, so a
  view whose recorded version differs has a stale grad_fn: reading it (``grad_fn``
  or the gradient edge) regenerates it as ``AsStridedBackward0`` of the base's
  current history (``regenerate_view_grad_fn``).
* A view that is one of several outputs (``unbind``, ``split``) cannot be modified in
  place, nor read once its base changed; a view of a leaf that requires grad cannot be
  modified in place either (PyTorch's errors).
* A view made while the Autograd keys were excluded (``no_grad``, ``inference_mode``) of
  a tensor requiring grad has no history; aten marks it (``view_info`` = NO_GRAD_VIEW /
  INFERENCE_MODE_VIEW, inherited by views of it) and keeps its Autograd key, so an
  in-place op on it with grad mode on reaches the Autograd kernel, which refuses it.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

from ember.aten.extension import (
    AUTOGRAD_KEY,
    INFERENCE_MODE_VIEW,
    NO_GRAD_VIEW,
    AutogradMeta,
    SparseTensor,
    Tensor,
    add_keys,
    wrap,
)
from ember.aten.extension import input_meta as _input_meta

from ._copy_slices import CopySlices
from .grad_mode import _state as _grad_state
from .graph import _RELEASED, ERR_BACKWARD_TWICE, AccumulateGrad, Node

AUTOGRAD_BIT = AUTOGRAD_KEY  # DispatchKey.AutogradFunctionality (the same bit for CPU and CUDA tensors)


class ViewInfo:
    """Marks a differentiable view; ``attr_version`` = version at which its grad_fn is valid."""

    __slots__ = ("attr_version", "multi_output")

    def __init__(self, attr_version: int, multi_output: bool = False) -> None:
        self.attr_version = attr_version
        self.multi_output = multi_output


class _NonDifferentiableView:
    """view_info of a tensor from ``detach()``: it aliases its input but is not a view for autograd."""

    __slots__ = ()


NON_DIFFERENTIABLE_VIEW = _NonDifferentiableView()


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


def requires_grad(t: Any) -> bool:
    m = getattr(t, "_meta", None)
    return m is not None and m.requires_grad


def gradient_edge(t: Any) -> tuple[Node, int] | None:
    """(grad_fn, output_nr), or (AccumulateGrad, 0) for a leaf; None if `t` does not require grad.

    `t` may be anything a Tensor argument accepts (a Python number gives None).
    """
    if t.__class__ is not Tensor and not isinstance(t, Tensor):
        return None  # None, a Python number (cheaper than getattr's miss)
    m = t._meta
    if m is None or not m.requires_grad:
        return None
    fn = m.grad_fn
    if m.view_info is not None:
        fn = view_grad_fn(t, m)
    if fn is None:
        ref = m.grad_accumulator  # grad_accumulator(t, m), its common case inline
        acc = ref() if ref is not None else None
        return (acc if acc is not None else grad_accumulator(t, m), 0)
    return (fn, m.output_nr)


def grad_accumulator(t: Any, m: AutogradMeta) -> AccumulateGrad:
    """The leaf's AccumulateGrad (one per leaf, held weakly by the leaf: the graph owns it)."""
    ref = m.grad_accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        m.grad_accumulator = weakref.ref(acc)
    return acc


def view_grad_fn(t: Any, m: AutogradMeta) -> Node | None:
    """The grad_fn of a view, regenerated if its base was modified in place since it was set."""
    vi = m.view_info
    if vi.__class__ is not ViewInfo or t._impl.version == vi.attr_version:
        return m.grad_fn
    return regenerate_view_grad_fn(t, m, vi)


def regenerate_view_grad_fn(t: Any, m: AutogradMeta, vi: ViewInfo) -> Node | None:
    if vi.multi_output:
        fn = m.grad_fn
        name = fn.name() if fn is not None else "a function"
        raise RuntimeError(
            f"Output {m.output_nr} of {name} is a view and its base or another view of its base has been modified "
            "inplace. This view is the output of a function that returns multiple views. Such functions do not "
            "allow the output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one."
        )
    base = t._base
    vi.attr_version = t._impl.version
    if base is None or not requires_grad(base):
        return m.grad_fn
    generated = sys.modules["ember.autograd._generated"]  # made by _kernels.install()
    impl = t._impl
    # as_strided of the base, recorded: its node is the view's new grad_fn
    fresh = generated.record_as_strided(base, impl.sizes, impl.strides, impl.storage_offset)
    fm = fresh._meta
    m.grad_fn = fm.grad_fn
    m.output_nr = 0
    m.requires_grad = True
    return m.grad_fn


def grad_fn_hook(t: Any) -> Node | None:
    """aten's Tensor.grad_fn for a tensor with view_info (installed in _autograd_hooks)."""
    m = t._meta
    return view_grad_fn(t, m)


# ---------------------------------------------------------------------------
# writing history
# ---------------------------------------------------------------------------


def input_meta(t: Any) -> tuple[Any, Any, int]:
    """(sizes, dtype, backend bits of the key set): what a Node records of one of its outputs."""
    return _input_meta(t)  # type: ignore[no-any-return]


def set_history(t: Any, node: Node, output_nr: int = 0) -> None:
    """Makes `t` (a fresh output) the output `output_nr` of `node`."""
    m = t._meta
    if m is None:
        m = t._meta = AutogradMeta()
    elif m.view_info is NO_GRAD_VIEW or m.view_info is INFERENCE_MODE_VIEW:
        m.view_info = None  # an output now (a custom Function returning a view made in its forward)
    m.requires_grad = True
    m.grad_fn = node
    m.output_nr = output_nr
    add_keys(t, AUTOGRAD_BIT)


def mark_view(t: Any, multi_output: bool = False) -> None:
    """`t` (output of a recorded view op) is a differentiable view of its input's base."""
    t._meta.view_info = ViewInfo(t._impl.version, multi_output)


def mark_non_differentiable_view(t: Any) -> None:
    m = t._meta
    if m is None:
        m = t._meta = AutogradMeta()
    m.view_info = NON_DIFFERENTIABLE_VIEW


def is_differentiable_view(t: Any) -> bool:
    if t._base is None:
        return False
    m = t._meta
    return m is None or m.view_info is not NON_DIFFERENTIABLE_VIEW


ERR_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
    "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
    "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)
ERR_INFERENCE_MODE_VIEW = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given that this use case "
    "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked)."
)


def check_no_grad_view(t: Any) -> None:
    """An in-place op with grad mode on, on a view made under no_grad / inference_mode of a tensor requiring
    grad: PyTorch's error. (The op could not be recorded: the view has no history linking it to its base.)"""
    m = t._meta
    if m is not None:
        vi = m.view_info
        if vi is NO_GRAD_VIEW:
            raise RuntimeError(ERR_NO_GRAD_VIEW)
        if vi is INFERENCE_MODE_VIEW:
            raise RuntimeError(ERR_INFERENCE_MODE_VIEW)


def check_inplace(t: Any) -> None:
    """Errors of an in-place op on `t` while some input requires grad (PyTorch's check_inplace)."""
    m = t._meta
    check_no_grad_view(t)
    if is_differentiable_view(t):
        if m is not None and m.view_info.__class__ is ViewInfo and m.view_info.multi_output:
            fn = m.grad_fn
            name = fn.name() if fn is not None else "a function"
            raise RuntimeError(
                f"Output {m.output_nr} of {name} is a view and is being modified inplace. This view is the output "
                "of a function that returns multiple views. Such functions do not allow the output views to be "
                "modified inplace. You should replace the inplace operation by an out-of-place one."
            )
        base = t._base
        bm = base._meta
        if bm is not None and bm.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if m is not None and m.requires_grad and t.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(t: Any, node: Node) -> None:
    """After an in-place op recorded as `node` on `t` (its output 0), `t`'s history is `node`.

    For a view, the base's history becomes CopySlices(base, view geometry, node) and
    the view's grad_fn is regenerated from the base when next read.
    """
    node._input_meta = (input_meta(t),)
    if is_differentiable_view(t):
        base = t._base
        cs = CopySlices(base, t, node)
        cs.next_edges = (gradient_edge(base), *node.next_edges[1:])
        _move_retains_grad(base, cs)
        set_history(base, cs, 0)
        m = t._meta
        if m is None:
            m = t._meta = AutogradMeta()
        m.requires_grad = True
        m.grad_fn = None
        m.view_info = ViewInfo(-1)  # stale: rebuilt from the base on the next read
        add_keys(t, AUTOGRAD_BIT)
        return
    _move_retains_grad(t, node)
    set_history(t, node, 0)


def _move_retains_grad(t: Any, new_fn: Node) -> None:
    """retain_grad() follows the tensor to its new grad_fn (PyTorch moves the hook too)."""
    m = t._meta
    if m is None or not m.retains_grad:
        return
    old = m.grad_fn
    if old is not None and old._retains_grad_hooks is not None:
        hook = old._retains_grad_hooks.pop(m.output_nr, None)
        if hook is not None:
            if new_fn._retains_grad_hooks is None:
                new_fn._retains_grad_hooks = {}
            new_fn._retains_grad_hooks[0] = hook


def check_no_requires_grad(t: Any, arg: str, op: str) -> None:
    if t is None:
        return
    if isinstance(t, (list, tuple)):
        for x in t:
            check_no_requires_grad(x, arg, op)
        return
    if requires_grad(t):
        raise RuntimeError(
            f"The function '{op}' is not differentiable with respect to argument '{arg}'. This input cannot have "
            "requires_grad True."
        )


# ---------------------------------------------------------------------------
# saved tensors
# ---------------------------------------------------------------------------


class SavedVariable:
    """A tensor saved for backward, with the version it had then.

    An input is kept as it is. An output is kept as its TensorImpl only (no Python
    Tensor, hence no reference to its grad_fn: tensor -> grad_fn -> saved output ->
    tensor would be a cycle) and is rebuilt on unpack as an output of the unpacking
    node, so formulas that use `result` stay differentiable.
    """

    __slots__ = ("data", "grad_fn", "output_nr", "version")

    def __init__(self, t: Any, is_output: bool = False, version_offset: int = 0) -> None:
        impl = t._impl
        self.version = impl.version + version_offset
        if is_output:
            self.data = impl
            self.grad_fn = None
            self.output_nr = t._meta.output_nr if t._meta is not None else 0
        else:
            self.data = t
            m = t._meta
            self.grad_fn = m.grad_fn if m is not None else None
            self.output_nr = m.output_nr if m is not None else 0

    def unpack(self, node: Node | None) -> Any:
        data = self.data
        if isinstance(data, Tensor):  # subclasses too (nn.Parameter, a sparse tensor)
            impl = data._impl
            if impl.version != self.version:
                raise RuntimeError(self._modified_message(impl, self.grad_fn))
            return data
        # an output: rebuild a tensor over the same TensorImpl, as output of `node`
        if data.version != self.version:
            raise RuntimeError(self._modified_message(data, node))
        t = wrap(data)
        # as an output of `node` only while grad mode is on (outside backward, or under create_graph=True):
        # a backward pass without create_graph computes no graph from it. Integer outputs carry no gradient.
        if node is not None and _grad_state.enabled and data.dtype.is_floating_point:
            m = t._meta = AutogradMeta()
            m.requires_grad = True
            m.grad_fn = node
            m.output_nr = self.output_nr
            add_keys(t, AUTOGRAD_BIT)
        return t

    def _modified_message(self, impl: Any, grad_fn: Node | None) -> str:
        shape = ", ".join(str(s) for s in impl.sizes)
        msg = (
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{impl.dtype._name} [{shape}]]"
        )
        if grad_fn is not None:
            msg += f", which is output {self.output_nr} of {grad_fn.name()},"
        msg += (
            f" is at version {impl.version}; expected version {self.version} instead. Hint: enable anomaly "
            "detection to find the operation that failed to compute its gradient, with "
            "ember.autograd.set_detect_anomaly(True)."
        )
        return msg


def save(t: Any) -> Any:
    """Saves an input: a Tensor becomes (tensor, version, grad_fn, output_nr at save time) -- a tuple, the cheapest
    record on the hot path; None and Python numbers stay as they are. Outputs use SavedVariable."""
    cls = t.__class__
    if cls is Tensor or isinstance(t, Tensor):
        # the version read in C++ (`_version`); a sparse tensor's `_impl` raises its own error
        version = t._impl.version if cls is SparseTensor else t._version
        m = t._meta
        if m is None:
            return (t, version, None, 0)
        return (t, version, m.grad_fn, m.output_nr)
    return t


def save_list(ts: Any) -> Any:
    return [save(t) for t in ts]


def save_output(t: Any, version_offset: int = 0) -> Any:
    if t is None:
        return None
    return SavedVariable(t, True, version_offset)


def unpack(v: Any, node: Node | None) -> Any:
    cls = v.__class__
    if cls is tuple:  # a saved input (a dense tensor: save() refused a sparse one)
        t = v[0]
        if t._version != v[1]:
            sv = SavedVariable.__new__(SavedVariable)
            sv.version, sv.output_nr = v[1], v[3]
            raise RuntimeError(sv._modified_message(t._impl, v[2]))
        return t
    if cls is SavedVariable:
        return v.unpack(node)
    if v is _RELEASED:
        raise RuntimeError(ERR_BACKWARD_TWICE)
    if cls is list:
        return [unpack(x, node) for x in v]
    return v
