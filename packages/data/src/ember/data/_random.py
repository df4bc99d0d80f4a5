"""Random draws for samplers and seeding, taken from ember.aten Generators.

Samplers need ``randperm``, ``randint`` and ``multinomial`` over a Generator (or the
default one). Each draw here takes one Philox block (128 bits) from the ember
Generator -- so a Generator's state fully determines the draw and advances as
PyTorch's does, one call at a time -- and expands it with NumPy's PCG64 into the
permutation or samples. The streams differ from PyTorch's (its CPU generator is
a Mersenne Twister); the semantics (reproducible under ``generator=``, the
default generator when None) are the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ember.aten import _C as _aten_C

Generator = _aten_C.Generator


def default_generator() -> Any:
    """The process-wide CPU generator (the one ``ember.aten.manual_seed`` seeds)."""
    return _aten_C.default_generator()


def _block(generator: Any) -> int:
    """128 random bits from `generator` (or the default generator), advancing it by one block."""
    g = default_generator() if generator is None else generator
    if not hasattr(g, "_philox_reserve"):
        raise TypeError(f"expected an ember.aten.Generator, got {type(g).__name__}")
    seed, offset = g._philox_reserve(1)
    x0, x1, x2, x3 = _aten_C._philox_block(seed, offset)
    return x0 | (x1 << 32) | (x2 << 64) | (x3 << 96)


def random_int64(generator: Any = None) -> int:
    """A random int64 (PyTorch: ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``)."""
    return _block(generator) & ((1 << 63) - 1)


def _rng(generator: Any) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(_block(generator)))


def randperm(n: int, generator: Any = None) -> list[int]:
    """A random permutation of range(n) as a list."""
    return _rng(generator).permutation(n).tolist()


def randint(high: int, size: int, generator: Any = None) -> list[int]:
    """`size` integers uniform in [0, high)."""
    if size == 0:
        return []
    return _rng(generator).integers(0, high, size=size, dtype=np.int64).tolist()


def multinomial(weights: np.ndarray, num_samples: int, replacement: bool, generator: Any = None) -> list[int]:
    """Indices drawn with probability proportional to `weights` (1-d float64), as torch.multinomial."""
    if weights.ndim != 1:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if weights.size == 0:
        raise RuntimeError("multinomial: the number of categories must be positive")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    total = float(weights.sum())
    if total <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > weights.size:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not replacement and num_samples > int(np.count_nonzero(weights)):
        raise RuntimeError(
            "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)"
        )
    return _rng(generator).choice(weights.size, size=num_samples, replace=replacement, p=weights / total).tolist()
