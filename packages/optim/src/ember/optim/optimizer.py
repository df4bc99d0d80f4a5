"""Optimizer: the base class of every algorithm (PyTorch's torch.optim.Optimizer).

An optimizer holds

- ``param_groups``: a list of dicts, each with a ``params`` list and one value for every
  hyper-parameter (missing ones are filled from ``defaults``; a default that is the
  ``required`` sentinel must be given by every group);
- ``state``: a dict from parameter to that parameter's dict of buffers (``step``,
  ``exp_avg``, ...), created lazily by the first ``step``.

``state_dict()`` replaces parameters by integer indices (their position counted over all
groups in order) so that a checkpoint does not hold the parameters themselves;
``load_state_dict()`` zips those indices back onto this optimizer's parameters and casts
floating-point state to each parameter's dtype and device (``step`` stays as saved).

Hooks: step pre/post hooks (per optimizer and global), state_dict pre/post hooks and
load_state_dict pre/post hooks, each registration returning a RemovableHandle.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from itertools import chain
from typing import Any, TypeAlias

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import enable_grad, set_grad_enabled
from ember.autograd.graph import RemovableHandle

__all__ = [
    "Optimizer",
    "ParamsT",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

ParamsT: TypeAlias = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict: TypeAlias = dict[str, Any]


class _RequiredParameter:
    """Singleton marking a hyper-parameter every param group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()

_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()


def _add_hook(hooks: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Global hook ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` run before every step."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Global hook ``hook(optimizer, args, kwargs) -> None`` run after every step."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _use_grad_for_differentiable(func: Callable[..., Any]) -> Callable[..., Any]:
    """Runs ``step`` with grad mode on only when the optimizer is ``differentiable``."""

    @functools.wraps(func)
    def _use_grad(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        with set_grad_enabled(bool(self.defaults["differentiable"])):
            return func(self, *args, **kwargs)

    return _use_grad


def _eval_closure(closure: Callable[[], Any] | None) -> Any:
    """The loss from ``closure`` (run with grad mode on), or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _get_value(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x: Any) -> Any:
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_scalar_dtype() -> Any:
    """The dtype of scalar state such as ``step``: float64 under a float64 default, else float32."""
    return ea.float64 if ea.get_default_dtype() == ea.float64 else ea.float32


def _step_tensor(value: float = 0.0, device: Any = None, *, fused_or_capturable: bool = False) -> Tensor:
    """The ``step`` counter: a 0-dim float tensor (float32 on the param's device when fused/capturable)."""
    if fused_or_capturable:
        return ea.tensor(float(value), dtype=ea.float32, device=device)
    return ea.tensor(float(value), dtype=_get_scalar_dtype())


def _ensure_step_tensors(opt: Optimizer, key: str = "step") -> None:
    """Old checkpoints may hold ``step`` as a number: make it a tensor again (PyTorch's __setstate__)."""
    for group in opt.param_groups:
        flag = bool(group.get("fused")) or bool(group.get("capturable"))
        for p in group["params"]:
            p_state = opt.state.get(p, {})
            if len(p_state) != 0 and key in p_state and not isinstance(p_state[key], Tensor):
                p_state[key] = _step_tensor(float(p_state[key]), p.device, fused_or_capturable=flag)


# The per-group flags every algorithm of this package takes (each adds its own).
_COMMON_FLAGS: dict[str, Any] = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}


def _check_non_negative(**values: Any) -> None:
    """The constructors' checks of their hyperparameters, in the order given: PyTorch's
    ValueError for the first that is negative or NaN (``Invalid learning rate: -1``,
    ``Invalid epsilon value: ...``, ``Invalid <name> value: ...``); a Tensor ``lr`` must
    hold one element."""
    for name, value in values.items():
        if name == "lr" and isinstance(value, Tensor) and value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= value:
            label = {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
            raise ValueError(f"Invalid {label}: {value}")


def _restore_group_defaults(opt: Optimizer, flags: dict[str, Any], counters: Sequence[str] = ("step",)) -> None:
    """The tail of an algorithm's ``__setstate__``: groups pickled by an older version get the
    flags they lack, and per-parameter counters saved as numbers become tensors again."""
    for group in opt.param_groups:
        for name, value in flags.items():
            group.setdefault(name, value)
    for key in counters:
        _ensure_step_tensors(opt, key)


def _gather_group(
    opt: Optimizer,
    group: dict[str, Any],
    buffers: Sequence[str],
    *,
    counters: Sequence[tuple[str, float]] = (("step", 0.0),),
    init_state: Callable[[Tensor, dict[str, Any]], None] | None = None,
    check: Callable[[Tensor], None] | None = None,
) -> tuple[list[Tensor], list[Tensor], dict[str, list[Tensor]]]:
    """The group loop shared by the algorithms: the parameters of ``group`` that have a
    gradient, their gradients, and for each state entry (the counters, then the buffers) the
    list of its tensors, in parameter order. A parameter seen for the first time gets its
    state: each counter a 0-dim tensor starting at its value (``_step_tensor``; float32 on the
    parameter's device when the group is capturable or fused), each buffer zeros like the
    parameter -- or whatever ``init_state(param, state)`` makes instead. ``check(param)``
    raises for a parameter the algorithm cannot take."""
    on_device = bool(group.get("capturable") or group.get("fused"))
    keys = [name for name, _ in counters] + list(buffers)
    params: list[Tensor] = []
    grads: list[Tensor] = []
    columns: dict[str, list[Tensor]] = {key: [] for key in keys}
    for p in group["params"]:
        if p.grad is None:
            continue
        if check is not None:
            check(p)
        params.append(p)
        grads.append(p.grad)
        state = opt.state[p]
        if len(state) == 0:
            if init_state is not None:
                init_state(p, state)
            else:
                for name, start in counters:
                    state[name] = _step_tensor(start, p.device, fused_or_capturable=on_device)
                for name in buffers:
                    state[name] = ea.zeros_like(p)
        for key in keys:
            columns[key].append(state[key])
    return params, grads, columns


def _profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps a class's ``step`` so the pre/post hooks run around it."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if self.__dict__.get("_in_hooked_step", False):
            # a subclass's step calling super().step(): the hooks already ran once
            return func(*args, **kwargs)
        self._in_hooked_step = True
        try:
            return _run_with_hooks(self, func, args, kwargs)
        finally:
            self._in_hooked_step = False

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


def _run_with_hooks(self: Any, func: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
        result = pre_hook(self, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
    out = func(*args, **kwargs)
    for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
        post_hook(self, args, kwargs)
    return out


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (param
            groups, each with a ``params`` entry and optional per-group hyper-parameters).
        defaults: hyper-parameter defaults used by groups that do not set them.
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_typename(params)}"
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling / printing ----------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\n"
            out += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        out += ")"
        return out

    def _patch_step_function(self) -> None:
        cls = self.__class__
        step = cls.__dict__.get("step") or cls.step
        if not getattr(step, "hooked", False):
            cls.step = _profile_hook_step(step)  # type: ignore[method-assign]

    # ---- hooks -----------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` before each step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` after each step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` before ``state_dict`` builds its result."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` on ``state_dict``'s result."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | state_dict`` before loading."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer) -> None`` after loading."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state_dict ------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Indices count the parameters over all groups in order; tensors in ``state`` are
        the optimizer's own (not copies), as in PyTorch.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor, value: Tensor, param_id: int, param_groups: list[dict[str, Any]], key: Any = None
    ) -> Tensor:
        # ``step`` keeps its saved dtype and device (float32 on the param's device when the
        # group is fused or capturable); other floating state follows the parameter.
        fused = False
        capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = bool(pg.get("fused", False))
                capturable = bool(pg.get("capturable", False))
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=ea.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Loads a ``state_dict()`` result (groups matched by position, parameters by index)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )

        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
                strict=True,
            )
        )

        def _cast(param: Tensor, value: Any, param_id: int, param_groups: list[dict[str, Any]], key: Any = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id, param_groups, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(_cast(param, v, param_id, param_groups) for v in value)
            return value

        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups, strict=True)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- gradients and steps -----------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all optimized tensors (to None by default; with
        ``set_to_none=False`` zeroes them, one ``_foreach_zero_`` per (device, dtype) bucket
        when the optimizer uses foreach/fused)."""
        foreach = bool(self.defaults.get("foreach") or self.defaults.get("fused")) and hasattr(ea, "_foreach_zero_")
        buckets: dict[tuple[str, str], list[Tensor]] = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                if foreach:
                    buckets.setdefault((str(p.grad.device), str(p.grad.dtype)), []).append(p.grad)
                else:
                    p.grad.zero_()
        for grads in buckets.values():
            ea._foreach_zero_(grads)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (re-evaluating the loss with ``closure`` if given)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a group of parameters (with its own hyper-parameters) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        extracted: list[Tensor] = []
        names: list[str] = []
        for entry in param_group["params"]:
            if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str):
                names.append(entry[0])
                extracted.append(entry[1])
            else:
                extracted.append(entry)
        if names:
            if len(names) != len(extracted):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        param_group["params"] = extracted

        for param in extracted:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(param)}")
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(extracted) != len({id(p) for p in extracted}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in extracted):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return "ember.Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"
