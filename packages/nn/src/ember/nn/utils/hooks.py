"""Hook handles and the machinery of Module full backward hooks (PyTorch's torch.utils.hooks).

Full backward hooks work by wrapping a module call between two identity autograd
Functions: one applied to the tensor inputs before ``forward``, one to the tensor
outputs after it. In backward the engine first reaches the outputs' identity node: its
pre-hook sees ``grad_output`` (and runs the backward pre-hooks, which may replace it);
then, once every gradient of the module's inputs is known, the inputs' identity node
runs: its pre-hook sees ``grad_input`` and calls the full backward hooks, which may
replace it. When no input requires grad, the hooks run from the outputs' node with
``grad_input`` all None.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from typing import Any

from ember.aten import Tensor
from ember.autograd import Function, is_grad_enabled

__all__ = ["BackwardHook", "RemovableHandle"]


class RemovableHandle:
    """A handle that removes a hook: ``handle.remove()``, or use it as a context manager.

    ``extra_dict`` names other dicts keyed by the same id (the hooks' with_kwargs /
    always_call flags) that ``remove`` also cleans.
    """

    next_id = itertools.count()

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)
        extras = [] if extra_dict is None else (extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        d = self.hooks_dict_ref()
        if d is not None and self.id in d:
            del d[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _BackwardHookFunction(Function):
    """Identity on its tensor arguments; the node whose hooks see the module's gradients."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return grads


class BackwardHook:
    """One module call's full backward hooks (made by ``Module.__call__`` when some are registered)."""

    def __init__(self, module: Any, user_hooks: list[Any], user_pre_hooks: list[Any]) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for idx, val in zip(indices, values, strict=False):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices: list[int], values: Any) -> tuple[Any, ...]:
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, fn: Any, args: Any) -> tuple[Any, ...]:
        # Runs the identity Function on the tensors of args; fn(grad_fn) sets the node's hooks.
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        requires_grad = any(t.requires_grad for t in tensors)

        if not (requires_grad and is_grad_enabled()):
            return args, None  # type: ignore[return-value]
        new_tensors = _BackwardHookFunction.apply(*tensors)
        if not isinstance(new_tensors, tuple):
            new_tensors = (new_tensors,)
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a code sample.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors, strict=True):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx  # type: ignore[return-value]

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        def fn(grad_fn: Any) -> None:
            def hook(grad_inputs: Any) -> Any:
                # grad_inputs here: the gradients of the module's tensor inputs
                if not self.user_hooks:
                    return None
                if self.grad_outputs is None:
                    # the outputs' node never ran (no output gradient reached it)
                    return None
                res = self._pack_with_none(self.input_tensors_index or [], grad_inputs, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, "
                            f"got {len(out)}, but expected {len(res)}"
                        )
                    res = tuple(out)
                self.grad_outputs = None
                return self._unpack_none(self.input_tensors_index or [], res)

            grad_fn.register_prehook(hook)

        self.n_inputs = len(args)
        result, self.input_tensors_index = self._apply_on_tensors(fn, args)  # type: ignore[misc]
        return result

    def setup_output_hook(self, args: Any) -> Any:
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)

        def fn(grad_fn: Any) -> None:
            def hook(grad_outputs: Any) -> Any:
                self.grad_outputs = self._pack_with_none(self.output_tensors_index or [], grad_outputs, self.n_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    out = user_pre_hook(self.module, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(self.grad_outputs):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, "
                            f"got {len(out)}, but expected {len(self.grad_outputs)}"
                        )
                    self.grad_outputs = tuple(out)
                if self.input_tensors_index is None:
                    # no input requires grad: the hooks run now, with grad_input all None
                    if self.user_hooks:
                        warnings.warn(
                            "Full backward hook is firing when gradients are computed with respect to module "
                            "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                            "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                            "details.",
                            stacklevel=1,
                        )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient should always return "
                                "None or None for all gradients."
                            )
                    grad_outputs_now = self.grad_outputs
                    self.grad_outputs = None
                    return self._unpack_none(self.output_tensors_index or [], grad_outputs_now)
                return self._unpack_none(self.output_tensors_index or [], self.grad_outputs)

            grad_fn.register_prehook(hook)

        self.n_outputs = len(args)
        result, self.output_tensors_index = self._apply_on_tensors(fn, args)  # type: ignore[misc]
        return result if is_tuple else result[0]
