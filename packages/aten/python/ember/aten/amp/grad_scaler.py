"""GradScaler: dynamic loss scaling for mixed-precision training (PyTorch's torch.amp.GradScaler).

float16 gradients underflow; multiplying the loss by a large scale S keeps them
representable, and the optimizer step must then see grads / S. The scaler:

    scaler.scale(loss).backward()   # grads are S * dL/dw
    scaler.step(optimizer)          # unscale_ (unless already done), then step -- or skip it
    scaler.update()                 # adjust S for the next iteration

unscale_ multiplies every gradient of the optimizer by 1/S in place and records whether any
element was inf/NaN (one fused kernel per device and dtype,
``_amp_foreach_non_finite_check_and_unscale_``); step skips ``optimizer.step()`` when one
was; update (``_amp_update_scale_``) multiplies S by backoff_factor after a skipped step,
and by growth_factor after growth_interval consecutive clean ones. The scale, the growth
tracker and the found-inf flags are tensors on the gradients' device, so on CUDA nothing
is read back on the host except the one flag step needs.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from .. import _dispatch, cuda
from .._dtypes import float16, float32, float64, int32
from .._generated._ops import _call__amp_foreach_non_finite_check_and_unscale_ as unscale
from .._generated._ops import _call__amp_update_scale_ as update_scale

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _MultiDeviceReplicator:
    """One tensor, lazily copied to each device asked for (the scale for outputs on several devices)."""

    def __init__(self, master: Any) -> None:
        self.master = master
        self._per_device: dict[Any, Any] = {}

    def get(self, device: Any) -> Any:
        t = self._per_device.get(device)
        if t is None:
            t = self.master.to(device=device, copy=True)
            self._per_device[device] = t
        return t


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)`` -- PyTorch's signature and defaults. On "cuda" without
    a GPU it warns and disables itself (every method then passes through), as PyTorch's."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            if not cuda.is_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Any = None  # made on the first scale() call, on the outputs' device
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_refresh_per_optimizer_state)

    # ---- scaling ----
    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Any, Any]:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise RuntimeError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise RuntimeError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        # ember.aten's namespace, which ember/aten/__init__.py fills after importing this module (full)
        from .. import full

        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor, or an iterable of them) multiplied by the scale; unchanged if disabled."""
        if not self._enabled:
            return outputs
        if hasattr(outputs, "_impl"):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        stash: list[_MultiDeviceReplicator] = []

        def apply_scale(val: Any) -> Any:
            if hasattr(val, "_impl"):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, (list, tuple)):
                out = [apply_scale(v) for v in val]
                return type(val)(out) if isinstance(val, tuple) else out
            if hasattr(val, "__iter__") and not isinstance(val, (str, bytes)):
                return map(apply_scale, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    # ---- unscaling ----
    def _unscale_grads_(self, optimizer: Any, inv_scale: Any, found_inf: Any, allow_fp16: bool) -> dict[Any, Any]:
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        # grads grouped by device and dtype: one fused kernel call per group
        groups: dict[Any, dict[Any, list[Any]]] = defaultdict(lambda: defaultdict(list))
        with _dispatch.ExcludeKeys(_dispatch.AUTOGRAD_FUNCTIONALITY):  # no_grad
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not hasattr(param, "_impl"):
                        raise TypeError(f"GradScaler: optimizer parameters must be Tensors, got {type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    groups[grad.device][grad.dtype].append(grad)
            for device, per_dtype in groups.items():
                for grads in per_dtype.values():
                    unscale(grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device

    def unscale_(self, optimizer: Any) -> None:
        """Divides the optimizer's gradients by the scale in place (once per step), e.g. before clipping them."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # ember.aten's namespace, which ember/aten/__init__.py fills after importing this module (full)
        from .. import full

        # the reciprocal in float64 then rounded once, as PyTorch's
        inv_scale = self._scale.to(float64).reciprocal().to(float32)
        found_inf = full((), 0.0, dtype=float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    # ---- the step ----
    def _maybe_opt_step(self, optimizer: Any, state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None  # an inf/NaN gradient: skip this step (update() backs the scale off)

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """unscale_ (if not done yet), then optimizer.step(*args, **kwargs) unless a gradient was inf/NaN;
        returns what optimizer.step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise RuntimeError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Adjusts the scale from this iteration's inf checks (or sets it to `new_scale`)."""
        if not self._enabled:
            return

        scale, _ = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                if not hasattr(new_scale, "_impl") or new_scale.device.type != self._scale.device.type:
                    raise ValueError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [
                found_inf.to(device=scale.device)
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise RuntimeError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for f in found_infs[1:]:
                found_inf_combined = found_inf_combined + f
            update_scale(
                self._scale,
                self._growth_tracker,
                found_inf_combined,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- accessors ----
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return int(self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise RuntimeError(
                    "A GradScaler instance may only be pickled at the beginning of an iteration, "
                    "or at the end after scaler.update()."
                )
            # tensors are saved as their values (PyTorch: pickling happens between iterations)
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
