"""The default random generators of the CUDA devices (PyTorch's ``torch.cuda.random``).

Each device has one Philox generator (``ember.aten._C.default_generator(device)``),
the same algorithm as the CPU's: seeded alike, a float32 ``rand`` / ``randn`` on the
GPU gives the CPU's numbers bit for bit (see docs/cuda.md for the exceptions).

As in PyTorch, the seeding functions do nothing when no CUDA device is available (so a
script may call ``manual_seed_all`` unconditionally); reading or restoring a device's
state needs the device and raises RuntimeError without one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember.c10py import cuda as _c10_cuda
from ember.c10py import device as _device_cls

from .._C import default_generator as _default_generator_of
from ._device import _checked_index, current_device

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]


def _generator(device: Any, what: str) -> Any:
    if isinstance(device, str) and device == "cuda":
        device = None
    idx = _checked_index(device, what)
    return _default_generator_of(_device_cls("cuda", idx))


def _all_generators() -> list[Any]:
    return [_default_generator_of(_device_cls("cuda", i)) for i in range(_c10_cuda.device_count())]


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator (nothing without a CUDA device)."""
    if _c10_cuda.is_available():
        _default_generator_of(_device_cls("cuda", current_device())).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every CUDA device (nothing without one)."""
    for g in _all_generators():
        g.manual_seed(int(seed))


def seed() -> None:
    """Seeds the current device's generator from a non-deterministic source."""
    if _c10_cuda.is_available():
        _default_generator_of(_device_cls("cuda", current_device())).seed()


def seed_all() -> None:
    """Seeds every device's generator with one non-deterministic seed."""
    gens = _all_generators()
    if gens:
        s = gens[0].seed()
        for g in gens[1:]:
            g.manual_seed(s)


def initial_seed() -> int:
    """The seed of the current device's generator."""
    return int(_generator(None, "ember.aten.cuda.initial_seed").initial_seed())


def get_rng_state(device: Any = "cuda") -> Any:
    """The generator state of `device` (default: current) as a uint8 tensor (seed, then offset)."""
    return _generator(device, "ember.aten.cuda.get_rng_state").get_state()


def get_rng_state_all() -> list[Any]:
    """The states of every device's generator, in device order."""
    return [get_rng_state(i) for i in range(_c10_cuda.device_count())]


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restores the generator of `device` (default: current) from get_rng_state()."""
    _generator(device, "ember.aten.cuda.set_rng_state").set_state(new_state)


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    """Restores every device's generator from get_rng_state_all()."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
