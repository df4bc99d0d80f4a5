"""The default random generators and their seeding (PyTorch's ``torch.random``).

Every random operator takes ``generator=``; without one it draws from the default
generator of the output's device. A generator is a Philox4x32-10 counter-based
generator whose whole state is ``(seed, offset)``: the same seed gives the same
numbers on any number of threads (and, with a CUDA build, on the GPU).

CUDA. Each CUDA device has its own default generator (``_C.default_generator(device)``;
:func:`manual_seed` seeds them all). The CUDA kernels (csrc/native/cuda/Distributions.cu)
follow the CPU's Philox layout word for word and compute every value with the same
arithmetic -- IEEE ``+ - * /`` and ``sqrt`` only, with ember's own log, exp and sin/cos
polynomials instead of the device libm (whose ``logf``/``sinf`` may differ from glibc's by
an ulp), built without FMA contraction -- so ``manual_seed(0); randn(1000,
device="cuda").cpu()`` equals the CPU result bit for bit, for every distribution (rand,
randn, normal, log_normal_, exponential_, cauchy_, geometric_, bernoulli, random_ /
randint) and every floating dtype, and the generators' offsets advance alike.
``randperm`` (a sequential Fisher-Yates shuffle) and ``multinomial`` on CUDA are drawn on
the host from the CUDA generator's counters and copied to the device: the CPU's numbers,
at the cost of a device-to-host copy of the probabilities for multinomial.

    >>> import ember.aten as ea
    >>> ea.manual_seed(0)
    >>> a = ea.rand(3)
    >>> ea.manual_seed(0)
    >>> bool((ea.rand(3) == a).all())
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from ember.c10py import cuda as _cuda
from ember.c10py import device as _device

from ._C import Generator
from ._C import default_generator as _default_generator_of

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

#: The CPU generator used when ``generator=None`` (seeded by :func:`manual_seed`).
default_generator: Generator = _default_generator_of(_device("cpu"))

# PyTorch's default seed; a fresh process starts from it.
_DEFAULT_SEED = 67280421310721


def _cuda_generators() -> list[Generator]:
    return [_default_generator_of(_device("cuda", i)) for i in range(_cuda.device_count())]


def manual_seed(seed: int) -> Generator:
    """Seeds the default generators of the CPU and of every CUDA device; returns the CPU one.

    ``seed`` is any integer in [-2**63, 2**64) (negative values wrap, as in PyTorch).
    """
    seed = int(seed)
    for g in _cuda_generators():
        g.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the default generators from a non-deterministic source; returns that seed."""
    s = default_generator.seed()
    for g in _cuda_generators():
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the default CPU generator (as last set by manual_seed() or seed())."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The default CPU generator's state: a uint8 tensor of 16 bytes (seed, then offset)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restores the default CPU generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[Any] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> Iterator[None]:
    """Saves the CPU generator's state (and that of the given CUDA devices, default: all)
    on entry and restores it on exit, so draws inside do not disturb the stream outside.

        >>> with ember.aten.random.fork_rng():
        ...     noise = ember.aten.randn(3)   # the default stream continues as if not drawn
    """
    if device_type != "cuda":
        raise RuntimeError(
            f"{_caller}: device_type must be 'cuda' (the only accelerator ember has), got {device_type!r}"
        )
    if not enabled:
        yield
        return
    if devices is None:
        cuda_gens = _cuda_generators()
    else:
        cuda_gens = []
        for d in devices:
            dev = d if isinstance(d, _device) else (_device("cuda", d) if isinstance(d, int) else _device(d))
            if dev.type != "cuda":
                raise ValueError(f"{_caller}: {_devices_kw} must be CUDA devices, got {d!r}")
            cuda_gens.append(_default_generator_of(dev))
    saved_cpu = default_generator.get_state()
    saved_cuda = [g.get_state() for g in cuda_gens]
    try:
        yield
    finally:
        default_generator.set_state(saved_cpu)
        for g, state in zip(cuda_gens, saved_cuda, strict=True):
            g.set_state(state)
